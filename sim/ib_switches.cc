// The simulated InfiniBand switches: PMA counters, link widths, IB faults, and the subnet
// written as ibdiagnet's db_csv.
#include "sim/ib_switches.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace railwatch::sim {
namespace {

constexpr char kDbCsvName[] = "ibdiagnet2.db_csv";
constexpr uint32_t kMellanoxVendorId = 0x2c9;
constexpr uint32_t kQuantum2DeviceId = 54002;   // MQM9700
constexpr uint32_t kConnectX7DeviceId = 4129;  // MT4129

std::string Guid(uint64_t guid) { return absl::StrFormat("0x%016x", guid); }

// ibdiagnet's LinkWidthActv code of a lane count (IBA PortInfo: 1 1x, 2 4x, 4 8x, 8 12x, 16 2x).
int WidthCode(int lanes) {
  switch (lanes) {
    case 1:
      return 1;
    case 2:
      return 16;
    case 8:
      return 4;
    case 12:
      return 8;
    default:
      return 2;
  }
}

// LinkSpeedActv as ibdiagnet packs it (ib/ibdiagnet_db.h): the extended speed in byte 1 over
// QDR in byte 0, from the lane rate of a 4x link of `gbps`.
uint32_t PackedSpeed(double gbps) {
  const double lane = gbps / 4;
  uint32_t extended = 1;  // FDR
  if (lane >= 200) {
    extended = 16;  // XDR
  } else if (lane >= 100) {
    extended = 8;  // NDR
  } else if (lane >= 50) {
    extended = 4;  // HDR
  } else if (lane >= 25) {
    extended = 2;  // EDR
  }
  return extended << 8 | 4;
}

uint64_t Whole(double v) { return static_cast<uint64_t>(std::floor(v)); }

// The GUID of the HCA a leaf's host port faces (gpu-node-<h> mlx5_<n>).
uint64_t HcaGuidOf(const SwitchPort& p) {
  int host = 0, nic = 0;
  (void)std::sscanf(p.peer.c_str(), "gpu-node-%d", &host);
  (void)std::sscanf(p.peer_device.c_str(), "mlx5_%d", &nic);
  return IbSwitchModel::HcaGuid(host, nic);
}

}  // namespace

uint64_t IbSwitchModel::SwitchGuid(int index) {
  return 0xfc6a1c0300a00000ULL + static_cast<uint64_t>(index + 1) * 0x100;
}

uint64_t IbSwitchModel::HcaGuid(int host, int nic) {
  // The simulator's sysfs node_guid, b83f:d203:00HH:NNNN.
  return 0xb83fd20300000000ULL | static_cast<uint64_t>(host % 256) << 16 |
         static_cast<uint64_t>(nic);
}

IbSwitchModel::IbSwitchModel(Options options, const SwitchFabric& fabric, absl::Time start)
    : options_(std::move(options)),
      fabric_(fabric),
      start_(start),
      last_(start),
      last_write_(absl::InfinitePast()),
      rng_(options_.seed * 7919 + 17) {}

absl::StatusOr<std::unique_ptr<IbSwitchModel>> IbSwitchModel::Create(Options options,
                                                                     const SwitchFabric& fabric,
                                                                     absl::Time start) {
  if (options.dir.empty()) return absl::InvalidArgumentError("--ib_outputs is required");
  if (options.write_interval <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("the IB fabric's write interval must be above 0");
  }
  std::unique_ptr<IbSwitchModel> model(new IbSwitchModel(std::move(options), fabric, start));
  if (absl::Status s = model->Validate(); !s.ok()) return s;
  std::error_code ec;
  std::filesystem::create_directories(model->options_.dir, ec);
  if (ec) {
    return absl::UnavailableError(
        absl::StrCat("cannot make ", model->options_.dir, ": ", ec.message()));
  }
  return model;
}

