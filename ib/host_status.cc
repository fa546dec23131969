#include "ib/host_status.h"

#include <array>
#include <utility>

#include "ib/ib_text.h"

namespace railwatch::ib {
namespace {

struct NamedCode {
  std::string_view name;
  int code;
};

// IBA PortState and PortPhysicalState, by the names ibstat prints.
constexpr std::array<NamedCode, 6> kPortStates = {{
    {"Down", 1},
    {"Initializing", 2},
    {"Init", 2},
    {"Armed", 3},
    {"Active", 4},
    {"ActiveDefer", 5},
}};
constexpr std::array<NamedCode, 7> kPhysStates = {{
    {"Sleep", 1},
    {"Polling", 2},
    {"Disabled", 3},
    {"PortConfigurationTraining", 4},
    {"LinkUp", 5},
    {"LinkErrorRecovery", 6},
    {"PhyTest", 7},
}};

// ibv_devinfo's active_speed codes (enum ibv_port_speed / IBV_SPEED_*).
constexpr std::array<NamedCode, 9> kVerbsSpeeds = {{
    {"SDR", 1},
    {"DDR", 2},
    {"QDR", 4},
    {"FDR10", 8},
    {"FDR", 16},
    {"EDR", 32},
    {"HDR", 64},
    {"NDR", 128},
    {"XDR", 256},
}};

template <size_t N>
std::optional<int> CodeOf(const std::array<NamedCode, N>& table, std::string_view name) {
  for (const NamedCode& entry : table) {
    if (entry.name == name) return entry.code;
  }
  return std::nullopt;
}

template <size_t N>
std::string_view NameOf(const std::array<NamedCode, N>& table, int code) {
  for (const NamedCode& entry : table) {
    if (entry.code == code) return entry.name;
  }
  return "";
}

// "PORT_ACTIVE (4)" -> {"PORT_ACTIVE", 4}; "4: ACTIVE" -> {"ACTIVE", 4}; "Active" -> {"Active"}.
std::pair<std::string_view, std::optional<int>> NameAndCode(std::string_view text) {
  if (const size_t open = text.rfind(" ("); open != std::string_view::npos && text.ends_with(")")) {
    const std::optional<uint32_t> code = ParseUint32(text.substr(open + 2, text.size() - open - 3));
    return {StripBlanks(text.substr(0, open)), code ? std::optional<int>(*code) : std::nullopt};
  }
  if (const size_t colon = text.find(':'); colon != std::string_view::npos) {
    if (const std::optional<uint32_t> code = ParseUint32(text.substr(0, colon))) {
      return {StripBlanks(text.substr(colon + 1)), static_cast<int>(*code)};
    }
  }
  return {text, std::nullopt};
}

void SetState(IbHostPort& port, std::string_view text) {
  const auto [name, code] = NameAndCode(text);
  port.state = std::string(name);
  port.state_code = code ? code : CodeOf(kPortStates, name);
}

void SetPhysState(IbHostPort& port, std::string_view text) {
  const auto [name, code] = NameAndCode(text);
  port.phys_state = std::string(name);
  port.phys_state_code = code ? code : CodeOf(kPhysStates, name);
}

// ibv_devinfo prints GUIDs in groups of four: 88e9:a4ff:ff25:a462.
IbGuid GroupedGuid(std::string_view text) {
  std::string digits;
  for (char c : text) {
    if (c != ':') digits.push_back(c);
  }
  IbGuid guid = ParseGuid(digits);
  guid.text = std::string(text);
  return guid;
}

struct KeyValue {
  std::string_view key;
  std::string_view value;
};

std::optional<KeyValue> SplitKeyValue(std::string_view text) {
  const size_t colon = text.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  return KeyValue{StripBlanks(text.substr(0, colon)), StripBlanks(text.substr(colon + 1))};
}

// "'mlx5_0'" -> mlx5_0
std::string_view Unquote(std::string_view text) {
  LineScanner s(text);
  std::optional<std::string_view> inside = s.Quoted('\'');
  return inside ? *inside : text;
}

// The device keys ibstat and ibv_devinfo both print, each under its own names.
struct DeviceKeyNames {
  std::string_view firmware;
  std::string_view hardware_version;
  std::string_view node_guid;
  std::string_view system_image_guid;
  std::string_view num_ports;
};
constexpr DeviceKeyNames kIbstatKeys = {"Firmware version", "Hardware version", "Node GUID",
                                        "System image GUID", "Number of ports"};
constexpr DeviceKeyNames kVerbsKeys = {"fw_ver", "hw_ver", "node_guid", "sys_image_guid",
                                       "phys_port_cnt"};

// What the three readers share: the devices so far and the problems.
class HostReader {
 public:
  HostReader(std::string_view source, IbHostStatus* out)
      : out_(out), problems_(source, &out->problems) {}
  virtual ~HostReader() = default;

