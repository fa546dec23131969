#pragma once

// Readers of pasted optics, FEC and PHY tool output, as an engineer copies it from a terminal
// (docs/LINK_HEALTH.md, "Pasted tool output"; samples in tests/fixtures/optics, CATALOGUE.md
// sections N and V):
//
//   ethtool -m DEV                     the module EEPROM as ethtool decodes it: SFF-8472 (SFP,
//                                      single values), SFF-8636 (QSFP28: "(Channel N)" keys) and
//                                      CMIS (QSFP-DD, OSFP: "(Channel N)", "(Chan N)" flags,
//                                      "[ Yes, No, ... ]" lane lists); TAB or no indentation
//   ethtool [-I] --show-fec DEV        "FEC parameters for DEV:", the configured and active
//                                      encodings (old and new wording), -I: "Statistics:" with
//                                      corrected_blocks, uncorrectable_blocks, corrected_bits and
//                                      their "Lane N:" values
//   ethtool -S DEV --groups eth-phy    "Standard stats for DEV:" then "eth-phy-NAME: N" lines
//   mlxlink [-m] [-c] [-e] ...         dashed-underlined sections, "key<pad> : value", ANSI
//                                      colour codes, comma lists per lane, "[lo..hi]" ranges, BER
//                                      "<m>E-<e>" (15E-255 reads 0)
//   mlxlink ... --json                 {"result":{"output":{SECTION:{KEY: "text" | {"values":
//                                      [...]}}}},"status":{...}}; every number a string
//   SONiC show interfaces transceiver eeprom [PORT] [--dom]   ("PORT: SFP EEPROM detected", then
//                                      8-space "Key: value", continuation lines, 16-space
//                                      ChannelMonitorValues / ...ThresholdValues blocks)
//   SONiC show interfaces transceiver status [PORT]           ("PORT:", per-lane flags)
//   SONiC show interfaces counters fec-stats                  (a table; 136,403 thousands
//                                      separators; "N/A")
//
// A copied shell prompt with one of these commands (`]# ethtool -I --show-fec eth0`,
// `admin@sonic:~$ show int transceiver status Ethernet128`) names the device of the output that
// follows. Each block of output becomes one ToolReading (one per row of fec-stats): its fields as
// printed (repeated keys kept, in order) and what they mean, in optics::ModuleReading (module.h:
// units degrees C, V, mA, dBm), FecReading and PhyCounters. A value that should be a number and
// is not is a problem with its line and column, and the rest is read.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "optics/module.h"