absl::Status IbSwitchModel::Validate() {
  const std::vector<SimSwitch>& switches = fabric_.switches();
  ports_.resize(switches.size());
  for (size_t i = 0; i < switches.size(); ++i) ports_[i].resize(switches[i].ports.size());
  for (const IbPortFault& f : options_.port_faults) {
    int sw = -1;
    for (size_t i = 0; i < switches.size(); ++i) {
      if (switches[i].name == f.switch_name) sw = static_cast<int>(i);
    }
    if (sw < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("IB fault target ", f.switch_name, " is not a simulated switch"));
    }
    const int ports = static_cast<int>(switches[sw].ports.size());
    if (f.port < 1 || f.port > ports) {
      return absl::InvalidArgumentError(absl::StrCat("IB fault target ", f.switch_name, " port ",
                                                     f.port, ": it has ports 1-", ports));
    }
    const SwitchPort& p = switches[sw].ports[f.port - 1];
    const bool switch_link = p.peer_switch >= 0;
    if ((f.type == IbPortFault::Type::kWidthDegrade || f.type == IbPortFault::Type::kFlap) &&
        !switch_link) {
      return absl::InvalidArgumentError(absl::StrCat(
          f.switch_name, " port ", f.port, " faces ", p.peer, " ", p.peer_device,
          ": width degrades and flaps here are of switch-to-switch links (an HCA's link: "
          "link_degrade, link_flap)"));
    }
    if (f.type == IbPortFault::Type::kWidthDegrade && !(f.width == 1 || f.width == 2)) {
      return absl::InvalidArgumentError("an IB width degrade trains at 1 or 2 lanes");
    }
    port_fault_at_.emplace_back(sw, f.port - 1);
  }
  for (const IbSlowReceiver& r : options_.slow_receivers) {
    const std::pair<int, int> at = fabric_.LeafPortOf(r.host, r.device);
    if (at.first < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("slow receiver ", r.host, "/", r.device, " is not a simulated HCA"));
    }
    receiver_at_.push_back(at);
  }
  port_progress_.resize(options_.port_faults.size());
  receiver_progress_.resize(options_.slow_receivers.size());
  return absl::OkStatus();
}

absl::Status IbSwitchModel::ApplyFaults(absl::Time now, double dt) {
  const std::vector<SimSwitch>& switches = fabric_.switches();
  for (size_t i = 0; i < options_.port_faults.size(); ++i) {
    const IbPortFault& f = options_.port_faults[i];
    FaultProgress& progress = port_progress_[i];
    const auto [sw, port] = port_fault_at_[i];
    if (now < start_ + f.at || progress.ended) continue;
    PortState& p = At(sw, port);
    const SwitchPort& plan = switches[sw].ports[port];
    PortState* far = plan.peer_switch >= 0 ? &At(plan.peer_switch, plan.peer_port_index) : nullptr;
    const bool first = !progress.started;
    progress.started = true;
    switch (f.type) {
      case IbPortFault::Type::kBadCable:
        // The receiver at this port sees the symbol errors; some packets fail their CRC
        // (PortRcvErrors), and now and then the link retrains without going down.
        p.symbol_errors += f.per_minute / 60 * dt;
        p.rcv_errors += f.per_minute / 120 * dt;
        p.link_error_recovery += f.per_minute / 600 * dt;
        break;
      case IbPortFault::Type::kDiscards:
        p.xmit_discards += f.per_minute / 60 * dt;
        break;
      case IbPortFault::Type::kWidthDegrade:
        p.width = f.width;
        if (far != nullptr) far->width = f.width;
        progress.ended = true;  // it stays trained so
        break;
      case IbPortFault::Type::kFlap:
        if (first) {
          p.own_down = true;
          ++p.own_downs;
          if (far != nullptr) {
            far->own_down = true;
            ++far->own_downs;
          }
        } else if (now >= start_ + f.at + f.down_for) {
          p.own_down = false;
          if (far != nullptr) far->own_down = false;
          progress.ended = true;
        }
        break;
    }
    if (first) {
      FaultStarted started = StartedAt(now);
      started.switch_name = f.switch_name;
      started.interface = plan.name;
      started.link_gbps = options_.link_gbps;
      if (absl::Status s = f.truth.Write(options_.ground_truth_file, started); !s.ok()) return s;
    }
  }
  for (size_t i = 0; i < options_.slow_receivers.size(); ++i) {
    const IbSlowReceiver& r = options_.slow_receivers[i];
    FaultProgress& progress = receiver_progress_[i];
    if (now < start_ + r.at || progress.ended) continue;
    if (r.duration > absl::ZeroDuration() && now >= start_ + r.at + r.duration) {
      progress.ended = true;
      continue;
    }
    const auto [leaf, port] = receiver_at_[i];
    if (!progress.started) {
      progress.started = true;
      FaultStarted started = StartedAt(now);
      started.switch_name = switches[leaf].name;
      started.interface = switches[leaf].ports[port].name;
      started.link_gbps = options_.link_gbps;
      if (absl::Status s = r.truth.Write(options_.ground_truth_file, started); !s.ok()) return s;
    }
    // The leaf port in front of the HCA waits most; the spines' ports toward that leaf wait
    // for its full ingress; every other leaf's uplinks wait for the spines'.
    At(leaf, port).xmit_wait += options_.root_wait_rate * dt;
    for (size_t s = 0; s < switches.size(); ++s) {
      if (switches[s].role != "spine") continue;
      for (size_t q = 0; q < switches[s].ports.size(); ++q) {
        if (switches[s].ports[q].peer_switch == leaf) {
          At(static_cast<int>(s), static_cast<int>(q)).xmit_wait += options_.spine_wait_rate * dt;
        }
      }
    }
    for (int l = 0; l < fabric_.leaves(); ++l) {
      if (l == leaf) continue;
      for (size_t q = 0; q < switches[l].ports.size(); ++q) {
        if (switches[l].ports[q].uplink) {
          At(l, static_cast<int>(q)).xmit_wait += options_.uplink_wait_rate * dt;
        }
      }
    }
  }
  return absl::OkStatus();
}

