#include "ib/iblinkinfo.h"

#include <optional>
#include <utility>
#include <vector>

#include "ib/ib_text.h"

namespace railwatch::ib {
namespace {

// "4X" (iblinkinfo upper-cases the x).
std::optional<int> ParseWidth(std::string_view text) {
  LineScanner s(text);
  const std::optional<uint64_t> lanes = s.Decimal();
  if (!lanes || *lanes == 0 || *lanes > 32 || !(s.Consume("X") || s.Consume("x")) || !s.done()) {
    return std::nullopt;
  }
  return static_cast<int>(*lanes);
}

// "<lid> <port>[<ext>]" into `end`.
bool ReadLidPort(LineScanner& s, IbLinkEnd& end) {
  s.SkipBlanks();
  const std::optional<uint64_t> lid = s.Decimal();
  s.SkipBlanks();
  const std::optional<uint64_t> port = s.Decimal();
  if (!lid || *lid > UINT32_MAX || !port || *port > 255 || !s.Consume("[")) return false;
  if (!s.Until(']')) return false;  // the external port number, empty on most switches
  end.lid = static_cast<uint32_t>(*lid);
  end.port = static_cast<int>(*port);
  return true;
}

// "4X           2.5 Gbps Active/  LinkUp", "10.0 Gbps (FDR10)", or "Down/ Polling".
bool ReadLink(std::string_view text, IblinkinfoPort& out) {
  const size_t slash = text.rfind('/');
  if (slash == std::string_view::npos) return false;
  out.phys_state = std::string(StripBlanks(text.substr(slash + 1)));
  LineScanner s(text.substr(0, slash));
  std::vector<std::string_view> tokens;
  for (s.SkipBlanks(); !s.done(); s.SkipBlanks()) tokens.push_back(s.Token());
  if (tokens.empty()) return false;
  out.state = std::string(tokens.back());
  tokens.pop_back();
  if (tokens.empty()) return true;  // a down port prints only its states
  if (tokens.size() < 3 || tokens[2] != "Gbps") return false;
  const std::optional<int> width = ParseWidth(tokens[0]);
  const std::optional<double> lane = ParseDouble(tokens[1]);
  if (!width || !lane) return false;
  IbLinkSpeed& speed = out.link.speed;
  speed.width_lanes = *width;
  speed.lane_signal_gbps = *lane;
  const IbGeneration* generation = tokens.size() > 3 && tokens[3] == "(FDR10)"
                                       ? FindGeneration("FDR10")
                                       : GenerationOfSignalRate(*lane);
  if (generation != nullptr) {
    speed.generation = std::string(generation->name);
    speed.lane_gbps = generation->lane_gbps;
  }
  return true;
}

class IblinkinfoReader {
 public:
  IblinkinfoReader(std::string_view source, IblinkinfoResult* out)
      : out_(out), problems_(source, &out->problems) {}

  void Read(const TextLine& line) {
    const std::string_view text = StripBlanks(line.text);
    if (text.empty()) return;
    if (ReadHeader(text)) return;
    const size_t open = text.find("==(");
    const size_t close = text.find(")==>");
    if (open == std::string_view::npos || close == std::string_view::npos || close < open) {
      problems_.Add(line, text, "not an iblinkinfo line; skipped");
      return;
    }
    IblinkinfoPort port;
    port.link.where = problems_.Where(line);
    if (!ReadLocal(text.substr(0, open), port.link.local)) {
      problems_.Add(line, text, "no '[0x<guid> \"<name>\"] <lid> <port>[..]' before '==('");
      return;
    }
    std::string_view link = text.substr(open + 3, close - open - 3);
    link = link.substr(0, link.find(") (HOQ:"));  // -p's port settings
    if (!ReadLink(link, port)) {
      problems_.Add(line, link, "link state not understood");
    }
    ReadPeer(line, text.substr(close + 4), port);
    out_->ports.push_back(std::move(port));
  }

 private:
  // "Switch: 0x<guid> <desc>:" / "CA: <desc>:" (default mode).
  bool ReadHeader(std::string_view text) {
    IbNodeType type;
    if (ConsumePrefix(text, "Switch: ")) {
      type = IbNodeType::kSwitch;
    } else if (ConsumePrefix(text, "CA: ")) {
      type = IbNodeType::kCa;
    } else if (ConsumePrefix(text, "Router: ")) {
      type = IbNodeType::kRouter;
    } else {
      return false;
    }
    node_ = IbLinkEnd{};
    node_.type = type;
    if (type == IbNodeType::kSwitch) {
      LineScanner s(text);
      node_.node_guid = ParseGuid(s.Token());
      s.SkipBlanks();
      text = s.rest();
    }
    if (text.ends_with(":")) text.remove_suffix(1);
    node_.description = std::string(text);
    return true;
  }

  bool ReadLocal(std::string_view text, IbLinkEnd& local) {
    LineScanner s(StripBlanks(text));
    local = node_;
    if (s.rest().starts_with("0x")) {
      local.port_guid = ParseGuid(s.Token());
      s.SkipBlanks();
    }
    if (std::optional<std::string_view> name = s.QuotedToLast()) {
      local.description = std::string(StripBlanks(*name));  // "%30s" pads on the left
    }
    if (local.type == IbNodeType::kSwitch && local.node_guid.text.empty()) {
      local.node_guid = local.port_guid;
    }
    return ReadLidPort(s, local);
  }

  // "0x<guid> <lid> <port>[..] "<desc>" (<note>)" (line mode), "<lid> <port>[..] ..."
  // (default mode), "[  ] "" ( )" (down) or ""Port not available"".
  void ReadPeer(const TextLine& line, std::string_view text, IblinkinfoPort& port) {
    text = StripBlanks(text);
    if (text.starts_with("[") || text.empty()) return;  // down: no peer
    if (text == "\"Port not available\"") {
      port.port_not_available = true;
      return;
    }
    LineScanner s(text);
    IbLinkEnd peer;
    if (s.rest().starts_with("0x")) {
      peer.port_guid = ParseGuid(s.Token());
      problems_.CheckGuid(line, peer.port_guid, "peer port GUID");
    }
    if (!ReadLidPort(s, peer)) {
      problems_.Add(line, text, "peer without '<lid> <port>[..]'");
      return;
    }
    s.SkipBlanks();
    if (std::optional<std::string_view> desc = s.QuotedToLast()) {
      peer.description = std::string(*desc);
    }
    std::string_view note = StripBlanks(s.rest());
    if (note.starts_with("(") && note.ends_with(")")) {
      port.could_be = std::string(StripBlanks(note.substr(1, note.size() - 2)));
    }
    port.link.peer = std::move(peer);
  }

  IblinkinfoResult* out_;
  ProblemSink problems_;
  IbLinkEnd node_;  // the default mode's current node; empty in line mode
};

}  // namespace

IblinkinfoResult ParseIblinkinfo(std::string_view text, std::string_view source) {
  return ReadEachLine<IblinkinfoResult, IblinkinfoReader>(text, source);
}

}  // namespace railwatch::ib
