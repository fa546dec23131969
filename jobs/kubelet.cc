// Jobs from Kubernetes: resource kinds, job names, a host's jobs and their encoding, and the
// readers of pasted kubelet texts (jobs/kubelet.h).

#include "jobs/kubelet.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/json_error.h"
#include "common/labels.h"
#include "common/text.h"
#include "nlohmann/json.hpp"

namespace railwatch::jobs {
// Helpers in a named namespace: a unity build compiles this file with slurm_json.cc, whose
// anonymous namespace has JSON helpers of the same names.
namespace kubelet_text {

using Json = nlohmann::json;

constexpr std::string_view kHashAlphabet = "bcdfghjklmnpqrstvwxz2456789";

std::string Lower(std::string_view s) { return absl::AsciiStrToLower(AsAbsl(s)); }

bool Contains(std::string_view s, std::string_view part) {
  return s.find(part) != std::string_view::npos;
}

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

bool IsNumber(std::string_view s) {
  return !s.empty() && s.size() <= 9 &&
         std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// A generated-name suffix: `min`..`max` characters of Kubernetes' safe alphabet.
bool IsHash(std::string_view s, size_t min, size_t max) {
  return s.size() >= min && s.size() <= max && std::all_of(s.begin(), s.end(), [](char c) {
           return kHashAlphabet.find(c) != std::string_view::npos;
         });
}

std::string JoinParts(const std::vector<std::string_view>& parts, size_t count) {
  std::string out;
  for (size_t i = 0; i < count; ++i) {
    if (i > 0) out.push_back('-');
    out.append(parts[i]);
  }
  return out;
}

// The job's name without its namespace: the rules of KubeJobName.
std::string StripController(std::string_view pod) {
  std::vector<std::string_view> parts;
  for (size_t start = 0;;) {
    const size_t dash = pod.find('-', start);
    parts.push_back(pod.substr(start, dash == std::string_view::npos ? dash : dash - start));
    if (dash == std::string_view::npos) break;
    start = dash + 1;
  }
  // KubeVirt: virt-launcher-<vm>-<hash5> runs the VM <vm>.
  if (parts.size() >= 3 && parts[0] == "virt" && parts[1] == "launcher") {
    parts.erase(parts.begin(), parts.begin() + 2);
    if (parts.size() >= 2 && IsHash(parts.back(), 5, 5)) parts.pop_back();
    return JoinParts(parts, parts.size());
  }
  const size_t n = parts.size();
  const auto last = [&](size_t k) { return parts[n - 1 - k]; };  // last(0): the final part
  static const std::set<std::string_view> kRoles = {"master", "worker",    "chief",
                                                    "ps",     "evaluator", "launcher"};
  if (n >= 3 && IsNumber(last(0)) && kRoles.count(last(1)) > 0) return JoinParts(parts, n - 2);
  if (n >= 2 && last(0) == "launcher") return JoinParts(parts, n - 1);
  if (n >= 3 && last(1) == "launcher" && IsHash(last(0), 5, 5)) return JoinParts(parts, n - 2);
  if (n >= 3 && IsNumber(last(1)) && IsHash(last(0), 5, 5)) return JoinParts(parts, n - 2);
  if (n >= 3 && IsHash(last(1), 6, 10) && IsHash(last(0), 5, 5)) return JoinParts(parts, n - 2);
  if (n >= 2 && IsHash(last(0), 5, 5) && !IsNumber(last(0))) return JoinParts(parts, n - 1);
  if (n >= 3 && IsNumber(last(0)) && IsNumber(last(1))) return JoinParts(parts, n - 2);
  if (n >= 2 && IsNumber(last(0))) return JoinParts(parts, n - 1);
  return std::string(pod);
}

// "GPU-<uuid>::3" (a time-sliced replica of the nvidia plugin) -> "GPU-<uuid>".
std::string_view PhysicalGpu(std::string_view id) {
  const size_t sep = id.rfind("::");
  return sep == std::string_view::npos || sep == 0 ? id : id.substr(0, sep);
}

// ---- JSON helpers ----

const Json* Member(const Json& object, std::initializer_list<const char*> keys) {
  if (!object.is_object()) return nullptr;
  for (const char* key : keys) {
    auto it = object.find(key);
    if (it != object.end() && !it->is_null()) return &*it;
  }
  return nullptr;
}

std::string Text(const Json* j) {
  if (j == nullptr) return "";
  if (j->is_string()) return j->get<std::string>();
  if (j->is_number_integer()) return std::to_string(j->get<int64_t>());
  if (j->is_number_unsigned()) return std::to_string(j->get<uint64_t>());
  return "";
}

std::optional<int64_t> Integer(const Json* j) {
  if (j == nullptr) return std::nullopt;
  if (j->is_number_integer()) return j->get<int64_t>();
  if (j->is_number_unsigned()) return static_cast<int64_t>(j->get<uint64_t>());
  if (j->is_string()) {
    int64_t n = 0;
    if (absl::SimpleAtoi(j->get<std::string>(), &n)) return n;
  }
  return std::nullopt;
}

// The offset of the character after the bracket that closes the one at `open` ('{' or '['),
// strings and their escapes skipped; npos when the text ends first.
size_t BalancedEnd(std::string_view text, size_t open) {
  int depth = 0;
  for (size_t i = open; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '"') {
      for (++i; i < text.size() && text[i] != '"'; ++i) {
        if (text[i] == '\\') ++i;
      }
      if (i >= text.size()) return std::string_view::npos;
    } else if (c == '{' || c == '[') {
      ++depth;
    } else if (c == '}' || c == ']') {
      if (--depth == 0) return i + 1;
    }
  }
  return std::string_view::npos;
}

// The offset of the first line whose first non-blank character is one of `starts` (lines
// before it are a prompt or a heading); npos when none.
size_t DocumentStart(std::string_view text, std::string_view starts) {
  for (size_t line = 0; line < text.size();) {
    size_t i = line;
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t' || text[i] == '\r')) ++i;
    if (i < text.size() && starts.find(text[i]) != std::string_view::npos) return i;
    const size_t nl = text.find('\n', line);
    if (nl == std::string_view::npos) break;
    line = nl + 1;
  }
  return std::string_view::npos;
}

// Where things are: file:line:column of an offset of the whole text.
struct Places {
  std::string_view text;
  const std::string& file;
  std::string Where(size_t offset) const {
    return absl::StrCat(file, ":", TextPosition(text, std::min(offset, text.size())));
  }
  // The offset of `value` as a JSON string at or after `from`; `from` when not found.
  size_t Find(const std::string& value, size_t from) const {
    if (value.empty()) return from;
    const size_t at = text.find(Json(value).dump(), from);
    return at == std::string_view::npos ? from : at;
  }
};

// ---- pod-resources JSON ----

class PodReader {
 public:
  PodReader(const Places& places, KubePodsResult& out) : places_(places), out_(out) {}

