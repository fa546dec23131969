#include "collectors/optics_dir_backend.h"

#include <filesystem>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "common/labels.h"
#include "common/text.h"

namespace railwatch {
namespace {

// The whole file, or NotFound when it is not there.
absl::StatusOr<std::vector<uint8_t>> ReadBytes(const std::string& path) {
  absl::StatusOr<std::string> text = ReadFile(path);
  if (!text.ok()) return text.status();
  return std::vector<uint8_t>(text->begin(), text->end());
}

}  // namespace

absl::StatusOr<optics::ModuleEeprom> DirModuleBackend::ReadModule(const std::string& netdev) {
  const std::string dir = absl::StrCat(dir_, "/", netdev, "/module");
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    return absl::NotFoundError(absl::StrCat(dir, ": no module"));
  }
  optics::ModuleEeprom eeprom;
  // page00 (SFF-8636, CMIS) or a0 (SFF-8472): one of them is the module's page 00h.
  absl::StatusOr<std::vector<uint8_t>> page00 = ReadBytes(dir + "/page00");
  if (!page00.ok()) page00 = ReadBytes(dir + "/a0");
  if (!page00.ok()) {
    return absl::NotFoundError(absl::StrCat(dir, ": neither page00 nor a0: no module"));
  }
  eeprom.page00 = *std::move(page00);
  if (absl::StatusOr<std::vector<uint8_t>> a2 = ReadBytes(dir + "/a2"); a2.ok()) {
    eeprom.a2 = *std::move(a2);
  }
  // The pages railwatch decodes; others are not looked for.
  for (int page : {0x01, 0x02, 0x03, 0x11}) {
    absl::StatusOr<std::vector<uint8_t>> bytes =
        ReadBytes(absl::StrFormat("%s/page%02x", dir, page));
    if (bytes.ok()) eeprom.upper[static_cast<uint8_t>(page)] = *std::move(bytes);
  }
  return eeprom;
}

FecStats ParseFecFile(std::string_view text, std::string_view source) {
  FecStats stats;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(AsAbsl(text), '\n')) {
    ++line_number;
    if (const size_t hash = line.find('#'); hash != absl::string_view::npos) {
      line = line.substr(0, hash);
    }
    line = absl::StripAsciiWhitespace(line);
    if (line.empty()) continue;
    auto problem = [&](absl::string_view why) {
      stats.problems.push_back(absl::StrCat(AsAbsl(source), ":", line_number, ": ", why));
    };
    const size_t colon = line.find(':');
    if (colon == absl::string_view::npos) {
      problem(absl::StrCat("expected \"name: value\", got \"", line, "\""));
      continue;
    }
    const absl::string_view name = absl::StripAsciiWhitespace(line.substr(0, colon));
    const absl::string_view value = absl::StripAsciiWhitespace(line.substr(colon + 1));
    if (name == "active") {
      if (value != "RS" && value != "BaseR" && value != "LLRS" && value != "Off") {
        problem(absl::StrCat("active: expected RS, BaseR, LLRS or Off, got \"", value, "\""));
        continue;
      }
      stats.active_mode = std::string(value);
      continue;
    }
    absl::string_view base = name;
    int lane = 0;
    if (const size_t at = name.rfind("_lane"); at != absl::string_view::npos) {
      base = name.substr(0, at);
      if (!absl::SimpleAtoi(name.substr(at + 5), &lane) || lane < 1 || lane > 16) {
        problem(absl::StrCat("\"", name, "\": lanes are numbered 1-16"));
        continue;
      }
    }
    FecStats::Counter* counter = base == "corrected_blocks"       ? &stats.corrected_blocks
                                 : base == "uncorrectable_blocks" ? &stats.uncorrectable_blocks
                                 : base == "corrected_bits"       ? &stats.corrected_bits
                                                                  : nullptr;
    if (counter == nullptr) {
      problem(absl::StrCat("unknown name \"", name,
                           "\" (active, corrected_blocks, uncorrectable_blocks, corrected_bits, "
                           "NAME_laneN)"));
      continue;
    }
    std::optional<uint64_t> v = ParseCounterText(value);
    if (!v) {
      problem(absl::StrCat("\"", name, "\": expected a counter, got \"", value, "\""));
      continue;
    }
    if (lane == 0) {
      counter->total = *v;
    } else {
      if (counter->lanes.size() < static_cast<size_t>(lane)) counter->lanes.resize(lane, 0);
      counter->lanes[lane - 1] = *v;
    }
  }
  // Lanes given without a total: their sum, as the kernel reports it.
  for (FecStats::Counter* c :
       {&stats.corrected_blocks, &stats.uncorrectable_blocks, &stats.corrected_bits}) {
    if (!c->total && !c->lanes.empty()) {
      uint64_t sum = 0;
      for (uint64_t v : c->lanes) sum += v;
      c->total = sum;
    }
  }
  return stats;
}

absl::StatusOr<FecStats> DirModuleBackend::ReadFec(const std::string& netdev) {
  const std::string path = absl::StrCat(dir_, "/", netdev, "/fec");
  absl::StatusOr<std::string> text = ReadFile(path);
  if (!text.ok()) return absl::NotFoundError(absl::StrCat(path, ": no FEC statistics"));
  return ParseFecFile(*text, path);
}

std::string DirModuleBackend::Driver(const std::string& netdev) {
  absl::StatusOr<std::string> text = ReadFile(absl::StrCat(dir_, "/", netdev, "/driver"));
  if (!text.ok()) return "";
  return std::string(absl::StripAsciiWhitespace(FirstLine(*text)));
}

}  // namespace railwatch
