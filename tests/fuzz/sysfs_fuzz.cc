// libFuzzer target for what the RDMA collector reads from sysfs: each line of the input is
// parsed as a counter file, a port state ("4: ACTIVE") and a rate ("100 Gb/sec (4X EDR)"),
// and the lines also become the files of one device's tree (attributes, port state, rate,
// canonical and driver counters; see kFiles), collected twice by RdmaSysfsCollector, the
// counter files rewritten in between from the lines after. Must not crash; every point is for a
// defined series, and every gauge (state, rate, info) is a finite number, never negative.
// Seeds: tests/fuzz/seeds/sysfs.

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/string_view.h"
#include "collectors/rdma_attributes.h"
#include "collectors/rdma_sysfs_collector.h"
#include "common/clock.h"
#include "common/text.h"
#include "tests/fuzz/fuzz_support.h"

using railwatch::fuzz::Check;
using railwatch::fuzz::SilenceLogs;

namespace {

namespace fs = std::filesystem;

// The files line i of the input goes to (i modulo the list; relative to the device).
constexpr std::string_view kFiles[] = {
    "fw_ver",
    "node_guid",
    "ports/1/state",
    "ports/1/phys_state",
    "ports/1/rate",
    "ports/1/link_layer",
    "ports/1/counters/port_xmit_data",
    "ports/1/counters/port_rcv_data",
    "ports/1/counters/symbol_error",
    "ports/1/counters/port_xmit_wait",
    "ports/1/counters_ext/port_unicast_xmit_packets",
    "ports/1/hw_counters/out_of_sequence",
    "ports/1/hw_counters/np_cnp_sent",
    "ports/1/hw_counters/rx_vendor_thing",
    "ports/1/hw_counters/active_ahs",
    "hw_counters/rq_num_oos",
};
constexpr size_t kCounterFirst = 6;  // kFiles from here on are counters

class CheckingEmitter final : public railwatch::Emitter {
 public:
  uint32_t DefineSeries(std::string_view name, railwatch::MetricKind kind, railwatch::Labels labels,
                        uint32_t width_bits) override {
    Check(!name.empty());
    return defined_++;
  }
  void Counter(uint32_t id, uint64_t value, int64_t t) override { Check(id < defined_); }
  void Gauge(uint32_t id, double value, int64_t t) override {
    Check(id < defined_);
    Check(std::isfinite(value) && value >= 0);
  }
  void Event(railwatch::EventRecord event) override {}

 private:
  uint32_t defined_ = 0;
};

// The tree lives in memory where it can (tmpfs): creating and truncating files on a disk
// costs more than the code under test. Made once; each input rewrites its files. libFuzzer
// ends some runs without atexit handlers, so scripts/fuzz names a directory it removes itself
// (RAILWATCH_FUZZ_SCRATCH).
const fs::path& Root() {
  // Never destroyed: the atexit handler below runs after static destructors would.
  static const fs::path& root = *[] {
    const char* scratch = std::getenv("RAILWATCH_FUZZ_SCRATCH");
    const fs::path base = scratch != nullptr             ? fs::path(scratch)
                          : fs::is_directory("/dev/shm") ? fs::path("/dev/shm")
                                                         : fs::temp_directory_path();
    std::string dir = (base / "railwatch-sysfs-fuzz.XXXXXX").string();
    Check(mkdtemp(dir.data()) != nullptr);
    return new fs::path(dir);
  }();
  static const bool cleanup = [] {
    std::atexit([] {
      std::error_code ec;
      fs::remove_all(Root(), ec);
    });
    return true;
  }();
  (void)cleanup;
  return root;
}

void Write(const fs::path& path, std::string_view text) {
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(text.data(), text.size());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  SilenceLogs();
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  std::vector<std::string_view> lines;
  for (size_t start = 0; start <= input.size();) {
    size_t nl = input.find('\n', start);
    if (nl == std::string_view::npos) nl = input.size();
    lines.push_back(input.substr(start, nl - start));
    start = nl + 1;
  }

  for (std::string_view std_line : lines) {
    const absl::string_view line(std_line.data(), std_line.size());
    if (railwatch::ParseCounterText(railwatch::FirstLine(line)).has_value()) {
      Check(!line.empty());
    }
    (void)railwatch::ParseNumberedState(line);
    if (std::optional<double> rate = railwatch::ParseRateBitsPerSecond(line)) {
      Check(std::isfinite(*rate) && *rate >= 0 && *rate <= railwatch::kMaxPortBitsPerSecond);
    }
  }

  const fs::path device = Root() / "class" / "infiniband" / "mlx5_0";
  static const bool tree = [&device] {
    for (std::string_view dir :
         {"ports/1/counters", "ports/1/counters_ext", "ports/1/hw_counters", "hw_counters"}) {
      fs::create_directories(device / dir);
    }
    return true;
  }();
  (void)tree;
  constexpr size_t kFileCount = std::size(kFiles);
  for (size_t i = 0; i < kFileCount; ++i) {
    Write(device / kFiles[i], i < lines.size() ? lines[i] : std::string_view("0"));
  }
  railwatch::FakeClock clock;
  railwatch::RdmaSysfsCollector collector(
      {.sysfs_root = Root().string(), .use_verbs = false, .driver_counters = true}, clock);
  CheckingEmitter emitter;
  (void)collector.Collect(emitter);
  for (size_t i = kCounterFirst; i < kFileCount; ++i) {
    if (kFileCount + i < lines.size()) Write(device / kFiles[i], lines[kFileCount + i]);
  }
  clock.Advance(absl::Seconds(1));
  (void)collector.Collect(emitter);
  return 0;
}