  // `base`: the offset in the text where the parsed document starts (problems' positions).
  void Document(const Json& doc, size_t base) {
    if (doc.is_array()) {
      for (const Json& p : doc) Pod(p, base);
      return;
    }
    if (const Json* list = Member(doc, {"podResources", "pod_resources", "pods"})) {
      if (list->is_array()) {
        for (const Json& p : *list) Pod(p, base);
      } else {
        Pod(*list, base);  // a Get answer
      }
      return;
    }
    if (const Json* pod = Member(doc, {"pod"})) {
      Pod(*pod, base);
      return;
    }
    if (Member(doc, {"containers", "namespace"}) != nullptr) {
      Pod(doc, base);
      return;
    }
    out_.problems.push_back({places_.Where(base),
                             "no pod resources here (no podResources, pod_resources, pod or "
                             "containers): not the pod-resources API's answer"});
  }

  // Whether `j` looks like one PodResources (for the recovery of damaged texts).
  static bool LooksLikePod(const Json& j) {
    return j.is_object() && j.contains("containers") &&
           (j.contains("name") || j.contains("namespace"));
  }

  void Pod(const Json& j, size_t base) {
    if (!j.is_object()) {
      out_.problems.push_back({places_.Where(base), "a pod that is not an object: skipped"});
      return;
    }
    KubePod pod;
    pod.name = Text(Member(j, {"name"}));
    pod.ns = Text(Member(j, {"namespace"}));
    const size_t at = places_.Find(pod.name, base);
    if (pod.name.empty()) {
      out_.problems.push_back({places_.Where(at), "a pod without a name: skipped"});
      return;
    }
    if (const Json* containers = Member(j, {"containers"})) {
      if (!containers->is_array()) {
        out_.problems.push_back(
            {places_.Where(at), absl::StrCat("pod ", pod.name, ": containers is not a list")});
      } else {
        for (const Json& c : *containers) Container(c, pod, at);
      }
    }
    out_.pods.push_back(std::move(pod));
  }

