// One scan of the InfiniBand fabric scanner's tool-output source (railwatch-agent
// --role=ib-fabric --ib_tool_outputs=DIR, docs/INFINIBAND.md) on a real fabric: ibdiagnet's
// db_csv of the 272-node NDR run (tests/fixtures/ib), rewritten before every scan so that it is
// read, parsed and sent again, as when a site's cron job drops a new one. Reports the switch
// ports whose counters one scan sends; issue 22 asks for 1,000 switch ports within 3 s.
//
//   build/release/bench/ib_scan_bench
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <string>

#include "benchmark/benchmark.h"
#include "bench/counting_emitter.h"
#include "collectors/ib_fabric_collector.h"
#include "collectors/ib_fabric_source.h"
#include "common/text.h"

namespace railwatch {
namespace {

namespace fs = std::filesystem;

using bench::CountingEmitter;

// A directory holding the NDR fabric's db_csv, removed with the object; ok() false when the
// sample cannot be read.
class DbCsvDir {
 public:
  explicit DbCsvDir(const std::string& tag)
      : dir_(fs::temp_directory_path() / ("ib_scan_bench-" + tag + std::to_string(getpid()))) {
    db_ = ReadFile(std::string(RAILWATCH_SOURCE_DIR) +
                   "/tests/fixtures/ib/"
                   "db_csv_01_ndr_quantum2_mqm9700_272nodes_full_run_complete.db_csv");
    if (!db_.ok()) return;
    fs::create_directories(dir_);
    std::ofstream(path(), std::ios::binary) << *db_;
  }
  ~DbCsvDir() { fs::remove_all(dir_); }
  const absl::Status& status() const { return db_.status(); }
  std::string dir() const { return dir_.string(); }
  std::string path() const { return (dir_ / "ibdiagnet2.db_csv").string(); }

 private:
  fs::path dir_;
  absl::StatusOr<std::string> db_;
};

// The steady state between two drops: the file has not changed, its records are kept (its
// links are sent again, so that the map's InfiniBand facts do not age out).
void BM_ScanUnchanged(benchmark::State& state);

void BM_ScanIbdiagnetDb(benchmark::State& state) {
  const DbCsvDir files("");
  if (!files.status().ok()) {
    state.SkipWithError(std::string(files.status().message()).c_str());
    return;
  }
  const std::string path = files.path();
  IbFabricCollector collector(IbFabricCollector::Options{},
                              std::make_unique<IbToolOutputSource>(
                                  IbToolOutputSource::Options{files.dir()}));
  CountingEmitter out;
  int64_t mtime = 1'000'000'000;
  double ports = 0;
  for (auto _ : state) {
    state.PauseTiming();
    // A new file: the next scan reads and sends it all again.
    const struct timeval times[2] = {{mtime, 0}, {mtime, 0}};
    ++mtime;
    utimes(path.c_str(), times);
    state.ResumeTiming();
    if (!collector.Collect(out).ok()) state.SkipWithError("scan failed");
  }
  // The switch ports the last scan sent counters for: its railwatch_ib_scan_switch_ports.
  {
    IbToolOutputSource source(IbToolOutputSource::Options{files.dir()});
    absl::StatusOr<IbFabricScan> scan = source.Scan();
    std::set<std::pair<std::string, int>> switch_ports;
    if (scan.ok()) {
      std::set<std::string> switches;
      for (const ib::IbNode& n : scan->nodes) {
        if (n.type == ib::IbNodeType::kSwitch) switches.insert(ib::GuidString(n.guid));
      }
      for (const IbFabricScan::Counters& c : scan->counters) {
        const std::string g = ib::GuidString(c.port.node_guid);
        if (switches.contains(g) && c.port.port) switch_ports.insert({g, *c.port.port});
      }
    }
    ports = static_cast<double>(switch_ports.size());
  }
  state.counters["switch_ports"] = ports;
  state.counters["points_per_scan"] =
      benchmark::Counter(static_cast<double>(out.points), benchmark::Counter::kAvgIterations);
  state.counters["switch_ports_per_s"] =
      benchmark::Counter(ports, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_ScanIbdiagnetDb)->Unit(benchmark::kMillisecond);

void BM_ScanUnchanged(benchmark::State& state) {
  const DbCsvDir files("u");
  if (!files.status().ok()) {
    state.SkipWithError(std::string(files.status().message()).c_str());
    return;
  }
  IbFabricCollector collector(IbFabricCollector::Options{},
                              std::make_unique<IbToolOutputSource>(
                                  IbToolOutputSource::Options{files.dir()}));
  CountingEmitter out;
  if (!collector.Collect(out).ok()) state.SkipWithError("scan failed");  // the first read
  const uint64_t first = out.points;
  for (auto _ : state) {
    if (!collector.Collect(out).ok()) state.SkipWithError("scan failed");
  }
  state.counters["points_per_scan"] = benchmark::Counter(
      static_cast<double>(out.points - first), benchmark::Counter::kAvgIterations);
}
BENCHMARK(BM_ScanUnchanged)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace railwatch

BENCHMARK_MAIN();
