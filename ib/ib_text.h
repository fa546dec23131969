#pragma once

// Line handling shared by the InfiniBand readers (internal to ib/). Real captures arrive
// damaged in transit: CRLF and CR CR LF line ends (PuTTY logs), a CR before a prompt, tabs
// turned into spaces or lost, mail quoting ("> "). These helpers undo the damage once, so that
// each reader sees clean lines and still reports true line:column positions.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ib/ib_records.h"

namespace railwatch::ib {

struct TextLine {
  std::string_view text;     // without line end, CRs at either end, or the mail quote
  int number = 0;            // from 1
  size_t column_offset = 0;  // bytes dropped before `text` on its line (a CR, "> ")
};

struct SplitOptions {
  // Drop one leading ">" and the blank after it on every line (text pasted from a mail).
  bool strip_mail_quote = false;
};

std::vector<TextLine> SplitLines(std::string_view text, SplitOptions options = {});

// The readers' one entry point: a `Reader(source, &result)` fed every line of `text`.
template <typename Result, typename Reader>
Result ReadEachLine(std::string_view text, std::string_view source, SplitOptions options = {}) {
  Result result;
  Reader reader(source, &result);
  for (const TextLine& line : SplitLines(text, options)) reader.Read(line);
  return result;
}

// Collects problems with source:line:column for one input.
class ProblemSink {
 public:
  ProblemSink(std::string_view source, std::vector<IbProblem>* out) : source_(source), out_(out) {}
  // `at` points into line.text (or is its end); the column counts from the line's first byte.
  void Add(const TextLine& line, std::string_view at, std::string message);
  void AddAtStart(const TextLine& line, std::string message) {
    Add(line, line.text, std::move(message));
  }
  // A GUID that is not hex (a site's "<redacted>"): the record keeps its text, this says so.
  void CheckGuid(const TextLine& line, const IbGuid& guid, std::string_view what);
  std::string Where(const TextLine& line) const;

 private:
  std::string source_;
  std::vector<IbProblem>* out_;
};

// A cursor over one line for the hand-written grammars: each call consumes on success and
// leaves the position alone on failure.
class LineScanner {
 public:
  explicit LineScanner(std::string_view text) : rest_(text) {}

  std::string_view rest() const { return rest_; }
  bool done() const { return rest_.empty(); }
  void SkipBlanks();
  bool Consume(std::string_view literal);
  bool ConsumeWord(std::string_view word);  // literal, then blanks
  std::optional<uint64_t> Decimal();        // digits, no sign
  std::optional<uint64_t> Hex();            // 0x... or bare hex digits
  // Up to (not including) `delimiter`, which is consumed; nullopt when it never comes.
  std::optional<std::string_view> Until(char delimiter);
  // "<text>": the text, verbatim; nullopt when not at a quote or it never closes.
  std::optional<std::string_view> Quoted(char quote = '"');
  // From a quote to the line's last quote: a node description may itself hold quotes, and
  // what follows it on ibnetdiscover lines never does.
  std::optional<std::string_view> QuotedToLast(char quote = '"');
  std::string_view Token();  // up to a blank; may be empty

 private:
  std::string_view rest_;
};

bool IsBlankLine(std::string_view line);

// Debian's Abseil has its own string_view, not std's; these few helpers keep ib/ on std.
std::string_view StripBlanks(std::string_view text);
bool ConsumePrefix(std::string_view& text, std::string_view prefix);
// The whole of `text` (blanks around allowed) as decimal or 0x hex; nullopt for anything else
// ("N/A", "-1", overflow). ParseUint32 also rejects what does not fit 32 bits.
std::optional<uint64_t> ParseUnsigned(std::string_view text);
std::optional<uint32_t> ParseUint32(std::string_view text);
// The whole of `text` (blanks around allowed) as a decimal number: "53.125", "46", "-999.999".
std::optional<double> ParseDouble(std::string_view text);
inline bool Contains(std::string_view text, std::string_view part) {
  return text.find(part) != std::string_view::npos;
}
inline void AppendPart(std::string& out, std::string_view part) { out.append(part); }
inline void AppendPart(std::string& out, char part) { out.push_back(part); }
inline void AppendPart(std::string& out, uint64_t part) { out.append(std::to_string(part)); }
inline void AppendPart(std::string& out, int part) { out.append(std::to_string(part)); }
template <typename... Parts>
std::string Cat(const Parts&... parts) {
  std::string out;
  (AppendPart(out, parts), ...);
  return out;
}

// "S-<guid>" / "H-<guid>" / "R-<guid>" in quotes, as ibnetdiscover names nodes.
struct NodeId {
  IbNodeType type = IbNodeType::kUnknown;
  IbGuid guid;
};
std::optional<NodeId> ReadNodeId(LineScanner& s);

// "[<port>]"
std::optional<int> ReadPortNumber(LineScanner& s);

// "4xHDR", "2xNDR", "4X" + "EDR" already joined by the caller; nullopt without "<n>x<gen>".
std::optional<IbLinkSpeed> ParseWidthGeneration(std::string_view token);

}  // namespace railwatch::ib