namespace railwatch::optics {

enum class ToolFormat {
  kEthtoolModule,  // ethtool -m
  kEthtoolFec,     // ethtool [-I] --show-fec
  kEthtoolStats,   // ethtool -S DEV --groups eth-phy (and other standard groups)
  kMlxlink,        // mlxlink text
  kMlxlinkJson,    // mlxlink --json
  kSonicEeprom,    // show interfaces transceiver eeprom [--dom]
  kSonicStatus,    // show interfaces transceiver status
  kSonicFecStats,  // show interfaces counters fec-stats
};
// "ethtool -m", "ethtool --show-fec", "ethtool -S", "mlxlink", "mlxlink --json",
// "sonic transceiver eeprom", "sonic transceiver status", "sonic fec-stats".
std::string_view ToolFormatName(ToolFormat format);

// One "key: value" as printed.
struct ToolField {
  // mlxlink's section ("Module Info"), a SONiC sub-block ("ChannelMonitorValues"), ethtool's
  // "Statistics" (a lane: "Statistics/corrected_blocks"); "" elsewhere.
  std::string section;
  std::string key;    // trimmed, lane suffix kept: "Laser tx bias current (Channel 1)"
  std::string value;  // trimmed, units kept, ANSI codes removed; a JSON list joined by ","
  int line = 0;       // 1-based, of the input given to the reader
  int column = 0;     // 1-based, of the value (of the key in mlxlink --json)
};

// Forward error correction: what is configured and active, and its counters.
struct FecReading {
  std::vector<std::string> configured;  // ethtool: "RS", "BaseR", "Off", "Auto", "None"
  std::vector<std::string> active;      // ethtool: "RS"
  std::string mode;                     // mlxlink: "Standard RS-FEC - RS(528,514)"
  // Codewords FEC corrected, could not correct, and bits it corrected; SONiC's FEC_CORR,
  // FEC_UNCORR. Absent when the tool did not print them.
  std::optional<uint64_t> corrected_blocks, uncorrectable_blocks, corrected_bits;
  std::vector<uint64_t> corrected_blocks_lanes, uncorrectable_blocks_lanes, corrected_bits_lanes;
  std::optional<uint64_t> symbol_errors;            // SONiC FEC_SYMBOL_ERR
  std::optional<double> pre_fec_ber, post_fec_ber;  // SONiC FEC_PRE_BER, FEC_POST_BER
  std::string state;                                // SONiC's port state: "U", "D"
  // mlxlink's "Histogram of FEC Errors": codewords by the number of symbol errors in them, in
  // bin order (the JSON sorts "Bin 10" before "Bin 2": re-sorted numerically).
  struct Bin {
    int bin = 0;
    std::string range;  // "[0]", "[1]" ...
    uint64_t count = 0;
  };
  std::vector<Bin> histogram;
};

// The PHY's own view of the link: mlxlink's operational, troubleshooting and "Physical
// Counters and BER Info" sections, ethtool's eth-phy group.
struct PhyCounters {
  std::string state, physical_state;  // "Active", "LinkUp" / "ETH_AN_FSM_ENABLE"
  std::string speed, width;           // "IB-NDR", "100G", "400G"; "4x"
  std::string fec;                    // "Standard RS-FEC - RS(528,514)"
  std::optional<double> minutes_since_clear;
  std::optional<uint64_t> effective_errors;
  // Bit error rates; mlxlink's "15E-255" (its way of printing zero) reads 0.
  std::optional<double> effective_ber, raw_ber, symbol_ber;
  std::vector<std::optional<double>> raw_ber_lanes;
  std::vector<std::optional<uint64_t>> raw_errors_lanes;
  std::optional<uint64_t> link_down, link_error_recovery;
  std::optional<uint64_t> symbol_errors;  // eth-phy-SymbolErrorDuringCarrier, mlxlink Symbol Errors
  std::optional<int64_t> status_opcode;   // mlxlink: 0 when no issue
  std::string recommendation;             // mlxlink: "No issue was observed"
  std::string firmware, mft_version;
  std::string enabled_speeds, supported_speeds;  // "0x000000f1 (NDR,HDR,EDR,FDR,SDR)"
};

// One block of tool output.
struct ToolReading {
  ToolFormat format = ToolFormat::kEthtoolModule;
  // The device as the paste names it: "eth0", "Ethernet144", "/dev/mst/mt41692_pciconf0";
  // "" when it does not say.
  std::string device;
  std::string port;               // mlxlink's -p, "" otherwise
  std::string command;            // the command pasted before it, prompt removed; "" when none
  int line = 0;                   // its first line
  std::vector<ToolField> fields;  // as printed, in order, repeated keys kept
  std::optional<ModuleReading> module;
  std::optional<FecReading> fec;
  std::optional<PhyCounters> phy;
  // What ModuleReading does not carry: the cable ("Passive copper cable", from mlxlink's Cable
  // Type) and the module's state ("Ready state", CMIS "DP_PRE_INIT_CHECK").
  std::string cable, module_state;

  // Every value of `key` (in `section`, when given), in printed order.
  std::vector<std::string> Values(std::string_view key, std::string_view section = {}) const;
  // The first value of `key`, "" when absent.
  std::string Value(std::string_view key, std::string_view section = {}) const;
  // "eth0", "/dev/mst/mt41692_pciconf0 port 1", "Ethernet0"; "" when unnamed.
  std::string Name() const;
};

struct ToolProblem {
  int line = 0;
  int column = 0;  // 0 when the whole line is meant
  std::string message;
  // "SOURCE:LINE:COLUMN: message" (no column when 0).
  std::string ToString(std::string_view source) const;
};

struct ToolOutput {
  std::vector<ToolReading> readings;  // in input order
  std::vector<ToolProblem> problems;  // at most 100, then one "and N more problems"
  int lines = 0;  // lines taken: records, titles, underlines, these tools' prompts
};

// Line-at-a-time reader, so that this output can sit among other lines (a log, rdma output):
// Feed() takes the lines that belong to a block of one of these tools, or to their prompt
// lines, and declines the rest. A block closes at the first line that is not its own.
class ToolOutputReader {
 public:
  ToolOutputReader();
  ~ToolOutputReader();
  ToolOutputReader(ToolOutputReader&&) noexcept;
  ToolOutputReader& operator=(ToolOutputReader&&) noexcept;

  // One line without its newline (a CR is dropped), numbered `line_number`. True when taken.
  bool Feed(std::string_view line, int line_number);
  // End of input: closes the open block.
  void Finish();
  ToolOutput TakeOutput();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// A whole paste: mlxlink --json when it is one (ReadMlxlinkJson), else every line through a
// ToolOutputReader (lines that are not these tools' are skipped).
ToolOutput ReadToolOutput(std::string_view text);

// Whether the start of a text is mlxlink --json output (after any prompt lines): '{' with
// "result", "output" and one of mlxlink's sections.
bool LooksLikeMlxlinkJson(std::string_view head);
// mlxlink --json, whole: one reading (with the device of a prompt line before it). Invalid JSON
// is a problem at its line and column.
ToolOutput ReadMlxlinkJson(std::string_view text);

// The formats of the readings `text` holds, in order of first appearance.
std::vector<ToolFormat> DetectFormats(std::string_view text);

}  // namespace railwatch::optics
