#pragma once

// What the kernel-message parser's parts share (logs/kernel_messages.cc: the driver messages;
// logs/kernel_pcie.cc: AER, DPC, slot power, link bandwidth): one message being classified, and
// the blocks still open (a message that several lines make).

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "logs/kernel_line.h"
#include "logs/log_event.h"
#include "logs/log_parser.h"
#include "logs/parse_context.h"

namespace railwatch::logs::kernel {

using internal::Outcome;

// One kernel message with what is known of it.
struct Message {
  absl::string_view raw;  // the line or record as fed
  int line = 0;
  int64_t time_unix_nano = 0;
  absl::string_view uptime;  // seconds since boot as written ("445.937186")
  absl::string_view host;
  int level = -1;
  int64_t seq = -1;
  Origin origin;           // who printed it (empty when ParseOrigin found none)
  bool has_origin = false;
  absl::string_view text;  // the message after the origin (or all of it)
  // Identity, from the origin or the kmsg record's dictionary.
  absl::string_view pci, device, interface;
};

// A message of several lines, open until a line of its device is not part of it.
enum class BlockKind { kHealth, kAer, kDpc, kProbe, kLink };

struct Block {
  BlockKind kind = BlockKind::kHealth;
  LogEvent event;
  std::vector<std::string> values;    // health: assert_var[i]; AER, DPC: error bit names
  std::vector<std::string> numbers;   // AER, DPC: error bit numbers
  bool partial = false;               // AER: began at its detail lines (its first line was cut)
};

// An AER "error message received from <BDF>" line of a root port, waiting for the BDF's block.
struct AerHeader {
  std::string root_port;
  std::string severity;  // corrected, nonfatal, fatal
  bool multiple = false;
  LogEvent event;        // emitted on its own when no block comes
};

class Classifier {
 public:
  Classifier(std::string source, LogParser::Stats& stats)
      : source_(std::move(source)), stats_(stats) {}

  void set_out(std::vector<LogEvent>* out) { out_ = out; }

  // Classifies one message: kEvent when it made or joined an event, kKnown when it is a kernel
  // message of no interest, kMalformed (with a problem) when it looked like one of ours but did
  // not parse, kNotMine when it has no origin (the caller decides whether it is a kernel line).
  Outcome Handle(Message m);

  // Text that continues the last line (wrapped by a mailer): added to the block that line
  // joined, if it is still open. True when there was one.
  bool Continue(absl::string_view text);

  // Emits every open block and unclaimed AER header.
  void FlushAll();

 private:
  LogEvent Begin(absl::string_view kind, const Message& m) const;
  void Emit(LogEvent e);
  void Problem(int line, std::string reason);
  void Close(const std::string& pci);
  void CloseBlock(Block& b);
  Block& Open(BlockKind kind, LogEvent e, const Message& m);

  // Lines that continue an open block of the message's device.
  bool ContinueBlock(const Message& m, Block& b);
  bool ContinueHealth(const Message& m, Block& b);
  bool ContinueAer(const Message& m, Block& b);
  bool ContinueProbe(const Message& m, Block& b);
  bool ContinueLink(absl::string_view text, Block& b);

  // Classifiers, each returning kNotMine when the message is not its own.
  Outcome Pcie(const Message& m);        // kernel_pcie.cc
  Outcome Mlx5(const Message& m);
  Outcome Broadcom(const Message& m);
  Outcome Rdma(const Message& m);
  Outcome Generic(const Message& m);

  // kernel_pcie.cc
  Outcome AerBusError(const Message& m, absl::string_view rest);
  Outcome AerDetail(const Message& m, absl::string_view text, Block* b);
  Outcome AerHeaderLine(const Message& m, absl::string_view text);
  void FinishAer(Block& b);

  std::string source_;
  LogParser::Stats& stats_;
  std::vector<LogEvent>* out_ = nullptr;
  std::map<std::string, Block> open_;             // by PCI address
  std::map<std::string, AerHeader> aer_headers_;  // by the address the error came from
  std::string last_block_;                        // the address of the block the last line joined
  // The PCI function of a netdev or RDMA device, from lines that name both ("ice 0000:07:00.1
  // rocep7s0f1: ..."), for lines that name the device only ("infiniband rocep7s0f1: ...").
  std::map<std::string, std::string> pci_of_name_;
};

// Bounds on what is held open: a flood of partial blocks cannot grow memory.
inline constexpr size_t kMaxOpenBlocks = 64;
inline constexpr size_t kMaxMessageField = 300;

// Sets `key` when `value` is not empty.
inline void Put(LogEvent& e, absl::string_view key, absl::string_view value) {
  if (!value.empty()) e.Set(std::string_view(key.data(), key.size()), std::string(value));
}

}  // namespace railwatch::logs::kernel
