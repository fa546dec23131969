#pragma once

// A pluggable module's EEPROM pages decoded into a ModuleReading (optics/module.h): SFF-8472
// (SFP: A0h identity, A2h diagnostics with internal or external calibration, thresholds,
// alarm and warning flags), SFF-8636 (QSFP+/QSFP28: lower page flags and diagnostics, upper
// page 00h identity, page 03h thresholds) and CMIS 4.0-5.x (QSFP-DD/OSFP/QSFP112: lower page
// state, flags and module monitors, page 00h identity, 01h advertising, 02h thresholds, 11h
// lane flags and monitors). Byte maps: optics/eeprom_map.h; the inverse: optics/eeprom_encode.h.
//
// Units as the specs store them: temperature signed 1/256 °C, supply voltage 100 µV, Tx bias
// 2 µA (CMIS: times the multiplier page 01h advertises), optical power 0.1 µW (converted to
// dBm, 0 reading -40 dBm). A threshold block that is all zeros is "no thresholds".
//
// No I/O: collectors/optics_backend.h reads the pages (the kernel, or the simulator's files).

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "optics/module.h"

namespace railwatch::optics {

// The pages read from one module.
struct ModuleEeprom {
  // I2C address 0x50, page 0, bytes 0-255: SFF-8472's A0h; SFF-8636 and CMIS's lower page
  // (0-127) followed by upper page 00h (128-255). SFF-8472 needs at least 96 bytes; the
  // others all 256.
  std::vector<uint8_t> page00;
  // SFF-8472 only: I2C address 0x51 (A2h) from byte 0, at least through byte 117 (thresholds,
  // calibration, diagnostics, flags). Empty: not read.
  std::vector<uint8_t> a2;
  // SFF-8636 and CMIS: upper pages of bank 0 by page number, each the 128 bytes at offsets
  // 128-255 of its page (03h for SFF-8636; 01h, 02h and 11h for CMIS). Absent: not read or not
  // implemented, and the decoder goes without.
  std::map<uint8_t, std::vector<uint8_t>> upper;
};

// The spec and form factor (kIdentifiers' name) of an SFF-8024 identifier byte;
// kUnknown and "" for one railwatch does not decode.
ModuleSpec SpecOfIdentifier(uint8_t identifier);
std::string_view FormFactorOfIdentifier(uint8_t identifier);

// InvalidArgument, naming the page and byte, for input too short for its spec, an identifier
// railwatch does not decode (0x00 reads "unknown or unspecified identifier 0x00") or an upper
// page that is not 128 bytes.
absl::StatusOr<ModuleReading> DecodeEeprom(const ModuleEeprom& eeprom);

// One read a backend makes: `length` bytes at `offset` of `page` (bank 0) at I2C address
// `i2c_address`, the unit ETHTOOL_MSG_MODULE_EEPROM_GET reads (never across the 128-byte
// half-page boundary).
struct PageRead {
  uint8_t i2c_address = 0x50;
  uint8_t page = 0;
  uint32_t offset = 0;
  uint32_t length = 128;
  bool operator==(const PageRead&) const = default;
};
// What to read next, given what has been read (page00 first: always both halves): call again
// after storing what these returned (a read that failed is not asked for twice when the
// caller passes it in `failed`) until it returns nothing. SFF-8472: A2h when A0h says it has
// diagnostics; SFF-8636: page 03h unless its memory is flat; CMIS: 01h unless flat, then 02h
// and 11h.
std::vector<PageRead> NextPageReads(const ModuleEeprom& eeprom,
                                    const std::vector<PageRead>& failed = {});
// Stores `data` read by `read` where DecodeEeprom expects it.
void StorePageRead(const PageRead& read, std::vector<uint8_t> data, ModuleEeprom& eeprom);

}  // namespace railwatch::optics
