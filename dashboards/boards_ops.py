"""The NCCL jobs dashboard and railwatch's own health."""

from grafana import (FIRING_STEPS, bargauge, dashboard, query_variable, row, stat,
                     state_timeline, table, target, timeseries, value_map)
from promql import rate, with_job, with_rail


def nccl_jobs():
    variables = [
        query_variable("job", "Job", "label_values(railwatch_job_host_info, training_job)",
                       multi=False, include_all=False,
                       description="One job at a time: a host can only be joined to one job."),
    ]
    # Per rank (one NIC per rank in a rail-optimised job): what each NIC of the job's hosts
    # sends. Works without a topology file; the rail comes from it where there is one.
    nic_tx = ("sum by (training_job, host, device) ("
              f"{with_job(rate('fabric_rdma_port_transmit_bytes_total'))})")
    median = f"quantile by (training_job) (0.5, {nic_tx})"

    def rank_time(counter):
        """A per-rank Inspector counter's rate, joined to the selected job by host."""
        return f"sum by (training_job, host, comm, rank) ({with_job(rate(counter))})"

    panels = [
        stat("Hosts", "Hosts with ranks of the job.",
             [target('count(railwatch_job_host_info{training_job="$job"})')], graph=False),
        stat("GPUs", "GPUs the job holds (topology file: hosts x gpus_per_host; NCCL: ranks).",
             [target('sum(railwatch_job_gpus{training_job="$job"})')], graph=False),
        stat("Job bandwidth", "Bytes per second all NICs of the job's hosts send.",
             [target(f"sum({nic_tx})")], unit="Bps"),
        stat("Slowest NIC vs median", "The lowest ratio of a NIC's bandwidth to the job's "
             "median NIC: 1 when every rail carries its share; a straggler shows 0.5 or less.",
             [target(f"min({nic_tx} / on(training_job) group_left() {median})")], unit="percentunit",
             thresholds=[{"color": "red", "value": None}, {"color": "orange", "value": 0.7},
                         {"color": "green", "value": 0.9}], decimals=2),
        stat("Diagnoses on the job's hosts", "Firing diagnoses whose culprit is on a host of "
             "the job.",
             [target("count(" + with_job("max by (host, playbook) (railwatch_diagnosis_active)")
                     + ") or vector(0)")], thresholds=FIRING_STEPS, graph=False),
        row("Per-rank bandwidth"),
        timeseries("Transmit bandwidth per NIC", "Bytes per second each NIC of the job's "
                   "hosts sends. The NICs of one collective move together; a line below the "
                   "others is a straggler the whole job waits for.",
                   [target(nic_tx, "{{host}} {{device}}")], unit="Bps", width=24, height=9),
        timeseries("Bandwidth ratio to the job's median NIC", "Each NIC's bandwidth divided "
                   "by the job's median NIC's: the straggler_rail playbook fires below 0.7 "
                   "(against its rail peers).",
                   [target(f"{nic_tx} / on(training_job) group_left() {median}", "{{host}} {{device}}")],
                   unit="percentunit", min_zero=True),
        timeseries("Bandwidth by rail", "Bytes per second per rail of the job (rails from "
                   "the topology file).",
                   [target("sum by (rail) ("
                           f"{with_job(with_rail(rate('fabric_rdma_port_transmit_bytes_total')))})",
                           "rail {{rail}}")], unit="Bps"),
        row("NCCL ranks (Inspector)"),
        timeseries("Collective time per rank", "Mean time of one collective per rank of the "
                   "job (NCCL Inspector records, host agents' --nccl_inspector), per "
                   "communicator. A collective ends for all ranks together: the rank every "
                   "other waits for spends the least time in it (straggler_rank fires under "
                   "80% of its peers' median); a slow network raises every rank alike.",
                   [target(f"{rank_time('fabric_nccl_collective_seconds_total')} / "
                           f"{rank_time('fabric_nccl_collectives_total')} * 1000",
                           "{{host}} rank {{rank}} ({{comm}})")], unit="ms", width=24),
        row("Stragglers and diagnoses"),
        state_timeline("Straggler diagnoses", "straggler_rail diagnoses of this job over time, "
                       "one row per NIC.",
                       [target("max by (host, device, rail) (railwatch_diagnosis_active{"
                               'playbook="straggler_rail", training_job="$job"})',
                               "{{host}} {{device}} rail {{rail}}")],
                       value_map({1: ("straggler", "red")}), thresholds=FIRING_STEPS,
                       width=12),
        table("Diagnoses firing on the job's hosts", "Every firing diagnosis whose culprit "
              "is on one of the job's hosts (a PFC storm on its leaf names another host and "
              "appears under that host's job, if any).",
              [target(with_job("railwatch_diagnosis_active"), instant=True, table=True)],
              width=12, hidden_columns=["Value"]),
        row("nccl-tests"),
        bargauge("nccl-tests bus bandwidth (latest run)", "Average bus bandwidth of the latest "
                 "completed nccl-tests run of each test on each host whose agent tails "
                 "nccl-tests output (--log_paths). Every host, in the job or not: acceptance "
                 "runs usually happen between jobs.",
                 [target("fabric_nccl_tests_bus_bandwidth_bytes_per_second",
                         "{{host}} {{test}}", instant=True)], unit="Bps", width=12),
        table("nccl-tests runs", "When each host last completed each test, and its average "
              "bus bandwidth.",
              [target("fabric_nccl_tests_last_run_timestamp_seconds * 1000", instant=True,
                      table=True),
               target("fabric_nccl_tests_bus_bandwidth_bytes_per_second", instant=True,
                      table=True)],
              width=12, merge=True,
              rename={"Value #A": "last run", "Value #B": "bus bandwidth (bytes/s)"}),
    ]
    return dashboard("railwatch-nccl-jobs", "railwatch / NCCL jobs",
                     "Per-rank bandwidth of a job, its stragglers and the diagnoses on its "
                     "hosts; nccl-tests results.", panels, variables)


