#include "sim/nic_port.h"

#include <charconv>

namespace railwatch::sim {

const std::array<const char*, kSysfsCounterCount> kSysfsCounterNames = {
    "counters/port_xmit_data", "counters/port_rcv_data", "counters/port_xmit_packets",
    "counters/port_rcv_packets", "counters/unicast_xmit_packets", "counters/unicast_rcv_packets",
    "counters/multicast_xmit_packets", "counters/multicast_rcv_packets",
    "counters/link_downed", "counters/link_error_recovery", "counters/symbol_error",
    "counters/port_rcv_errors", "counters/port_rcv_remote_physical_errors",
    "counters/port_rcv_switch_relay_errors", "counters/port_xmit_discards",
    "counters/port_xmit_constraint_errors", "counters/port_rcv_constraint_errors",
    "counters/port_xmit_wait", "counters/local_link_integrity_errors",
    "counters/excessive_buffer_overrun_errors", "counters/VL15_dropped",
    "hw_counters/out_of_sequence", "hw_counters/packet_seq_err",
    "hw_counters/local_ack_timeout_err", "hw_counters/out_of_buffer",
    "hw_counters/np_ecn_marked_roce_packets", "hw_counters/np_cnp_sent",
    "hw_counters/rp_cnp_handled", "hw_counters/rp_cnp_ignored", "hw_counters/roce_adp_retrans",
    "hw_counters/roce_adp_retrans_to", "hw_counters/rx_write_requests",
    "hw_counters/rx_read_requests", "hw_counters/duplicate_request",
    "hw_counters/rx_atomic_requests", "hw_counters/rx_dct_connect",
    "hw_counters/rnr_nak_retry_err", "hw_counters/implied_nak_seq_err",
    "hw_counters/resp_local_length_error", "hw_counters/resp_cqe_error",
    "hw_counters/req_cqe_error", "hw_counters/req_remote_invalid_request",
    "hw_counters/req_remote_access_errors", "hw_counters/resp_remote_access_errors",
    "hw_counters/resp_cqe_flush_error", "hw_counters/req_cqe_flush_error",
    "hw_counters/roce_slow_restart", "hw_counters/roce_slow_restart_cnps",
    "hw_counters/roce_slow_restart_trans", "hw_counters/rx_icrc_encapsulated",
    "hw_counters/req_transport_retries_exceeded", "hw_counters/req_rnr_retries_exceeded"};

namespace {

absl::Status WriteNumber(SimFile& file, uint64_t value) {
  char text[24];
  char* end = std::to_chars(text, text + sizeof(text) - 1, value).ptr;
  *end++ = '\n';
  return file.Write(std::string_view(text, static_cast<size_t>(end - text)));
}

}  // namespace

absl::Status NicPort::Flush(bool cold) {
  if (gone) return absl::OkStatus();
  cold = cold || urgent;
  urgent = false;
  for (int i = 0; i < kSysfsCounterCount; ++i) {
    if (counters[i] == written[i] || !(cold || IsHotCounter(i))) continue;
    if (absl::Status s = WriteNumber(*files[i], counters[i]); !s.ok()) return s;
    written[i] = counters[i];
  }
  return absl::OkStatus();
}

absl::Status NicPort::SetUp(bool is_up) {
  if (up == is_up) return absl::OkStatus();
  up = is_up;
  if (!is_up) {
    urgent = true;
    // The PMA counts the failed link the moment it goes down; so does the PHY.
    counters[kLinkDowned] += 1;
    counters[kLinkErrorRecovery] += 1;
    eth.link_down_events += 1;
    eth_dirty = true;
  }
  (is_up ? carrier_up_count : carrier_down_count) += 1;
  if (absl::Status s = state->Write(is_up ? "4: ACTIVE\n" : "1: DOWN\n"); !s.ok()) return s;
  if (absl::Status s = phys_state->Write(is_up ? "5: LinkUp\n" : "3: Disabled\n"); !s.ok()) {
    return s;
  }
  if (carrier == nullptr) return absl::OkStatus();
  if (absl::Status s = WriteSpeed(); !s.ok()) return s;
  if (absl::Status s = carrier->Write(is_up ? "1\n" : "0\n"); !s.ok()) return s;
  if (absl::Status s = operstate->Write(is_up ? "up\n" : "down\n"); !s.ok()) return s;
  if (absl::Status s = WriteNumber(*carrier_up, carrier_up_count); !s.ok()) return s;
  if (absl::Status s = WriteNumber(*carrier_down, carrier_down_count); !s.ok()) return s;
  return WriteNumber(*carrier_changes, carrier_up_count + carrier_down_count);
}

std::string NicPort::SpeedText() const {
  // class/net/<netdev>/speed: Mb/s, -1 while the link is down (as the kernel's reads).
  if (!up) return "-1\n";
  return absl::StrCat(static_cast<int64_t>(link_gbps * speed_factor * 1000), "\n");
}

absl::Status NicPort::WriteSpeed() {
  if (speed == nullptr) return absl::OkStatus();
  return speed->Write(SpeedText());
}

void NicPort::ResetCounters() {
  counters.fill(0);
  urgent = true;
  eth = EthtoolCounters();
  eth_dirty = true;
  fec_corrected_blocks = fec_uncorrectable_blocks = 0;
}

absl::Status NicPort::Vanish() {
  gone = true;
  up = false;
  for (auto& f : files) {
    if (absl::Status s = f->Write(""); !s.ok()) return s;
  }
  for (SimFile* f : {state.get(), phys_state.get(), rate.get()}) {
    if (absl::Status s = f->Write(""); !s.ok()) return s;
  }
  ethtool.reset();
  return absl::OkStatus();
}

}  // namespace railwatch::sim
