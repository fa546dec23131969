#include "collectors/ib_mad_transport_libibmad.h"

#include <infiniband/mad.h>
#include <infiniband/umad.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/labels.h"

namespace railwatch {
namespace ib_mad_libibmad_internal {

// A PMA field and the PMA name ib/ gives its counter.
struct PmaField {
  MAD_FIELDS field;
  std::string_view name;
};

// PortCounters (0x0012). PortXmitWait only with ClassPortInfo's PortXmitWait bit.
constexpr PmaField kPortCounters[] = {
    {IB_PC_ERR_SYM_F, "SymbolErrorCounter"},
    {IB_PC_LINK_RECOVERS_F, "LinkErrorRecoveryCounter"},
    {IB_PC_LINK_DOWNED_F, "LinkDownedCounter"},
    {IB_PC_ERR_RCV_F, "PortRcvErrors"},
    {IB_PC_ERR_PHYSRCV_F, "PortRcvRemotePhysicalErrors"},
    {IB_PC_ERR_SWITCH_REL_F, "PortRcvSwitchRelayErrors"},
    {IB_PC_XMT_DISCARDS_F, "PortXmitDiscards"},
    {IB_PC_ERR_XMTCONSTR_F, "PortXmitConstraintErrors"},
    {IB_PC_ERR_RCVCONSTR_F, "PortRcvConstraintErrors"},
    {IB_PC_ERR_LOCALINTEG_F, "LocalLinkIntegrityErrors"},
    {IB_PC_ERR_EXCESS_OVR_F, "ExcessiveBufferOverrunErrors"},
    {IB_PC_VL15_DROPPED_F, "VL15Dropped"},
    {IB_PC_XMT_BYTES_F, "PortXmitData"},
    {IB_PC_RCV_BYTES_F, "PortRcvData"},
    {IB_PC_XMT_PKTS_F, "PortXmitPkts"},
    {IB_PC_RCV_PKTS_F, "PortRcvPkts"},
    {IB_PC_QP1_DROP_F, "QP1Dropped"},
};

// PortCountersExtended (0x001D): the data counters; unicast and multicast only where the PMA
// is not "NoIETF"; the error counters only with CapabilityMask2's
// IsAdditionalPortCountersExtendedSupported.
constexpr PmaField kExtendedData[] = {
    {IB_PC_EXT_XMT_BYTES_F, "PortXmitData"},
    {IB_PC_EXT_RCV_BYTES_F, "PortRcvData"},
    {IB_PC_EXT_XMT_PKTS_F, "PortXmitPkts"},
    {IB_PC_EXT_RCV_PKTS_F, "PortRcvPkts"},
};
constexpr PmaField kExtendedCast[] = {
    {IB_PC_EXT_XMT_UPKTS_F, "PortUnicastXmitPkts"},
    {IB_PC_EXT_RCV_UPKTS_F, "PortUnicastRcvPkts"},
    {IB_PC_EXT_XMT_MPKTS_F, "PortMulticastXmitPkts"},
    {IB_PC_EXT_RCV_MPKTS_F, "PortMulticastRcvPkts"},
};
constexpr PmaField kExtendedErrors[] = {
    {IB_PC_EXT_ERR_SYM_F, "SymbolErrorCounter"},
    {IB_PC_EXT_LINK_RECOVERS_F, "LinkErrorRecoveryCounter"},
    {IB_PC_EXT_LINK_DOWNED_F, "LinkDownedCounter"},
    {IB_PC_EXT_ERR_RCV_F, "PortRcvErrors"},
    {IB_PC_EXT_ERR_PHYSRCV_F, "PortRcvRemotePhysicalErrors"},
    {IB_PC_EXT_ERR_SWITCH_REL_F, "PortRcvSwitchRelayErrors"},
    {IB_PC_EXT_XMT_DISCARDS_F, "PortXmitDiscards"},
    {IB_PC_EXT_ERR_XMTCONSTR_F, "PortXmitConstraintErrors"},
    {IB_PC_EXT_ERR_RCVCONSTR_F, "PortRcvConstraintErrors"},
    {IB_PC_EXT_ERR_LOCALINTEG_F, "LocalLinkIntegrityErrors"},
    {IB_PC_EXT_ERR_EXCESS_OVR_F, "ExcessiveBufferOverrunErrors"},
    {IB_PC_EXT_VL15_DROPPED_F, "VL15Dropped"},
    {IB_PC_EXT_XMT_WAIT_F, "PortXmitWait"},
    {IB_PC_EXT_QP1_DROP_F, "QP1Dropped"},
};

// A field of up to 32 bits, decoded.
uint32_t Field32(uint8_t* buf, MAD_FIELDS field) {
  uint32_t v = 0;
  mad_decode_field(buf, field, &v);
  return v;
}

uint64_t Field64(uint8_t* buf, MAD_FIELDS field) {
  uint64_t v = 0;
  mad_decode_field(buf, field, &v);
  return v;
}

// Why a port cannot be opened, in words an operator can act on.
std::string WhyNotOpen(const std::string& ca, int err) {
  std::error_code ec;
  if (!std::filesystem::exists("/sys/class/infiniband_mad", ec)) {
    return "this kernel has no InfiniBand MAD devices (/sys/class/infiniband_mad is missing: "
           "no RDMA driver, or the ib_umad module is not loaded)";
  }
  char names[UMAD_MAX_DEVICES][UMAD_CA_NAME_LEN];
  const int n = umad_get_cas_names(names, UMAD_MAX_DEVICES);
  std::vector<std::string> found;
  for (int i = 0; i < n; ++i) found.emplace_back(names[i]);
  if (found.empty()) return "no CA has a umad device (/sys/class/infiniband_mad is empty)";
  if (!ca.empty() && std::find(found.begin(), found.end(), ca) == found.end()) {
    return absl::StrCat("no CA named ", ca, " (umad devices: ", absl::StrJoin(found, ", "), ")");
  }
  if (err == EACCES || err == EPERM) {
    return absl::StrCat(std::strerror(err),
                        ": the scanner needs read-write access to /dev/infiniband/umad*");
  }
  return err != 0 ? std::string(std::strerror(err)) : "libibumad could not open the port";
}

absl::Status RpcFailure(std::string_view what, int err, int mad_status) {
  if (mad_status == IB_MAD_STS_METHOD_ATTR_NOT_SUPPORTED ||
      mad_status == IB_MAD_STS_METHOD_NOT_SUPPORTED) {
    return absl::UnimplementedError(absl::StrCat(AsAbsl(what), ": attribute not supported"));
  }
  if (mad_status != 0) {
    return absl::InvalidArgumentError(absl::StrCat(AsAbsl(what), ": MAD status 0x", absl::Hex(mad_status)));
  }
  if (err == ETIMEDOUT || err == 0) return absl::DeadlineExceededError(absl::StrCat(AsAbsl(what), ": timed out"));
  return absl::UnavailableError(absl::StrCat(AsAbsl(what), ": ", std::strerror(err)));
}

}  // namespace ib_mad_libibmad_internal

class LibibmadTransport::Lease {
 public:
  explicit Lease(LibibmadTransport& t) : t_(t) {
    absl::MutexLock lock(&t_.mu_);
    t_.mu_.Await(absl::Condition(
        +[](std::vector<ibmad_port*>* free) { return !free->empty(); }, &t_.free_));
    port_ = t_.free_.back();
    t_.free_.pop_back();
  }
  ~Lease() {
    absl::MutexLock lock(&t_.mu_);
    t_.free_.push_back(port_);
  }
  ibmad_port* get() const { return port_; }

