"""PromQL shared by the dashboards: rates over Grafana's $__rate_interval and the joins that
bring in what Prometheus cannot know (rails, switch ports of NICs, jobs) from railwatchd's info
series (docs/DASHBOARDS.md)."""

RATE_WINDOW = "$__rate_interval"
NIC_INFO = "railwatch_topology_nic_info"
JOB_HOSTS = "railwatch_job_host_info"
WIRED = 'switch!=""'  # NICs the topology file plugs into a switch port


def selector(metric, matchers=""):
    return f"{metric}{{{matchers}}}" if matchers else metric


def rate(metric, matchers=""):
    return f"rate({selector(metric, matchers)}[{RATE_WINDOW}])"


def with_rail(expr, nic_matchers=""):
    """Adds `rail` (and keeps only NICs of the topology matching `nic_matchers`)."""
    return f"{expr} * on(host, device) group_left(rail) {selector(NIC_INFO, nic_matchers)}"


def with_job(expr, job_matchers='training_job="$job"'):
    """Adds `training_job` to per-host series of the hosts of the selected job. A host in two
    jobs at once cannot be joined this way (PromQL has no many-to-many join): select one job.
    railwatchd exports the training job as `training_job`: `job` is Prometheus' own label."""
    return f"{expr} * on(host) group_left(training_job) {selector(JOB_HOSTS, job_matchers)}"


def at_nic_leaf_port(expr):
    """A switch-port series seen as the NIC plugged into that port: switch/interface ->
    host/device through the topology (the NIC's own counters need ethtool on the host)."""
    return (f'label_replace({expr}, "switch_port", "$1", "interface", "(.*)") '
            f'* on(switch, switch_port) group_left(host, device, rail) '
            f'{selector(NIC_INFO, WIRED)}')


# NIC counters that mean a sick link or port (docs/METRICS.md).
NIC_ERROR_COUNTERS = [
    ("fabric_rdma_symbol_errors_total", "symbol errors"),
    ("fabric_rdma_link_error_recovery_total", "link error recovery"),
    ("fabric_rdma_link_downed_total", "link downed"),
    ("fabric_rdma_port_receive_errors_total", "receive errors"),
    ("fabric_rdma_port_receive_remote_physical_errors_total", "remote physical errors"),
    ("fabric_rdma_local_link_integrity_errors_total", "local link integrity"),
    ("fabric_rdma_excessive_buffer_overrun_errors_total", "buffer overrun"),
    ("fabric_rdma_port_transmit_discards_total", "transmit discards"),
]

# RoCE retransmission signals: the NIC saw packets out of order or timed out waiting for acks.
RETRANSMIT_COUNTERS = [
    ("fabric_rdma_out_of_sequence_total", "out_of_sequence"),
    ("fabric_rdma_packet_sequence_errors_total", "packet_seq_err"),
    ("fabric_rdma_local_ack_timeout_errors_total", "local_ack_timeout_err"),
    ("fabric_roce_adaptive_retransmissions_total", "roce_adp_retrans"),
]

SWITCH_ERROR_COUNTERS = [
    ("fabric_switch_interface_receive_errors_total", "in-errors"),
    ("fabric_switch_interface_transmit_errors_total", "out-errors"),
]


def rates_by_counter(counters, matchers=""):
    """The rates of several counters as one vector, each series labelled counter=<short name>.
    (rate() drops the metric name, so rate({__name__=~"a|b"}) gives two series with the same
    labels wherever a device has both, which Prometheus refuses.)"""
    parts = [f'label_replace({rate(name, matchers)}, "counter", "{short}", "", "")'
             for name, short in counters]
    return "(" + " or ".join(parts) + ")"