 protected:
  virtual void ReadPortKey(const KeyValue& kv) {}
  virtual void ReadDeviceKey(const KeyValue& kv) {}

  // A key of the current port, else of the current device; `port_number` starts a port.
  void ReadKey(const TextLine& line, const KeyValue& kv,
               std::optional<std::string_view> port_number) {
    if (port_number) {
      StartPort(line, *port_number);
    } else if (port_ != nullptr) {
      ReadPortKey(kv);
    } else {
      ReadDeviceKey(kv);
    }
  }

  void ReadCommonDeviceKey(const KeyValue& kv, const DeviceKeyNames& names) {
    IbHostDevice& d = *device();
    if (kv.key == names.firmware) d.firmware = std::string(kv.value);
    if (kv.key == names.hardware_version) d.hardware_version = std::string(kv.value);
    if (kv.key == names.node_guid) d.node_guid = GroupedGuid(kv.value);
    if (kv.key == names.system_image_guid) d.system_image_guid = GroupedGuid(kv.value);
    if (kv.key == names.num_ports) {
      if (std::optional<uint32_t> n = ParseUint32(kv.value)) d.num_ports = static_cast<int>(*n);
    }
  }

  IbHostDevice& StartDevice(const TextLine& line, std::string_view name) {
    IbHostDevice device;
    device.name = std::string(name);
    device.where = problems_.Where(line);
    out_->devices.push_back(std::move(device));
    port_ = nullptr;
    return out_->devices.back();
  }

  IbHostPort* StartPort(const TextLine& line, std::string_view number) {
    const std::optional<uint32_t> n = ParseUint32(number);
    if (out_->devices.empty() || !n || *n > 255) {
      problems_.AddAtStart(line, "port outside a device, or not a port number; skipped");
      port_ = nullptr;
      return nullptr;
    }
    IbHostPort port;
    port.port = static_cast<int>(*n);
    out_->devices.back().ports.push_back(std::move(port));
    port_ = &out_->devices.back().ports.back();
    return port_;
  }

  IbHostDevice* device() { return out_->devices.empty() ? nullptr : &out_->devices.back(); }

  IbHostStatus* out_;
  ProblemSink problems_;
  IbHostPort* port_ = nullptr;  // into the last device's ports
};

class IbstatReader : public HostReader {
 public:
  using HostReader::HostReader;

  void Read(const TextLine& line) {
    const std::string_view text = StripBlanks(line.text);
    if (text.empty()) return;
    if (text.starts_with("CA '")) {
      StartDevice(line, Unquote(text.substr(3)));
      return;
    }
    if (text.starts_with("ibpanic:") || text.starts_with("ibwarn:")) {
      problems_.AddAtStart(line, Cat("ibstat stopped: ", text));
      return;
    }
    const std::optional<KeyValue> kv = SplitKeyValue(text);
    if (!kv || device() == nullptr) {
      problems_.Add(line, text, "not an ibstat line; skipped");
      return;
    }
    const bool starts_port = kv->key.starts_with("Port ") && kv->value.empty();
    ReadKey(line, *kv,
            starts_port ? std::optional<std::string_view>(kv->key.substr(5)) : std::nullopt);
  }

 private:
  void ReadDeviceKey(const KeyValue& kv) override {
    if (kv.key == "CA type") device()->ca_type = std::string(kv.value);
    ReadCommonDeviceKey(kv, kIbstatKeys);
  }

  void ReadPortKey(const KeyValue& kv) override {
    IbHostPort& p = *port_;
    if (kv.key == "State") SetState(p, kv.value);
    if (kv.key == "Physical state") SetPhysState(p, kv.value);
    if (kv.key == "Rate") p.rate_gbps = ParseDouble(kv.value);
    if (kv.key == "Base lid") p.lid = ParseUint32(kv.value);
    if (kv.key == "LMC") p.lmc = ParseUint32(kv.value);
    if (kv.key == "SM lid") p.sm_lid = ParseUint32(kv.value);
    if (kv.key == "Capability mask") p.capability_mask = ParseUint32(kv.value);
    if (kv.key == "Port GUID") p.port_guid = ParseGuid(kv.value);
    if (kv.key == "Link layer") p.link_layer = std::string(kv.value);
  }
};

class IbstatusReader : public HostReader {
 public:
  using HostReader::HostReader;

