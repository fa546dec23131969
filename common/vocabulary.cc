#include "common/vocabulary.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "absl/container/flat_hash_map.h"

namespace railwatch {
namespace {

constexpr MetricKind C = MetricKind::kCounter;
constexpr MetricKind G = MetricKind::kGauge;

// A counter's bound, from its unit: bytes and bits move at line rate, packets and frames at
// line rate over the smallest packet on their wire (fabric_rdma_* ports may be InfiniBand, so
// their packets are IB packets; every other packet or frame counter counts Ethernet frames),
// pause durations at the clock's rate. Counters in other units (events, errors) are unbounded.
CounterBound BoundFromUnit(const MetricSpec& spec) {
  if (spec.kind != MetricKind::kCounter) return CounterBound::kNone;
  const std::string_view unit = spec.unit;
  if (unit == "bytes") return CounterBound::kBytes;
  if (unit == "bits") return CounterBound::kBits;
  if (unit == "microseconds") return CounterBound::kMicroseconds;
  if (unit == "packets" || unit == "frames") {
    return spec.name.starts_with("fabric_rdma_") ? CounterBound::kRdmaPackets
                                                 : CounterBound::kEthernetFrames;
  }
  return CounterBound::kNone;
}

// Series the host agent reads every --detail_interval instead of every cycle (the RDMA and link
// collectors; docs/COLLECTORS.md "Cadence"): the per-port counters and attributes no shipped
// playbook, dashboard or daemon code reads. They are most of a port's files (36 of the 58 a
// ConnectX port and its netdev have), so reading them every tenth cycle roughly halves the
// poll thread's reads. A playbook that needs
// one of them at the poll interval runs with agents at --detail_interval=0; playbook_test checks
// that no shipped playbook or dashboard names one.
constexpr std::string_view kDetailSeries[] = {
    "fabric_rdma_port_transmit_packets_total",
    "fabric_rdma_port_receive_packets_total",
    "fabric_rdma_port_unicast_transmit_packets_total",
    "fabric_rdma_port_unicast_receive_packets_total",
    "fabric_rdma_port_multicast_transmit_packets_total",
    "fabric_rdma_port_multicast_receive_packets_total",
    "fabric_rdma_port_receive_switch_relay_errors_total",
    "fabric_rdma_port_receive_constraint_errors_total",
    "fabric_rdma_port_transmit_constraint_errors_total",
    "fabric_rdma_vl15_dropped_total",
    "fabric_rdma_implied_nak_sequence_errors_total",
    "fabric_rdma_rnr_nak_retry_errors_total",
    "fabric_rdma_out_of_buffer_total",
    "fabric_rdma_duplicate_requests_total",
    "fabric_rdma_requester_cqe_errors_total",
    "fabric_rdma_responder_cqe_errors_total",
    "fabric_rdma_requester_cqe_flush_errors_total",
    "fabric_rdma_responder_cqe_flush_errors_total",
    "fabric_rdma_requester_remote_access_errors_total",
    "fabric_rdma_requester_remote_invalid_requests_total",
    "fabric_rdma_responder_local_length_errors_total",
    "fabric_rdma_responder_remote_access_errors_total",
    "fabric_rdma_transport_retries_exceeded_total",
    "fabric_rdma_rnr_retries_exceeded_total",
    "fabric_rdma_read_requests_received_total",
    "fabric_rdma_write_requests_received_total",
    "fabric_rdma_atomic_requests_received_total",
    "fabric_rdma_dct_connects_received_total",
    "fabric_roce_adaptive_retransmission_timeouts_total",
    "fabric_roce_slow_restarts_total",
    "fabric_roce_slow_restart_cnps_total",
    "fabric_roce_slow_restart_transitions_total",
    "fabric_roce_cnp_ignored_total",
    "fabric_rdma_retransmitted_packets_total",
    "fabric_rdma_retransmit_timeouts_total",
    "fabric_rdma_unresponsive_remote_events_total",
    "fabric_rdma_impaired_remote_connection_events_total",
    "fabric_rdma_receive_drops_total",
    "fabric_rdma_port_physical_state",
    "fabric_link_carrier_changes_total",
    "fabric_link_carrier_up_total",
};

const std::vector<MetricSpec>& Table() {
  // Names follow the Prometheus conventions: base units, `_total` on counters.
  static const std::vector<MetricSpec> table = [] {
  std::vector<MetricSpec> table = {
      // IB port counters (PMA), per port.
      {"fabric_rdma_port_transmit_bytes_total", C, "bytes",
       "Bytes transmitted on the RDMA port (IB data counters count 4-byte words; scaled here).",
       {{"counters_ext/port_xmit_data_64", 4},
        {"counters/port_xmit_data", 4, 32},
        {"hw_counters/tx_bytes"}}},
      {"fabric_rdma_port_receive_bytes_total", C, "bytes", "Bytes received on the RDMA port.",
       {{"counters_ext/port_rcv_data_64", 4},
        {"counters/port_rcv_data", 4, 32},
        {"hw_counters/rx_bytes"}}},
      {"fabric_rdma_port_transmit_packets_total", C, "packets",
       "Packets transmitted on the RDMA port.",
       {{"counters_ext/port_xmit_packets_64"},
        {"counters/port_xmit_packets", 1, 32},
        {"hw_counters/tx_pkts"}}},
      {"fabric_rdma_port_receive_packets_total", C, "packets", "Packets received on the RDMA port.",
       {{"counters_ext/port_rcv_packets_64"},
        {"counters/port_rcv_packets", 1, 32},
        {"hw_counters/rx_pkts"}}},
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
       {{"counters/link_downed", 1, 8}}},
      {"fabric_rdma_link_error_recovery_total", C, "events",
       "Successful link error recoveries on the port.", {{"counters/link_error_recovery", 1, 8}}},
      {"fabric_rdma_symbol_errors_total", C, "errors", "Physical-layer symbol errors on the port.",
       {{"counters/symbol_error", 1, 16}}},
      {"fabric_rdma_port_receive_errors_total", C, "packets",
       "Packets received on the port with errors.", {{"counters/port_rcv_errors", 1, 16}}},
      {"fabric_rdma_port_receive_remote_physical_errors_total", C, "packets",
       "Packets received marked with the EBP delimiter (remote physical errors).",
       {{"counters/port_rcv_remote_physical_errors", 1, 16}}},
      {"fabric_rdma_port_receive_switch_relay_errors_total", C, "packets",
       "Packets discarded because they could not be forwarded by the switch relay.",
       {{"counters/port_rcv_switch_relay_errors", 1, 16}}},
      {"fabric_rdma_port_receive_constraint_errors_total", C, "packets",
       "Packets received on the port that were discarded by partition or raw-packet checks.",
       {{"counters/port_rcv_constraint_errors", 1, 8}}},
      {"fabric_rdma_port_transmit_constraint_errors_total", C, "packets",
       "Packets not transmitted because of partition or raw-packet checks.",
       {{"counters/port_xmit_constraint_errors", 1, 8}}},
      {"fabric_rdma_port_transmit_discards_total", C, "packets",
       "Outbound packets discarded (port down or congestion).", {{"counters/port_xmit_discards", 1, 16}}},
      {"fabric_rdma_port_transmit_wait_total", C, "ticks",
       "Ticks during which the port had data to send but no flow-control credits.",
       {{"counters/port_xmit_wait", 1, 32}}},
      {"fabric_rdma_local_link_integrity_errors_total", C, "errors",
       "Times the local physical errors exceeded the threshold.",
       {{"counters/local_link_integrity_errors", 1, 4}}},
      {"fabric_rdma_excessive_buffer_overrun_errors_total", C, "errors",
       "Consecutive flow-control update periods with buffer overrun.",
       {{"counters/excessive_buffer_overrun_errors", 1, 4}}},
      {"fabric_rdma_vl15_dropped_total", C, "packets",
       "Incoming VL15 (subnet management) packets dropped for lack of buffers.",
       {{"counters/VL15_dropped", 1, 16}}},
      // hw_counters (mlx5 and others): RoCE transport and congestion control.
      {"fabric_rdma_out_of_sequence_total", C, "packets",
       "Out-of-sequence packets received (a sign of drops on a lossy path).",
       {{"hw_counters/out_of_sequence"},
        {"hw_counters/oos_drop_count"},  // bnxt_re
        {"hw_counters/Rcvd Out of order packets"}}},
      {"fabric_rdma_packet_sequence_errors_total", C, "events",
       "NAK sequence errors received.", {{"hw_counters/packet_seq_err"},
        {"hw_counters/seq_err_naks_rcvd"},  // bnxt_re
        {"hw_counters/Nak Sequence Error"}}},
      {"fabric_rdma_implied_nak_sequence_errors_total", C, "events",
       "Implied NAK sequence errors.", {{"hw_counters/implied_nak_seq_err"}, {"hw_counters/Nak Sequence Error Implied"}}},
      {"fabric_rdma_local_ack_timeout_errors_total", C, "events",
       "Times the sender's QP ACK timer expired (RC transport).",
       {{"hw_counters/local_ack_timeout_err"},
        {"hw_counters/to_retransmits"},  // bnxt_re
        {"hw_counters/RTO"}}},
      {"fabric_rdma_rnr_nak_retry_errors_total", C, "events",
       "RNR NAKs received when the retry limit was exceeded.", {{"hw_counters/rnr_nak_retry_err"}}},
      {"fabric_rdma_out_of_buffer_total", C, "packets",
       "Packets dropped for lack of a posted receive WQE.", {{"hw_counters/out_of_buffer"}, {"hw_counters/rx_out_of_buffer"}}},
      {"fabric_rdma_duplicate_requests_total", C, "packets",
       "Duplicate requests received.", {{"hw_counters/duplicate_request"}, {"hw_counters/dup_req"}}},
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
       {{"hw_counters/req_transport_retries_exceeded"}, {"hw_counters/max_retry_exceeded"}}},
      {"fabric_rdma_rnr_retries_exceeded_total", C, "events",
       "Requests whose RNR retries were exhausted.", {{"hw_counters/req_rnr_retries_exceeded"}}},
      {"fabric_rdma_read_requests_received_total", C, "requests", "RDMA READ requests received.",
       {{"hw_counters/rx_read_requests"}, {"hw_counters/rx_read_req"}}},
      {"fabric_rdma_write_requests_received_total", C, "requests", "RDMA WRITE requests received.",
       {{"hw_counters/rx_write_requests"}, {"hw_counters/rx_write_req"}}},
      {"fabric_rdma_atomic_requests_received_total", C, "requests", "Atomic requests received.",
       {{"hw_counters/rx_atomic_requests"}, {"hw_counters/rx_atomic_req"}}},
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
       {{"hw_counters/np_ecn_marked_roce_packets"},
        {"hw_counters/rx_ecn_marked_pkts"},  // bnxt_re (out-of-tree driver)
        {"hw_counters/RxECNMrkd"}}},
      {"fabric_roce_cnp_sent_total", C, "packets",
       "Congestion notification packets sent (notification point).", {{"hw_counters/np_cnp_sent"}, {"hw_counters/tx_cnp_pkts"}, {"hw_counters/cnpSent"}}},
      {"fabric_roce_cnp_handled_total", C, "packets",
       "Congestion notification packets handled (reaction point).",
       {{"hw_counters/rp_cnp_handled"}, {"hw_counters/rx_cnp_pkts"}, {"hw_counters/cnpHandled"}}},
      {"fabric_roce_cnp_ignored_total", C, "packets",
       "Congestion notification packets ignored (reaction point).",
       {{"hw_counters/rp_cnp_ignored"}, {"hw_counters/cnpIgnored"}}},
      // EFA (AWS Elastic Fabric Adapter) transport health.
      {"fabric_rdma_retransmitted_packets_total", C, "packets",
       "Packets the NIC retransmitted (EFA SRD).", {{"hw_counters/retrans_pkts"}}},
      {"fabric_rdma_retransmit_timeouts_total", C, "events",
       "Retransmission timeouts (EFA SRD).", {{"hw_counters/retrans_timeout_events"}}},
      {"fabric_rdma_unresponsive_remote_events_total", C, "events",
       "Times a remote peer stopped responding (EFA).", {{"hw_counters/unresponsive_remote_events"}}},
      {"fabric_rdma_impaired_remote_connection_events_total", C, "events",
       "Times a connection to a remote peer was impaired (EFA).",
       {{"hw_counters/impaired_remote_conn_events"}}},
      {"fabric_rdma_receive_drops_total", C, "packets", "Packets dropped on receive (EFA).",
       {{"hw_counters/rx_drops"}}},