 private:
  void Container(const Json& j, KubePod& pod, size_t at) {
    if (!j.is_object()) {
      out_.problems.push_back(
          {places_.Where(at), absl::StrCat("pod ", pod.name, ": a container that is no object")});
      return;
    }
    KubeContainer c;
    c.name = Text(Member(j, {"name"}));
    if (const Json* devices = Member(j, {"devices"})) {  // null: none
      if (!devices->is_array()) {
        out_.problems.push_back({places_.Where(at), absl::StrCat("pod ", pod.name, " container ",
                                                                 c.name, ": devices is no list")});
      } else {
        for (const Json& d : *devices) Device(d, pod, c, at);
      }
    }
    if (const Json* dra = Member(j, {"dynamicResources", "dynamic_resources"});
        dra != nullptr && dra->is_array()) {
      for (const Json& claim : *dra) {
        const Json* resources = Member(claim, {"claimResources", "claim_resources"});
        if (resources == nullptr || !resources->is_array()) continue;
        for (const Json& r : *resources) {
          KubeDevice d;
          d.dynamic = true;
          d.resource_name = Text(Member(r, {"driverName", "driver_name"}));
          const std::string pool = Text(Member(r, {"poolName", "pool_name"}));
          const std::string device = Text(Member(r, {"deviceName", "device_name"}));
          d.device_ids.push_back(pool.empty() ? device : absl::StrCat(pool, "/", device));
          c.devices.push_back(std::move(d));
        }
      }
    }
    pod.containers.push_back(std::move(c));
  }

  void Device(const Json& j, const KubePod& pod, KubeContainer& c, size_t at) {
    KubeDevice d;
    d.resource_name = Text(Member(j, {"resourceName", "resource_name"}));
    if (d.resource_name.empty()) {
      out_.problems.push_back(
          {places_.Where(at), absl::StrCat("pod ", pod.name, " container ", c.name,
                                           ": a device without resourceName")});
      return;
    }
    if (const Json* ids = Member(j, {"deviceIds", "device_ids", "deviceIDs"})) {
      if (ids->is_array()) {
        for (const Json& id : *ids) {
          if (std::string s = Text(&id); !s.empty()) d.device_ids.push_back(std::move(s));
        }
      }
    }
    // protojson omits a zero int64, so NUMA node 0 comes as {} (kubernetes#101522).
    if (const Json* topology = Member(j, {"topology"})) {
      if (const Json* nodes = Member(*topology, {"nodes"}); nodes != nullptr && nodes->is_array()) {
        for (const Json& n : *nodes) {
          d.numa_nodes.push_back(Integer(Member(n, {"ID", "id", "Id"})).value_or(0));
        }
      }
    }
    if (const Json* numa = Member(j, {"numaNodes", "numa_nodes"});
        numa != nullptr && numa->is_array()) {
      for (const Json& n : *numa) {
        if (std::optional<int64_t> v = Integer(&n)) d.numa_nodes.push_back(*v);
      }
    }
    c.devices.push_back(std::move(d));
  }

