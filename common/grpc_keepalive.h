#pragma once

// The HTTP/2 keepalive of every long-lived railwatch stream (agent -> daemon Ingest, switch
// agent -> gNMI targets, clients -> WatchDiagnoses), both ends. A peer that stops answering
// without closing its TCP connection (a frozen host, a cable pulled behind a NAT, a stuck
// proxy) is noticed within keepalive time + timeout = 20 s by each side, whatever the stream
// carries (docs/OPERATIONS.md, "Liveness"; tests/integration/liveness_test.cc).
//
// Header-only so that `common` does not link gRPC; only gRPC users include it.

#include "grpcpp/server_builder.h"
#include "grpcpp/support/channel_arguments.h"

namespace railwatch {

// A ping after this long without any frame from the peer...
inline constexpr int kKeepaliveTimeMs = 10'000;
// ...and the connection is closed when its ack has not come back within this.
inline constexpr int kKeepaliveTimeoutMs = 10'000;
// The fastest client pings a railwatch server accepts. gRPC counts a ping that comes sooner
// (while the server sends no data) as a strike and, after two strikes, answers GOAWAY
// "too_many_pings": it must stay below the clients' kKeepaliveTimeMs.
inline constexpr int kMinRecvPingIntervalMs = 5'000;

static_assert(kMinRecvPingIntervalMs < kKeepaliveTimeMs,
              "servers must accept the clients' keepalive pings");
static_assert(kKeepaliveTimeMs + kKeepaliveTimeoutMs < 30'000,
              "a dead peer must be noticed within 30 s");

// Both ends ping while the connection is idle (no call) and however long the stream carries
// no data: gRPC's default stops pinging after two pings without a data frame
// (GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA = 2), which would leave a quiet watch, or a stream
// whose daemon only reads, unguarded.
inline void SetClientKeepalive(grpc::ChannelArguments& args, int time_ms = kKeepaliveTimeMs,
                               int timeout_ms = kKeepaliveTimeoutMs) {
  args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, time_ms);
  args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, timeout_ms);
  args.SetInt(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  args.SetInt(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0);
}

inline void SetServerKeepalive(grpc::ServerBuilder& builder) {
  // Nor does the server probe the bandwidth-delay product: its BDP pings to each agent (one
  // batch a second) only woke the agents' stream threads.
  builder.AddChannelArgument(GRPC_ARG_HTTP2_BDP_PROBE, 0);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIME_MS, kKeepaliveTimeMs);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, kKeepaliveTimeoutMs);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS,
                             kMinRecvPingIntervalMs);
}

}  // namespace railwatch
