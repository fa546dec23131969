"""The InfiniBand dashboard: the fabric scanner's switch ports (railwatch-agent
--role=ib-fabric, docs/INFINIBAND.md): congestion as credit waits, link errors as a bit error
rate, links' width and speed, the IB playbooks' diagnoses and the scanner's own health."""

from grafana import FIRING_STEPS, bargauge, dashboard, query_variable, row, stat, table, \
    target, timeseries
from promql import rate, selector

# The scanner's series are the host agents' fabric_rdma_* names labelled {switch, guid,
# interface}: `switch` set means an IB switch port (RoCE switches report fabric_switch_*).
PORTS = 'switch=~"$switch", switch!=""'
BY_PORT = "switch, guid, interface"
LEGEND = "{{switch}} {{interface}}"


def _per_port(metric):
    return f"sum by ({BY_PORT}) ({rate(metric, PORTS)})"


def infiniband():
    variables = [
        query_variable("switch", "Switch", "label_values(fabric_ib_link_info, switch)",
                       description="The node description's host name (MF0;<name>:...), or "
                       "the description itself; switches that share one are told apart by "
                       "their guid."),
    ]
    rate_of = selector("fabric_rdma_port_rate_bytes_per_second", PORTS)
    panels = [
        stat("IB diagnoses firing", "Diagnoses of the InfiniBand playbooks (ib_congestion, "
             "ib_link_ber, ib_transmit_discards, ib_link_downtrained) firing now.",
             [target('sum(railwatch_diagnoses{state="firing", playbook=~"ib_.*"})')],
             thresholds=FIRING_STEPS),
        stat("Switch ports read", "Switch ports whose counters the scanners read in their "
             "last scan.", [target("sum(railwatch_ib_scan_switch_ports)")]),
        stat("Links", "Switch ports with a link in the scanners' topology.",
             [target(f"count({selector('fabric_ib_link_info', PORTS)})")]),
        stat("Traffic", "Bytes per second all IB switch ports send.",
             [target(f"sum({rate('fabric_rdma_port_transmit_bytes_total', PORTS)})")],
             unit="Bps"),
        stat("Ports waiting", "Switch ports that waited for credits more than 1,000,000 "
             "ticks/s (ib_congestion's threshold).",
             [target(f"count({rate('fabric_rdma_port_transmit_wait_total', PORTS)} > 1000000)"
                     " or vector(0)")],
             thresholds=[{"color": "green", "value": None}, {"color": "orange", "value": 1}]),
        stat("Scan problems", "Lines of the tool outputs the scanner could not read, per "
             "second (each logged with file:line:column when read).",
             [target(f"sum({rate('railwatch_ib_scan_problems_total')})")],
             thresholds=[{"color": "green", "value": None}, {"color": "orange", "value": 0.01}]),
        row("Congestion: credit waits"),
        bargauge("Ports waiting for credits", "The 10 switch ports with the most PortXmitWait "
                 "ticks per second: data to send and no credits from downstream. The root of "
                 "a congestion tree is the one whose downstream does not wait "
                 "(ib_congestion names it).",
                 [target(f"topk(10, {_per_port('fabric_rdma_port_transmit_wait_total')})",
                         LEGEND, instant=True)], unit="short"),
        timeseries("Credit waits by switch", "PortXmitWait ticks per second, summed per "
                   "switch: backpressure spreads upstream, so a congestion tree lights up "
                   "several switches at once.",
                   [target(f"sum by (switch, guid) ({rate('fabric_rdma_port_transmit_wait_total', PORTS)})",
                           "{{switch}} {{guid}}")], width=8),
        timeseries("Bandwidth by switch", "Bytes per second each switch's ports send.",
                   [target(f"sum by (switch, guid) ({rate('fabric_rdma_port_transmit_bytes_total', PORTS)})",
                           "{{switch}} {{guid}}")], unit="Bps", width=8),
        row("Link errors"),
        table("Bit error rate over 12 minutes", "The 20 switch ports with the highest symbol "
              "errors per bit over 12 minutes (bits = the port's rate x 720 s): ib_link_ber's "
              "fast window. On EDR and faster these are errors FEC could not correct.",
              [target(f"topk(20, increase({selector('fabric_rdma_symbol_errors_total', PORTS)}[12m])"
                      f" / on({BY_PORT}) ({rate_of} * 5760))", instant=True, table=True)],
              width=12),
        bargauge("Symbol errors, last hour", "The 10 switch ports that counted the most "
                 "symbol errors in the last hour.",
                 [target(f"topk(10, sum by ({BY_PORT}) (increase("
                         f"{selector('fabric_rdma_symbol_errors_total', PORTS)}[1h])))",
                         LEGEND, instant=True)], unit="short", width=12),
        timeseries("Link downs and recoveries", "LinkDownedCounter and "
                   "LinkErrorRecoveryCounter increases per port (link_flap, link_degradation).",
                   [target(f"sum by ({BY_PORT}) (increase("
                           f"{selector('fabric_rdma_link_downed_total', PORTS)}[$__rate_interval])) > 0",
                           LEGEND + " downed"),
                    target(f"sum by ({BY_PORT}) (increase("
                           f"{selector('fabric_rdma_link_error_recovery_total', PORTS)}[$__rate_interval])) > 0",
                           LEGEND + " recovered")], bars=True),
        timeseries("Transmit discards", "PortXmitDiscards per second per port: packets "
                   "dropped on a lossless fabric (ib_transmit_discards).",
                   [target(_per_port("fabric_rdma_port_transmit_discards_total"), LEGEND)]),
        row("Links"),
        table("Links by width and speed", "How many switch ports trained to each width and "
              "speed: one 1x among 4x, or one HDR among NDR, is a link trained below its "
              "peers (ib_link_downtrained).",
              [target(f"count by (width, speed) ({selector('fabric_ib_link_info', PORTS)})",
                      instant=True, table=True)], width=8, rename={"Value": "ports"}),
        table("Ports slower than their switch's fastest", "Switch ports whose rate is under "
              "the fastest port of their switch: HCA links under uplinks by design, or a "
              "link that trained low. Empty when every port of a switch runs at one rate.",
              [target(f"{rate_of} < on(switch, guid) group_left "
                      f"max by (switch, guid) ({rate_of})", instant=True, table=True)],
              width=16, unit="Bps"),
        table("Counters stuck at all ones", "PMA counters at their maximum (16- and 32-bit "
              "PortCounters stop there): they count nothing more until cleared, and the "
              "playbooks read no rate from them.",
              [target(f"{selector('fabric_rdma_counter_saturated', PORTS)} == 1",
                      instant=True, table=True)], hidden_columns=["Value"]),
        row("Cable modules"),
        timeseries("Switch temperatures", "Each switch's own temperature (ibdiagnet's "
                   "TEMP_SENSING): one switch far above its peers has a cooling problem.",
                   [target(f"max by (switch, guid) ({selector('fabric_ib_node_temperature_celsius', PORTS)})",
                           "{{switch}} {{guid}}")], unit="celsius", width=24),
        table("Module temperatures", "Each switch port's module (ibdiagnet2.cables): its "
              "temperature and the high-temperature alarm threshold it declares itself; within "
              "5 °C of it is ib_cable_hot.",
              [target(f"{selector('fabric_ib_cable_temperature_celsius', PORTS)}",
                      instant=True, table=True),
               target(f"{selector('fabric_ib_cable_temperature_alarm_high_celsius', PORTS)}",
                      instant=True, table=True)],
              width=12, merge=True, rename={"Value #A": "°C", "Value #B": "alarm at °C"}),
        table("Module alarm flags set", "Latched alarm and warning flags a module reports "
              "(ib_cable_alarm): receive power, transmit bias or power, temperature, voltage, "
              "loss of signal or lock.",
              [target(f"{selector('fabric_ib_cable_alarm_flags', PORTS)} > 0",
                      instant=True, table=True)], width=12),
        row("The scanner"),
        timeseries("Inputs and unplaced records", "Tool outputs read per scan, those no "
                   "reader recognised, and counters of LIDs or GUIDs no topology names "
                   "(never guessed).",
                   [target("sum by (agent) (railwatch_ib_scan_inputs)", "{{agent}} inputs"),
                    target("sum by (agent) (railwatch_ib_scan_unrecognised_inputs)",
                           "{{agent}} unrecognised"),
                    target(f"sum by (agent) ({rate('railwatch_ib_scan_unplaced_records_total')})",
                           "{{agent}} unplaced/s")]),
        timeseries("Scan success", "railwatch_collector_success of the ib_fabric collector: "
                   "0 while the scanner cannot read its source (the reason is in its log).",
                   [target('railwatch_collector_success{collector="ib_fabric"}', "{{agent}}")]),
    ]
    return dashboard(
        "railwatch-infiniband", "railwatch / InfiniBand",
        "The InfiniBand switch ports the fabric scanner reads: credit waits, bit errors, "
        "links' width and speed, the IB diagnoses.",
        panels, variables)