  const Places& places_;
  KubePodsResult& out_;
};

// Every complete object of `text` from `from` on that `accept`s, outermost first, each read by
// `take` (its offset, the object); a bracket that never closes ends the scan. Returns how many.
template <typename Accept, typename Take>
int RecoverObjects(std::string_view text, size_t from, Accept accept, Take take) {
  int n = 0;
  for (size_t i = from; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '"') {  // skip strings
      for (++i; i < text.size() && text[i] != '"'; ++i) {
        if (text[i] == '\\') ++i;
      }
      continue;
    }
    if (c != '{') continue;
    const size_t end = BalancedEnd(text, i);
    if (end == std::string_view::npos) continue;  // look inside: its first members may be whole
    Json j = Json::parse(text.substr(i, end - i), nullptr, /*allow_exceptions=*/false);
    if (!j.is_discarded() && accept(j)) {
      take(i, j);
      ++n;
      i = end - 1;
    }
  }
  return n;
}

// ---- the device-manager checkpoint ----

void CheckpointEntry(const Json& e, const Places& places, size_t at,
                     std::map<std::string, KubePod>& pods, std::vector<std::string>& order,
                     KubePodsResult& out) {
  const std::string uid = Text(Member(e, {"PodUID"}));
  const std::string container = Text(Member(e, {"ContainerName"}));
  KubeDevice d;
  d.resource_name = Text(Member(e, {"ResourceName"}));
  if (uid.empty() || d.resource_name.empty()) {
    out.problems.push_back(
        {places.Where(at), "a PodDeviceEntries entry without PodUID or ResourceName: skipped"});
    return;
  }
  if (const Json* ids = Member(e, {"DeviceIDs"})) {
    if (ids->is_array()) {  // before 1.20
      for (const Json& id : *ids) {
        if (std::string s = Text(&id); !s.empty()) d.device_ids.push_back(std::move(s));
      }
    } else if (ids->is_object()) {  // 1.20+: NUMA node -> ids (-1: no NUMA affinity)
      for (const auto& [numa, list] : ids->items()) {
        int64_t node = -1;
        if (absl::SimpleAtoi(numa, &node) && node >= 0) d.numa_nodes.push_back(node);
        if (!list.is_array()) continue;
        for (const Json& id : list) {
          if (std::string s = Text(&id); !s.empty()) d.device_ids.push_back(std::move(s));
        }
      }
    }
  }
  auto [it, added] = pods.try_emplace(uid);
  if (added) {
    it->second.uid = uid;
    order.push_back(uid);
  }
  KubePod& pod = it->second;
  auto c = std::find_if(pod.containers.begin(), pod.containers.end(),
                        [&](const KubeContainer& k) { return k.name == container; });
  if (c == pod.containers.end()) {
    pod.containers.push_back({container, {}});
    c = pod.containers.end() - 1;
  }
  c->devices.push_back(std::move(d));
}

void RegisteredDevices(const Json& j, KubePodsResult& out) {
  if (!j.is_object()) return;
  for (const auto& [resource, ids] : j.items()) {
    std::vector<std::string>& into = out.registered_devices[resource];
    if (!ids.is_array()) continue;
    for (const Json& id : ids) {
      if (std::string s = Text(&id); !s.empty()) into.push_back(std::move(s));
    }
  }
}

// ---- Multus network-status ----

void NetworkInterfaces(const Json& doc, const Places& places, size_t base,
                       KubeNetworkStatusResult& out) {
  if (!doc.is_array()) {
    out.problems.push_back({places.Where(base),
                            "not a list of networks: not a network-status "
                            "annotation"});
    return;
  }
  for (const Json& n : doc) {
    if (!n.is_object()) {
      out.problems.push_back({places.Where(base), "a network that is not an object: skipped"});
      continue;
    }
    KubeNetworkInterface i;
    i.network = Text(Member(n, {"name"}));
    i.interface = Text(Member(n, {"interface"}));
    if (const Json* ips = Member(n, {"ips"}); ips != nullptr && ips->is_array()) {
      for (const Json& ip : *ips) {
        if (std::string s = Text(&ip); !s.empty()) i.ips.push_back(std::move(s));
      }
    }
    i.mac = Text(Member(n, {"mac"}));
    if (const Json* d = Member(n, {"default"}); d != nullptr && d->is_boolean()) {
      i.is_default = d->get<bool>();
    }
    if (const Json* info = Member(n, {"device-info"})) {
      i.device_type = Text(Member(*info, {"type"}));
      if (const Json* pci = Member(*info, {"pci"})) {
        i.pci_address = Text(Member(*pci, {"pci-address"}));
        i.rdma_device = Text(Member(*pci, {"rdma-device"}));
        i.pf_pci_address = Text(Member(*pci, {"pf-pci-address"}));
      }
    }
    out.interfaces.push_back(std::move(i));
  }
}

}  // namespace kubelet_text

