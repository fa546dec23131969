#include "ib/ibdiagnet_blocks.h"

namespace railwatch::ib {

std::optional<IbdiagnetPortHeader> ReadIbdiagnetPortHeader(const TextLine& line,
                                                           std::string_view text,
                                                           ProblemSink& problems) {
  IbdiagnetPortHeader header;
  // The port name runs to the end of the line and may hold blanks; the rest is key=value words.
  std::string_view fields = text;
  if (const size_t at = text.find("Port Name="); at != std::string_view::npos) {
    header.port_name = std::string(StripBlanks(text.substr(at + 10)));
    fields = text.substr(0, at);
  } else {
    problems.Add(line, text.substr(text.size()), "block header without 'Port Name='");
  }
  bool have_port = false;
  LineScanner s(fields);
  for (s.SkipBlanks(); !s.done(); s.SkipBlanks()) {
    const std::string_view word = s.Token();
    const size_t eq = word.find('=');
    if (eq == std::string_view::npos) {
      problems.Add(line, word, "block header word without '='; skipped");
      continue;
    }
    const std::string_view key = word.substr(0, eq);
    const std::string_view value = word.substr(eq + 1);
    if (key == "Port") {
      const std::optional<uint32_t> port = ParseUint32(value);
      if (!port || *port > 255) {
        problems.Add(line, value, "Port= is not a port number; block skipped");
        return std::nullopt;
      }
      header.port = static_cast<int>(*port);
      have_port = true;
    } else if (key == "Lid") {
      header.lid = ParseUint32(value);
      if (!header.lid) problems.Add(line, value, "Lid= is not a number; left absent");
    } else if (key == "GUID") {
      header.guid = ParseGuid(value);
      problems.CheckGuid(line, header.guid, "GUID");
    } else if (key == "Device") {
      header.device_id = ParseUint32(value);
      if (!header.device_id) problems.Add(line, value, "Device= is not a number; left absent");
    }
    // Other key=value words (a newer ibdiagnet's) are not needed by any record.
  }
  if (!have_port) {
    problems.AddAtStart(line, "block header without Port=; block skipped");
    return std::nullopt;
  }
  return header;
}

bool IsDashLine(std::string_view text) {
  if (text.size() < 10) return false;
  for (char c : text) {
    if (c != '-') return false;
  }
  return true;
}

IbdiagnetBlockLine ClassifyBlockLine(std::string_view stripped) {
  if (stripped.empty()) return IbdiagnetBlockLine::kBlank;
  if (stripped.front() == '#') return IbdiagnetBlockLine::kComment;
  if (IsDashLine(stripped)) return IbdiagnetBlockLine::kDashes;
  if (stripped.starts_with("Port=")) return IbdiagnetBlockLine::kHeader;
  return IbdiagnetBlockLine::kValue;
}

IbdiagnetBlockCursor::Step IbdiagnetBlockCursor::Next(const TextLine& line,
                                                      std::string_view stripped,
                                                      ProblemSink& problems) {
  last_ = line;
  switch (ClassifyBlockLine(stripped)) {
    case IbdiagnetBlockLine::kBlank:
      open_ = false;
      return Step::kSkip;
    case IbdiagnetBlockLine::kComment:
    case IbdiagnetBlockLine::kDashes:
      return Step::kSkip;
    case IbdiagnetBlockLine::kHeader:
      return Step::kHeader;
    case IbdiagnetBlockLine::kValue:
      break;
  }
  if (skipping_) return Step::kSkip;  // the lines of a block whose header did not read
  if (!open_) {
    problems.Add(line, stripped, "not inside a port block (no Port= line before it); skipped");
    return Step::kSkip;
  }
  return Step::kValue;
}

void IbdiagnetBlockCursor::Opened(bool header_read, int line_number) {
  skipping_ = !header_read;
  open_ = header_read;
  if (header_read) header_line_ = line_number;
}

void IbdiagnetBlockCursor::Finish(ProblemSink& problems) const {
  if (!open_) return;
  problems.Add(last_, last_.text.substr(last_.text.size()),
               Cat("the input ends inside the block of line ", header_line_,
                   " (no blank line after it): cut short? what it printed is kept"));
}

bool IsNotAvailable(std::string_view value) {
  value = StripBlanks(value);
  return value.empty() || value == "N/A" || value == "NA";
}

}  // namespace railwatch::ib