absl::Status IbSwitchModel::Update(absl::Time now) {
  const double dt = std::max(0.0, absl::ToDoubleSeconds(now - last_));
  last_ = now;
  const std::vector<SimSwitch>& switches = fabric_.switches();
  std::uniform_real_distribution<double> noise(0, 1);
  for (size_t s = 0; s < switches.size(); ++s) {
    fabric_.WithSwitch(static_cast<int>(s), [&](const SimSwitch& sw) {
      for (size_t q = 0; q < sw.ports.size(); ++q) {
        PortState& p = ports_[s][q];
        const PortCounters& c = sw.ports[q].c;
        const uint64_t moved = c.out_octets - std::min(c.out_octets, p.xmit_bytes);
        p.xmit_bytes = c.out_octets;
        p.rcv_bytes = c.in_octets;
        p.xmit_pkts = c.out_ucast_pkts;
        p.rcv_pkts = c.in_ucast_pkts;
        p.fabric_up = sw.ports[q].up;
        // Each change of a port's state is a carrier transition; every other one a down.
        p.fabric_downs = (c.carrier_transitions + 1) / 2;
        // A balanced fabric's credit waits: short bursts while the port sends.
        if (moved > 0 && p.up()) p.xmit_wait += options_.benign_wait_rate * noise(rng_) * dt;
      }
    });
  }
  if (absl::Status s = ApplyFaults(now, dt); !s.ok()) return s;
  temperature_phase_ += dt / 600;
  if (now - last_write_ >= options_.write_interval) {
    last_write_ = now;
    return WriteFile();
  }
  return absl::OkStatus();
}

std::string IbSwitchModel::DbCsvPath() const { return absl::StrCat(options_.dir, "/", kDbCsvName); }