      // Port and device attributes, read by the RDMA collector itself (not from `sysfs`).
      {"fabric_rdma_port_state", G, "",
       "Logical port state: 1 DOWN, 2 INIT, 3 ARMED, 4 ACTIVE, 5 ACTIVE_DEFER.", {}},
      {"fabric_rdma_port_physical_state", G, "",
       "Physical port state: 1 Sleep, 2 Polling, 3 Disabled, 4 PortConfigurationTraining, "
       "5 LinkUp, 6 LinkErrorRecovery, 7 PhyTest.", {}},
      {"fabric_rdma_port_rate_bytes_per_second", G, "bytes per second",
       "Negotiated port rate (speed x width) in bytes per second: 400 Gb/s reads 5e10. An "
       "InfiniBand switch port's comes from the fabric scanner's topology (width and speed of "
       "its link: 4x HDR reads 2.5e10).",
       {}},
      {"fabric_rdma_port_info", G, "",
       "Always 1; labels carry the port's link layer, the netdev behind it, its MAC and, on "
       "InfiniBand, its port GUID (what LLDP announces: topology discovery).",
       {}},
      {"fabric_rdma_device_info", G, "",
       "Always 1; labels carry firmware, board, HCA type, node GUID, driver, PCI address and "
       "NUMA node.", {}},
      {"fabric_rdma_counter_saturated", G, "",
       "1 while a 4/8/16/32-bit IB PMA counter sits at its maximum (it stops counting until "
       "cleared), 0 after; defined the first time the counter saturates.", {}},
      {"fabric_rdma_driver_stat_total", C, "",
       "A counters/ or hw_counters/ file that has no canonical name (label counter).", {}},
      {"fabric_rdma_driver_gauge", G, "",
       "A hw_counters/ file that is a level, not a count (active_qps, watermarks ...).", {}},
      // ---- ethtool statistics (`ethtool -S`) and netdev sysfs, per netdev ------------------
      // Read by collectors/ethtool_collector.cc (sources in `ethtool`) and
      // collectors/link_collector.cc (`netdev_sysfs`); docs/COLLECTORS.md has the table per
      // driver. Labels: interface (added by the collector), then priority / queue / direction
      // as the source names them. mlx5 prints per-priority pause counters only for priorities
      // with PFC enabled and global pause counters only while 802.3x pause is on: a missing
      // series means "not enabled", never zero. Durations stay in microseconds, as the NICs
      // count them: a counter is an integer on the wire, and seconds would lose the resolution.
      {"fabric_pfc_pause_frames_total", C, "frames",
       "PFC pause frames received (direction=rx) or sent (tx) for one priority. mlx5 and bnxt "
       "count every PFC frame that names the priority; ice counts XOFF frames only (its XON "
       "frames are fabric_pfc_resume_frames_total).",
       {},
       {{"mlx5_core", "rx_prio{priority}_pause", "rx"},
        {"mlx5_core", "tx_prio{priority}_pause", "tx"},
        {"bnxt_en", "rx_pfc_ena_frames_pri{priority}", "rx"},
        {"bnxt_en", "tx_pfc_ena_frames_pri{priority}", "tx"},
        {"ice", "rx_priority_{priority}_xoff.nic", "rx"},
        {"ice", "tx_priority_{priority}_xoff.nic", "tx"},
        // ice before Linux 5.5, and Intel's out-of-tree ice built with unified statistics.
        {"ice", "port.rx-priority-{priority}-xoff", "rx"},
        {"ice", "port.tx-priority-{priority}-xoff", "tx"},
        {"ice", "port-rx-xoff_prio-{priority}_events", "rx"},
        {"ice", "port-tx-xoff_prio-{priority}_events", "tx"}}},
      {"fabric_pfc_resume_frames_total", C, "frames",
       "PFC XON (resume) frames for one priority, where the NIC counts them apart (ice).",
       {},
       {{"ice", "rx_priority_{priority}_xon.nic", "rx"},
        {"ice", "tx_priority_{priority}_xon.nic", "tx"},
        {"ice", "port.rx-priority-{priority}-xon", "rx"},
        {"ice", "port.tx-priority-{priority}-xon", "tx"},
        {"ice", "port-rx-xon_prio-{priority}_events", "rx"},
        {"ice", "port-tx-xon_prio-{priority}_events", "tx"}}},
      {"fabric_pfc_pause_duration_microseconds_total", C, "microseconds",
       "Time one priority spent paused: by the peer (direction=rx) or by this NIC (tx).",
       {},
       {{"mlx5_core", "rx_prio{priority}_pause_duration", "rx"},
        {"mlx5_core", "tx_prio{priority}_pause_duration", "tx"},
        {"bnxt_en", "pfc_pri{priority}_rx_duration_us", "rx"},
        {"bnxt_en", "pfc_pri{priority}_tx_duration_us", "tx"}}},
      {"fabric_pfc_pause_transitions_total", C, "events",
       "Transitions of one priority between paused and not paused.",
       {},
       {{"mlx5_core", "rx_prio{priority}_pause_transition", "rx"},
        {"bnxt_en", "pfc_pri{priority}_rx_transitions", "rx"},
        {"bnxt_en", "pfc_pri{priority}_tx_transitions", "tx"}}},
      {"fabric_pfc_pause_storm_warning_events_total", C, "events",
       "Times the NIC's PFC storm prevention saw its transmit queue stalled past the warning "
       "watermark (mlx5 device stall minor watermark).",
       {},
       {{"mlx5_core", "tx_pause_storm_warning_events"}}},
      {"fabric_pfc_pause_storm_error_events_total", C, "events",
       "Times the NIC's PFC storm prevention stopped sending pauses because its transmit queue "
       "stalled past the critical watermark (mlx5).",
       {},
       {{"mlx5_core", "tx_pause_storm_error_events"}}},
      {"fabric_roce_continuous_pause_events_total", C, "events",
       "Times the NIC saw continuous pause on its RoCE traffic class (bnxt pause storm "
       "detection).",
       {},
       {{"bnxt_en", "continuous_roce_pause_events"}}},
      {"fabric_link_pause_frames_total", C, "frames",
       "Link-level (IEEE 802.3x) pause frames received (direction=rx) or sent (tx).",
       {},
       {{"mlx5_core", "rx_global_pause", "rx"},
        {"mlx5_core", "tx_global_pause", "tx"},
        {"bnxt_en", "rx_pause_frames", "rx"},
        {"bnxt_en", "tx_pause_frames", "tx"},
        {"ice", "link_xoff_rx.nic", "rx"},
        {"ice", "link_xoff_tx.nic", "tx"}}},
      {"fabric_link_pause_duration_microseconds_total", C, "microseconds",
       "Time the link spent paused by 802.3x pause: by the peer (rx) or by this NIC (tx).",
       {},
       {{"mlx5_core", "rx_global_pause_duration", "rx"},
        {"mlx5_core", "tx_global_pause_duration", "tx"}}},
      {"fabric_netdev_pause_control_frames_total", C, "frames",
       "All pause control frames (802.3x and PFC) at the PHY, counted whether or not pause or "
       "PFC is enabled (mlx5 *_pause_ctrl_phy).",
       {},
       {{"mlx5_core", "rx_pause_ctrl_phy", "rx"}, {"mlx5_core", "tx_pause_ctrl_phy", "tx"}}},
      {"fabric_netdev_discards_total", C, "packets",
       "Packets the port dropped, mostly for lack of receive buffers (congestion) or on a "
       "stalled transmit.",
       {},
       {{"mlx5_core", "rx_discards_phy", "rx"},
        {"mlx5_core", "tx_discards_phy", "tx"},
        {"bnxt_en", "rx_total_discard_pkts", "rx"},
        {"bnxt_en", "tx_total_discard_pkts", "tx"},
        {"ice", "rx_dropped.nic", "rx"}}},
      {"fabric_netdev_priority_discards_total", C, "packets",
       "Packets of one priority dropped by the port.",
       {},
       {{"mlx5_core", "rx_prio{priority}_discards", "rx"}}},
      {"fabric_netdev_queue_discards_total", C, "packets",
       "Packets of one hardware CoS queue dropped by the port (bnxt).",
       {},
       {{"bnxt_en", "rx_discard_packets_cos{queue}", "rx"}}},
      {"fabric_netdev_priority_receive_bytes_total", C, "bytes",
       "Bytes received on one priority (PCP).",
       {},
       {{"mlx5_core", "rx_prio{priority}_bytes"}, {"bnxt_en", "rx_bytes_pri{priority}"}}},
      {"fabric_netdev_priority_receive_packets_total", C, "packets",
       "Packets received on one priority (PCP).",
       {},
       {{"mlx5_core", "rx_prio{priority}_packets"}, {"bnxt_en", "rx_packets_pri{priority}"}}},
      {"fabric_netdev_priority_transmit_bytes_total", C, "bytes",
       "Bytes sent on one priority (PCP).",
       {},
       {{"mlx5_core", "tx_prio{priority}_bytes"}, {"bnxt_en", "tx_bytes_pri{priority}"}}},
      {"fabric_netdev_priority_transmit_packets_total", C, "packets",
       "Packets sent on one priority (PCP).",
       {},
       {{"mlx5_core", "tx_prio{priority}_packets"}, {"bnxt_en", "tx_packets_pri{priority}"}}},
      {"fabric_netdev_priority_ecn_marked_packets_total", C, "packets",
       "Packets received ECN-marked (CE) on one priority (mlx5).",
       {},
       {{"mlx5_core", "rx_prio{priority}_marked"}}},
      {"fabric_netdev_link_down_events_total", C, "events",
       "Times the PHY reported the link down.",
       {},
       {{"mlx5_core", "link_down_events_phy"}, {"bnxt_en", "link_down_events"}}},
      {"fabric_netdev_receive_buffer_passed_threshold_total", C, "events",
       "Times the port's receive buffer filled past its almost-full threshold.",
       {},
       {{"mlx5_core", "rx_buffer_passed_thres_phy"}, {"bnxt_en", "rx_buffer_passed_threshold"}}},
      {"fabric_netdev_transmit_errors_total", C, "packets",
       "Packets the port failed to send.",
       {},
       {{"mlx5_core", "tx_errors_phy"}, {"bnxt_en", "tx_err"}, {"ice", "tx_errors.nic"}}},
      {"fabric_netdev_receive_crc_errors_total", C, "packets",
       "Frames received with a bad FCS (CRC).",
       {},
       {{"mlx5_core", "rx_crc_errors_phy"},
        {"bnxt_en", "rx_fcs_err_frames"},
        {"ice", "rx_crc_errors.nic"}}},
      {"fabric_netdev_symbol_errors_total", C, "errors",
       "PCS symbol errors at the PHY (uncorrectable after FEC).",
       {},
       {{"mlx5_core", "rx_pcs_symbol_err_phy"}, {"bnxt_en", "rx_pcs_symbol_err"}}},
      {"fabric_netdev_fec_corrected_bits_total", C, "bits",
       "Bits corrected by FEC at the PHY: a rising rate is an early sign of a degrading link.",
       {},
       {{"mlx5_core", "rx_corrected_bits_phy"}, {"bnxt_en", "rx_corrected_bits"}}},
      // FEC blocks: the kernel's FEC statistics (ETHTOOL_MSG_FEC_GET, read by the optics
      // collector) for every driver with get_fec_stats; bnxt_en also prints them in ethtool -S,
      // and for a netdev whose driver this table maps, the optics collector leaves the series
      // to the ethtool collector (docs/LINK_HEALTH.md, "FEC and BER"). mlx5 and ice have them
      // in the FEC statistics only.
      {"fabric_netdev_fec_corrected_blocks_total", C, "blocks",
       "FEC codewords (blocks) the PHY received with errors and corrected: with "
       "fabric_netdev_fec_corrected_bits_total, the pre-FEC error rate of the link.",
       {},
       {{"bnxt_en", "rx_fec_corrected_blocks"}}},
      {"fabric_netdev_fec_uncorrectable_blocks_total", C, "blocks",
       "FEC codewords (blocks) the PHY received with more errors than FEC can correct: each "
       "one is lost data (frames dropped with a bad FCS); any rise is a link failing.",
       {},
       {{"bnxt_en", "rx_fec_uncorrectable_blocks"}}},
      {"fabric_netdev_fec_lane_corrected_blocks_total", C, "blocks",
       "Corrected FEC blocks per PHY lane (label lane, from 1), where the driver counts per "
       "lane (mlx5 in FC-FEC/BaseR mode); their sum is fabric_netdev_fec_corrected_blocks_total.",
       {}},
      {"fabric_netdev_fec_lane_uncorrectable_blocks_total", C, "blocks",
       "Uncorrectable FEC blocks per PHY lane (label lane, from 1), where the driver counts per "
       "lane.",
       {}},
      {"fabric_netdev_fec_lane_corrected_bits_total", C, "bits",
       "Bits corrected by FEC per PHY lane (label lane, from 1), where the kernel's FEC "
       "statistics give them per lane.",
       {}},
      {"fabric_netdev_fec_mode_info", G, "",
       "Always 1; the FEC encoding active on the netdev's link, label mode: RS, BaseR, LLRS or "
       "Off (ETHTOOL_MSG_FEC_GET, `ethtool --show-fec`).",
       {}},
      {"fabric_netdev_speed_bytes_per_second", G, "bytes per second",
       "The netdev's link speed in bytes per second (sysfs class/net/<netdev>/speed, Mb/s x "
       "125000: 400 Gb/s reads 5e10); absent while the link is down. Pre-FEC BER = "
       "rate(fabric_netdev_fec_corrected_bits_total) / (8 x this).",
       {}},
      {"fabric_netdev_receive_out_of_buffer_total", C, "packets",
       "Packets dropped because a receive queue had no buffer posted by the driver (mlx5).",
       {},
       {{"mlx5_core", "rx_out_of_buffer"}}},
      {"fabric_link_carrier_changes_total", C, "events",
       "Carrier changes of the netdev, up and down (sysfs carrier_changes).",
       {},
       {},
       {"carrier_changes"}},
      {"fabric_link_carrier_up_total", C, "events",
       "Times the netdev's carrier came up (sysfs carrier_up_count).",
       {},
       {},
       {"carrier_up_count"}},
      {"fabric_link_carrier_down_total", C, "events",
       "Times the netdev's carrier went down (sysfs carrier_down_count).",
       {},
       {},
       {"carrier_down_count"}},
      // ---- end of ethtool / netdev block -----------------------------------------------------
      // ---- optics block ----------------------------------------------------------------------
      // What a pluggable module (SFP, QSFP28, QSFP-DD, OSFP) says about itself (optics/module.h):
      // read by the host agent from its EEPROM (collectors/optics_collector.h; labels host,
      // interface) and by switch agents from their telemetry (labels switch, interface). Lanes
      // are numbered from 1. docs/LINK_HEALTH.md.
      {"fabric_optics_temperature_celsius", G, "degrees Celsius",
       "The module's internal temperature (its DOM).",
       {}},
      {"fabric_optics_supply_voltage_volts", G, "volts",
       "The module's supply voltage (its DOM), nominally 3.3 V.",
       {}},
      {"fabric_optics_tx_bias_milliamperes", G, "milliamperes",
       "Laser bias current of one transmit lane (label lane): rising bias at constant power is "
       "an ageing laser. railwatchd's /metrics exposes it in amperes, as "
       "fabric_optics_tx_bias_amperes.",
       {}},
      {"fabric_optics_tx_power_dbm", G, "dBm",
       "Optical power the module transmits on one lane (label lane), in dBm; -40 for no light.",
       {}},
      {"fabric_optics_rx_power_dbm", G, "dBm",
       "Optical power the module receives on one lane (label lane), in dBm; -40 for no light "
       "(a cut fibre, the far end dark). Compare with its own fabric_optics_threshold.",
       {}},
      {"fabric_optics_threshold", G, "",
       "The module's own alarm and warning limits: label quantity (temperature_celsius, "
       "supply_voltage_volts, tx_bias_milliamperes, tx_power_dbm, rx_power_dbm; the unit of the "
       "series of that name) and level (alarm_high, warning_high, warning_low, alarm_low).",
       {}},
      {"fabric_optics_alarm_flags", G, "",
       "How many alarm and warning flags the module has set, label flags = their names joined "
       "with \",\" (temperature_high_alarm, rx_power_low_warning:lane2, rx_los:lane1, "
       "tx_fault:lane3, ...); 0 with flags=\"\" when none is set.",
       {}},
      {"fabric_optics_module_info", G, "",
       "Always 1; the module in the port: labels form_factor (SFP, QSFP28, QSFP-DD, OSFP), spec "
       "(SFF-8472, SFF-8636, CMIS), vendor, part_number, serial and media (10G Base-SR, "
       "400GBASE-DR4). A new serial number is a module swapped.",
       {}},
      // ---- end of optics block ---------------------------------------------------------------
      // ---- switch (gNMI) block --------------------------------------------------------------
      // Read by the switch agent through the path profiles of profiles/gnmi/*.yaml
      // (gnmi/profile.h; docs/GNMI.md has the leaf of each dialect). Labels: switch (added by
      // the collector), interface, and queue where the leaf is per egress queue. Per-priority
      // and link-level pause counters of switches reuse fabric_pfc_pause_frames_total and
      // fabric_link_pause_frames_total above, with `switch` in place of `host`.
      {"fabric_switch_interface_receive_bytes_total", C, "bytes",
       "Bytes received on the switch port, framing included (OpenConfig "
       "state/counters/in-octets, SONiC SAI_PORT_STAT_IF_IN_OCTETS).",
       {}},
      {"fabric_switch_interface_transmit_bytes_total", C, "bytes",
       "Bytes sent on the switch port, framing included (OpenConfig out-octets, SONiC "
       "SAI_PORT_STAT_IF_OUT_OCTETS).",
       {}},
      {"fabric_switch_interface_receive_packets_total", C, "packets",
       "Packets received on the switch port, all casts (OpenConfig in-pkts; SONiC has no single "
       "counter for it and does not report this series).",
       {}},
      {"fabric_switch_interface_transmit_packets_total", C, "packets",
       "Packets sent on the switch port, all casts (OpenConfig out-pkts; not reported by "
       "SONiC).",
       {}},
      {"fabric_switch_interface_receive_errors_total", C, "packets",
       "Received packets with errors that kept them from being delivered (OpenConfig in-errors, "
       "SONiC SAI_PORT_STAT_IF_IN_ERRORS).",
       {}},
      {"fabric_switch_interface_transmit_errors_total", C, "packets",
       "Packets not sent because of errors (OpenConfig out-errors, SONiC "
       "SAI_PORT_STAT_IF_OUT_ERRORS).",
       {}},
      {"fabric_switch_interface_receive_discards_total", C, "packets",
       "Received packets discarded without an error, mostly for lack of buffers (OpenConfig "
       "in-discards, SONiC SAI_PORT_STAT_IF_IN_DISCARDS).",
       {}},
      {"fabric_switch_interface_transmit_discards_total", C, "packets",
       "Outbound packets discarded without an error, mostly congestion (OpenConfig "
       "out-discards, SONiC SAI_PORT_STAT_IF_OUT_DISCARDS).",
       {}},
      {"fabric_switch_interface_carrier_transitions_total", C, "events",
       "Times the port's operational state changed (OpenConfig state/counters/"
       "carrier-transitions, or ethernet/state/counters/carrier-transitions on older Cumulus).",
       {}},
      {"fabric_switch_interface_oper_up", G, "",
       "1 while the switch port's operational state is UP, 0 in any other state (OpenConfig "
       "state/oper-status, streamed on change; SONiC through its OC-YANG target).",
       {}},
      {"fabric_switch_interface_info", G, "",
       "Always 1; one series per switch port whose own identity the switch reports, label mac "
       "the port's MAC address (OpenConfig ethernet/state/mac-address; SONiC ports share the "
       "system MAC and give none). Topology discovery resolves LLDP port-ids that are MACs "
       "with it.",
       {}},
      {"fabric_switch_interface_speed_bytes_per_second", G, "bytes per second",
       "The switch port's speed in bytes per second, 400 Gb/s reads 5e10 (OpenConfig "
       "ethernet/state/port-speed, SONiC APPL_DB PORT_TABLE speed): the peer of the NIC's "
       "fabric_rdma_port_rate_bytes_per_second.",
       {}},
      // FEC at the switch port's PHY (docs/LINK_HEALTH.md, "Switch optics and FEC"): the
      // switch's end of the host's fabric_netdev_fec_* series. Codewords of RS(544,514) are
      // 5440 bits; a codeword is corrected with up to 15 symbol errors, lost beyond.
      {"fabric_switch_interface_fec_corrected_blocks_total", C, "blocks",
       "FEC codewords (blocks) the switch port received with errors and corrected (SONiC "
       "SAI_PORT_STAT_IF_IN_FEC_CORRECTABLE_FRAMES, OpenConfig ethernet/state/counters/"
       "fec-corrected-blocks).",
       {}},
      {"fabric_switch_interface_fec_uncorrectable_blocks_total", C, "blocks",
       "FEC codewords (blocks) the switch port received with more errors than FEC corrects: "
       "lost frames; any rise is a link failing (SONiC "
       "SAI_PORT_STAT_IF_IN_FEC_NOT_CORRECTABLE_FRAMES, OpenConfig fec-uncorrectable-blocks).",
       {}},
      {"fabric_switch_interface_fec_symbol_errors_total", C, "symbols",
       "FEC symbols the switch port received in error, corrected or not (SONiC "
       "SAI_PORT_STAT_IF_IN_FEC_SYMBOL_ERRORS; OpenConfig has no leaf for it).",
       {}},
      {"fabric_switch_interface_fec_corrected_bit_errors_total", C, "bits",
       "Bit errors the switch port's FEC corrected (SONiC SAI_PORT_STAT_IF_IN_FEC_CORRECTED_BITS; "
       "the host's fabric_netdev_fec_corrected_bits_total, named so that promtool's base-unit "
       "rule takes it for a count, not an amount of data): pre-FEC BER = rate(this) / (8 x "
       "fabric_switch_interface_speed_bytes_per_second).",
       {}},
      {"fabric_switch_interface_fec_codewords_total", C, "codewords",
       "FEC codewords the switch port received, by how many symbol errors each held (label "
       "symbol_errors, 0-16; 16 counts 16 or more, uncorrectable): SONiC "
       "SAI_PORT_STAT_IF_IN_FEC_CODEWORD_ERRORS_S0..S16. Mass moving toward 15 is a link "
       "running out of FEC margin.",
       {}},
      {"fabric_switch_interface_pre_fec_bit_error_ratio", G, "",
       "The switch port's pre-FEC bit error ratio as the switch computes it (OpenConfig "
       "ethernet/state/pre-fec-ber/instant); RS(544,514) corrects up to about 2.4e-4.",
       {}},
      {"fabric_switch_queue_transmit_packets_total", C, "packets",
       "Packets sent from one egress queue (OpenConfig qos output queue transmit-pkts, SONiC "
       "SAI_QUEUE_STAT_PACKETS).",
       {}},
      {"fabric_switch_queue_transmit_bytes_total", C, "bytes",
       "Bytes sent from one egress queue (OpenConfig transmit-octets, SONiC "
       "SAI_QUEUE_STAT_BYTES).",
       {}},
      {"fabric_switch_queue_dropped_packets_total", C, "packets",
       "Packets dropped by one egress queue (OpenConfig dropped-pkts, SONiC "
       "SAI_QUEUE_STAT_DROPPED_PACKETS, Cumulus wred-dropped-pkts).",
       {}},
      {"fabric_switch_queue_ecn_marked_packets_total", C, "packets",
       "Packets ECN-marked (CE) by one egress queue (OpenConfig ecn-marked-pkts, SONiC "
       "SAI_QUEUE_STAT_WRED_ECN_MARKED_PACKETS). Semantics differ by vendor "
       "(openconfig/public#1298): IOS XR counts marked packets, Arista also has "
       "ecn-selected-pkts, Cumulus reads 0 while its ECN counter is disabled.",
       {}},
      {"fabric_switch_pfc_watchdog_storms_detected_total", C, "events",
       "Times the switch's PFC watchdog found one egress queue stuck by a pause storm (SONiC "
       "PFC_WD_QUEUE_STATS_DEADLOCK_DETECTED, Arista pfc watchdog tx-queue stuck-count).",
       {}},
      {"fabric_switch_pfc_watchdog_storms_restored_total", C, "events",
       "Times the switch's PFC watchdog restored one queue after a storm (SONiC "
       "PFC_WD_QUEUE_STATS_DEADLOCK_RESTORED, Arista recovery-count).",
       {}},
      {"fabric_switch_pfc_watchdog_stormed", G, "",
       "1 while the switch's PFC watchdog holds one queue in the stormed state, 0 while it is "
       "operational (SONiC PFC_WD_STATUS; no OpenConfig or Arista leaf gives it).",
       {}},
      {"fabric_lldp_neighbor_info", G, "",
       "Always 1; one series per switch port or host interface with an LLDP neighbour, whose "
       "labels neighbor_system and neighbor_port carry the neighbour's system name and port "
       "(switches: openconfig-lldp neighbors/neighbor/state/{system-name,port-id}; hosts: "
       "lldpd, with neighbor_chassis_id and neighbor_mgmt_address).",
       {}},
      {"fabric_ib_link_info", G, "",
       "Always 1; one series per InfiniBand switch port (interface: its number) with a link, "
       "as the fabric scanner's topology (ibnetdiscover) says: neighbor_system and neighbor_port "
       "(an HCA's host "
       "and port GUID, or the peer switch and its port number), neighbor_guid, width and speed "
       "(4x, HDR). The fabric map's InfiniBand facts (docs/TOPOLOGY.md).",
       {}},
      {"fabric_ib_node_temperature_celsius", G, "degrees Celsius",
       "An InfiniBand switch's temperature as its sensor reports it (ibdiagnet's TEMP_SENSING), "
       "labels switch and guid.",
       {}},
      {"fabric_ib_cable_temperature_celsius", G, "degrees Celsius",
       "The temperature of the cable module (transceiver or active cable end) in an InfiniBand "
       "switch port, from its own diagnostics (ibdiagnet2.cables Temperature).",
       {}},
      {"fabric_ib_cable_temperature_alarm_high_celsius", G, "degrees Celsius",
       "The module's own high-temperature alarm threshold (ibdiagnet2.cables "
       "AlarmTemperatureHighThresh): what fabric_ib_cable_temperature_celsius is compared with.",
       {}},
      {"fabric_ib_cable_alarm_flags", G, "",
       "The module's latched alarm and warning flags as its register reads (ibdiagnet2.cables: "
       "label flags = temperature, voltage, rx_power, tx_bias, tx_power, tx_rx_loss, "
       "tx_rx_lol, adaptive_eq_fault); 0 while none is set.",
       {}},
      {"fabric_ib_cable_rx_power_dbm", G, "dBm",
       "Optical power the module in an InfiniBand switch port receives on one lane (label "
       "lane), in dBm; absent where the module reports none (ibdiagnet's -999.999 mW).",
       {}},
      {"fabric_ib_cable_info", G, "",
       "Always 1; the module in an InfiniBand switch port: labels vendor, part_number, "
       "serial_number, type and length as it reports them. One serial number on two ports is a "
       "twin-port module: a fault in it takes both ports.",
       {}},
      {"fabric_lldp_neighbor_mismatch", G, "",
       "1 while the LLDP neighbour a switch port reports is not the host NIC or switch port "
       "the topology file puts there (a miswired cable or a stale file), 0 while it matches. "
       "Only for ports the topology describes, from a switch agent run with --topology.",
       {}},
      {"fabric_topology_mismatch", G, "",
       "1 while the topology file and discovery (NIC identities, LLDP on switch ports and "
       "hosts) disagree about one NIC, switch link or switch, 0 once they agree; labels what, "
       "declared and discovered say how. Written by railwatchd itself (docs/TOPOLOGY.md).",
       {}},
      // ---- end of switch (gNMI) block --------------------------------------------------------
      // ---- NCCL Inspector block ---------------------------------------------------------------
      // Read by the host agent from the Inspector plugin's JSON records
      // (collectors/nccl_inspector_collector.h). Labels: host (added by the agent), comm (the
      // communicator's id), rank, local_rank (its place among the communicator's ranks on this
      // host). Collectives only; point-to-point records are not counted. Mean time of one
      // collective: rate(seconds) / rate(collectives); bus bandwidth: rate(bus bytes) /
      // rate(seconds).
      {"fabric_nccl_collectives_total", C, "collectives",
       "Collectives this rank of the communicator completed (NCCL Inspector records).",
       {}},
      {"fabric_nccl_collective_microseconds_total", C, "microseconds",
       "Time this rank spent in the communicator's collectives (the records' exec time, "
       "kernel start to end). A rank that launches late waits least: its time is lowest. "
       "railwatchd's /metrics exposes it in seconds, as fabric_nccl_collective_seconds_total.",
       {}},
      {"fabric_nccl_collective_bus_bytes_total", C, "bus bytes",
       "Bus bytes this rank's collectives moved (each record's bus bandwidth x its exec "
       "time): 1e6 x rate(bus bytes) / rate(microseconds) is the rank's bus bandwidth.",
       {}},
      // ---- end of NCCL Inspector block -------------------------------------------------------
  };
  size_t details = 0;
  for (MetricSpec& spec : table) {
    spec.bound = BoundFromUnit(spec);
    spec.detail = std::find(std::begin(kDetailSeries), std::end(kDetailSeries), spec.name) !=
                  std::end(kDetailSeries);
    details += spec.detail ? 1 : 0;
  }
  // A misspelt name in kDetailSeries would silently read that series every cycle.
  if (details != std::size(kDetailSeries)) {
    std::fprintf(stderr, "vocabulary: kDetailSeries names a series the table lacks\n");
    std::abort();
  }
  return table;
  }();
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