def railwatch_self():
    panels = [
        stat("Agents connected", "Agents with an open Ingest stream.",
             [target("sum(railwatch_agent_connected)")]),
        stat("Agents gone", "Agents that connected once and whose stream is closed now.",
             [target("sum(1 - railwatch_agent_connected)")],
             thresholds=[{"color": "green", "value": None}, {"color": "red", "value": 1}]),
        stat("Series", "Series railwatchd holds.", [target("railwatch_series")]),
        stat("Playbooks", "Playbooks loaded and enabled.",
             [target("railwatch_playbooks_loaded")], graph=False),
        stat("Rule evaluation", "Duration of the latest evaluation of all playbooks.",
             [target("railwatch_rule_evaluation_duration_seconds")], unit="s",
             thresholds=[{"color": "green", "value": None}, {"color": "orange", "value": 0.5},
                         {"color": "red", "value": 1}]),
        stat("Alertmanager", "Whether railwatchd posts to an Alertmanager (--alertmanager_url): "
             "its queue series exist only then.",
             [target("count(railwatch_alertmanager_queue_length) > 0 or vector(0)")],
             mappings=value_map({0: ("not configured", "text"), 1: ("configured", "green")}),
             graph=False),
        row("Agents"),
        table("Agents", "Every agent railwatchd has seen: connected, seconds since its last "
              "batch, lag (age of its newest point on arrival) and series.",
              [target("railwatch_agent_connected", instant=True, table=True),
               target("time() - railwatch_agent_last_seen_timestamp_seconds", instant=True,
                      table=True),
               target("railwatch_agent_lag_seconds", instant=True, table=True),
               target("railwatch_agent_series", instant=True, table=True)],
              merge=True, rename={"Value #A": "connected", "Value #B": "since last batch (s)",
                                  "Value #C": "lag (s)", "Value #D": "series"}),
        timeseries("Agent lag", "Age of the newest point of each agent's last batch when it "
                   "arrived: the agent's clock offset plus its batching and network delay.",
                   [target("railwatch_agent_lag_seconds", "{{agent}}")], unit="s"),
        timeseries("Seconds since last batch", "A connected agent sends a batch every "
                   "interval; a rising line is an agent that stopped.",
                   [target("time() - (railwatch_agent_last_seen_timestamp_seconds > 0)",
                           "{{agent}}")], unit="s"),
        row("Ingest"),
        timeseries("Ingest rate", "Samples, batches and events per second from all agents.",
                   [target(f"sum({rate('railwatch_ingest_samples_total')})", "samples"),
                    target(f"sum({rate('railwatch_ingest_batches_total')})", "batches"),
                    target(f"sum({rate('railwatch_ingest_events_total')})", "events")],
                   unit="short", width=8),
        timeseries("Ingest errors by reason", "Messages or points railwatchd refused: "
                   "duplicate batches (replays), unknown series, bad names, protocol errors.",
                   [target(f"sum by (reason) ({rate('railwatch_ingest_errors_total')})",
                           "{{reason}}")], unit="short", width=8),
        timeseries("Streams opened and store anomalies", "Agent (re)connections, samples "
                   "dropped as out of order, counter resets (driver reloads, replaced NICs), "
                   "per minute.",
                   [target(f"60 * sum({rate('railwatch_ingest_streams_opened_total')})",
                           "streams opened"),
                    target(f"60 * sum({rate('railwatch_store_samples_out_of_order_total')})",
                           "out of order"),
                    target(f"60 * sum({rate('railwatch_store_resets_total')})", "resets")],
                   unit="short", width=8),
        row("Collectors"),
        timeseries("Collectors failing", "Per collector, how many agents report its last run "
                   "failed (railwatch_collector_success 0): it is retried each cycle, and the "
                   "agent's log says why.",
                   [target("sum by (collector) (railwatch_collector_success == bool 0)",
                           "{{collector}}")], unit="short", width=8),
        timeseries("Collector duration", "Slowest run of each collector across agents.",
                   [target("max by (collector) (railwatch_collector_duration_seconds)",
                           "{{collector}}")], unit="s", width=8),
        timeseries("Log lines tailed", "Lines per second the host agents' log tailers read "
                   "(NCCL, PyTorch, nccl-tests), and events they found in them.",
                   [target(f"sum by (host) ({rate('railwatch_log_lines_total')})",
                           "{{host}} lines"),
                    target(f"sum by (host) ({rate('railwatch_log_events_total')})",
                           "{{host}} events")], unit="short", width=8),
        row("gNMI targets"),
        state_timeline("gNMI targets connected", "1 while the switch agent's subscription to "
                       "the target is up.",
                       [target("max by (agent, target) (railwatch_gnmi_target_connected)",
                               "{{target}}")],
                       value_map({0: ("down", "red"), 1: ("up", "green")}),
                       thresholds=[{"color": "red", "value": None}, {"color": "green", "value": 1}],
                       width=12),
        timeseries("gNMI updates", "Updates per second from each target.",
                   [target(f"sum by (target) ({rate('railwatch_gnmi_target_updates_total')})",
                           "{{target}}")], unit="short", width=12),
        timeseries("gNMI errors, reconnects, unmapped leaves", "Per minute: stream errors, "
                   "reconnects, and leaves no path profile maps to a canonical series.",
                   [target(f"60 * sum by (target) ({rate('railwatch_gnmi_target_errors_total')})",
                           "{{target}} errors"),
                    target("60 * sum by (target) ("
                           f"{rate('railwatch_gnmi_target_reconnects_total')})",
                           "{{target}} reconnects"),
                    target("60 * sum by (target) ("
                           f"{rate('railwatch_gnmi_unmapped_leaves_total')})",
                           "{{target}} unmapped")], unit="short", width=24),
        row("Rules and store"),
        timeseries("Rule evaluation time and rate", "Duration of the latest evaluation of all playbooks, "
                   "and evaluations per second (the tick plus evaluations on arrival).",
                   [target("railwatch_rule_evaluation_duration_seconds", "duration"),
                    target(f"{rate('railwatch_rule_evaluations_total')}", "evaluations/s")],
                   unit="s", width=12),
        timeseries("Series in the store", "Series held, and series each agent defined.",
                   [target("railwatch_series", "store"),
                    target("railwatch_agent_series", "{{agent}}")], width=12),
        row("Alertmanager"),
        timeseries("Alertmanager posts", "Posts per minute to each Alertmanager, by result. "
                   "No data: railwatchd runs without --alertmanager_url.",
                   [target("60 * sum by (alertmanager, result) ("
                           f"{rate('railwatch_alertmanager_posts_total')})",
                           "{{alertmanager}} {{result}}")], unit="short", width=8),
        timeseries("Alerts sent and dropped", "Alerts per minute sent to each Alertmanager, "
                   "and alerts dropped because the queue was full. No data: no Alertmanager.",
                   [target("60 * sum by (alertmanager) ("
                           f"{rate('railwatch_alertmanager_alerts_sent_total')})",
                           "{{alertmanager}} sent"),
                    target(f"60 * sum({rate('railwatch_alertmanager_dropped_total')})",
                           "dropped")], unit="short", width=8),
        timeseries("Alertmanager queue and last success", "Alerts waiting to be posted, and "
                   "seconds since the last successful post to each Alertmanager (no line: "
                   "none yet). No data at all: no Alertmanager.",
                   [target("railwatch_alertmanager_queue_length", "queued"),
                    target("time() - (railwatch_alertmanager_last_success_timestamp_seconds > 0)",
                           "{{alertmanager}} s since success")], unit="short", width=8),
        row("Build"),
        table("railwatchd build", "The version of the railwatchd Prometheus scrapes.",
              [target("railwatch_build_info", instant=True, table=True)], height=4,
              hidden_columns=["Value"]),
    ]
    return dashboard("railwatch-self", "railwatch / railwatch health",
                     "railwatch's own health: agents, ingest, collectors, gNMI targets, rule "
                     "evaluation, the store, Alertmanager posts.", panels, [])
