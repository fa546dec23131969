"""The fabric dashboards: overview, PFC and ECN per switch and port, NIC health per rail."""

from grafana import (FIRING_STEPS, bargauge, dashboard, heatmap, query_variable, row, stat,
                     state_timeline, table, target, timeseries, value_map)
from promql import (NIC_ERROR_COUNTERS, RETRANSMIT_COUNTERS, SWITCH_ERROR_COUNTERS,
                    at_nic_leaf_port, rate, rates_by_counter, selector, with_rail)

ANY_SWITCH = 'switch!=""'
ANY_HOST = 'host!=""'
HOST = 'host=~"$host"'
PRIORITY = 'priority=~"$priority"'
TX = ', direction="tx"'
RX = ', direction="rx"'

FIRING_MAP = value_map({0: ("ok", "green")})


def fabric_overview():
    panels = [
        stat("Diagnoses firing", "Diagnoses firing now, all playbooks.",
             [target('sum(railwatch_diagnoses{state="firing"})')],
             thresholds=FIRING_STEPS),
        stat("Diagnoses pending", "Diagnoses whose condition holds but whose `for:` has not "
             "passed yet.", [target('sum(railwatch_diagnoses{state="pending"})')],
             thresholds=[{"color": "green", "value": None}, {"color": "orange", "value": 1}]),
        stat("Agents connected", "Host and switch agents with an open stream to railwatchd.",
             [target("sum(railwatch_agent_connected)")]),
        stat("RDMA traffic", "Bytes per second all NICs send.",
             [target(f"sum({rate('fabric_rdma_port_transmit_bytes_total', ANY_HOST)})")],
             unit="Bps"),
        stat("PFC pauses/s (switches)", "Pause frames per second all switch ports send and "
             "receive, every priority. A few per port is normal; thousands is a storm.",
             [target(f"sum({rate('fabric_pfc_pause_frames_total', ANY_SWITCH)})")],
             unit="short"),
        stat("GPUs in jobs", "GPUs of the jobs railwatchd knows (topology file and NCCL logs).",
             [target("sum(railwatch_job_gpus)")]),
        row("Diagnoses"),
        state_timeline(
            "Diagnoses firing by playbook",
            "One row per playbook: red while at least one of its diagnoses fires (the number "
            "is how many). From railwatch_diagnoses, which has every enabled playbook from "
            "the start.",
            [target('sum by (playbook) (railwatch_diagnoses{state="firing"})', "{{playbook}}")],
            FIRING_MAP, thresholds=FIRING_STEPS, height=9),
        timeseries("Diagnoses pending and firing", "Pending and firing diagnoses over time, "
                   "stacked by playbook and state.",
                   [target('sum by (playbook, state) (railwatch_diagnoses) > 0',
                           "{{playbook}} {{state}}")], stack=True, bars=True, width=12),
        table("Firing now", "Every firing diagnosis with its culprit labels (host, device, "
              "switch, port, rail, leaf, job). `railwatch explain` gives the evidence and "
              "runbook.", [target("railwatch_diagnosis_active", instant=True, table=True)],
              width=12, hidden_columns=["Value"]),
        row("Worst ports now"),
        bargauge("PFC pause rate", "The 10 ports sending or receiving the most pause frames "
                 "(every priority), switch ports and NICs with ethtool.",
                 [target("topk(10, sum by (switch, interface, host, device, direction) ("
                         f"{rate('fabric_pfc_pause_frames_total')}))",
                         "{{switch}}{{host}} {{interface}}{{device}} {{direction}}",
                         instant=True)], unit="short"),
        bargauge("ECN marks", "The 10 switch ports marking the most packets (all queues).",
                 [target("topk(10, sum by (switch, interface) ("
                         f"{rate('fabric_switch_queue_ecn_marked_packets_total')}))",
                         "{{switch}} {{interface}}", instant=True)], unit="short"),
        bargauge("Errors", "The 10 NICs and switch ports with the most link errors per second "
                 "(symbol errors, error recovery, receive errors, discards ...): NICs, gNMI "
                 "switch ports, and InfiniBand switch ports (the fabric scanner's PMA "
                 "counters, the NICs' names labelled by switch).",
                 [target("topk(10, sum by (host, device) "
                         f"({rates_by_counter(NIC_ERROR_COUNTERS, ANY_HOST)}))",
                         "{{host}} {{device}}", instant=True),
                  target("topk(10, sum by (switch, interface) "
                         f"({rates_by_counter(SWITCH_ERROR_COUNTERS)}))",
                         "{{switch}} {{interface}}", instant=True),
                  target("topk(10, sum by (switch, guid, interface) "
                         f"({rates_by_counter(NIC_ERROR_COUNTERS, ANY_SWITCH)}))",
                         "{{switch}} {{interface}}", instant=True)], unit="short"),
        row("Fabric totals"),
        timeseries("RDMA traffic by rail", "Bytes per second the NICs of each rail send "
                   "(rails from the topology file).",
                   [target("sum by (rail) ("
                           f"{with_rail(rate('fabric_rdma_port_transmit_bytes_total'))})",
                           "rail {{rail}}")], unit="Bps", stack=True, width=8),
        timeseries("PFC pauses by switch", "Pause frames per second per switch, sent (tx) "
                   "and received (rx).",
                   [target("sum by (switch, direction) ("
                           f"{rate('fabric_pfc_pause_frames_total', ANY_SWITCH)})",
                           "{{switch}} {{direction}}")], width=8),
        timeseries("ECN marks and CNPs", "ECN marks the switches set and the CNPs the NICs "
                   "answer them with: marks without CNPs, or pauses without marks, point at "
                   "an ECN profile.",
                   [target(f"sum({rate('fabric_switch_queue_ecn_marked_packets_total')})",
                           "ECN-marked (switches)"),
                    target(f"sum({rate('fabric_roce_cnp_sent_total')})", "CNPs sent (NICs)")],
                   width=8),
    ]
    return dashboard(
        "railwatch-fabric-overview", "railwatch / Fabric overview",
        "What is wrong in the fabric now: diagnoses, the worst ports, fabric totals.",
        panels, [])