 private:
  LibibmadTransport& t_;
  ibmad_port* port_ = nullptr;
};

absl::StatusOr<std::unique_ptr<LibibmadTransport>> LibibmadTransport::Open(Options options) {
  using namespace ib_mad_libibmad_internal;  // NOLINT
  const std::string who = options.ca.empty() ? std::string("the first InfiniBand CA")
                                             : absl::StrCat("CA ", options.ca);
  const std::string where =
      options.port > 0 ? absl::StrCat(who, " port ", options.port) : who;
  int classes[] = {IB_SMI_CLASS, IB_SMI_DIRECT_CLASS, IB_PERFORMANCE_CLASS};
  std::vector<ibmad_port*> ports;
  const int count = std::max(1, options.max_outstanding);
  for (int i = 0; i < count; ++i) {
    std::vector<char> ca(options.ca.begin(), options.ca.end());
    ca.push_back('\0');
    errno = 0;
    ibmad_port* p = mad_rpc_open_port(options.ca.empty() ? nullptr : ca.data(), options.port,
                                      classes, 3);
    if (p == nullptr) {
      const int err = errno;
      for (ibmad_port* q : ports) mad_rpc_close_port(q);
      return absl::UnavailableError(absl::StrCat("cannot open ", where, " for MADs: ",
                                                 WhyNotOpen(options.ca, err)));
    }
    mad_rpc_set_timeout(p, static_cast<int>(absl::ToInt64Milliseconds(options.timeout)));
    mad_rpc_set_retries(p, options.retries);
    ports.push_back(p);
  }
  return std::unique_ptr<LibibmadTransport>(new LibibmadTransport(std::move(options), ports));
}

LibibmadTransport::LibibmadTransport(Options options, std::vector<ibmad_port*> ports)
    : options_(std::move(options)), ports_(ports), free_(std::move(ports)) {}

LibibmadTransport::~LibibmadTransport() {
  for (ibmad_port* p : ports_) mad_rpc_close_port(p);
}

std::string LibibmadTransport::Describe() const {
  return absl::StrCat("mad:", options_.ca, options_.port > 0 ? ":" : "",
                      options_.port > 0 ? std::to_string(options_.port) : "");
}

void LibibmadTransport::TopologyChanged() {
  absl::MutexLock lock(&mu_);
  class_port_info_.clear();  // LIDs may have been given again
}

absl::Status LibibmadTransport::Smp(const DrPath& path, unsigned attribute, unsigned modifier,
                                    uint8_t* buf) {
  using namespace ib_mad_libibmad_internal;  // NOLINT
  if (path.hops() > kMaxDrHops) return absl::InvalidArgumentError("directed route too long");
  ib_portid_t id;
  std::memset(&id, 0, sizeof id);
  // lid 0 and permissive DR LIDs (0 is encoded as 0xffff): a directed-route SMP all the way.
  id.drpath.cnt = path.hops();
  id.drpath.p[0] = 0;
  for (int i = 0; i < path.hops(); ++i) id.drpath.p[i + 1] = path.ports[static_cast<size_t>(i)];
  Lease lease(*this);
  int mad_status = 0;
  errno = 0;
  if (smp_query_status_via(buf, &id, attribute, modifier, 0, &mad_status, lease.get()) ==
      nullptr) {
    return RpcFailure(absl::StrCat("SMP 0x", absl::Hex(attribute), " to DR ", path.ToString()),
                      errno, mad_status);
  }
  return absl::OkStatus();
}

absl::Status LibibmadTransport::Pma(uint32_t lid, int port, unsigned attribute, uint8_t* buf) {
  using namespace ib_mad_libibmad_internal;  // NOLINT
  ib_portid_t id;
  std::memset(&id, 0, sizeof id);
  ib_portid_set(&id, static_cast<int>(lid), 0, 0);  // QP1 and its well-known Q_Key, by libibmad
  Lease lease(*this);
  errno = 0;
  if (pma_query_via(buf, &id, port, 0, attribute, lease.get()) == nullptr) {
    return RpcFailure(absl::StrCat("PMA 0x", absl::Hex(attribute), " to LID ", lid, " port ", port),
                      errno, 0);
  }
  return absl::OkStatus();
}

absl::StatusOr<MadNodeInfo> LibibmadTransport::QueryNodeInfo(const DrPath& path) {
  using namespace ib_mad_libibmad_internal;  // NOLINT
  uint8_t buf[IB_SMP_DATA_SIZE] = {};
  if (absl::Status s = Smp(path, IB_ATTR_NODE_INFO, 0, buf); !s.ok()) return s;
  MadNodeInfo info;
  switch (Field32(buf, IB_NODE_TYPE_F)) {
    case IB_NODE_CA:
      info.type = ib::IbNodeType::kCa;
      break;
    case IB_NODE_SWITCH:
      info.type = ib::IbNodeType::kSwitch;
      break;
    case IB_NODE_ROUTER:
      info.type = ib::IbNodeType::kRouter;
      break;
    default:
      info.type = ib::IbNodeType::kUnknown;
  }
  info.num_ports = static_cast<int>(Field32(buf, IB_NODE_NPORTS_F));
  info.system_image_guid = Field64(buf, IB_NODE_SYSTEM_GUID_F);
  info.node_guid = Field64(buf, IB_NODE_GUID_F);
  info.port_guid = Field64(buf, IB_NODE_PORT_GUID_F);
  info.device_id = Field32(buf, IB_NODE_DEVID_F);
  info.local_port = static_cast<int>(Field32(buf, IB_NODE_LOCAL_PORT_F));
  info.vendor_id = Field32(buf, IB_NODE_VENDORID_F);
  return info;
}

absl::StatusOr<std::string> LibibmadTransport::QueryNodeDescription(const DrPath& path) {
  uint8_t buf[IB_SMP_DATA_SIZE + 1] = {};
  if (absl::Status s = Smp(path, IB_ATTR_NODE_DESC, 0, buf); !s.ok()) return s;
  // 64 bytes, NUL-padded (not NUL-terminated when full).
  return std::string(reinterpret_cast<const char*>(buf), strnlen(reinterpret_cast<const char*>(buf),
                                                                 IB_SMP_DATA_SIZE));
}

absl::StatusOr<MadPortInfo> LibibmadTransport::QueryPortInfo(const DrPath& path, int port) {
  using namespace ib_mad_libibmad_internal;  // NOLINT
  uint8_t buf[IB_SMP_DATA_SIZE] = {};
  if (absl::Status s = Smp(path, IB_ATTR_PORT_INFO, static_cast<unsigned>(port), buf); !s.ok()) {
    return s;
  }
  MadPortInfo info;
  info.lid = Field32(buf, IB_PORT_LID_F);
  info.capability_mask = Field32(buf, IB_PORT_CAPMASK_F);
  info.state = static_cast<int>(Field32(buf, IB_PORT_STATE_F));
  info.physical_state = static_cast<int>(Field32(buf, IB_PORT_PHYS_STATE_F));
  info.link_width_active = static_cast<int>(Field32(buf, IB_PORT_LINK_WIDTH_ACTIVE_F));
  info.link_speed_active = static_cast<int>(Field32(buf, IB_PORT_LINK_SPEED_ACTIVE_F));
  info.link_speed_ext_active = static_cast<int>(Field32(buf, IB_PORT_LINK_SPEED_EXT_ACTIVE_F));
  return info;
}

absl::StatusOr<bool> LibibmadTransport::QueryFdr10Active(const DrPath& path, int port) {
  using namespace ib_mad_libibmad_internal;  // NOLINT
  uint8_t buf[IB_SMP_DATA_SIZE] = {};
  if (absl::Status s = Smp(path, IB_ATTR_MLNX_EXT_PORT_INFO, static_cast<unsigned>(port), buf);
      !s.ok()) {
    return s;
  }
  return (Field32(buf, IB_MLNX_EXT_PORT_LINK_SPEED_ACTIVE_F) & 1) != 0;
}

absl::StatusOr<LibibmadTransport::ClassPortInfo> LibibmadTransport::PmaCapabilities(uint32_t lid) {
  {
    absl::MutexLock lock(&mu_);
    if (auto it = class_port_info_.find(lid); it != class_port_info_.end()) return it->second;
  }
  uint8_t buf[1024] = {};
  if (absl::Status s = Pma(lid, 0, CLASS_PORT_INFO, buf); !s.ok()) return s;
  // ClassPortInfo: BaseVersion, ClassVersion, CapabilityMask (16 bits), then CapabilityMask2
  // (27 bits) and RespTimeValue (5 bits), big-endian.
  ClassPortInfo cpi;
  cpi.cap_mask = (uint32_t{buf[2]} << 8) | buf[3];
  const uint32_t word = (uint32_t{buf[4]} << 24) | (uint32_t{buf[5]} << 16) |
                        (uint32_t{buf[6]} << 8) | buf[7];
  cpi.cap_mask2 = word >> 5;
  absl::MutexLock lock(&mu_);
  class_port_info_[lid] = cpi;
  return cpi;
}

absl::StatusOr<MadPortCounters> LibibmadTransport::QueryPortCounters(uint32_t lid, int port) {
  using namespace ib_mad_libibmad_internal;  // NOLINT
  absl::StatusOr<ClassPortInfo> cpi = PmaCapabilities(lid);
  if (!cpi.ok()) return cpi.status();
  uint8_t buf[1024] = {};
  if (absl::Status s = Pma(lid, port, IB_GSI_PORT_COUNTERS, buf); !s.ok()) return s;
  MadPortCounters out;
  out.cap_mask = cpi->cap_mask;
  out.cap_mask2 = cpi->cap_mask2;
  for (const PmaField& f : kPortCounters) out.values.push_back({f.name, Field32(buf, f.field)});
  if (cpi->cap_mask & kPmaCapXmitWait) {
    out.values.push_back({"PortXmitWait", Field32(buf, IB_PC_XMT_WAIT_F)});
  }
  return out;
}

absl::StatusOr<MadPortCounters> LibibmadTransport::QueryPortCountersExtended(uint32_t lid,
                                                                             int port) {
  using namespace ib_mad_libibmad_internal;  // NOLINT
  absl::StatusOr<ClassPortInfo> cpi = PmaCapabilities(lid);
  if (!cpi.ok()) return cpi.status();
  if (!(cpi->cap_mask & (kPmaCapExtendedWidth | kPmaCapExtendedWidthNoIetf))) {
    return absl::UnimplementedError(absl::StrCat("LID ", lid, " has no PortCountersExtended"));
  }
  uint8_t buf[1024] = {};
  if (absl::Status s = Pma(lid, port, IB_GSI_PORT_COUNTERS_EXT, buf); !s.ok()) return s;
  MadPortCounters out;
  out.cap_mask = cpi->cap_mask;
  out.cap_mask2 = cpi->cap_mask2;
  for (const PmaField& f : kExtendedData) out.values.push_back({f.name, Field64(buf, f.field)});
  if (cpi->cap_mask & kPmaCapExtendedWidth) {
    for (const PmaField& f : kExtendedCast) out.values.push_back({f.name, Field64(buf, f.field)});
  }
  if (cpi->cap_mask2 & kPmaCap2AllExtended) {
    for (const PmaField& f : kExtendedErrors) out.values.push_back({f.name, Field64(buf, f.field)});
  }
  return out;
}

}  // namespace railwatch
