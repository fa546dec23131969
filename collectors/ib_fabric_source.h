#pragma once

// Where the InfiniBand fabric scanner (railwatch-agent --role=ib-fabric, docs/INFINIBAND.md)
// learns the subnet: its nodes, links and switch port counters. One interface, several
// sources: the outputs a site's own jobs already write (this file), and later the fabric's
// MADs through libibmad and the simulator's fabric, all giving the records of ib/ib_records.h.

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ib/ib_records.h"
#include "ib/ibdiagnet_cables.h"
#include "ib/ibdiagnet_db.h"

namespace railwatch {

// What one scan found. Counters carry the time they were read (a file's modification time for
// tool outputs): a file that has not changed gives the same records again, with the same time,
// and the collector sends no point twice.
struct IbFabricScan {
  std::vector<ib::IbNode> nodes;
  std::vector<ib::IbLink> links;
  struct Counters {
    ib::IbPortCounters port;
    int64_t time_unix_nano = 0;
  };
  std::vector<Counters> counters;
  // Optical modules' readings, from ibdiagnet's `ibdiagnet2.cables` (one per port block).
  std::vector<ib::IbCableRecord> cables;
  // Nodes' temperatures, from ibdiagnet's TEMP_SENSING (db_csv).
  std::vector<ib::IbdiagnetTemperature> temperatures;
  // Problems in the inputs (file:line:column); the rest of the scan is kept.
  std::vector<ib::IbProblem> problems;
  // Inputs read this scan, and inputs skipped because nothing recognised them.
  int inputs_read = 0;
  int inputs_unrecognised = 0;
};

class IbFabricSource {
 public:
  virtual ~IbFabricSource() = default;
  virtual absl::StatusOr<IbFabricScan> Scan() = 0;
};

// The text InfiniBand tools print, in files a site's own cron jobs drop into one directory
// (`ibnetdiscover > fabric.topo`, `perfquery -x -l <lid> ...`, `ibqueryerrors`, ibdiagnet's
// `ibdiagnet2.db_csv`, `.pm`, `.net_dump`, `.net_dump_ext` and `.cables`): each regular
// file is told apart by its content, parsed with the readers of ib/, and re-read only when its
// modification time or size changes. Files over `max_file_bytes` are skipped with a problem.
class IbToolOutputSource final : public IbFabricSource {
 public:
  struct Options {
    std::string dir;
    uint64_t max_file_bytes = uint64_t{256} << 20;
  };
  explicit IbToolOutputSource(Options options) : options_(std::move(options)) {}
  // Fails only when the directory cannot be listed.
  absl::StatusOr<IbFabricScan> Scan() override;

 private:
  struct Parsed {
    int64_t mtime_unix_nano = 0;
    uint64_t size = 0;
    IbFabricScan scan;  // this file's records
  };
  Options options_;
  std::map<std::string, Parsed> files_;  // by path: the last parse of each file
};

// One tool output parsed by the reader its content calls for (IbToolOutputKind); counters get
// `time_unix_nano`. inputs_unrecognised is 1 for text no reader knows. Used by the directory
// source and by `railwatch triage`.
IbFabricScan ParseIbToolOutput(std::string_view text, const std::string& source,
                               int64_t time_unix_nano);

// What a text is, told by the first lines that say (a prompt line or a mail quote before them
// is skipped): "ibnetdiscover", "ibnetdiscover-ports", "perfquery", "ibqueryerrors",
// "ibdiagnet-db", "ibdiagnet-pm", "ibdiagnet-cables", "ibdiagnet-net-dump" (net_dump and
// net_dump_ext), "iblinkinfo", or "".
std::string IbToolOutputKind(std::string_view text);

}  // namespace railwatch