bool LooksLikePciAddress(std::string_view id) {
  // [dddd:]bb:dd.f, hex.
  const auto hex = [](std::string_view s, size_t n) {
    return s.size() == n && std::all_of(s.begin(), s.end(), [](char c) {
             return absl::ascii_isxdigit(static_cast<unsigned char>(c));
           });
  };
  const size_t dot = id.rfind('.');
  if (dot == std::string_view::npos || !hex(id.substr(dot + 1), 1)) return false;
  std::string_view rest = id.substr(0, dot);
  const size_t colon = rest.rfind(':');
  if (colon == std::string_view::npos || !hex(rest.substr(colon + 1), 2)) return false;
  rest = rest.substr(0, colon);
  const size_t domain = rest.rfind(':');
  if (domain == std::string_view::npos) return hex(rest, 2);
  return hex(rest.substr(domain + 1), 2) && hex(rest.substr(0, domain), 4);
}

KubeResourceKind ClassifyKubeResource(std::string_view resource_name,
                                      const std::vector<std::string>& device_ids) {
  using kubelet_text::Contains;
  using kubelet_text::EndsWith;
  using kubelet_text::StartsWith;
  const std::string name = kubelet_text::Lower(resource_name);
  const size_t slash = name.find('/');
  const std::string_view vendor =
      slash == std::string::npos ? std::string_view() : std::string_view(name).substr(0, slash);
  const std::string_view resource = slash == std::string::npos
                                        ? std::string_view(name)
                                        : std::string_view(name).substr(slash + 1);
  // 1. GPUs and accelerators.
  if (resource == "gpu" || StartsWith(resource, "gpu.") || StartsWith(resource, "gpu-") ||
      StartsWith(resource, "mig-") || resource == "pgpu" || resource == "vgpu" ||
      vendor == "gpu.intel.com" || vendor == "habana.ai" ||
      (vendor == "aws.amazon.com" && StartsWith(resource, "neuron")) ||
      (vendor == "google.com" && StartsWith(resource, "tpu")) ||
      (slash == std::string::npos && StartsWith(name, "gpu."))) {
    return KubeResourceKind::kGpu;
  }
  // 2. RDMA devices.
  static constexpr std::string_view kRdmaWords[] = {"rdma",    "hca",       "ib_pf",     "ib_vf",
                                                    "sriov",   "roce",      "mlnx",      "mlx5",
                                                    "hostdev", "netdevice", "infiniband"};
  if (vendor == "rdma" || EndsWith(resource, "_vf") || EndsWith(resource, "_pf") ||
      std::any_of(std::begin(kRdmaWords), std::end(kRdmaWords),
                  [&](std::string_view w) { return Contains(resource, w); })) {
    return KubeResourceKind::kRdma;
  }
  // 3. KubeVirt's passthrough GPUs and vGPUs, named by model or type.
  if (vendor == "nvidia.com") return KubeResourceKind::kGpu;
  // 4. SR-IOV VFs by PCI address under a site's own name.
  if (!device_ids.empty() &&
      std::all_of(device_ids.begin(), device_ids.end(),
                  [](const std::string& id) { return LooksLikePciAddress(id); })) {
    return KubeResourceKind::kRdma;
  }
  return KubeResourceKind::kOther;
}

std::string KubeJobName(std::string_view ns, std::string_view pod_name) {
  return absl::StrCat(AsAbsl(ns), "/", kubelet_text::StripController(pod_name));
}

std::vector<KubeHostJob> HostJobsFromPods(const std::vector<KubePod>& pods) {
  std::map<std::string, KubeHostJob> jobs;
  for (const KubePod& pod : pods) {
    std::set<std::string> gpus, rdma;
    for (const KubeContainer& c : pod.containers) {
      for (const KubeDevice& d : c.devices) {
        switch (ClassifyKubeResource(d.resource_name, d.device_ids)) {
          case KubeResourceKind::kGpu:
            for (const std::string& id : d.device_ids) {
              gpus.insert(
                  absl::StrCat(d.resource_name, "\n", AsAbsl(kubelet_text::PhysicalGpu(id))));
            }
            break;
          case KubeResourceKind::kRdma:
            for (const std::string& id : d.device_ids) {
              rdma.insert(absl::StrCat(d.resource_name, "\n", id));
            }
            break;
          case KubeResourceKind::kOther:
            break;
        }
      }
    }
    if (gpus.empty() && rdma.empty()) continue;  // not a job of railwatch's
    const std::string& pod_name = pod.name.empty() ? pod.uid : pod.name;
    const std::string name = KubeJobName(pod.ns, pod_name);
    KubeHostJob& job = jobs[name];
    job.name = name;
    job.pods.push_back(pod_name);
    job.gpus += static_cast<uint32_t>(gpus.size());
    job.rdma += static_cast<uint32_t>(rdma.size());
  }
  std::vector<KubeHostJob> out;
  out.reserve(jobs.size());
  for (auto& [name, job] : jobs) {
    std::sort(job.pods.begin(), job.pods.end());
    job.pods.erase(std::unique(job.pods.begin(), job.pods.end()), job.pods.end());
    out.push_back(std::move(job));
  }
  return out;
}