SeriesTraits TraitsOf(std::string_view name, MetricKind kind, uint32_t width_bits) {
  SeriesTraits traits{.kind = kind, .width_bits = width_bits};
  const MetricSpec* spec = FindMetric(name);
  if (spec == nullptr || spec->kind != kind) return traits;
  traits.bound = spec->bound;
  traits.sets_line_rate = name == kPortRateSeries;
  return traits;
}

CounterBound CounterBoundOf(std::string_view name) {
  const MetricSpec* spec = FindMetric(name);
  return spec == nullptr ? CounterBound::kNone : spec->bound;
}

std::span<const SelfMetricSpec> AgentSelfMetrics() {
  using enum MetricKind;
  static constexpr SelfMetricSpec kSelf[] = {
      {"railwatch_collector_duration_seconds", kGauge,
       "How long the agent's last run of this collector took."},
      {"railwatch_collector_success", kGauge,
       "1 when the agent's last run of this collector succeeded, 0 when it failed (the agent "
       "logs why)."},
      {"railwatch_gnmi_target_connected", kGauge,
       "1 while the switch agent's Subscribe stream to this gNMI target has delivered a "
       "response, 0 otherwise."},
      {"railwatch_gnmi_target_last_update_timestamp_seconds", kGauge,
       "Unix time of the last response from this gNMI target (0: never)."},
      {"railwatch_gnmi_target_updates_total", kCounter,
       "gNMI updates received from this target."},
      {"railwatch_gnmi_target_errors_total", kCounter,
       "Errors on this gNMI target's Subscribe streams (connect, TLS, RPC, decode); paths the "
       "target refuses are railwatch_gnmi_target_refused_subscriptions."},
      {"railwatch_gnmi_target_reconnects_total", kCounter,
       "Times the switch agent re-opened its Subscribe stream to this target."},
      {"railwatch_gnmi_unmapped_leaves_total", kCounter,
       "gNMI leaves from this target that no path profile maps to a canonical series."},
      {"railwatch_gnmi_target_dropped_points_total", kCounter,
       "Points from this target dropped because the agent's buffer was full."},
      {"railwatch_gnmi_target_refused_subscriptions", kGauge,
       "Subscribe streams whose paths this gNMI target refused on the last attempt "
       "(NOT_FOUND, INVALID_ARGUMENT, UNIMPLEMENTED): a profile's optional paths it does not "
       "serve, asked again every 5 minutes; the other streams go on."},
      // The InfiniBand fabric scanner (docs/INFINIBAND.md).
      {"railwatch_ib_scan_inputs", kGauge,
       "Inputs the InfiniBand fabric scanner read in its last scan (tool output files it "
       "recognised)."},
      {"railwatch_ib_scan_unrecognised_inputs", kGauge,
       "Files in --ib_tool_outputs that no reader recognised in the last scan (skipped)."},
      {"railwatch_ib_scan_problems_total", kCounter,
       "Lines of InfiniBand tool output that could not be read (each logged with "
       "file:line:column; the rest of the file is used)."},
      {"railwatch_ib_scan_unplaced_records_total", kCounter,
       "Port counter records whose LID or GUID no topology the scanner read names (which "
       "switch they belong to is unknown, so they are not reported)."},
      {"railwatch_ib_scan_switch_ports", kGauge,
       "InfiniBand switch ports whose counters the last scan had."},
      // The host agent's optics collector (docs/LINK_HEALTH.md).
      {"railwatch_optics_module_reads_total", kCounter,
       "Module EEPROM reads the optics collector decoded (one per module per "
       "--optics_interval)."},
      {"railwatch_optics_read_errors_total", kCounter,
       "Failed optics reads by what: module (the EEPROM could not be read or decoded; logged "
       "with the netdev and why), fec (the FEC statistics, or lines of --optics_dir's fec "
       "files); the other netdevs go on."},
      {"railwatch_optics_modules_absent", kGauge,
       "Netdevs without a module (or whose driver has no module EEPROM access: veth, virtio) "
       "at the last read: not an error."},
      // The host agent's kernel messages (--kmsg; docs/LINK_HEALTH.md, "Kernel messages").
      {"railwatch_kmsg_records_total", kCounter,
       "Records read from /dev/kmsg (or the --kmsg file), skipped ones included."},
      {"railwatch_kmsg_events_total", kCounter,
       "kernel.* events made of them, by kind (label kind)."},
      {"railwatch_kmsg_lost_records_total", kCounter,
       "Records overwritten in the kernel's ring buffer before the agent read them (EPIPE, a "
       "gap in sequence numbers, also while the agent was down): lost."},
      {"railwatch_kmsg_skipped_records_total", kCounter,
       "Records read but not parsed, by reason: lookback (older than --kmsg_lookback at a first "
       "start), user (written to /dev/kmsg by a process, not the kernel), already_read (before "
       "where the last run stopped)."},
      {"railwatch_kmsg_parse_problems_total", kCounter,
       "Records that are not /dev/kmsg records, and NIC or PCIe messages that did not parse "
       "(each logged with its sequence number; the rest go on)."},
      {"railwatch_kmsg_limited_cycles_total", kCounter,
       "Cycles cut short by --kmsg_max_records or --kmsg_max_events (label limit): the rest "
       "was read the next cycle."},
      {"railwatch_kmsg_read_errors_total", kCounter,
       "Failed opens and reads of /dev/kmsg or the --kmsg file."},
      // The host agent's log tailer and parsers (docs/LOG_TAILING.md).
      {"railwatch_nccl_ras_queries_total", kCounter,
       "STATUS queries of an NCCL RAS endpoint (label endpoint) by result: ok, refused, failed "
       "(no answer within --nccl_ras_timeout, or not a RAS endpoint)."},
      {"railwatch_nccl_ras_up", kGauge,
       "1 while the last STATUS query of this NCCL RAS endpoint was answered."},
      {"railwatch_nccl_ras_monitor_connections_total", kCounter,
       "MONITOR connections opened to an NCCL RAS endpoint (NCCL 2.29+; --nccl_ras_monitor)."},
      {"railwatch_nccl_ras_monitor_events_total", kCounter,
       "MONITOR events read by result: sent (as nccl_ras.event), ignored (the RAS network's own "
       "connection chatter), malformed (not NCCL's JSON event: logged with where it is)."},
      {"railwatch_nccl_ras_monitor_errors_total", kCounter,
       "MONITOR connections that failed by reason: failed (connect or handshake, tried again "
       "with backoff), unsupported (MONITOR refused: not asked again until a new job), dropped "
       "(an open connection closed while the job's port still listens: opened again with "
       "backoff; one that closes with the job is no error)."},
      {"railwatch_nccl_ras_monitor_up", kGauge,
       "1 while a MONITOR connection to this NCCL RAS endpoint is open."},
      // Jobs from the kubelet's pod-resources API (docs/JOBS.md, "Kubernetes").
      {"railwatch_kubelet_queries_total", kCounter,
       "List queries of the kubelet's pod-resources socket by result: ok, no_socket, denied "
       "(the agent may not connect: root or the kubelet's group), timeout (no answer within "
       "--kubelet_timeout), failed."},
      {"railwatch_kubelet_up", kGauge,
       "1 while the last List query of the kubelet's pod-resources socket was answered."},
      {"railwatch_nccl_inspector_records_total", kCounter,
       "NCCL Inspector collective records read (--nccl_inspector)."},
      {"railwatch_nccl_inspector_problems_total", kCounter,
       "Lines of NCCL Inspector files that are not valid records (skipped; the first of each "
       "file logged with file:line:column)."},
      {"railwatch_nccl_inspector_other_host_records_total", kCounter,
       "NCCL Inspector records of another host (their hostname is not this agent's): skipped. "
       "A dump directory on shared storage holds every host's records."},
      {"railwatch_nccl_inspector_communicators", kGauge,
       "Communicators whose Inspector records this host's agent follows."},
      {"railwatch_log_lines_total", kCounter, "Log lines handed to the parser, per log pattern."},
      {"railwatch_log_events_total", kCounter, "Events parsed from the log, per log pattern."},
      {"railwatch_log_lines_malformed_total", kCounter,
       "Log lines that looked like a known format but did not parse."},
      {"railwatch_log_lines_unparsed_total", kCounter,
       "Log lines that gave no event (unknown and malformed)."},
      {"railwatch_log_tailer_bytes_total", kCounter, "Bytes the log tailer read."},
      {"railwatch_log_tailer_rotations_total", kCounter,
       "Followed log files that left their path (renamed, deleted, replaced)."},
      {"railwatch_log_tailer_truncations_total", kCounter,
       "Log truncations detected (copytruncate, rewrite in place)."},
      {"railwatch_log_tailer_dropped_lines_total", kCounter,
       "Log lines dropped because the queue to the parser was full."},
      {"railwatch_log_tailer_long_line_splits_total", kCounter,
       "Forced breaks of log lines longer than the line limit (64 KiB)."},
      {"railwatch_log_tailer_errors_total", kCounter,
       "Failed opens, reads, watches, state reads and writes, inotify overflows."},
      {"railwatch_log_tailer_open_files", kGauge,
       "Log files held open (followed, and rotated ones being finished)."},
      // Delivery to the daemon: the sender's memory queue and the on-disk spool
      // (docs/OPERATIONS.md "Agent spool").
      {"railwatch_agent_queue_dropped_batches_total", kCounter,
       "Batches dropped from the agent's memory queue while not in its spool (no spool, or the "
       "spool's write failed): lost."},
      {"railwatch_agent_spool_appended_batches_total", kCounter,
       "Batches the agent wrote to its on-disk spool before sending them."},
      {"railwatch_agent_spool_replayed_batches_total", kCounter,
       "Batches read back from the spool and sent (after an outage, or left by an earlier run)."},
      {"railwatch_agent_spool_dropped_batches_total", kCounter,
       "Unacknowledged batches lost because the spool was full and its oldest segment dropped."},
      {"railwatch_agent_spool_dropped_bytes_total", kCounter,
       "Bytes of spool segments dropped because the spool was full."},
      {"railwatch_agent_spool_errors_total", kCounter,
       "Batches the agent could not write to its spool (disk full, I/O error)."},
      {"railwatch_agent_spool_bytes", kGauge, "Bytes in the agent's spool now."},
  };
  return kSelf;
}

