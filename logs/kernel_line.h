#pragma once

// The shapes kernel messages come in, before anything is made of what they say: /dev/kmsg
// records, the prefixes dmesg, `dmesg -T`, journalctl, syslog and mail quoting put in front of
// a message, and the device a message names ("mlx5_core 0000:0d:00.0: ...").
// logs/kernel_messages.h turns the messages into events.

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace railwatch::logs {

// One record of /dev/kmsg (Documentation/ABI/testing/dev-kmsg):
//   "PRIORITY,SEQUENCE,TIMESTAMP_USEC,FLAGS[,...];MESSAGE\n" then " KEY=VALUE\n" dictionary
// lines (SUBSYSTEM=pci, DEVICE=+pci:0000:0d:00.0). PRIORITY is facility * 8 + level; the
// kernel's own messages have facility 0, what user space writes to /dev/kmsg facility 1 (the
// kernel enforces it, so a process cannot pass for the kernel).
struct KmsgRecord {
  int facility = 0;
  int level = 6;
  uint64_t seq = 0;
  int64_t timestamp_usec = 0;  // the kernel's clock (since boot), microseconds
  bool continuation = false;   // FLAGS 'c' (an old kernel's fragment of a longer line)
  std::string message;         // as the kernel escaped it (non-printable bytes as \xNN)
  std::vector<std::pair<std::string, std::string>> dictionary;

  // A dictionary value, "" when absent.
  std::string Dictionary(absl::string_view key) const;
};

// Parses one record (its header line, optionally followed by dictionary lines). nullopt when
// `text` is not one; `why` (when given) says what is wrong.
std::optional<KmsgRecord> ParseKmsgRecord(absl::string_view text, std::string* why = nullptr);

// The syslog name of a level: emerg alert crit err warning notice info debug.
absl::string_view LevelName(int level);

namespace kernel {

// A pasted line with what dmesg, journalctl, syslog and mail put in front of the kernel's
// message taken off.
struct TextLine {
  absl::string_view message;  // the kernel's message, prefixes removed
  int64_t time_unix_nano = 0;  // from `dmesg -T`, journal or ISO prefixes
  absl::string_view uptime;    // "445.937186" from a dmesg "[  445.937186]" prefix
  std::string host;            // from "<host> kernel:" (journal, syslog)
  int level = -1;              // from "<4>" (dmesg -r) or a kmsg record
  int64_t seq = -1;            // from a kmsg record
  bool kmsg_record = false;    // "PRI,SEQ,TS,FLAGS;" (cat /dev/kmsg)
  // The line had a prefix only the kernel's messages have (a dmesg or journal "kernel:" prefix,
  // a kmsg record): it is a kernel message whatever it says.
  bool kernel_prefix = false;
  bool quoted = false;  // "> " mail quoting was removed
};

// Removes, in order: mail quoting ("> ", repeated), leading blanks (patch-text indents), a kmsg
// record header, "<N>", journal/syslog "Mon DD hh:mm:ss host kernel: " (or an ISO time), `dmesg
// -T` "[Sun Dec  1 14:54:40 2024] " (maybe followed by "host kernel: "), dmesg "[  12.345678] "
// with the caller id "[ T1645] " after it. `now` gives the year of a journal time.
TextLine StripKernelPrefixes(absl::string_view raw, absl::Time now);

// A shell prompt line that runs dmesg or journalctl ("user@host:~$ dmesg | grep mlx5",
// "> store01 ~ # journalctl -b -1 | grep mlx5"): the kernel lines that follow are its output.
bool IsKernelLogCommand(absl::string_view line);

// Who printed a message, as the kernel's printk helpers put it in front:
//   dev_printk       "<driver> <BDF>: <text>"                 (mlx5_core 0000:0d:00.0: ...)
//   netdev/ibdev     "<driver> <BDF> <netdev|ibdev>: <text>"  (bnxt_en 0000:19:00.0 eno1np0: ...)
//   ib class device  "infiniband <ibdev>: <text>"
//   ipoib            "<ibdev>, <port>: <text>"                (mlx5_0, 1: ...)
//   driver core      "<driver>: probe of <BDF> failed with error <n>"
// mlx5's "<func>:<line>:(pid <n>): " after that (older kernels repeat the BDF before it) and the
// AER driver's "AER: " are taken off too and kept apart.
struct Origin {
  absl::string_view driver;  // "mlx5_core", "pcieport", "infiniband", "" when none
  absl::string_view pci;     // "0000:0d:00.0"
  absl::string_view name;    // the netdev or RDMA device after the BDF (or after "infiniband")
  absl::string_view port;    // ipoib's port
  absl::string_view func;    // mlx5 "poll_health"
  absl::string_view text;    // the message itself
  bool aer = false;          // "AER: " was removed
  bool rdma_name = false;    // `name` is an RDMA device (mlx5_0, rocep7s0f1), not a netdev
};

// False when the message names no driver or device in one of those ways.
bool ParseOrigin(absl::string_view message, Origin* origin);

// "0000:0d:00.0" (domain:bus:device.function, hex; the domain may have 4 or more digits).
bool IsPciAddress(absl::string_view s);

// The adapter of a PCI function: its address without the function ("0000:0d:00"). The
// physical functions of one adapter differ only in the function number.
absl::string_view PciAdapter(absl::string_view pci);

// Whether a device name after the BDF is an RDMA device (mlx5_0, rocep7s0f1, ibp12s0,
// bnxt_re0, irdma1, efa_0 ...) rather than a netdev (eno1np0, ens1f0, eth0, ib0).
bool IsRdmaDeviceName(absl::string_view name);

}  // namespace kernel
}  // namespace railwatch::logs
