#include "logs/nccl_errors.h"

#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "logs/codes.h"
#include "logs/parse_context.h"
#include "logs/text_scan.h"

namespace railwatch::logs::internal {
namespace {

using scan::IsInteger;
using scan::StripTrailing;
using scan::Trim;
using scan::TrimLeft;
using scan::Words;

// "IBV_WC_RETRY_EXC_ERR(12)" -> name, number; "12" -> "", "12".
void SplitNamedNumber(absl::string_view v, absl::string_view* name, absl::string_view* number) {
  size_t lp = v.find('(');
  if (lp != absl::string_view::npos && v.back() == ')') {
    *name = v.substr(0, lp);
    *number = v.substr(lp + 1, v.size() - lp - 2);
  } else {
    *name = absl::string_view();
    *number = v;
  }
}

void SetErrno(LogEvent& e, absl::string_view number, absl::string_view text) {
  int64_t err = -1;
  if (!number.empty()) {
    scan::ToInt(number, &err);
  } else if (!text.empty()) {
    err = ErrnoFromText(text);
  }
  if (err >= 0) {
    Set(e, "errno", absl::StrCat(err));
    SetIf(e, "errno_name", ErrnoName(err));
  }
}

// NET/IB completion errors, in all of NCCL's formats:
//   error_no_peer (<= 2.11):    Got completion with error 12, opcode 1, len 0, vendor err 129
//   error_with_peer (2.12-18):  Got completion from peer fe80::1%ib0<53249> with error 4, opcode
//                               32564, len 32564, vendor err 81 (Send)
//   status_kv (2.19+):          Got completion from peer 10.0.0.1<54862> with status=12 opcode=0
//                               len=0 vendor err 129 (Recv) localGid G remoteGidsG [hca mlx5_0]
//   status_named (newest):      ... with status=IBV_WC_RETRY_EXC_ERR(12) opcode=IBV_WC_SEND(0)
//                               vendor_err=129  localGid G remoteGidsG hca mlx5_0
bool ParseCompletion(absl::string_view m, LogEvent& e, std::string* problem) {
  size_t gc = m.find("Got completion");
  absl::string_view net = StripTrailing(Trim(m.substr(0, gc)), " :");
  absl::string_view rest = TrimLeft(m.substr(gc + 14));
  absl::string_view peer_addr, peer_port;
  bool with_peer = absl::ConsumePrefix(&rest, "from peer ");
  if (with_peer) {
    absl::string_view token = scan::LeadingWord(rest);
    scan::SplitAddrPort(token, &peer_addr, &peer_port);
    rest.remove_prefix(token.size());
  }
  bool found;
  absl::string_view body = scan::After(rest, "with ", &found);
  if (!found) {
    *problem = "IB completion error without 'with status/error'";
    return false;
  }
  std::vector<absl::string_view> w = Words(body);
  for (absl::string_view& t : w) t = StripTrailing(t, ",");
  absl::string_view status, status_name, opcode, opcode_name, len, vendor, direction, local_gid,
      remote_gid, dev, format;
  for (size_t i = 0; i < w.size(); ++i) {
    absl::string_view t = w[i];
    absl::string_view next = i + 1 < w.size() ? w[i + 1] : absl::string_view();
    if (t == "error" && status.empty()) {
      status = next;
      format = with_peer ? "error_with_peer" : "error_no_peer";
      ++i;
    } else if (absl::ConsumePrefix(&t, "status=")) {
      SplitNamedNumber(t, &status_name, &status);
      format = status_name.empty() ? "status_kv" : "status_named";
    } else if (t == "opcode") {
      opcode = next;
      ++i;
    } else if (absl::ConsumePrefix(&t, "opcode=")) {
      SplitNamedNumber(t, &opcode_name, &opcode);
    } else if (t == "len") {
      len = next;
      ++i;
    } else if (absl::ConsumePrefix(&t, "len=")) {
      len = t;
    } else if (t == "vendor" && next == "err" && i + 2 < w.size()) {
      vendor = w[i + 2];
      i += 2;
    } else if (absl::ConsumePrefix(&t, "vendor_err=")) {
      vendor = t;
    } else if (t.size() > 2 && t.front() == '(' && t.back() == ')') {
      direction = t.substr(1, t.size() - 2);
    } else if (t == "localGid") {
      local_gid = next;
      ++i;
    } else if (absl::ConsumePrefix(&t, "remoteGids") || absl::ConsumePrefix(&t, "remoteGid")) {
      // NCCL prints "remoteGids" glued to the GID.
      if (t.empty()) {
        remote_gid = next;
        ++i;
      } else {
        remote_gid = t;
      }
    } else if (t == "hca") {
      dev = next;
      ++i;
    }
  }
  if (!IsInteger(status)) {
    *problem = "IB completion error without a numeric status";
    return false;
  }
  e.kind = "nccl.ib_completion_error";
  SetIf(e, "net", net);
  SetIf(e, "peer_address", peer_addr);
  SetIf(e, "peer_port", peer_port);
  Set(e, "status", status);
  int64_t st = 0;
  scan::ToInt(status, &st);
  SetIf(e, "status_name", status_name.empty() ? IbvWcStatusName(st) : status_name);
  if (IsInteger(opcode)) Set(e, "opcode", opcode);
  SetIf(e, "opcode_name", opcode_name);
  if (IsInteger(len)) Set(e, "len", len);
  int64_t v;
  if (scan::ToInt(vendor, &v) && v >= 0) {
    Set(e, "vendor_err", vendor);
    Set(e, "vendor_err_hex", absl::StrCat("0x", absl::Hex(v)));
  }
  SetIf(e, "direction", direction);
  SetIf(e, "local_gid", local_gid);
  SetIf(e, "remote_gids", remote_gid);
  SetIf(e, "dev", dev);
  Set(e, "format", format);
  return true;
}

bool IsSocketCall(absl::string_view call) {
  static constexpr absl::string_view kCalls[] = {"recv", "send",  "connect",    "accept",
                                                 "poll", "bind",  "listen",     "socket",
                                                 "read", "write", "setsockopt", "getsockname"};
  for (absl::string_view c : kCalls) {
    if (call == c) return true;
  }
  return false;
}

// "Call to ibv_modify_qp failed with error Invalid argument" (<= 2.18) or
// "Call to ibv_modify_qp failed with 110 Connection timed out, on dev mlx5_1:1, curr state INIT,
//  next state RTR, local GID index 3, local GID G, remote GID G" (2.27).
void ParseCallFailed(absl::string_view call, absl::string_view after_call, LogEvent& e) {
  e.kind = "nccl.call_failed";
  Set(e, "call", call);
  bool found;
  absl::string_view rest = scan::After(after_call, "failed", &found);
  // (A view with no data splits into nothing, not into one empty piece.)
  std::vector<absl::string_view> parts = absl::StrSplit(rest, ", ");
  absl::string_view head = parts.empty() ? absl::string_view() : TrimLeft(parts[0]);
  absl::string_view number, text;
  if (absl::ConsumePrefix(&head, "with error ")) {
    text = head;
  } else if (absl::ConsumePrefix(&head, "with ")) {
    number = scan::LeadingInteger(head);
    text = Trim(head.substr(number.size()));
  } else if (absl::ConsumePrefix(&head, ": ")) {
    text = head;
  }
  text = StripTrailing(Trim(text), ".");
  SetErrno(e, number, text);
  SetIf(e, "error", text);
  for (size_t i = 1; i < parts.size(); ++i) {
    absl::string_view p = Trim(parts[i]);
    if (absl::ConsumePrefix(&p, "on dev ")) {
      size_t colon = p.rfind(':');
      if (colon != absl::string_view::npos && scan::IsDigits(p.substr(colon + 1))) {
        Set(e, "dev", p.substr(0, colon));
        Set(e, "port", p.substr(colon + 1));
      } else {
        Set(e, "dev", p);
      }
    } else if (absl::ConsumePrefix(&p, "curr state ")) {
      Set(e, "curr_state", p);
    } else if (absl::ConsumePrefix(&p, "next state ")) {
      Set(e, "next_state", p);
    } else if (absl::ConsumePrefix(&p, "local GID index ")) {
      Set(e, "local_gid_index", p);
    } else if (absl::ConsumePrefix(&p, "local GID ")) {
      Set(e, "local_gid", p);
    } else if (absl::ConsumePrefix(&p, "remote GID ")) {
      Set(e, "remote_gid", p);
    }
  }
}

// What went wrong in a socket/bootstrap message: the text after the last " : ", or after
// "returned ".
absl::string_view ErrorText(absl::string_view m) {
  size_t p = m.rfind(" : ");
  if (p != absl::string_view::npos) return StripTrailing(Trim(m.substr(p + 3)), ".");
  bool found;
  absl::string_view r = scan::After(m, "returned ", &found);
  if (found) return Trim(r.substr(0, r.find(',')));
  return absl::string_view();
}

void AddPeerAndError(absl::string_view m, LogEvent& e) {
  absl::string_view addr, port;
  if (scan::FindAddrPort(m, &addr, &port)) {
    Set(e, "peer_address", addr);
    Set(e, "peer_port", port);
  }
  absl::string_view text = ErrorText(m);
  SetIf(e, "error", text);
  SetErrno(e, "", text);
}

void ParseSocketError(absl::string_view m, LogEvent& e) {
  e.kind = "nccl.socket_error";
  std::string lower = scan::Lower(m);
  static constexpr absl::string_view kOps[] = {"connect", "recv", "send",  "accept",
                                               "poll",    "bind", "listen"};
  for (absl::string_view op : kOps) {
    if (lower.find(std::string(op)) != std::string::npos) {
      Set(e, "op", op);
      break;
    }
  }
  AddPeerAndError(m, e);
}

void ParseBootstrapError(absl::string_view m, LogEvent& e) {
  e.kind = "nccl.bootstrap_error";
  bool found;
  absl::string_view r = scan::After(m, "rank ", &found);
  if (found && IsInteger(scan::LeadingInteger(r))) Set(e, "rank", scan::LeadingInteger(r));
  AddPeerAndError(m, e);
}

// "NET/IB : mlx5_0:1 Got async event : port error".
void ParseAsyncEvent(absl::string_view m, LogEvent& e) {
  e.kind = "nccl.ib_async_event";
  size_t p = m.find("Got async event");
  std::vector<absl::string_view> before = Words(m.substr(0, p));
  if (!before.empty()) {
    absl::string_view devport = before.back();
    size_t colon = devport.rfind(':');
    if (colon != absl::string_view::npos && scan::IsDigits(devport.substr(colon + 1))) {
      Set(e, "dev", devport.substr(0, colon));
      Set(e, "port", devport.substr(colon + 1));
    }
  }
  absl::string_view ev = m.substr(p + 15);
  absl::ConsumePrefix(&ev, " :");
  SetIf(e, "event", Trim(ev));
}

bool StartsWithBootstrap(absl::string_view m) { return absl::StartsWithIgnoreCase(m, "bootstrap"); }

bool LooksLikeSocket(absl::string_view m, absl::string_view location) {
  return absl::StrContains(location, "socket") || absl::StartsWith(m, "Net :") ||
         absl::StartsWith(m, "NET/Socket") || absl::StartsWithIgnoreCase(m, "socket") ||
         absl::StrContains(m, "Connect to ");
}

}  // namespace

bool IsKnownNcclError(absl::string_view m) {
  return absl::StrContains(m, "Got completion") || absl::StrContains(m, "Got async event");
}

bool DescribeNcclError(absl::string_view m, absl::string_view location, LogEvent& e,
                       std::string* problem) {
  bool ok = true;
  bool found;
  if (absl::StrContains(m, "Got completion")) {
    ok = ParseCompletion(m, e, problem);
  } else if (absl::StrContains(m, "Got async event")) {
    ParseAsyncEvent(m, e);
  } else if (absl::StrContains(m, "No device found")) {
    e.kind = "nccl.no_device";
    if (absl::StartsWith(m, "NET/")) Set(e, "transport", scan::LeadingWord(m.substr(4)));
  } else if (absl::StrContains(location, "bootstrap") || StartsWithBootstrap(m)) {
    ParseBootstrapError(m, e);
  } else if (absl::string_view r = scan::After(m, "Call to ", &found); found) {
    absl::string_view call = scan::LeadingWord(r);
    if (IsSocketCall(call)) {
      ParseSocketError(m, e);
      Set(e, "op", call);
    } else {
      ParseCallFailed(call, r.substr(call.size()), e);
    }
  } else if (absl::StartsWith(m, "ibv_") && absl::StrContains(m, " failed")) {
    absl::string_view call = scan::LeadingWord(m);
    ParseCallFailed(call, m.substr(call.size()), e);
  } else if (LooksLikeSocket(m, location)) {
    ParseSocketError(m, e);
  }
  Set(e, "message", Trim(m));
  return ok;
}

}  // namespace railwatch::logs::internal