std::string IbSwitchModel::RenderDbCsv() const {
  const std::vector<SimSwitch>& switches = fabric_.switches();
  const uint32_t speed = PackedSpeed(options_.link_gbps);
  const int switch_count = static_cast<int>(switches.size());
  // LIDs: switches 1..S, then the HCAs in the leaves' port order.
  std::string out =
      "# This database file was written by railwatch-sim --fabric=ib in the layout of "
      "ibdiagnet2.db_csv\n\n\n";

  absl::StrAppend(&out,
                  "START_NODES\nNodeDesc,NumPorts,NodeType,ClassVersion,BaseVersion,"
                  "SystemImageGUID,NodeGUID,PortGUID,DeviceID,PartitionCap,revision,VendorID,"
                  "LocalPortNum\n");
  for (int s = 0; s < switch_count; ++s) {
    const std::string g = Guid(SwitchGuid(s));
    absl::StrAppend(&out, "\"MF0;", switches[s].name, ":MQM9700/U1\",", switches[s].ports.size(),
                    ",2,1,1,", g, ",", g, ",", g, ",", kQuantum2DeviceId, ",8,160,", kMellanoxVendorId,
                    ",0\n");
  }
  for (int l = 0; l < fabric_.leaves(); ++l) {
    for (const SwitchPort& p : switches[l].ports) {
      if (p.uplink) continue;
      const std::string g = Guid(HcaGuidOf(p));
      absl::StrAppend(&out, "\"", p.peer, " ", p.peer_device, "\",1,1,1,1,", g, ",", g, ",", g,
                      ",", kConnectX7DeviceId, ",128,0,", kMellanoxVendorId, ",1\n");
    }
  }
  out += "END_NODES\n\n\n";

  absl::StrAppend(&out,
                  "START_PORTS\nNodeGuid,PortGuid,PortNum,LID,LinkWidthActv,LinkSpeedActv,"
                  "PortPhyState,PortState\n");
  int hca_lid = switch_count + 1;
  for (int s = 0; s < switch_count; ++s) {
    const std::string g = Guid(SwitchGuid(s));
    absl::StrAppend(&out, g, ",", g, ",0,", s + 1, ",2,", speed, ",5,4\n");
    for (size_t q = 0; q < switches[s].ports.size(); ++q) {
      const PortState& p = ports_[s][q];
      // A port that is down: Polling (2) and Down (1), no width or speed.
      if (p.up()) {
        absl::StrAppend(&out, g, ",", g, ",", q + 1, ",0,", WidthCode(p.width), ",", speed,
                        ",5,4\n");
      } else {
        absl::StrAppend(&out, g, ",", g, ",", q + 1, ",0,N/A,N/A,2,1\n");
      }
    }
  }
  for (int l = 0; l < fabric_.leaves(); ++l) {
    for (size_t q = 0; q < switches[l].ports.size(); ++q) {
      const SwitchPort& sp = switches[l].ports[q];
      if (sp.uplink) continue;
      const std::string g = Guid(HcaGuidOf(sp));
      const PortState& p = ports_[l][q];
      if (p.up()) {
        absl::StrAppend(&out, g, ",", g, ",1,", hca_lid++, ",", WidthCode(p.width), ",", speed,
                        ",5,4\n");
      } else {
        absl::StrAppend(&out, g, ",", g, ",1,", hca_lid++, ",N/A,N/A,2,1\n");
      }
    }
  }
  out += "END_PORTS\n\n\n";

  // Each cable once, from the leaf's side; a link that is down is not in LINKS.
  absl::StrAppend(&out, "START_LINKS\nNodeGuid1,PortNum1,NodeGuid2,PortNum2\n");
  for (int l = 0; l < fabric_.leaves(); ++l) {
    for (size_t q = 0; q < switches[l].ports.size(); ++q) {
      const SwitchPort& sp = switches[l].ports[q];
      if (!ports_[l][q].up()) continue;
      if (sp.uplink) {
        absl::StrAppend(&out, Guid(SwitchGuid(l)), ",", q + 1, ",", Guid(SwitchGuid(sp.peer_switch)),
                        ",", sp.peer_port_index + 1, "\n");
      } else {
        absl::StrAppend(&out, Guid(SwitchGuid(l)), ",", q + 1, ",", Guid(HcaGuidOf(sp)), ",1\n");
      }
    }
  }
  out += "END_LINKS\n\n\n";

  // PortCountersExtended only (every simulated port has it, with the error counters): the
  // 64-bit columns, which never saturate.
  absl::StrAppend(&out,
                  "START_PM_INFO\nNodeGUID,PortGUID,PortNumber,PortXmitDataExtended,"
                  "PortRcvDataExtended,PortXmitPktsExtended,PortRcvPktsExtended,"
                  "SymbolErrorCounterExt,LinkErrorRecoveryCounterExt,LinkDownedCounterExt,"
                  "PortRcvErrorsExt,PortXmitDiscardsExt,PortXmitWaitExt\n");
  for (int s = 0; s < switch_count; ++s) {
    const std::string g = Guid(SwitchGuid(s));
    for (size_t q = 0; q < switches[s].ports.size(); ++q) {
      const PortState& p = ports_[s][q];
      absl::StrAppend(&out, g, ",", g, ",", q + 1, ",", p.xmit_bytes / 4, ",", p.rcv_bytes / 4,
                      ",", p.xmit_pkts, ",", p.rcv_pkts, ",", Whole(p.symbol_errors), ",",
                      Whole(p.link_error_recovery), ",", p.fabric_downs + p.own_downs, ",",
                      Whole(p.rcv_errors), ",", Whole(p.xmit_discards), ",", Whole(p.xmit_wait),
                      "\n");
    }
  }
  out += "END_PM_INFO\n\n\n";

  // Each switch's ASIC temperature: a few degrees' slow swing around 48-55 °C.
  absl::StrAppend(&out, "START_TEMP_SENSING\nNodeGUID,CurrentTemperature\n");
  for (int s = 0; s < switch_count; ++s) {
    const double celsius = 48 + (s % 8) + 3 * std::sin(temperature_phase_ + s);
    absl::StrAppend(&out, Guid(SwitchGuid(s)), ",", static_cast<int>(std::lround(celsius)), "\n");
  }
  out += "END_TEMP_SENSING\n";
  return out;
}

absl::Status IbSwitchModel::WriteFile() {
  // A dot-file renamed into place: the scanner skips names starting with '.' and never sees
  // half a file.
  const std::string tmp = absl::StrCat(options_.dir, "/.", kDbCsvName);
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << RenderDbCsv();
    if (!out) return absl::UnavailableError(absl::StrCat("cannot write ", tmp));
  }
  if (std::rename(tmp.c_str(), DbCsvPath().c_str()) != 0) {
    return absl::UnavailableError(absl::StrCat("cannot rename ", tmp, " to ", DbCsvPath()));
  }
  return absl::OkStatus();
}

}  // namespace railwatch::sim