std::string EncodeHostJobs(const std::vector<KubeHostJob>& jobs) {
  std::vector<std::string> entries;
  entries.reserve(jobs.size());
  for (const KubeHostJob& j : jobs) {
    entries.push_back(absl::StrCat(j.name, ":pods=", j.pods.size(), ":gpus=", j.gpus,
                                   ":rdma=", j.rdma, ":names=", absl::StrJoin(j.pods, ",")));
  }
  return absl::StrJoin(entries, ";");
}

std::vector<KubeHostJob> DecodeHostJobs(std::string_view text, int* bad) {
  std::vector<KubeHostJob> out;
  int bad_entries = 0;
  for (absl::string_view entry : absl::StrSplit(AsAbsl(text), ';', absl::SkipWhitespace())) {
    std::vector<absl::string_view> fields = absl::StrSplit(entry, ':');
    KubeHostJob job;
    job.name = std::string(absl::StripAsciiWhitespace(fields[0]));
    bool ok = job.name.find('/') != std::string::npos && job.name.front() != '/' &&
              job.name.back() != '/';
    for (size_t i = 1; ok && i < fields.size(); ++i) {
      const size_t eq = fields[i].find('=');
      if (eq == absl::string_view::npos) {
        ok = false;
        break;
      }
      const absl::string_view key = fields[i].substr(0, eq);
      const absl::string_view value = fields[i].substr(eq + 1);
      if (key == "gpus") {
        ok = absl::SimpleAtoi(value, &job.gpus);
      } else if (key == "rdma") {
        ok = absl::SimpleAtoi(value, &job.rdma);
      } else if (key == "names") {
        for (absl::string_view p : absl::StrSplit(value, ',', absl::SkipEmpty())) {
          job.pods.emplace_back(p);
        }
      }  // pods=<n> is the names' count; unknown keys: a newer agent's
    }
    if (!ok) {
      ++bad_entries;
      continue;
    }
    std::sort(job.pods.begin(), job.pods.end());
    job.pods.erase(std::unique(job.pods.begin(), job.pods.end()), job.pods.end());
    out.push_back(std::move(job));
  }
  if (bad != nullptr) *bad = bad_entries;
  return out;
}

std::string CompactPodNames(std::vector<std::string> names, size_t max_items) {
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  // prefix ("train-worker-") -> numbers; names without a trailing number stand alone.
  std::map<std::string, std::set<int>> numbered;
  std::vector<std::string> items;
  for (const std::string& n : names) {
    const size_t dash = n.rfind('-');
    int number = 0;
    if (dash != std::string::npos && kubelet_text::IsNumber(std::string_view(n).substr(dash + 1)) &&
        absl::SimpleAtoi(absl::string_view(n).substr(dash + 1), &number) &&
        std::to_string(number) == n.substr(dash + 1)) {
      numbered[n.substr(0, dash + 1)].insert(number);
    } else {
      items.push_back(n);
    }
  }
  for (const auto& [prefix, numbers] : numbered) {
    std::vector<int> v(numbers.begin(), numbers.end());
    for (size_t i = 0; i < v.size();) {
      size_t j = i;
      while (j + 1 < v.size() && v[j + 1] == v[j] + 1) ++j;
      if (j - i >= 2) {
        items.push_back(absl::StrCat(prefix, v[i], "..", v[j]));
      } else {
        for (size_t k = i; k <= j; ++k) items.push_back(absl::StrCat(prefix, v[k]));
      }
      i = j + 1;
    }
  }
  std::sort(items.begin(), items.end());
  if (items.size() > max_items) {
    const size_t more = items.size() - max_items;
    items.resize(max_items);
    items.push_back(absl::StrCat("+", more, " more"));
  }
  return absl::StrJoin(items, ", ");
}