def _switch_port_matchers(priority=True):
    m = 'switch=~"$switch", interface=~"$interface"'
    return m + ', priority=~"$priority"' if priority else m


def pfc_ecn():
    variables = [
        query_variable("switch", "Switch",
                       "label_values(fabric_switch_interface_receive_bytes_total, switch)"),
        query_variable("interface", "Interface", "label_values("
                       'fabric_switch_interface_receive_bytes_total{switch=~"$switch"}, '
                       "interface)"),
        query_variable("priority", "Priority",
                       'label_values(fabric_pfc_pause_frames_total{switch!=""}, priority)', sort=3),
        query_variable("queue", "Queue", "label_values("
                       'fabric_switch_queue_ecn_marked_packets_total{switch=~"$switch"}, queue)',
                       sort=3),
    ]
    pauses = "fabric_pfc_pause_frames_total"
    by_port = "sum by (switch, interface) ("
    port_m = _switch_port_matchers(priority=False)
    queue_m = port_m + ', queue=~"$queue"'
    panels = [
        row("PFC pause frames"),
        heatmap("Pauses sent (tx), priority $priority", "Pause frames per second each switch "
                "port sends, one row per port: a port that sends pauses is congested or "
                "relays a storm.",
                [target(f"{by_port}{rate(pauses, _switch_port_matchers() + TX)})",
                        "{{switch}} {{interface}}")], unit="short", repeat="priority"),
        heatmap("Pauses received (rx), priority $priority", "Pause frames per second each "
                "switch port receives: the port facing a storming NIC receives thousands.",
                [target(f"{by_port}{rate(pauses, _switch_port_matchers() + RX)})",
                        "{{switch}} {{interface}}")], unit="short", repeat="priority"),
        timeseries("Pauses by priority and direction", "Pause frames per second of the "
                   "selected switches and ports, by priority.",
                   [target("sum by (priority, direction) ("
                           f"{rate(pauses, _switch_port_matchers())})",
                           "prio {{priority}} {{direction}}")], unit="short"),
        timeseries("PFC pauses per NIC (host side)", "Pause frames per second per NIC. "
                   "From the NIC's own ethtool counters where the host agent reads them "
                   "(mlx5, bnxt, ice), and as seen at the NIC's leaf port (rx at the port: "
                   "the NIC sent them) through the topology file.",
                   [target("sum by (host, interface, direction) ("
                           f"{rate(pauses, ANY_HOST + ', ' + PRIORITY)})",
                           "{{host}} {{interface}} {{direction}} (ethtool)"),
                    target("sum by (host, device) ("
                           + at_nic_leaf_port(rate(pauses, 'direction="rx", priority=~"$priority"'))
                           + ")", "{{host}} {{device}} sent (at leaf port)"),
                    target("sum by (host, device) ("
                           + at_nic_leaf_port(rate(pauses, 'direction="tx", priority=~"$priority"'))
                           + ")", "{{host}} {{device}} received (at leaf port)")],
                   unit="short"),
        row("PFC watchdog"),
        state_timeline("Queues held by the PFC watchdog", "1 while the switch's PFC watchdog "
                       "holds a queue in the stormed state (SONiC), per port.",
                       [target("max by (switch, interface) (fabric_switch_pfc_watchdog_stormed{"
                               'switch=~"$switch", interface=~"$interface"})',
                               "{{switch}} {{interface}}")],
                       value_map({0: ("ok", "green"), 1: ("stormed", "red")}),
                       thresholds=FIRING_STEPS, width=12),
        timeseries("Watchdog storms detected and restored", "Storms the PFC watchdog detected "
                   "and restored per minute (SONiC, Arista EOS).",
                   [target("sum by (switch, interface, queue) (60 * "
                           f"{rate('fabric_switch_pfc_watchdog_storms_detected_total', port_m)})",
                           "{{switch}} {{interface}} q{{queue}} detected"),
                    target("sum by (switch, interface, queue) (60 * "
                           f"{rate('fabric_switch_pfc_watchdog_storms_restored_total', port_m)})",
                           "{{switch}} {{interface}} q{{queue}} restored")],
                   unit="short", width=12),
        row("ECN and drops per queue"),
        heatmap("ECN-marked packets, queues $queue", "Packets per second each switch port "
                "marks CE: a leaf whose ports mark nothing while they pause has an ECN "
                "threshold set too high.",
                [target(by_port
                        + f"{rate('fabric_switch_queue_ecn_marked_packets_total', queue_m)})",
                        "{{switch}} {{interface}}")], unit="short"),
        heatmap("Dropped packets, queues $queue", "Packets per second each switch port's "
                "queues drop (WRED, PFC watchdog drop action).",
                [target(f"{by_port}{rate('fabric_switch_queue_dropped_packets_total', queue_m)})",
                        "{{switch}} {{interface}}")], unit="short"),
        timeseries("ECN marks by switch and queue", "Packets marked per second.",
                   [target("sum by (switch, queue) ("
                           f"{rate('fabric_switch_queue_ecn_marked_packets_total', queue_m)})",
                           "{{switch}} q{{queue}}")], unit="short"),
        timeseries("Drops by switch and queue", "Packets dropped per second.",
                   [target("sum by (switch, queue) ("
                           f"{rate('fabric_switch_queue_dropped_packets_total', queue_m)})",
                           "{{switch}} q{{queue}}")], unit="short"),
    ]
    return dashboard("railwatch-pfc-ecn", "railwatch / PFC and ECN",
                     "Pause frames, the PFC watchdog, ECN marks and drops per switch, port, "
                     "priority and queue.", panels, variables)


