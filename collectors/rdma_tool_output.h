#pragma once

// Parser of iproute2's `rdma` tool output as an engineer pastes it:
//
//   rdma statistic show [link DEV/PORT]   link mlx5_1/1 rx_write_requests 0 ... out_of_buffer 135
//                                         (one line per port, or wrapped: continuation lines
//                                         start with whitespace)
//   rdma link show [DEV/PORT]             link mlx5_0/1 state ACTIVE physical_state LINK_UP
//                                         netdev p1p1 (IB ports add subnet_prefix, lid, sm_lid,
//                                         lmc; trailing spaces are common)
//   rdma -j statistic|link show           [{"ifname":"mlx5_0","port":1,...}] (also -p pretty)
//   ibstatus                              Infiniband device 'mlx5_0' port 1 status: then
//                                         indented `key: value` lines; states become rdma's
//                                         names ("5: LinkUp" -> physical_state LINK_UP)
//
// Shell prompts and command echoes (`[root@node75 ~]# rdma link show`, `sudo rdma statistic`)
// and blank lines are skipped. A bad line gives a problem with its line number and the rest is
// parsed. Counters are mapped to the canonical vocabulary through the same hw_counters sources
// the sysfs collector reads (common/vocabulary.cc).

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace railwatch {

struct RdmaToolCounter {
  std::string name;  // as rdma prints it: "req_cqe_error"
  uint64_t value = 0;
  // The canonical series this counter feeds ("fabric_rdma_requester_cqe_errors_total");
  // empty when the vocabulary has none.
  std::string_view canonical;
};

// One `link DEV/PORT ...` record (or one JSON object): a port as one command printed it. A
// port printed twice (two pasted runs) gives two records.
struct RdmaToolPort {
  std::string device;  // "mlx5_0"
  uint32_t port = 0;
  int line = 0;  // 1-based line of its `link` token (of the JSON document's start)
  std::vector<RdmaToolCounter> counters;  // in printed order
  // state, physical_state, netdev, netdev_index, subnet_prefix, lid, sm_lid, lmc ... as
  // printed, in printed order.
  std::vector<std::pair<std::string, std::string>> attributes;

  // nullptr when absent.
  const RdmaToolCounter* Counter(std::string_view name) const;
  const std::string* Attribute(std::string_view name) const;
  // Value of a counter, 0 when absent.
  uint64_t Value(std::string_view name) const;
  // "mlx5_0/1"
  std::string Name() const;
  // Printed by `rdma link show` (it has a state), rather than `rdma statistic show`.
  bool IsLink() const { return Attribute("state") != nullptr; }
};

struct RdmaToolProblem {
  int line = 0;
  std::string reason;
};

struct RdmaToolOutput {
  std::vector<RdmaToolPort> ports;  // in input order
  std::vector<RdmaToolProblem> problems;
  int lines = 0;      // lines that were rdma output (records, continuations, JSON)
  int skipped = 0;    // blank lines, shell prompts and command echoes (ParseRdmaToolOutput)
};

// Line-at-a-time parser, so that rdma output can sit among other lines (a log pasted with it):
// Feed() takes the lines that are rdma output and declines the rest.
class RdmaToolParser {
 public:
  RdmaToolParser();
  ~RdmaToolParser();
  RdmaToolParser(RdmaToolParser&&) noexcept;
  RdmaToolParser& operator=(RdmaToolParser&&) noexcept;

  // Feeds one line (without its newline) numbered `line_number`. Returns true when the line was
  // rdma output and is consumed; false when it is not (the caller decides what it is). A
  // record's continuation is taken only while the record is open.
  bool Feed(std::string_view line, int line_number);
  // End of input: closes the open record or JSON document.
  void Finish();

  const RdmaToolOutput& output() const;
  RdmaToolOutput TakeOutput();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// Parses a whole paste: lines that are neither rdma output nor prompts, command echoes or
// blank are problems ("line 3: not rdma output: ...").
RdmaToolOutput ParseRdmaToolOutput(std::string_view text);

// A shell prompt or a command echo (`$ rdma link show`, `[root@h ~]# `, `sudo rdma statistic`).
bool IsRdmaCommandEcho(std::string_view line);

// The canonical series of an rdma/hw_counters counter name; empty when none.
std::string_view RdmaCounterCanonicalName(std::string_view counter);

}  // namespace railwatch
