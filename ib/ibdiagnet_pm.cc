#include "ib/ibdiagnet_pm.h"

#include <utility>

#include "ib/ib_text.h"
#include "ib/ibdiagnet_blocks.h"
#include "ib/ibdiagnet_pm_names.h"

namespace railwatch::ib {
namespace {

// The hex digits ibdiagnet prints for each attribute's values. Fewer is a value cut short.
size_t PrintedDigits(PmaAttribute attribute) {
  switch (attribute) {
    case PmaAttribute::kPortCounters:
      return 8;
    case PmaAttribute::kPortCountersExtended:
      return 16;
    case PmaAttribute::kPortRcvErrorDetails:
    case PmaAttribute::kPortXmitDiscardDetails:
      return 4;
  }
  return 0;
}

class PmReader {
 public:
  PmReader(std::string_view source, IbdiagnetPm* out)
      : out_(out), problems_(source, &out->problems) {}
  void Read(const TextLine& line) {
    const std::string_view text = StripBlanks(line.text);
    switch (cursor_.Next(line, text, problems_)) {
      case IbdiagnetBlockCursor::Step::kHeader:
        return StartBlock(line, text);
      case IbdiagnetBlockCursor::Step::kValue:
        return ReadValue(line, text);
      case IbdiagnetBlockCursor::Step::kSkip:
        return;
    }
  }

 private:
  void StartBlock(const TextLine& line, std::string_view text) {
    Close();
    std::optional<IbdiagnetPortHeader> header = ReadIbdiagnetPortHeader(line, text, problems_);
    cursor_.Opened(header.has_value(), line.number);
    if (!header) return;
    block_.emplace();
    block_->port = header->port;
    block_->lid = header->lid;
    block_->guid = std::move(header->guid);
    block_->device_id = header->device_id;
    block_->port_name = std::move(header->port_name);
    block_->where = problems_.Where(line);
  }

  // name=value
  void ReadValue(const TextLine& line, std::string_view text) {
    const size_t eq = text.find('=');
    if (eq == std::string_view::npos || eq == 0) {
      problems_.Add(line, text, "not a name=value line; skipped");
      return;
    }
    const std::string_view name = StripBlanks(text.substr(0, eq));
    const std::string_view value = StripBlanks(text.substr(eq + 1));
    const std::string_view value_at = text.substr(eq + 1);
    std::optional<IbdiagnetPmName> counter = IbdiagnetPmCounter(name);
    if (IsNotAvailable(value)) {
      if (!counter) block_->other[std::string(name)] = std::nullopt;
      return;  // not supported by the port: absent
    }
    const std::optional<uint64_t> n = ParseUnsigned(value);
    if (!n) {
      problems_.Add(line, value_at, std::string("value of ").append(name).append(
                                        " is neither hex, decimal nor NA; skipped"));
      return;
    }
    if (!counter) {
      block_->other[std::string(name)] = n;
      return;
    }
    const bool hex = value.starts_with("0x") || value.starts_with("0X");
    if (const size_t digits = value.size() - 2, expected = PrintedDigits(counter->attribute);
        hex && digits < expected) {
      problems_.Add(line, value_at,
                    Cat(name, " has ", static_cast<uint64_t>(digits),
                        " hex digits where ibdiagnet prints ", static_cast<uint64_t>(expected),
                        " (cut short?); dropped"));
      return;
    }
    const int width = PmaCounterWidth(counter->attribute, counter->name);
    if (width > 0 && width < 64 && *n > (uint64_t{1} << width) - 1) {
      problems_.Add(line, value_at,
                    Cat(name, " = ", *n, " does not fit the ", width, "-bit ",
                        PmaAttributeName(counter->attribute), " counter; dropped"));
      return;
    }
    if (counter->attribute == PmaAttribute::kPortCountersExtended &&
        *n >= kImplausibleCounter64) {
      problems_.Add(line, value_at,
                    Cat(name, " = ", *n, " is implausible for a 64-bit counter; dropped"));
      return;
    }
    IbPortCounters& record = RecordOf(counter->attribute);
    if (record.counters.contains(counter->name)) {
      problems_.Add(line, text, Cat(name, " printed twice in one block; the later kept"));
    }
    record.counters[counter->name] = MakeCounter(counter->attribute, counter->name, *n);
  }

  IbPortCounters& RecordOf(PmaAttribute attribute) {
    for (IbPortCounters& r : block_->counters) {
      if (r.attribute == attribute) return r;
    }
    IbPortCounters& r = block_->counters.emplace_back();
    r.attribute = attribute;
    r.lid = block_->lid;
    r.guid = block_->guid;
    r.port = block_->port;
    r.where = block_->where;
    return r;
  }

  void Close() {
    if (block_) out_->blocks.push_back(std::move(*block_));
    block_.reset();
    cursor_.Closed();
  }


 public:
  void Finish() {
    if (block_) cursor_.Finish(problems_);
    Close();
  }

 private:
  IbdiagnetPm* out_;
  ProblemSink problems_;
  std::optional<IbdiagnetPmBlock> block_;
  IbdiagnetBlockCursor cursor_;
};

}  // namespace

std::vector<IbPortCounters> IbdiagnetPm::Counters() const {
  std::vector<IbPortCounters> all;
  for (const IbdiagnetPmBlock& b : blocks) all.insert(all.end(), b.counters.begin(), b.counters.end());
  return all;
}

IbdiagnetPm ParseIbdiagnetPm(std::string_view text, std::string_view source) {
  IbdiagnetPm out;
  PmReader reader(source, &out);
  for (const TextLine& line : SplitLines(text)) reader.Read(line);
  reader.Finish();
  return out;
}

}  // namespace railwatch::ib
