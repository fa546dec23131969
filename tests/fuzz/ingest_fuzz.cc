// libFuzzer target for what railwatchd does with Ingest messages (daemon/ingest_stream.*): the
// input is a stream of AgentMessages, each a varint length and the message's bytes (protobuf's
// delimited form), handed one by one to an IngestStream over a real store, event store, job
// registry and agent registry, as the gRPC reactor would; the stream ends at the first message
// that is refused, or at bytes that do not read as one. Must not crash; a refusal is counted in
// IngestStats::errors (railwatch_ingest_errors_total); acknowledgements never go backwards; a batch at or below the
// last acknowledged sequence stores nothing. Seeds: tests/fuzz/seeds/ingest (make_fuzz_seeds).

#include <cstddef>
#include <cstdint>

#include "common/clock.h"
#include "daemon/agent_registry.h"
#include "daemon/ingest_stream.h"
#include "google/protobuf/io/coded_stream.h"
#include "railwatch/v1/ingest.pb.h"
#include "store/event_store.h"
#include "store/series_store.h"
#include "tests/fuzz/fuzz_support.h"
#include "topology/fabric_map.h"

using railwatch::fuzz::Check;
using railwatch::fuzz::SilenceLogs;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  SilenceLogs();
  railwatch::IngestStats stats;
  railwatch::SeriesStore store({.capacity = 32});
  railwatch::AgentRegistry agents;
  railwatch::EventStore events({.capacity = 64});
  railwatch::JobRegistry jobs;
  railwatch::FakeClock clock;
  uint64_t pokes = 0;
  railwatch::IngestDeps deps{store, agents, stats, clock, [&pokes] { ++pokes; }, &events, &jobs};
  railwatch::IngestStream stream(deps, "ipv4:127.0.0.1:1");

  google::protobuf::io::CodedInputStream in(data, static_cast<int>(size));
  uint64_t acked = 0;
  uint32_t length = 0;
  while (in.ReadVarint32(&length)) {
    const auto limit = in.PushLimit(static_cast<int>(length));
    railwatch::v1::AgentMessage message;
    if (!message.ParseFromCodedStream(&in) || !in.ConsumedEntireMessage()) break;
    in.PopLimit(limit);
    const uint64_t samples_before = store.stats().samples_appended;
    const uint64_t events_before = events.stats().appended;
    const uint64_t errors_before = stats.errors_total();
    railwatch::IngestStream::Reply reply;
    const grpc::Status status = stream.Handle(message, reply);
    clock.Advance(absl::Seconds(1));
    if (!status.ok()) {
      Check(!status.error_message().empty());
      Check(stats.errors_total() > errors_before);
      break;
    }
    if (message.has_batch()) {
      Check(reply.ack.has_value() && *reply.ack >= acked);
      if (message.batch().sequence() <= acked) {
        Check(store.stats().samples_appended == samples_before);
        Check(events.stats().appended == events_before);
      }
      acked = *reply.ack;
    } else {
      Check(reply.welcome.has_value());
      acked = *reply.welcome;
    }
  }
  stream.Close();
  return 0;
}