KubePodsResult ReadPodResourcesJson(std::string_view text, const std::string& file) {
  using kubelet_text::Json;
  KubePodsResult out;
  const kubelet_text::Places places{text, file};
  kubelet_text::PodReader reader(places, out);
  const size_t start = kubelet_text::DocumentStart(text, "{[\"");
  if (start == std::string_view::npos) {
    out.problems.push_back({places.Where(0), "no JSON here: not the pod-resources API's answer"});
    return out;
  }
  const std::string_view doc_text = text.substr(start);
  try {
    if (doc_text.front() != '"') {
      reader.Document(Json::parse(doc_text), start);
      return out;
    }
    // A fragment cut from inside an object ("pod": {...}): read as that object's inside.
    const std::string wrapped = absl::StrCat("{", AsAbsl(doc_text), "\n}");
    const Json doc = Json::parse(wrapped);
    out.problems.push_back(
        {places.Where(start),
         "a fragment, not a whole JSON document (it starts with a member, \"key\": ...): read "
         "as the inside of an object"});
    reader.Document(doc, start);
    return out;
  } catch (const Json::parse_error& e) {
    JsonErrorAt error = DescribeJsonError(e);
    // In a wrapped fragment, the error's place in the text as given (without the '{').
    if (doc_text.front() == '"' && error.offset > 0) {
      error.offset = std::min(error.offset - 1, doc_text.size());
    }
    // Damaged or cut short: what is whole before the damage is read, pod by pod.
    int recovered = 0;
    try {
      recovered = kubelet_text::RecoverObjects(
          text, start, [](const Json& j) { return kubelet_text::PodReader::LooksLikePod(j); },
          [&](size_t at, const Json& j) { reader.Pod(j, at); });
    } catch (const Json::exception&) {
    }
    out.problems.push_back({places.Where(start + error.offset),
                            recovered > 0
                                ? absl::StrCat(error.message, "; the ", recovered,
                                               " complete pod(s) before it are read")
                                : absl::StrCat(error.message, "; no complete pod could be read")});
  } catch (const Json::exception& e) {
    out.problems.push_back({places.Where(start), absl::StrCat("unexpected JSON: ", e.what())});
  }
  return out;
}

KubePodsResult ReadKubeletCheckpoint(std::string_view text, const std::string& file) {
  using kubelet_text::Json;
  KubePodsResult out;
  const kubelet_text::Places places{text, file};
  std::map<std::string, KubePod> pods;
  std::vector<std::string> order;
  const size_t start = kubelet_text::DocumentStart(text, "{");
  if (start == std::string_view::npos) {
    out.problems.push_back({places.Where(0), "no JSON object here: not a kubelet checkpoint"});
    return out;
  }
  try {
    const Json doc = Json::parse(text.substr(start));
    const Json* data = kubelet_text::Member(doc, {"Data"});
    const Json* entries =
        data == nullptr ? nullptr : kubelet_text::Member(*data, {"PodDeviceEntries"});
    if (entries == nullptr) {
      out.problems.push_back({places.Where(start),
                              "no Data.PodDeviceEntries: not the kubelet's "
                              "device-manager checkpoint"});
      return out;
    }
    if (entries->is_array()) {
      size_t at = start;
      for (const Json& e : *entries) {
        at = places.Find(kubelet_text::Text(kubelet_text::Member(e, {"PodUID"})), at);
        kubelet_text::CheckpointEntry(e, places, at, pods, order, out);
      }
    }
    if (const Json* registered = kubelet_text::Member(*data, {"RegisteredDevices"})) {
      kubelet_text::RegisteredDevices(*registered, out);
    }
  } catch (const Json::parse_error& e) {
    // Cut short (a paste, a full disk): the entries that are whole are read.
    const JsonErrorAt error = DescribeJsonError(e);
    const size_t key = text.find("\"PodDeviceEntries\"", start);
    int complete = 0;
    if (key != std::string_view::npos) {
      const size_t open = text.find('[', key);
      if (open != std::string_view::npos) {
        for (size_t i = open + 1; i < text.size(); ++i) {
          if (text[i] != '{') continue;
          const size_t end = kubelet_text::BalancedEnd(text, i);
          if (end == std::string_view::npos) break;
          Json e = Json::parse(text.substr(i, end - i), nullptr, false);
          if (!e.is_discarded()) {
            kubelet_text::CheckpointEntry(e, places, i, pods, order, out);
            ++complete;
          }
          i = end - 1;
        }
      }
    }
    const size_t registered = text.find("\"RegisteredDevices\"", start);
    if (registered != std::string_view::npos) {
      const size_t open = text.find('{', registered);
      const size_t end =
          open == std::string_view::npos ? open : kubelet_text::BalancedEnd(text, open);
      if (end != std::string_view::npos) {
        Json r = Json::parse(text.substr(open, end - open), nullptr, false);
        if (!r.is_discarded()) kubelet_text::RegisteredDevices(r, out);
      }
    }
    const bool at_end =
        start + error.offset >= text.size() ||
        text.find_first_not_of(" \t\r\n", start + error.offset) == std::string_view::npos;
    // A cut-short text is placed just after its last character, not on the blank after it.
    const size_t last = text.find_last_not_of(" \t\r\n");
    const size_t where = at_end && last != std::string_view::npos ? last + 1 : start + error.offset;
    out.problems.push_back(
        {places.Where(where),
         absl::StrCat(at_end ? "truncated: the document ends here (" : "", error.message,
                      at_end ? ")" : "", "; ", complete, " complete PodDeviceEntries entr",
                      complete == 1 ? "y" : "ies", " read before it")});
  } catch (const Json::exception& e) {
    out.problems.push_back({places.Where(start), absl::StrCat("unexpected JSON: ", e.what())});
  }
  for (const std::string& uid : order) out.pods.push_back(std::move(pods[uid]));
  return out;
}

