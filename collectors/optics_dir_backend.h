#pragma once

#include <string>
#include <string_view>

#include "collectors/optics_backend.h"

namespace railwatch {

// A ModuleBackend over files (the agent's --optics_dir=DIR, which the simulator writes; each
// file replaced with rename() so that a read sees a whole one):
//
//   DIR/<netdev>/module/a0      SFF-8472: A0h, 96 to 256 bytes (I2C address 0x50)
//   DIR/<netdev>/module/a2      SFF-8472: A2h, 118 to 256 bytes (0x51); absent without DOM
//   DIR/<netdev>/module/page00  SFF-8636, CMIS: lower page + upper page 00h, 256 bytes
//   DIR/<netdev>/module/pageNN  SFF-8636, CMIS: upper page NN (hex: page03, page11), its 128
//                               bytes at offsets 128-255 (bank 0)
//   DIR/<netdev>/fec            FEC statistics, "name: value" lines ('#' starts a comment):
//                                 active: RS            (RS, BaseR, LLRS or Off)
//                                 corrected_blocks: 1234
//                                 uncorrectable_blocks: 0
//                                 corrected_bits: 56789
//                                 corrected_blocks_lane1: 617   (per lane, from 1; optional)
//   DIR/<netdev>/driver         optional, one line ("mlx5_core"), as --ethtool_dumps has it
//
// Only the files present are read: a netdev without a module directory has no module, one
// without `fec` no FEC statistics (both NotFound, as for the kernel). A page file of the wrong
// size is left to the decoder, which says so; a `fec` line that is not "name: value" or names
// nothing known is a problem naming DIR/<netdev>/fec:LINE (FecStats::problems), and the rest
// of the file is used.
class DirModuleBackend final : public ModuleBackend {
 public:
  explicit DirModuleBackend(std::string dir) : dir_(std::move(dir)) {}

  absl::StatusOr<optics::ModuleEeprom> ReadModule(const std::string& netdev) override;
  absl::StatusOr<FecStats> ReadFec(const std::string& netdev) override;
  std::string Driver(const std::string& netdev) override;

  const std::string& dir() const { return dir_; }

 private:
  std::string dir_;
};

// Parses a `fec` file's text; `source` names it in FecStats::problems ("PATH:LINE: ...").
FecStats ParseFecFile(std::string_view text, std::string_view source);

}  // namespace railwatch
