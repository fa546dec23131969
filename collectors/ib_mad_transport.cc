#include "collectors/ib_mad_transport.h"

#include "absl/strings/str_cat.h"

namespace railwatch {
namespace {

struct WidthCode {
  int code;
  int lanes;
};
constexpr WidthCode kWidths[] = {{1, 1}, {2, 4}, {4, 8}, {8, 12}, {16, 2}};

struct SpeedCode {
  int code;
  bool extended;  // LinkSpeedExtActive rather than LinkSpeedActive
  std::string_view generation;
};
constexpr SpeedCode kSpeeds[] = {
    {1, false, "SDR"}, {2, false, "DDR"}, {4, false, "QDR"},
    {1, true, "FDR"},  {2, true, "EDR"},  {4, true, "HDR"}, {8, true, "NDR"},
};

}  // namespace

DrPath DrPath::Then(int port) const {
  DrPath next = *this;
  next.ports.push_back(static_cast<uint8_t>(port));
  return next;
}

std::string DrPath::ToString() const {
  std::string s = "0";
  for (uint8_t p : ports) absl::StrAppend(&s, ",", p);
  return s;
}

const MadPortCounters::Value* MadPortCounters::Find(std::string_view name) const {
  for (const Value& v : values) {
    if (v.name == name) return &v;
  }
  return nullptr;
}

ib::IbLinkSpeed MadLinkSpeed(const MadPortInfo& info, bool ext_speeds_valid, bool fdr10) {
  int lanes = 0;
  for (const WidthCode& w : kWidths) {
    if (w.code == info.link_width_active) lanes = w.lanes;
  }
  std::string_view generation;
  if (ext_speeds_valid && info.link_speed_ext_active != 0) {
    for (const SpeedCode& s : kSpeeds) {
      if (s.extended && s.code == info.link_speed_ext_active) generation = s.generation;
    }
  } else if (fdr10 && info.link_speed_active == 4) {
    generation = "FDR10";  // FDR10 signals at QDR's LinkSpeedActive, told apart by Mellanox
  } else {
    for (const SpeedCode& s : kSpeeds) {
      if (!s.extended && s.code == info.link_speed_active) generation = s.generation;
    }
  }
  return ib::MakeLinkSpeed(lanes, generation);
}

bool EncodeMadLinkSpeed(int width_lanes, std::string_view generation, MadPortInfo& info,
                        bool& fdr10) {
  info.link_width_active = 0;
  for (const WidthCode& w : kWidths) {
    if (w.lanes == width_lanes) info.link_width_active = w.code;
  }
  if (info.link_width_active == 0) return false;
  fdr10 = false;
  info.link_speed_ext_active = 0;
  if (generation == "FDR10") {
    info.link_speed_active = 4;
    fdr10 = true;
    return true;
  }
  for (const SpeedCode& s : kSpeeds) {
    if (s.generation != generation) continue;
    if (s.extended) {
      // Extended speeds are negotiated over QDR's signalling field set to its top value.
      info.link_speed_active = 4;
      info.link_speed_ext_active = s.code;
    } else {
      info.link_speed_active = s.code;
    }
    return true;
  }
  return false;
}

}  // namespace railwatch
