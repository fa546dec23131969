#pragma once

// The port blocks ibdiagnet2.pm and ibdiagnet2.cables share (internal to ib/):
//
//   -------------------------------------------------------
//   Port=1 Lid=0x00b4 GUID=0xb0cf0e0300d33fc0 Device=54002 Port Name=ib-switch-sequoia/U1/P1/1/1
//   -------------------------------------------------------
//   <one value a line>
//   <blank line>
//
// after a "#" header (the ibdiagnet version, the command, the switch label explanation).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "ib/ib_records.h"
#include "ib/ib_text.h"

namespace railwatch::ib {

struct IbdiagnetPortHeader {
  int port = 0;
  std::optional<uint32_t> lid;
  IbGuid guid;
  std::optional<uint32_t> device_id;  // .pm only
  std::string port_name;              // verbatim: "ib-switch-sequoia/U1/P1/1/1"
};

// "Port=... Lid=... GUID=... [Device=...] Port Name=...": nullopt (and a problem) when the
// port number is missing or not 0..255; a LID, GUID or device that does not read is a problem and
// stays absent.
std::optional<IbdiagnetPortHeader> ReadIbdiagnetPortHeader(const TextLine& line,
                                                           std::string_view text,
                                                           ProblemSink& problems);

// A run of at least 10 dashes and nothing else: the lines around a block header.
bool IsDashLine(std::string_view text);

// The lines of a block file by what they are, for the block readers' state machines.
enum class IbdiagnetBlockLine { kBlank, kComment, kDashes, kHeader, kValue };
IbdiagnetBlockLine ClassifyBlockLine(std::string_view stripped);

// Where a block reader is in its input, and what each line is for it: the loop the .pm and
// .cables readers share. A blank line ends the open block; a header starts one (the reader
// reads it and says whether it did, Opened); a value line belongs to the open block, is skipped
// in a block whose header did not read, and is a problem outside any block.
class IbdiagnetBlockCursor {
 public:
  enum class Step { kSkip, kHeader, kValue };
  Step Next(const TextLine& line, std::string_view stripped, ProblemSink& problems);
  void Opened(bool header_read, int line_number);
  void Closed() { open_ = false; }
  // At the end of the input: a problem when a block is still open (every block ends with a
  // blank line; one that does not was cut short).
  void Finish(ProblemSink& problems) const;

 private:
  bool open_ = false;      // a block header seen and no blank line since
  bool skipping_ = false;  // in a block whose header did not read
  int header_line_ = 0;
  TextLine last_;
};

// ibdiagnet's "not available": N/A, NA (the .pm), empty.
bool IsNotAvailable(std::string_view value);

}  // namespace railwatch::ib
