#include "common/vocabulary.h"

#include "absl/container/flat_hash_map.h"

namespace railwatch {
namespace {

constexpr MetricKind C = MetricKind::kCounter;

const std::vector<MetricSpec>& Table() {
  // Names follow the Prometheus conventions: base units, `_total` on counters.
  static const std::vector<MetricSpec> table = {
      // IB port counters (PMA), per port.
      {"fabric_rdma_port_transmit_bytes_total", C, "bytes",
       "Bytes transmitted on the RDMA port (IB data counters count 4-byte words; scaled here).",
       {{"counters_ext/port_xmit_data_64", 4}, {"counters/port_xmit_data", 4}}},
      {"fabric_rdma_port_receive_bytes_total", C, "bytes", "Bytes received on the RDMA port.",
       {{"counters_ext/port_rcv_data_64", 4}, {"counters/port_rcv_data", 4}}},
      {"fabric_rdma_port_transmit_packets_total", C, "packets",
       "Packets transmitted on the RDMA port.",
       {{"counters_ext/port_xmit_packets_64"}, {"counters/port_xmit_packets"}}},
      {"fabric_rdma_port_receive_packets_total", C, "packets", "Packets received on the RDMA port.",
       {{"counters_ext/port_rcv_packets_64"}, {"counters/port_rcv_packets"}}},
      {"fabric_rdma_port_unicast_transmit_packets_total", C, "packets",
       "Unicast packets transmitted on the RDMA port.",
       {{"counters_ext/port_unicast_xmit_packets"}, {"counters/unicast_xmit_packets"}}},
      {"fabric_rdma_port_unicast_receive_packets_total", C, "packets",
       "Unicast packets received on the RDMA port.",
       {{"counters_ext/port_unicast_rcv_packets"}, {"counters/unicast_rcv_packets"}}},
      {"fabric_rdma_port_multicast_transmit_packets_total", C, "packets",
       "Multicast packets transmitted on the RDMA port.",
       {{"counters_ext/port_multicast_xmit_packets"}, {"counters/multicast_xmit_packets"}}},
      {"fabric_rdma_port_multicast_receive_packets_total", C, "packets",
       "Multicast packets received on the RDMA port.",
       {{"counters_ext/port_multicast_rcv_packets"}, {"counters/multicast_rcv_packets"}}},
      {"fabric_rdma_link_downed_total", C, "events",
       "Times the port's link went down (failed link recovery). 8-bit PMA counter.",
       {{"counters/link_downed"}}},
      {"fabric_rdma_link_error_recovery_total", C, "events",
       "Successful link error recoveries on the port.", {{"counters/link_error_recovery"}}},
      {"fabric_rdma_symbol_errors_total", C, "errors", "Physical-layer symbol errors on the port.",
       {{"counters/symbol_error"}}},
      {"fabric_rdma_port_receive_errors_total", C, "packets",
       "Packets received on the port with errors.", {{"counters/port_rcv_errors"}}},
      {"fabric_rdma_port_receive_remote_physical_errors_total", C, "packets",
       "Packets received marked with the EBP delimiter (remote physical errors).",
       {{"counters/port_rcv_remote_physical_errors"}}},
      {"fabric_rdma_port_receive_switch_relay_errors_total", C, "packets",
       "Packets discarded because they could not be forwarded by the switch relay.",
       {{"counters/port_rcv_switch_relay_errors"}}},
      {"fabric_rdma_port_receive_constraint_errors_total", C, "packets",
       "Packets received on the port that were discarded by partition or raw-packet checks.",
       {{"counters/port_rcv_constraint_errors"}}},
      {"fabric_rdma_port_transmit_constraint_errors_total", C, "packets",
       "Packets not transmitted because of partition or raw-packet checks.",
       {{"counters/port_xmit_constraint_errors"}}},
      {"fabric_rdma_port_transmit_discards_total", C, "packets",
       "Outbound packets discarded (port down or congestion).", {{"counters/port_xmit_discards"}}},
      {"fabric_rdma_port_transmit_wait_total", C, "ticks",
       "Ticks during which the port had data to send but no flow-control credits.",
       {{"counters/port_xmit_wait"}}},
      {"fabric_rdma_local_link_integrity_errors_total", C, "errors",
       "Times the local physical errors exceeded the threshold.",
       {{"counters/local_link_integrity_errors"}}},
      {"fabric_rdma_excessive_buffer_overrun_errors_total", C, "errors",
       "Consecutive flow-control update periods with buffer overrun.",
       {{"counters/excessive_buffer_overrun_errors"}}},
      {"fabric_rdma_vl15_dropped_total", C, "packets",
       "Incoming VL15 (subnet management) packets dropped for lack of buffers.",
       {{"counters/VL15_dropped"}}},
      // hw_counters (mlx5 and others): RoCE transport and congestion control.
      {"fabric_rdma_out_of_sequence_total", C, "packets",
       "Out-of-sequence packets received (a sign of drops on a lossy path).",
       {{"hw_counters/out_of_sequence"}}},
      {"fabric_rdma_packet_sequence_errors_total", C, "events",
       "NAK sequence errors received.", {{"hw_counters/packet_seq_err"}}},
      {"fabric_rdma_implied_nak_sequence_errors_total", C, "events",
       "Implied NAK sequence errors.", {{"hw_counters/implied_nak_seq_err"}}},
      {"fabric_rdma_local_ack_timeout_errors_total", C, "events",
       "Times the sender's QP ACK timer expired (RC transport).",
       {{"hw_counters/local_ack_timeout_err"}}},
      {"fabric_rdma_rnr_nak_retry_errors_total", C, "events",
       "RNR NAKs received when the retry limit was exceeded.", {{"hw_counters/rnr_nak_retry_err"}}},
      {"fabric_rdma_out_of_buffer_total", C, "packets",
       "Packets dropped for lack of a posted receive WQE.", {{"hw_counters/out_of_buffer"}}},
      {"fabric_rdma_duplicate_requests_total", C, "packets",
       "Duplicate requests received.", {{"hw_counters/duplicate_request"}}},
      {"fabric_rdma_requester_cqe_errors_total", C, "events",
       "Requester completions with error.", {{"hw_counters/req_cqe_error"}}},
      {"fabric_rdma_responder_cqe_errors_total", C, "events",
       "Responder completions with error.", {{"hw_counters/resp_cqe_error"}}},
      {"fabric_rdma_requester_cqe_flush_errors_total", C, "events",
       "Requester completions flushed with error.", {{"hw_counters/req_cqe_flush_error"}}},
      {"fabric_rdma_responder_cqe_flush_errors_total", C, "events",
       "Responder completions flushed with error.", {{"hw_counters/resp_cqe_flush_error"}}},
      {"fabric_rdma_requester_remote_access_errors_total", C, "events",
       "Remote access errors seen by the requester.", {{"hw_counters/req_remote_access_errors"}}},
      {"fabric_rdma_requester_remote_invalid_requests_total", C, "events",
       "Remote invalid-request errors seen by the requester.",
       {{"hw_counters/req_remote_invalid_request"}}},
      {"fabric_rdma_responder_local_length_errors_total", C, "events",
       "Local length errors seen by the responder.", {{"hw_counters/resp_local_length_error"}}},
      {"fabric_rdma_responder_remote_access_errors_total", C, "events",
       "Remote access errors seen by the responder.", {{"hw_counters/resp_remote_access_errors"}}},
      {"fabric_rdma_transport_retries_exceeded_total", C, "events",
       "Requests whose transport retries were exhausted.",
       {{"hw_counters/req_transport_retries_exceeded"}}},
      {"fabric_rdma_rnr_retries_exceeded_total", C, "events",
       "Requests whose RNR retries were exhausted.", {{"hw_counters/req_rnr_retries_exceeded"}}},
      {"fabric_rdma_read_requests_received_total", C, "requests", "RDMA READ requests received.",
       {{"hw_counters/rx_read_requests"}}},
      {"fabric_rdma_write_requests_received_total", C, "requests", "RDMA WRITE requests received.",
       {{"hw_counters/rx_write_requests"}}},
      {"fabric_rdma_atomic_requests_received_total", C, "requests", "Atomic requests received.",
       {{"hw_counters/rx_atomic_requests"}}},
      {"fabric_rdma_dct_connects_received_total", C, "requests", "DCT connect requests received.",
       {{"hw_counters/rx_dct_connect"}}},
      {"fabric_roce_adaptive_retransmissions_total", C, "events",
       "Adaptive retransmissions (RoCE).", {{"hw_counters/roce_adp_retrans"}}},
      {"fabric_roce_adaptive_retransmission_timeouts_total", C, "events",
       "Adaptive retransmission timeouts (RoCE).", {{"hw_counters/roce_adp_retrans_to"}}},
      {"fabric_roce_slow_restarts_total", C, "events", "RoCE slow restarts.",
       {{"hw_counters/roce_slow_restart"}}},
      {"fabric_roce_slow_restart_cnps_total", C, "packets", "CNPs sent during slow restart.",
       {{"hw_counters/roce_slow_restart_cnps"}}},
      {"fabric_roce_slow_restart_transitions_total", C, "events",
       "Transitions into slow-restart state.", {{"hw_counters/roce_slow_restart_trans"}}},
      {"fabric_roce_ecn_marked_packets_total", C, "packets",
       "ECN-marked RoCE packets received (notification point).",
       {{"hw_counters/np_ecn_marked_roce_packets"}}},
      {"fabric_roce_cnp_sent_total", C, "packets",
       "Congestion notification packets sent (notification point).", {{"hw_counters/np_cnp_sent"}}},
      {"fabric_roce_cnp_handled_total", C, "packets",
       "Congestion notification packets handled (reaction point).",
       {{"hw_counters/rp_cnp_handled"}}},
      {"fabric_roce_cnp_ignored_total", C, "packets",
       "Congestion notification packets ignored (reaction point).",
       {{"hw_counters/rp_cnp_ignored"}}},
  };
  return table;
}

}  // namespace

std::span<const MetricSpec> CanonicalMetrics() { return Table(); }

const MetricSpec* FindMetric(std::string_view name) {
  static const auto* index = [] {
    auto* m = new absl::flat_hash_map<std::string_view, const MetricSpec*>();
    for (const MetricSpec& spec : Table()) (*m)[spec.name] = &spec;
    return m;
  }();
  auto it = index->find(name);
  return it == index->end() ? nullptr : it->second;
}

}  // namespace railwatch