  // Infiniband device 'mlx5_0' port 1 status:
  void Read(const TextLine& line) {
    std::string_view text = StripBlanks(line.text);
    if (text.empty()) return;
    if (ConsumePrefix(text, "Infiniband device ")) {
      LineScanner s(text);
      const std::optional<std::string_view> name = s.Quoted('\'');
      s.SkipBlanks();
      if (!name || !s.ConsumeWord("port")) {
        problems_.AddAtStart(line, "device line without 'name' port N; skipped");
        return;
      }
      if (device() == nullptr || device()->name != *name) StartDevice(line, *name);
      StartPort(line, s.Token());
      return;
    }
    const std::optional<KeyValue> kv = SplitKeyValue(text);
    if (!kv || port_ == nullptr) {
      problems_.Add(line, text, "not an ibstatus line; skipped");
      return;
    }
    IbHostPort& p = *port_;
    if (kv->key == "default gid") p.default_gid = std::string(kv->value);
    if (kv->key == "base lid") p.lid = ParseUint32(kv->value);
    if (kv->key == "sm lid") p.sm_lid = ParseUint32(kv->value);
    if (kv->key == "state") SetState(p, kv->value);
    if (kv->key == "phys state") SetPhysState(p, kv->value);
    if (kv->key == "link_layer") p.link_layer = std::string(kv->value);
    if (kv->key == "rate") ReadRate(line, kv->value, p);
  }

 private:
  // "200 Gb/sec (4X HDR)"
  void ReadRate(const TextLine& line, std::string_view text, IbHostPort& p) {
    LineScanner s(text);
    p.rate_gbps = ParseDouble(s.Token());
    s.SkipBlanks();
    s.ConsumeWord("Gb/sec");
    if (s.Consume("(")) {
      const std::string_view width = s.Token();
      s.SkipBlanks();
      const std::optional<std::string_view> generation = s.Until(')');
      if (std::optional<IbLinkSpeed> speed =
              generation ? ParseWidthGeneration(Cat(width, *generation)) : std::nullopt) {
        p.speed = std::move(*speed);
      }
    }
    if (!p.rate_gbps) problems_.Add(line, text, "rate not understood");
  }
};

class IbvDevinfoReader : public HostReader {
 public:
  using HostReader::HostReader;

  void Read(const TextLine& line) {
    const std::string_view text = StripBlanks(line.text);
    if (text.empty()) return;
    const std::optional<KeyValue> kv = SplitKeyValue(text);
    if (!kv) {
      // Flag lists go on over indented lines without a key.
      if (line.text.front() != ' ' && line.text.front() != '\t') {
        problems_.Add(line, text, "not an ibv_devinfo line; skipped");
      }
      return;
    }
    if (kv->key == "hca_id") {
      StartDevice(line, kv->value);
    } else if (device() == nullptr) {
      problems_.Add(line, text, "ibv_devinfo line before any hca_id; skipped");
    } else {
      ReadKey(line, *kv,
              kv->key == "port" ? std::optional<std::string_view>(kv->value) : std::nullopt);
    }
  }

 private:
  void ReadDeviceKey(const KeyValue& kv) override {
    ReadCommonDeviceKey(kv, kVerbsKeys);
    IbHostDevice& d = *device();
    if (kv.key == "vendor_id") d.vendor_id = ParseUint32(kv.value);
    if (kv.key == "vendor_part_id") d.vendor_part_id = ParseUint32(kv.value);
    if (kv.key == "board_id") d.board_id = std::string(kv.value);
  }

  void ReadPortKey(const KeyValue& kv) override {
    IbHostPort& p = *port_;
    if (kv.key == "state") SetState(p, kv.value);
    if (kv.key == "phys_state") SetPhysState(p, kv.value);
    if (kv.key == "sm_lid") p.sm_lid = ParseUint32(kv.value);
    if (kv.key == "port_lid") p.lid = ParseUint32(kv.value);
    if (kv.key == "port_lmc") p.lmc = ParseUint32(kv.value);
    if (kv.key == "link_layer") p.link_layer = std::string(kv.value);
    if (kv.key.starts_with("GID[")) p.gids.push_back(std::string(kv.value));
    if (kv.key == "active_width") {
      // "4X (2)": the text, not the code, is the lane count.
      LineScanner s(kv.value);
      const std::optional<uint64_t> lanes = s.Decimal();
      if (lanes && *lanes <= 32 && s.Consume("X")) p.speed.width_lanes = static_cast<int>(*lanes);
    }
    if (kv.key == "active_speed") {
      // "50.0 Gbps (64)": the code names the generation; "invalid speed (0)" none.
      const auto [text, code] = NameAndCode(kv.value);
      const std::string_view generation = code ? NameOf(kVerbsSpeeds, *code) : "";
      if (!generation.empty()) {
        const int width = p.speed.width_lanes;
        p.speed = MakeLinkSpeed(width, generation);
      }
    }
    if (p.speed.known()) p.rate_gbps = p.speed.aggregate_gbps();
  }
};

}  // namespace

IbHostStatus ParseIbstat(std::string_view text, std::string_view source) {
  return ReadEachLine<IbHostStatus, IbstatReader>(text, source);
}

IbHostStatus ParseIbstatus(std::string_view text, std::string_view source) {
  return ReadEachLine<IbHostStatus, IbstatusReader>(text, source);
}

IbHostStatus ParseIbvDevinfo(std::string_view text, std::string_view source) {
  return ReadEachLine<IbHostStatus, IbvDevinfoReader>(text, source);
}

}  // namespace railwatch::ib
