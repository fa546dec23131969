#pragma once

// `rdma -j [-p] statistic|link show` documents inside pasted text: the part of
// collectors/rdma_tool_output.h that reads JSON. Internal to that parser.

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "collectors/rdma_tool_output.h"

namespace railwatch {

// Keys whose values are attributes even when they are numbers (`rdma link show`, `rdma -j`).
bool IsRdmaAttributeKey(std::string_view key);
// A token as a message shows it: quoted, at most 40 bytes.
std::string QuoteToken(std::string_view token);
// `s` without leading and trailing ASCII whitespace.
std::string_view TrimRdmaText(std::string_view s);

// One JSON document fed line by line; its brackets (outside strings) say where it ends, so
// prompts and other output may follow it.
class RdmaJsonDocument {
 public:
  using ProblemFn = std::function<void(int line, std::string reason)>;

  // `[ {` (rdma -j -p) or a line that opens a bracket and names an "ifname" (rdma -j): not a
  // prompt such as `[root@node75 ~]# `, nor any other bracket.
  static bool IsStart(std::string_view trimmed_line);

  void Start(int line_number);
  bool open() const { return open_; }
  // Appends a line; when the document closes, appends its ports to `ports`.
  void Feed(std::string_view line, int line_number, std::vector<RdmaToolPort>& ports,
            const ProblemFn& problem);
  // End of input: a document still open is a problem.
  void Finish(const ProblemFn& problem);

 private:
  void Parse(std::vector<RdmaToolPort>& ports, const ProblemFn& problem);
  void End();

  bool open_ = false;
  bool discard_ = false;  // too deep or too large: read to its end, then dropped
  std::string text_;
  int line_ = 0;  // where it started
  int depth_ = 0;
  bool in_string_ = false;
  bool escape_ = false;
};

}  // namespace railwatch
