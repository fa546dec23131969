#include "logs/nccl_info.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "logs/parse_context.h"
#include "logs/text_scan.h"

namespace railwatch::logs::internal {
namespace {

using scan::IsDigits;
using scan::IsInteger;
using scan::Trim;
using scan::TrimLeft;
using scan::Words;

// NCCL's camelCase keys as our snake_case field names.
std::string FieldName(absl::string_view key) {
  if (key == "nranks" || key == "nRanks") return "nranks";
  if (key == "nNodes") return "nnodes";
  if (key == "MNNVL") return "mnnvl";
  std::string out;
  for (char c : key) {
    if (c >= 'A' && c <= 'Z') {
      if (!out.empty()) out.push_back('_');
      out.push_back(static_cast<char>(c - 'A' + 'a'));
    } else {
      out.push_back(c);
    }
  }
  return out;
}

// "key value key value ..." into fields.
void PairsToFields(const std::vector<absl::string_view>& w, size_t from, LogEvent& e) {
  for (size_t i = from; i + 1 < w.size(); i += 2) e.Set(FieldName(w[i]), std::string(w[i + 1]));
}

// "eth0:10.0.0.1" / "ib0:fe80::1%ib0" / "eth0:1:10.0.0.1" (an alias) -> interface, address.
void SplitIfaceAddr(absl::string_view s, absl::string_view* iface, absl::string_view* addr) {
  size_t last = s.rfind(':');
  if (last != absl::string_view::npos) {
    absl::string_view tail = s.substr(last + 1);
    if (std::count(tail.begin(), tail.end(), '.') == 3 &&
        tail.find_first_not_of("0123456789.") == absl::string_view::npos) {
      *iface = s.substr(0, last);
      *addr = tail;
      return;
    }
  }
  size_t first = s.find(':');
  *iface = s.substr(0, first);
  *addr = first == absl::string_view::npos ? absl::string_view() : s.substr(first + 1);
}

// "[0]eth0:10.0.0.1<0>" -> "eth0:10.0.0.1".
absl::string_view StripIndexAndPort(absl::string_view w) {
  if (absl::StartsWith(w, "[")) {
    size_t close = w.find(']');
    if (close != absl::string_view::npos) w.remove_prefix(close + 1);
  }
  absl::string_view addr, port;
  if (scan::SplitAddrPort(w, &addr, &port)) return addr;
  return w;
}

// Bootstrap : Using [0]ens192f1:10.150.178.134<0>   (<= 2.10)
// Bootstrap : Using eth0:10.0.139.244<0>            (>= 2.11)
bool Bootstrap(absl::string_view m, LogEvent& e) {
  bool found;
  absl::string_view list = scan::After(m, "Using ", &found);
  if (!found) return false;
  std::vector<std::string> entries;
  for (absl::string_view w : Words(list)) {
    absl::string_view entry = StripIndexAndPort(w);
    if (entries.empty()) {
      absl::string_view iface, addr;
      SplitIfaceAddr(entry, &iface, &addr);
      e.kind = "nccl.bootstrap";
      Set(e, "interface", iface);
      SetIf(e, "address", addr);
    }
    entries.emplace_back(entry);
  }
  if (entries.empty()) return false;
  e.Set("interfaces", absl::StrJoin(entries, ","));
  return true;
}

bool NetPlugin(absl::string_view m, LogEvent& e) {
  absl::string_view body = TrimLeft(m.substr(10));
  absl::ConsumePrefix(&body, ":");
  body = Trim(body);
  absl::string_view result, plugin;
  bool found;
  if (absl::string_view r = scan::After(body, "Loaded net plugin ", &found); found) {
    result = "loaded";
    plugin = Trim(r.substr(0, r.find(" (")));
  } else if (absl::string_view r = scan::After(body, "Plugin load returned ", &found); found) {
    result = "load_failed";
    absl::string_view after = scan::After(r, " : ", &found);
    plugin = after.substr(0, after.find(':'));
  } else if (absl::StrContains(body, "No plugin found") ||
             absl::StrContains(body, "Could not find") || absl::StrContains(body, "internal")) {
    result = "internal";
    size_t lp = body.find('(');
    if (lp != absl::string_view::npos) {
      plugin = body.substr(lp + 1, body.find(')', lp) - lp - 1);
    } else if (absl::string_view r = scan::After(body, "find: ", &found); found) {
      plugin = scan::StripTrailingDot(scan::LeadingWord(r));
    }
  } else {
    return false;
  }
  e.kind = "nccl.net_plugin";
  Set(e, "result", result);
  SetIf(e, "plugin", plugin);
  Set(e, "detail", body);
  return true;
}

// NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/RoCE [RO]; OOB eth0:10.0.0.4<0>
// NET/Socket : Using [0]eth0:10.0.139.244<0>
bool NetDevices(absl::string_view m, LogEvent& e) {
  absl::string_view transport = m.substr(4, m.find_first_of(" :", 4) - 4);
  bool found;
  absl::string_view list = scan::After(m, "Using ", &found);
  absl::string_view oob;
  size_t oob_at = list.find("OOB ");
  if (oob_at != absl::string_view::npos) {
    oob = Trim(list.substr(oob_at + 4));
    list = list.substr(0, oob_at);
  }
  std::vector<std::string> devices, names, ports, link_layers;
  bool sharp = false, relaxed_ordering = false;
  for (absl::string_view w : Words(list)) {
    while (!w.empty() && w.back() == ';') w.remove_suffix(1);
    if (w == "[RO]") {
      relaxed_ordering = true;
      continue;
    }
    if (w.empty() || w[0] != '[') continue;
    absl::string_view entry = StripIndexAndPort(w);
    devices.emplace_back(entry);
    if (transport == "Socket") continue;
    // mlx5_0:1/RoCE[/SHARP]
    std::vector<absl::string_view> parts = absl::StrSplit(entry, '/');
    if (parts.empty()) continue;
    size_t colon = parts[0].find(':');
    names.emplace_back(parts[0].substr(0, colon));
    ports.emplace_back(colon == absl::string_view::npos ? "" : parts[0].substr(colon + 1));
    if (parts.size() > 1 &&
        std::find(link_layers.begin(), link_layers.end(), parts[1]) == link_layers.end()) {
      link_layers.emplace_back(parts[1]);
    }
    if (absl::StrContains(entry, "/SHARP")) sharp = true;
  }
  if (devices.empty()) return false;
  e.kind = "nccl.net";
  Set(e, "transport", transport);
  Set(e, "ndevs", absl::StrCat(devices.size()));
  if (transport == "Socket") {
    e.Set("interfaces", absl::StrJoin(devices, ","));
    absl::string_view iface, addr;
    SplitIfaceAddr(devices[0], &iface, &addr);
    Set(e, "interface", iface);
    SetIf(e, "address", addr);
  } else {
    e.Set("devices", absl::StrJoin(devices, ","));
    e.Set("device_names", absl::StrJoin(names, ","));
    e.Set("ports", absl::StrJoin(ports, ","));
    if (!link_layers.empty()) e.Set("link_layers", absl::StrJoin(link_layers, ","));
    if (sharp) e.Set("sharp", "1");
    if (relaxed_ordering) e.Set("relaxed_ordering", "1");
  }
  if (!oob.empty()) {
    absl::string_view iface, addr;
    SplitIfaceAddr(StripIndexAndPort(oob), &iface, &addr);
    Set(e, "oob_interface", iface);
    SetIf(e, "oob_address", addr);
  }
  return true;
}

// [ncclCommInitRank] comm 0x.. rank 3 nranks 4 cudaDev 1 [nvmlDev 1] busId 8000 [commId 0x..]
//   - Init START|COMPLETE;  comm 0x.. ... - Destroy COMPLETE;  bootstrapSplit: comm .. - DONE;
// comm 0x.. rank 3 nRanks 4 nNodes 2 localRanks 2 localRank 1 MNNVL 0
bool Communicator(absl::string_view m, LogEvent& e) {
  size_t dash = m.rfind(" - ");
  absl::string_view head = dash == absl::string_view::npos ? m : m.substr(0, dash);
  absl::string_view phase = dash == absl::string_view::npos ? "" : Trim(m.substr(dash + 3));
  std::vector<absl::string_view> w = Words(head);
  size_t i = 0;
  absl::string_view api;
  if (!w.empty() && w[0] != "comm") {
    api = w[0];
    absl::ConsumeSuffix(&api, ":");
    i = 1;
  }
  if (i >= w.size() || w[i] != "comm") return false;
  std::vector<absl::string_view> phase_words = Words(phase);
  absl::string_view action = phase_words.empty() ? "" : phase_words.front();
  if (api == "bootstrapSplit") {
    e.kind = "nccl.comm_split";
  } else if (action == "Init") {
    e.kind = "nccl.comm_init";
  } else if (action == "Destroy" || action == "Abort" || action == "Finalize") {
    e.kind = "nccl.comm_destroy";
  } else if (phase.empty() && absl::StrContains(head, " nNodes ")) {
    e.kind = "nccl.comm_info";
  } else {
    return false;
  }
  SetIf(e, "api", api);
  PairsToFields(w, i, e);
  if (e.kind == "nccl.comm_destroy") Set(e, "action", action);
  if (!phase_words.empty()) Set(e, "phase", phase_words.back());
  return true;
}

// Init timings - ncclCommInitRank: rank 3 nranks 16 total 2.17 (kernels 0.25, alloc 1.56, ...)
bool InitTimings(absl::string_view m, LogEvent& e) {
  bool found;
  absl::string_view r = scan::After(m, "Init timings - ", &found);
  size_t colon = r.find(':');
  if (colon == absl::string_view::npos) return false;
  e.kind = "nccl.init_timings";
  Set(e, "api", r.substr(0, colon));
  absl::string_view rest = r.substr(colon + 1);
  size_t lp = rest.find('(');
  std::vector<absl::string_view> w = Words(rest.substr(0, lp));
  for (size_t i = 0; i + 1 < w.size(); i += 2) {
    e.Set(w[i] == "total" ? "total_s" : FieldName(w[i]), std::string(w[i + 1]));
  }
  if (lp != absl::string_view::npos) {
    absl::string_view inner = rest.substr(lp + 1, rest.find(')', lp) - lp - 1);
    for (absl::string_view part : absl::StrSplit(inner, ',')) {
      std::vector<absl::string_view> kv = Words(part);
      if (kv.size() == 2) e.Set(absl::StrCat(kv[0], "_s"), std::string(kv[1]));
    }
  }
  return true;
}

// "0[1e0]" -> rank 0, id 1e0 (a PCI busId before ~2.19, the nvmlDev after).
bool RankAndId(absl::string_view s, absl::string_view* rank, absl::string_view* id) {
  size_t lb = s.find('[');
  if (lb == absl::string_view::npos || s.back() != ']') return false;
  *rank = s.substr(0, lb);
  *id = s.substr(lb + 1, s.size() - lb - 2);
  return IsDigits(*rank);
}

// Channel 00 : 0[1e0] -> 1[1e0] [receive] via NET/Socket/0 | Ring 01 : 2[b2000] -> 5[3d000]
// [receive] via NET/IB/3 | Channel 01/0 : 0[0] -> 1[0] [send] via NET/IB/0/GDRDMA |
// Channel 00/02 :    0   1  (the ring order; "/02" is then the number of channels)
bool Channel(absl::string_view m, LogEvent& e) {
  std::vector<absl::string_view> w = Words(m);
  if (w.size() < 4 || w[2] != ":") return false;
  absl::string_view num = w[1], sub;
  size_t slash = num.find('/');
  if (slash != absl::string_view::npos) {
    sub = num.substr(slash + 1);
    num = num.substr(0, slash);
  }
  if (!IsDigits(num)) return false;
  if (w.size() >= 6 && w[4] == "->") {
    absl::string_view from_rank, from_id, to_rank, to_id;
    if (!RankAndId(w[3], &from_rank, &from_id) || !RankAndId(w[5], &to_rank, &to_id)) {
      return false;
    }
    e.kind = "nccl.channel";
    Set(e, "channel", num);
    SetIf(e, "conn", sub);
    Set(e, "from_rank", from_rank);
    Set(e, "from_id", from_id);
    Set(e, "to_rank", to_rank);
    Set(e, "to_id", to_id);
    for (size_t i = 6; i < w.size(); ++i) {
      if (w[i] == "[send]" || w[i] == "[receive]") {
        Set(e, "direction", w[i].substr(1, w[i].size() - 2));
      } else if (w[i] == "via" && i + 1 < w.size()) {
        absl::string_view via = w[i + 1];
        Set(e, "via", via);
        if (absl::StartsWith(via, "NET/")) {
          std::vector<absl::string_view> parts = absl::StrSplit(via, '/');
          if (parts.size() > 1) Set(e, "net", parts[1]);
          if (parts.size() > 2) SetIf(e, "net_dev", scan::LeadingInteger(parts[2]));
          if (absl::StrContains(via, "GDRDMA")) e.Set("gdr", "1");
        }
        ++i;
      }
    }
    return true;
  }
  // The ring order: only ranks follow.
  if (sub.empty()) return false;
  std::vector<absl::string_view> order(w.begin() + 3, w.end());
  for (absl::string_view r : order) {
    if (!IsDigits(r)) return false;
  }
  e.kind = "nccl.ring";
  Set(e, "channel", num);
  Set(e, "nchannels", sub);
  e.Set("order", absl::StrJoin(order, " "));
  return true;
}

// 2 coll channels, 2 p2p channels, 1 p2p channels per peer  (and collnet, nvls in newer ones)
bool Channels(absl::string_view m, LogEvent& e) {
  bool any = false;
  for (absl::string_view part : absl::StrSplit(m, ',')) {
    std::vector<absl::string_view> w = Words(part);
    if (w.size() < 3 || !IsDigits(w[0]) || w[2] != "channels") continue;
    std::string key = absl::StrCat(w[1], "_channels");
    if (w.size() >= 5 && w[3] == "per" && w[4] == "peer") key = absl::StrCat(w[1], "_per_peer");
    e.Set(key, std::string(w[0]));
    any = true;
  }
  if (any) e.kind = "nccl.channels";
  return any;
}

}  // namespace

bool DescribeNcclVersion(absl::string_view m, LogEvent& e) {
  if (!absl::ConsumePrefix(&m, "NCCL version ")) return false;
  absl::string_view v = scan::LeadingWord(m);
  if (v.empty() || !scan::IsDigit(v[0])) return false;
  e.kind = "nccl.version";
  size_t plus = v.find("+cuda");
  Set(e, "version", v.substr(0, plus));
  if (plus != absl::string_view::npos) Set(e, "cuda", v.substr(plus + 5));
  return true;
}

bool ParseReturnTrace(absl::string_view m, absl::string_view* location, absl::string_view* code,
                      absl::string_view* thread) {
  std::vector<absl::string_view> w = Words(m);
  if (w.size() < 3 || w[1] != "->" || !IsInteger(w[2])) return false;
  size_t colon = w[0].rfind(':');
  if (colon == absl::string_view::npos || !IsDigits(w[0].substr(colon + 1))) return false;
  *location = w[0];
  *code = w[2];
  *thread = absl::string_view();
  size_t lb = m.find('[');
  if (w.size() > 3 && lb != absl::string_view::npos && m.back() == ']') {
    *thread = m.substr(lb + 1, m.size() - lb - 2);
  }
  return true;
}

bool DescribeNcclInfo(absl::string_view m, LogEvent& e) {
  bool found;
  if (absl::StartsWith(m, "NCCL version ")) return DescribeNcclVersion(m, e);
  if (absl::StartsWith(m, "Bootstrap") && absl::StrContains(m, "Using ")) return Bootstrap(m, e);
  if (absl::StartsWith(m, "NET/Plugin")) return NetPlugin(m, e);
  if (absl::StartsWith(m, "NET/")) {
    if (absl::StrContains(m, "No device found")) {
      e.kind = "nccl.no_device";
      Set(e, "transport", m.substr(4, m.find_first_of(" :", 4) - 4));
      return true;
    }
    if (absl::StrContains(m, "Using [")) return NetDevices(m, e);
    absl::string_view r = scan::After(m, "Using ", &found);
    std::vector<absl::string_view> w = Words(r);
    if (found && w.size() >= 7 && w[1] == "threads" && w[4] == "sockets") {
      e.kind = "nccl.socket_threads";
      Set(e, "threads", w[0]);
      Set(e, "sockets_per_thread", w[3]);
      return true;
    }
    return false;
  }
  if (absl::StartsWith(m, "Failed to open libibverbs")) {
    e.kind = "nccl.no_device";
    e.Set("transport", "IB");
    e.Set("reason", "libibverbs not found");
    return true;
  }
  if (absl::ConsumePrefix(&m, "Using network ")) {
    e.kind = "nccl.network";
    Set(e, "network", Trim(m));
    return true;
  }
  if (absl::StartsWith(m, "Init timings")) return InitTimings(m, e);
  if (absl::StrContains(m, "comm 0x")) return Communicator(m, e);
  if (absl::StartsWith(m, "Channel ") || absl::StartsWith(m, "Ring ")) return Channel(m, e);
  if (absl::StrContains(m, " coll channels")) return Channels(m, e);
  if (absl::string_view v = scan::After(m, " set by environment to ", &found); found) {
    e.kind = "nccl.env";
    Set(e, "name", scan::LeadingWord(m));
    Set(e, "value", scan::StripTrailingDot(Trim(v)));
    return true;
  }
  return false;
}

}  // namespace railwatch::logs::internal
