#pragma once

// The inverse of optics/eeprom.h: a ModuleReading written as the EEPROM pages a module of its
// spec would hold, so that the simulator's modules are read by the same decoder (and the same
// collector) as real ones, and so that tests can round-trip. Layout by spec:
//
//   SFF-8472  page00 = A0h (256 bytes), a2 = A2h (256 bytes): internally calibrated
//             diagnostics, alarm and warning flags implemented; no a2 when the reading has no
//             diagnostics (A0h byte 92 then says so).
//   SFF-8636  page00 (lower page + upper page 00h), upper[03h] thresholds; up to 4 lanes.
//   CMIS 5.0  page00 (lower page + upper page 00h), upper[01h] advertising (the monitors, the
//             Tx bias multiplier: x1, or x2/x4 when a bias exceeds 131 mA), upper[02h]
//             thresholds, upper[11h] lane flags and monitors; up to 8 lanes (bank 0),
//             application 1 advertising the lane count.
//
// Values are rounded to the specs' units and clamped to their ranges (power 0.1 µW to 6.5535
// mW, so -40 to 8.16 dBm). A lane value that is nullopt, or a quantity the reading lacks, is
// written as 0; thresholds the reading lacks stay all zeros (which decodes as none). Media
// names, form factors and flags must be ones the decoder knows (eeprom_map.h; flags as
// optics/module.h names them, "rx_los:lane2"); an unknown one is InvalidArgument, as are more
// lanes than the spec has and identity strings longer than their field. Checksums are
// written.

#include "absl/status/statusor.h"
#include "optics/eeprom.h"
#include "optics/module.h"

namespace railwatch::optics {

absl::StatusOr<ModuleEeprom> EncodeEeprom(const ModuleReading& reading);

}  // namespace railwatch::optics
