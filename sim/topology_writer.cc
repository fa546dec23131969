#include "sim/topology_writer.h"

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <tuple>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/text.h"
#include "sim/sysfs_fabric.h"
#include "yaml-cpp/yaml.h"

namespace railwatch::sim {
namespace {

// Written to a temporary name and renamed, so that a reader never sees half a file.
absl::Status WriteAtomically(const std::string& path, std::string_view content, mode_t mode) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << content;
    if (!out) return absl::UnavailableError(absl::StrCat("cannot write ", tmp));
  }
  if (::chmod(tmp.c_str(), mode) != 0 || std::rename(tmp.c_str(), path.c_str()) != 0) {
    return absl::UnavailableError(absl::StrCat("cannot write ", path));
  }
  return absl::OkStatus();
}

std::string DurationText(absl::Duration d) {
  if (d % absl::Seconds(1) == absl::ZeroDuration()) return absl::StrCat(d / absl::Seconds(1), "s");
  return absl::StrCat(d / absl::Milliseconds(1), "ms");
}

}  // namespace

absl::Status WriteTargetsFile(const std::string& path, const std::vector<SimSwitch>& switches,
                              const std::vector<std::string>& addresses,
                              const TargetsFileOptions& options) {
  YAML::Emitter out;
  out << YAML::BeginMap << YAML::Key << "defaults" << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "sample_interval" << YAML::Value << DurationText(options.sample_interval);
  if (!options.username.empty()) {
    out << YAML::Key << "username" << YAML::Value << options.username;
    if (!options.password.empty()) {
      const std::string password_file = path + ".password";
      if (absl::Status s = WriteAtomically(password_file, options.password + "\n", 0600); !s.ok()) {
        return s;
      }
      out << YAML::Key << "password_file" << YAML::Value << password_file;
    }
  }
  out << YAML::EndMap << YAML::Key << "targets" << YAML::Value << YAML::BeginSeq;
  for (size_t i = 0; i < switches.size() && i < addresses.size(); ++i) {
    out << YAML::BeginMap << YAML::Key << "name" << YAML::Value << switches[i].name
        << YAML::Key << "address" << YAML::Value << addresses[i] << YAML::Key << "profile"
        << YAML::Value << std::string(DialectName(switches[i].dialect)) << YAML::EndMap;
  }
  out << YAML::EndSeq << YAML::EndMap;
  return WriteAtomically(path, absl::StrCat(out.c_str(), "\n"), 0644);
}