ExposedSeries ExposedAs(std::string_view name) {
  // The microsecond counters of NCCL's Inspector; the PFC pause durations keep their name (the
  // dashboards and users' queries know it). The optics' laser bias in amperes (modules, ethtool
  // and the switches all say mA; `promtool check metrics` wants the base unit).
  static constexpr ExposedSeries kInBaseUnit[][2] = {
      {{"fabric_nccl_collective_microseconds_total"},
       {"fabric_nccl_collective_seconds_total", 1e-6}},
      {{"fabric_optics_tx_bias_milliamperes"}, {"fabric_optics_tx_bias_amperes", 1e-3}},
  };
  for (const auto& [from, to] : kInBaseUnit) {
    if (name == from.name) return to;
  }
  return {name, 1};
}

std::string_view MetricHelp(std::string_view name) {
  if (const MetricSpec* spec = FindMetric(name)) return spec->help;
  for (const SelfMetricSpec& s : AgentSelfMetrics()) {
    if (s.name == name) return s.help;
  }
  return {};
}

std::span<const std::string_view> SeriesNames() {
  static const std::vector<std::string_view> kNames = [] {
    std::vector<std::string_view> names;
    for (const MetricSpec& m : CanonicalMetrics()) names.push_back(m.name);
    for (const SelfMetricSpec& m : AgentSelfMetrics()) names.push_back(m.name);
    std::sort(names.begin(), names.end());
    names.erase(std::unique(names.begin(), names.end()), names.end());
    return names;
  }();
  return kNames;
}

}  // namespace railwatch
