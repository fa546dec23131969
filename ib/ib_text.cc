#include "ib/ib_text.h"

#include <charconv>

#include "absl/strings/ascii.h"

namespace railwatch::ib {
namespace {

bool IsBlank(char c) { return c == ' ' || c == '\t'; }

}  // namespace

std::vector<TextLine> SplitLines(std::string_view text, SplitOptions options) {
  std::vector<TextLine> lines;
  int number = 0;
  while (!text.empty()) {
    const size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    ++number;
    size_t dropped = 0;
    // PuTTY writes CR CR LF, and a terminal capture may start a prompt with a bare CR.
    while (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    while (!line.empty() && line.front() == '\r') {
      line.remove_prefix(1);
      ++dropped;
    }
    if (options.strip_mail_quote && !line.empty() && line.front() == '>') {
      line.remove_prefix(1);
      ++dropped;
      if (!line.empty() && line.front() == ' ') {
        line.remove_prefix(1);
        ++dropped;
      }
    }
    lines.push_back({line, number, dropped});
  }
  return lines;
}

void ProblemSink::Add(const TextLine& line, std::string_view at, std::string message) {
  size_t column = line.column_offset + 1;
  if (at.data() >= line.text.data() && at.data() <= line.text.data() + line.text.size()) {
    column += static_cast<size_t>(at.data() - line.text.data());
  }
  out_->push_back({Cat(source_, ":", line.number, ":", column), std::move(message)});
}

void ProblemSink::CheckGuid(const TextLine& line, const IbGuid& guid, std::string_view what) {
  if (guid.valid()) return;
  const size_t at = line.text.find(guid.text);
  Add(line, at == std::string_view::npos ? line.text : line.text.substr(at),
      Cat(what, " '", guid.text, "' is not hex (redacted?); kept as text"));
}

std::string ProblemSink::Where(const TextLine& line) const {
  return Cat(source_, ":", line.number);
}

void LineScanner::SkipBlanks() {
  while (!rest_.empty() && IsBlank(rest_.front())) rest_.remove_prefix(1);
}

bool LineScanner::Consume(std::string_view literal) {
  if (rest_.substr(0, literal.size()) != literal) return false;
  rest_.remove_prefix(literal.size());
  return true;
}

bool LineScanner::ConsumeWord(std::string_view word) {
  if (!Consume(word)) return false;
  SkipBlanks();
  return true;
}

std::optional<uint64_t> LineScanner::Decimal() {
  size_t n = 0;
  uint64_t value = 0;
  while (n < rest_.size() && absl::ascii_isdigit(static_cast<unsigned char>(rest_[n]))) {
    const uint64_t digit = static_cast<uint64_t>(rest_[n] - '0');
    if (value > (UINT64_MAX - digit) / 10) return std::nullopt;  // overflow
    value = value * 10 + digit;
    ++n;
  }
  if (n == 0) return std::nullopt;
  rest_.remove_prefix(n);
  return value;
}

std::optional<uint64_t> LineScanner::Hex() {
  std::string_view s = rest_;
  if (s.substr(0, 2) == "0x" || s.substr(0, 2) == "0X") s.remove_prefix(2);
  size_t n = 0;
  while (n < s.size() && absl::ascii_isxdigit(static_cast<unsigned char>(s[n]))) ++n;
  if (n == 0 || n > 16) return std::nullopt;
  const IbGuid parsed = ParseGuid(s.substr(0, n));
  rest_ = s.substr(n);
  return parsed.value;
}

std::optional<std::string_view> LineScanner::Until(char delimiter) {
  const size_t at = rest_.find(delimiter);
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view before = rest_.substr(0, at);
  rest_.remove_prefix(at + 1);
  return before;
}

std::optional<std::string_view> LineScanner::Quoted(char quote) {
  if (rest_.empty() || rest_.front() != quote) return std::nullopt;
  const size_t close = rest_.find(quote, 1);
  if (close == std::string_view::npos) return std::nullopt;
  std::string_view inside = rest_.substr(1, close - 1);
  rest_.remove_prefix(close + 1);
  return inside;
}

std::optional<std::string_view> LineScanner::QuotedToLast(char quote) {
  if (rest_.empty() || rest_.front() != quote) return std::nullopt;
  const size_t close = rest_.rfind(quote);
  if (close == 0) return std::nullopt;
  std::string_view inside = rest_.substr(1, close - 1);
  rest_.remove_prefix(close + 1);
  return inside;
}

std::string_view LineScanner::Token() {
  size_t n = 0;
  while (n < rest_.size() && !IsBlank(rest_[n])) ++n;
  std::string_view token = rest_.substr(0, n);
  rest_.remove_prefix(n);
  return token;
}

std::string_view StripBlanks(std::string_view text) {
  while (!text.empty() && IsBlank(text.front())) text.remove_prefix(1);
  while (!text.empty() && IsBlank(text.back())) text.remove_suffix(1);
  return text;
}

bool ConsumePrefix(std::string_view& text, std::string_view prefix) {
  if (!text.starts_with(prefix)) return false;
  text.remove_prefix(prefix.size());
  return true;
}

std::optional<uint64_t> ParseUnsigned(std::string_view text) {
  text = StripBlanks(text);
  LineScanner s(text);
  const std::optional<uint64_t> n =
      text.starts_with("0x") || text.starts_with("0X") ? s.Hex() : s.Decimal();
  if (!n || !s.done()) return std::nullopt;
  return n;
}

std::optional<uint32_t> ParseUint32(std::string_view text) {
  const std::optional<uint64_t> n = ParseUnsigned(text);
  if (!n || *n > UINT32_MAX) return std::nullopt;
  return static_cast<uint32_t>(*n);
}

std::optional<double> ParseDouble(std::string_view text) {
  text = StripBlanks(text);
  double value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size()) {
    return std::nullopt;
  }
  return value;
}

bool IsBlankLine(std::string_view line) {
  for (char c : line) {
    if (!IsBlank(c)) return false;
  }
  return true;
}

std::optional<NodeId> ReadNodeId(LineScanner& s) {
  LineScanner probe = s;
  std::optional<std::string_view> quoted = probe.Quoted();
  if (!quoted || quoted->size() < 3 || (*quoted)[1] != '-') return std::nullopt;
  NodeId id;
  switch ((*quoted)[0]) {
    case 'S':
      id.type = IbNodeType::kSwitch;
      break;
    case 'H':
      id.type = IbNodeType::kCa;
      break;
    case 'R':
      id.type = IbNodeType::kRouter;
      break;
    default:
      return std::nullopt;
  }
  id.guid = ParseGuid(quoted->substr(2));
  s = probe;
  return id;
}

std::optional<int> ReadPortNumber(LineScanner& s) {
  LineScanner probe = s;
  if (!probe.Consume("[")) return std::nullopt;
  const std::optional<uint64_t> port = probe.Decimal();
  if (!port || *port > 255 || !probe.Consume("]")) return std::nullopt;
  s = probe;
  return static_cast<int>(*port);
}

std::optional<IbLinkSpeed> ParseWidthGeneration(std::string_view token) {
  LineScanner s(token);
  const std::optional<uint64_t> width = s.Decimal();
  if (!width || *width == 0 || *width > 32) return std::nullopt;
  if (!s.Consume("x") && !s.Consume("X")) return std::nullopt;
  if (s.done()) return std::nullopt;
  return MakeLinkSpeed(static_cast<int>(*width), s.rest());
}

}  // namespace railwatch::ib