absl::Status WriteHostLldpFiles(const std::string& root, const std::vector<SimSwitch>& switches) {
  // host -> (netdev, switch, port, chassis), in the leaves' port order.
  std::map<std::string, std::vector<std::tuple<std::string, std::string, std::string, std::string>>>
      heard;
  for (size_t i = 0; i < switches.size(); ++i) {
    const SimSwitch& sw = switches[i];
    if (sw.role != "leaf") continue;
    const std::string chassis = absl::StrFormat("02:00:00:00:%02x:%02x", i % 256, i / 256);
    for (const SwitchPort& p : sw.ports) {
      if (!p.uplink) heard[p.peer].emplace_back(p.peer_port, sw.name, p.name, chassis);
    }
  }
  for (const auto& [host, interfaces] : heard) {
    std::string json = "{\n  \"lldp\": [\n    {\n      \"interface\": [";
    bool first = true;
    for (const auto& [netdev, sw, port, chassis] : interfaces) {
      absl::StrAppend(&json, first ? "" : ",", R"(
        {
          "name": ")", netdev, R"(",
          "via": "LLDP",
          "rid": "1",
          "age": "0 day, 00:00:05",
          "chassis": [{"id": [{"type": "mac", "value": ")", chassis, R"("}], "name": [{"value": ")",
                      sw, R"("}], "descr": [{"value": "railwatch-sim leaf"}]}],
          "port": [{"id": [{"type": "ifname", "value": ")", port, R"("}], "descr": [{"value": ")",
                      port, R"("}], "ttl": [{"value": "120"}]}]
        })");
      first = false;
    }
    json += "\n      ]\n    }\n  ]\n}\n";
    const std::string dir = absl::StrCat(root, "/", host);
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (absl::Status s = WriteAtomically(dir + "/lldpd.json", json, 0644); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status WriteTopologyFile(const std::string& path, const std::vector<SimSwitch>& switches,
                               int hosts, int nics_per_host, const std::vector<SimJob>& jobs,
                               bool infiniband) {
  YAML::Emitter out;
  out << YAML::BeginMap << YAML::Key << "switches" << YAML::Value << YAML::BeginSeq;
  for (const SimSwitch& sw : switches) {
    out << YAML::BeginMap << YAML::Key << "name" << YAML::Value << sw.name << YAML::Key << "role"
        << YAML::Value << sw.role;
    if (!infiniband) out << YAML::Key << "dialect" << YAML::Value << std::string(DialectName(sw.dialect));
    bool any = false;
    for (const SwitchPort& p : sw.ports) {
      if (!p.uplink) continue;
      if (!any) out << YAML::Key << "links" << YAML::Value << YAML::BeginSeq;
      any = true;
      out << YAML::Flow << YAML::BeginMap << YAML::Key << "port" << YAML::Value << p.name
          << YAML::Key << "peer" << YAML::Value << p.peer << YAML::Key << "peer_port"
          << YAML::Value << p.peer_port << YAML::EndMap;
    }
    if (any) out << YAML::EndSeq;
    out << YAML::EndMap;
  }
  // Where each NIC plugs in, from the leaves' host ports (rail groups put host h's NICs on
  // its group's leaves).
  std::map<std::pair<std::string, std::string>, std::pair<const SimSwitch*, const SwitchPort*>> plugged;
  for (const SimSwitch& sw : switches) {
    if (sw.role != "leaf") continue;
    for (const SwitchPort& p : sw.ports) {
      if (!p.uplink) plugged[{p.peer, p.peer_device}] = {&sw, &p};
    }
  }
  out << YAML::EndSeq << YAML::Key << "hosts" << YAML::Value << YAML::BeginSeq;
  for (int h = 1; h <= hosts; ++h) {
    const std::string host = SysfsFabric::HostName(h);
    out << YAML::BeginMap << YAML::Key << "name" << YAML::Value << host << YAML::Key << "nics"
        << YAML::Value << YAML::BeginSeq;
    for (int k = 0; k < nics_per_host; ++k) {
      const std::string device = absl::StrCat("mlx5_", k);
      auto it = plugged.find({host, device});
      if (it == plugged.end()) {
        return absl::InvalidArgumentError(
            absl::StrCat("no simulated leaf port holds ", host, "/", device));
      }
      const auto [leaf, p] = it->second;
      out << YAML::Flow << YAML::BeginMap << YAML::Key << "device" << YAML::Value << device
          << YAML::Key << "netdev" << YAML::Value << p->peer_port << YAML::Key << "rail"
          << YAML::Value << leaf->rail << YAML::Key << "switch" << YAML::Value << leaf->name
          << YAML::Key << "port" << YAML::Value << p->name << YAML::EndMap;
    }
    out << YAML::EndSeq << YAML::EndMap;
  }
  out << YAML::EndSeq;
  if (!jobs.empty()) {
    out << YAML::Key << "jobs" << YAML::Value << YAML::BeginSeq;
    for (const SimJob& job : jobs) {
      out << YAML::BeginMap << YAML::Key << "name" << YAML::Value << job.name << YAML::Key
          << "hosts" << YAML::Value << YAML::Flow << YAML::BeginSeq;
      for (int h = job.first_host; h <= job.last_host; ++h) out << SysfsFabric::HostName(h);
      out << YAML::EndSeq << YAML::Key << "gpus_per_host" << YAML::Value << nics_per_host
          << YAML::EndMap;
    }
    out << YAML::EndSeq;
  }
  out << YAML::EndMap;
  return WriteAtomically(path, absl::StrCat(out.c_str(), "\n"), 0644);
}

}  // namespace railwatch::sim