KubeNetworkStatusResult ReadNetworkStatus(std::string_view text, const std::string& file) {
  using kubelet_text::Json;
  KubeNetworkStatusResult out;
  const kubelet_text::Places places{text, file};
  size_t at = text.find_first_not_of(" \t\r\n");
  if (at == std::string_view::npos) {
    out.problems.push_back({places.Where(0), "empty: no network-status annotation"});
    return out;
  }
  if (text[at] != '[') {
    // After its key: "k8s.v1.cni.cncf.io/network-status:" then the value (on this line or the
    // next ones), "key: |" (YAML), or "key": "<escaped JSON>" (kubectl -o json).
    const size_t key = text.find("network-status");
    if (key == std::string_view::npos) {
      out.problems.push_back({places.Where(at),
                              "neither a JSON list nor a "
                              "k8s.v1.cni.cncf.io/network-status annotation"});
      return out;
    }
    at = key + std::string_view("network-status").size();
    if (at < text.size() && text[at] == '"') ++at;
    at = text.find_first_not_of(" \t", at);
    if (at == std::string_view::npos || text[at] != ':') {
      out.problems.push_back({places.Where(key), "network-status without ':' after it"});
      return out;
    }
    at = text.find_first_not_of(" \t\r\n|>+-", at + 1);
    if (at == std::string_view::npos) {
      out.problems.push_back({places.Where(key), "network-status without a value"});
      return out;
    }
  }
  try {
    if (text[at] == '"') {
      size_t close = at + 1;
      while (close < text.size() && text[close] != '"') close += text[close] == '\\' ? 2 : 1;
      const std::string inner =
          Json::parse(text.substr(at, std::min(close + 1, text.size()) - at)).get<std::string>();
      Json doc;
      try {
        doc = Json::parse(inner);
      } catch (const Json::parse_error& e) {
        // Inside an escaped string the offsets no longer match the text: the string's place.
        out.problems.push_back({places.Where(at), absl::StrCat("in the annotation's string: ",
                                                               DescribeJsonError(e).message)});
        return out;
      }
      kubelet_text::NetworkInterfaces(doc, places, at, out);
      return out;
    }
    const size_t end = kubelet_text::BalancedEnd(text, at);
    const std::string_view value =
        text.substr(at, end == std::string_view::npos ? std::string_view::npos : end - at);
    kubelet_text::NetworkInterfaces(Json::parse(value), places, at, out);
  } catch (const Json::parse_error& e) {
    const JsonErrorAt error = DescribeJsonError(e);
    out.problems.push_back({places.Where(at + error.offset), error.message});
  } catch (const Json::exception& e) {
    out.problems.push_back({places.Where(at), absl::StrCat("unexpected JSON: ", e.what())});
  }
  return out;
}

}  // namespace railwatch::jobs
