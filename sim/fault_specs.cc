// The parsers of sim/fault_specs.h (all but ParsePfcDeadlock, which lives with the switch
// side's faults). Every error names the flag, the value and the form it expects.
#include "sim/fault_specs.h"

#include <cmath>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/text.h"
#include "sim/spec_parsing.h"

namespace railwatch::sim {
namespace {

bool PositiveRate(double v) { return v > 0 && std::isfinite(v); }
bool ShareBelowOne(double v) { return v > 0 && v < 1; }

// HOST@OFFSET[:EXTRA...] for the faults of a whole host.
absl::StatusOr<TimedSpec> ParseHostSpec(absl::string_view flag, absl::string_view spec,
                                        absl::string_view form, size_t max_extras) {
  absl::StatusOr<TimedSpec> parts = SplitTimedSpec(flag, spec, form, max_extras);
  if (parts.ok() && parts->body.find('/') != absl::string_view::npos) {
    return SpecError(flag, spec, "the fault is a whole host's: HOST without /DEVICE", form);
  }
  return parts;
}

}  // namespace

absl::StatusOr<RepeatedFlap> ParseRepeatedFlap(absl::string_view spec) {
  constexpr absl::string_view kFlag = "flap_repeat";
  constexpr absl::string_view kForm =
      "HOST/DEVICE/PORT@OFFSET:COUNT:PERIOD, e.g. gpu-node-002/mlx5_1/1@15s:5:7s";
  RepeatedFlap f;
  absl::StatusOr<TimedSpec> parts = SplitTimedSpec(kFlag, spec, kForm, 2);
  if (!parts.ok()) return parts.status();
  std::vector<absl::string_view> port = absl::StrSplit(parts->body, '/');
  if (port.size() != 3 || port[0].empty() || port[1].empty()) {
    return SpecError(kFlag, spec, absl::StrCat("\"", parts->body, "\" is not HOST/DEVICE/PORT"),
                     kForm);
  }
  if (!absl::SimpleAtoi(port[2], &f.port) || f.port < 1) {
    return SpecError(kFlag, spec, absl::StrCat("PORT \"", port[2], "\" is not a port number (1, 2 ...)"),
                     kForm);
  }
  f.host = std::string(port[0]);
  f.device = std::string(port[1]);
  f.at = parts->at;
  if (parts->extras.size() != 2) return SpecError(kFlag, spec, "COUNT and PERIOD are required", kForm);
  if (!absl::SimpleAtoi(parts->extras[0], &f.count) || f.count < 1) {
    return SpecError(kFlag, spec, absl::StrCat("COUNT \"", parts->extras[0], "\" is not a whole number >= 1"),
                     kForm);
  }
  absl::StatusOr<absl::Duration> period = ParseDuration(parts->extras[1]);
  if (!period.ok()) {
    return SpecError(kFlag, spec,
                     absl::StrCat("PERIOD \"", parts->extras[1], "\": ", period.status().message()),
                     kForm);
  }
  if (*period <= absl::ZeroDuration()) return SpecError(kFlag, spec, "PERIOD must be above 0", kForm);
  f.period = *period;
  return f;
}

absl::StatusOr<BitErrors> ParseBitErrors(absl::string_view spec) {
  return ParseNicFault<BitErrors>(
      "ber", spec, "HOST/DEVICE@OFFSET[:PER_MINUTE], e.g. gpu-node-004/mlx5_2@20s:120",
      &BitErrors::per_minute, PositiveRate, "PER_MINUTE (symbol errors a minute) must be above 0");
}

absl::StatusOr<Straggler> ParseStraggler(absl::string_view spec) {
  return ParseNicFault<Straggler>(
      "straggler", spec, "HOST/DEVICE@OFFSET[:FACTOR], e.g. gpu-node-005/mlx5_1@15s:0.5",
      &Straggler::factor, ShareBelowOne,
      "FACTOR is the share of its peers' traffic it moves, in (0, 1)");
}

absl::StatusOr<WrongPriority> ParseWrongPriority(absl::string_view spec) {
  absl::StatusOr<TimedSpec> parts =
      ParseHostSpec("wrong_priority", spec, "HOST@OFFSET, e.g. gpu-node-006@20s", 0);
  if (!parts.ok()) return parts.status();
  return WrongPriority{std::string(parts->body), parts->at};
}

absl::StatusOr<NicGone> ParseNicGone(absl::string_view spec) {
  return ParseNicFault<NicGone>("nic_gone", spec, "HOST/DEVICE@OFFSET, e.g. gpu-node-001/mlx5_0@15s");
}

absl::StatusOr<PacketLoss> ParsePacketLoss(absl::string_view spec) {
  return ParseNicFault<PacketLoss>(
      "packet_loss", spec, "HOST/DEVICE@OFFSET[:PER_SECOND], e.g. gpu-node-002/mlx5_3@15s:500",
      &PacketLoss::per_second, PositiveRate,
      "PER_SECOND (out-of-sequence packets a second) must be above 0");
}

absl::StatusOr<NcclError> ParseNcclError(absl::string_view spec) {
  constexpr absl::string_view kFlag = "nccl_error";
  constexpr absl::string_view kForm = "HOST@OFFSET[:timeout|ib_completion], e.g. gpu-node-001@15s:ib_completion";
  absl::StatusOr<TimedSpec> parts = ParseHostSpec(kFlag, spec, kForm, 1);
  if (!parts.ok()) return parts.status();
  NcclError e;
  e.host = std::string(parts->body);
  e.at = parts->at;
  if (!parts->extras.empty()) {
    if (parts->extras[0] != "timeout" && parts->extras[0] != "ib_completion") {
      return SpecError(kFlag, spec,
                       absl::StrCat("KIND \"", parts->extras[0], "\" is neither timeout nor ib_completion"),
                       kForm);
    }
    e.kind = std::string(parts->extras[0]);
  }
  return e;
}

absl::StatusOr<DriverReload> ParseDriverReload(absl::string_view spec) {
  return ParseNicFault<DriverReload>("driver_reload", spec,
                                     "HOST/DEVICE@OFFSET, e.g. gpu-node-002/mlx5_1@30s");
}

}  // namespace railwatch::sim