def nic_health():
    variables = [
        query_variable("rail", "Rail", "label_values(railwatch_topology_nic_info, rail)", sort=3),
        query_variable("host", "Host",
                       'label_values(railwatch_topology_nic_info{rail=~"$rail"}, host)'),
    ]
    nics = 'rail=~"$rail", host=~"$host"'

    def per_nic(metric):
        return f"sum by (rail, host, device) ({with_rail(rate(metric, HOST), nics)})"

    legend = "rail {{rail}} {{host}} {{device}}"
    panels = [
        row("Bandwidth"),
        timeseries("Transmit bandwidth per NIC", "Bytes per second each NIC sends.",
                   [target(per_nic("fabric_rdma_port_transmit_bytes_total"), legend)],
                   unit="Bps"),
        timeseries("Receive bandwidth per NIC", "Bytes per second each NIC receives.",
                   [target(per_nic("fabric_rdma_port_receive_bytes_total"), legend)],
                   unit="Bps"),
        timeseries("Bandwidth by rail", "Bytes per second per rail, sent and received: in a "
                   "rail-optimised fabric every rail carries the same share.",
                   [target(f"sum by (rail) ({per_nic('fabric_rdma_port_transmit_bytes_total')})",
                           "rail {{rail}} tx"),
                    target(f"sum by (rail) ({per_nic('fabric_rdma_port_receive_bytes_total')})",
                           "rail {{rail}} rx")], unit="Bps"),
        timeseries("Negotiated port rate", "Speed x width each port negotiated: a 400G port "
                   "that came up at 200G halves its rail's share of every collective.",
                   [target("max by (rail, host, device) ("
                           + with_rail(selector("fabric_rdma_port_rate_bytes_per_second", HOST),
                                       nics) + ")",
                           legend)], unit="Bps"),
        row("Errors and retransmits"),
        timeseries("Link errors per NIC", "Errors per second of every link error counter "
                   "summed per NIC (symbol errors, error recovery, link downed, receive "
                   "errors, discards ...).",
                   [target("sum by (rail, host, device) ("
                           f"{with_rail(rates_by_counter(NIC_ERROR_COUNTERS, HOST), nics)})",
                           legend)], unit="short"),
        timeseries("Link errors by counter", "Errors per second of the selected NICs, by "
                   "counter.",
                   [target("sum by (counter) ("
                           f"{with_rail(rates_by_counter(NIC_ERROR_COUNTERS, HOST), nics)})",
                           "{{counter}}")],
                   unit="short"),
        timeseries("Retransmits per NIC", "out_of_sequence, packet_seq_err, "
                   "local_ack_timeout_err and roce_adp_retrans per second: packets lost or "
                   "reordered on the path, or a peer that stopped answering.",
                   [target("sum by (rail, host, device, counter) ("
                           f"{with_rail(rates_by_counter(RETRANSMIT_COUNTERS, HOST), nics)})",
                           legend + " {{counter}}")],
                   unit="short", width=24),
        row("Congestion control"),
        timeseries("CNPs sent and handled", "Congestion notification packets per second: sent "
                   "by a NIC that received ECN-marked packets (notification point), handled by "
                   "a sender that slows down (reaction point).",
                   [target(per_nic("fabric_roce_cnp_sent_total"), f"{legend} sent"),
                    target(per_nic("fabric_roce_cnp_handled_total"), f"{legend} handled")],
                   unit="short"),
        timeseries("ECN-marked packets received", "RoCE packets per second that arrived "
                   "with CE set.",
                   [target(per_nic("fabric_roce_ecn_marked_packets_total"), legend)],
                   unit="short"),
        row("State"),
        state_timeline("Port state", "Logical port state of each NIC port.",
                       [target("max by (rail, host, device) ("
                               f"{with_rail(selector('fabric_rdma_port_state', HOST), nics)})",
                               legend)],
                       value_map({1: ("DOWN", "red"), 2: ("INIT", "orange"),
                                  3: ("ARMED", "yellow"), 4: ("ACTIVE", "green"),
                                  5: ("ACTIVE_DEFER", "yellow")}), height=10),
        table("NICs", "Firmware, board and driver of each NIC, with its rail.",
              [target(with_rail('fabric_rdma_device_info{host=~"$host"}', nics),
                      instant=True, table=True)], hidden_columns=["Value"]),
    ]
    return dashboard("railwatch-nic-health", "railwatch / NIC health per rail",
                     "RDMA NICs by rail and host: bandwidth, errors, retransmits, congestion "
                     "control and state. Needs railwatchd --topology (rails).",
                     panels, variables)
