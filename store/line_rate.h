#pragma once

// What a port can physically count per second: the bound of "a delta above line rate is
// rejected and counted" (docs/STORE.md, "Counter semantics"). Which bound a counter has is the
// vocabulary's to declare (CounterBound, common/vocabulary.h); the store is given it at Intern.

#include <cstdint>
#include <string_view>

#include "common/vocabulary.h"

namespace railwatch {

// The fastest port on the market (800 Gb/s Ethernet and XDR InfiniBand), in bytes per second:
// the line rate of a port whose own rate the daemon does not know.
inline constexpr double kDefaultLineRateBytesPerSecond = 800e9 / 8;

// A counter may rise by up to line rate x kLineRateTolerance x its time, plus up to
// kCounterBurstSeconds of line rate that it did not use before (a token bucket, per series):
// readings are stamped a little before or after the counter was read (a collector reads
// hundreds of files a cycle; the simulator moves counters every 100 ms), and a device that
// refreshes a counter every second (a switch's counter poll) shows a flat step, then one with
// two seconds of traffic. So over any span of T seconds a counter rises by at most
// line rate x (1.1 T + 1 s): rate() over 30 s at most 1.13 x line rate. A NIC replaced by one
// whose counter starts high, a corrupted reading, is far above that.
inline constexpr double kLineRateTolerance = 1.1;
inline constexpr double kCounterBurstSeconds = 1;

// Smallest packets on the wire, for packet and frame counters: an Ethernet frame of 64 bytes
// plus its 8-byte preamble and 12-byte gap (PFC pause frames are such frames); an InfiniBand
// packet with no payload (LRH 8 + BTH 12 + ICRC 4 + VCRC 2 bytes) for fabric_rdma_* series,
// which may be InfiniBand.
inline constexpr double kMinEthernetFrameWireBytes = 84;
inline constexpr double kMinInfinibandPacketBytes = 26;

// The most a counter bounded by `bound` can count in a second on a port of
// `line_rate_bytes_per_second` (0 or less: unknown, kDefaultLineRateBytesPerSecond), without
// the tolerance; infinity for kNone.
double MaxCounterRate(CounterBound bound, double line_rate_bytes_per_second);

// The token bucket of one counter: what its next step may count.
struct CounterAllowance {
  double credit = 0;  // unused allowance carried over, at most max rate x kCounterBurstSeconds

  // What a step of `seconds` may count at `max_rate` (MaxCounterRate).
  double Allowed(double max_rate, double seconds) const {
    return max_rate * kLineRateTolerance * seconds + credit;
  }
  // After a step that counted `increase` of `allowed` (a rejected step counts 0).
  void Spend(double max_rate, double allowed, double increase) {
    const double left = allowed - increase;
    credit = left < max_rate * kCounterBurstSeconds ? left : max_rate * kCounterBurstSeconds;
  }
};

}  // namespace railwatch
