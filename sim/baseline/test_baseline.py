"""Unit tests of the baseline's pieces: the ethtool textfile job and the alert -> diagnosis
records. python3 -m unittest discover -s sim/baseline -p 'test_*.py'"""

import os
import tempfile
import unittest

import alerts
import ethtool_textfile


class MetricNameTest(unittest.TestCase):
    def test_names_as_node_exporters_ethtool_collector_gives_them(self):
        cases = {
            "rx_prio3_pause": "node_ethtool_received_prio3_pause",
            "tx_prio3_pause": "node_ethtool_transmitted_prio3_pause",
            "tx_pause_storm_error_events": "node_ethtool_transmitted_pause_storm_error_events",
            "rx_crc_errors_phy": "node_ethtool_received_crc_errors_phy",
            "link_down_events_phy": "node_ethtool_link_down_events_phy",
            "rx_bytes": "node_ethtool_received_bytes_total",
            "tx_packets": "node_ethtool_transmitted_packets_total",
            "ch0_rx.xdp-drop": "node_ethtool_ch0_received_xdp_drop",
            "Rx_Errors": "node_ethtool_received_errors",
        }
        for stat, name in cases.items():
            self.assertEqual(ethtool_textfile.metric_name(stat), name, stat)


class TextfileTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.root = self.dir.name

    def tearDown(self):
        self.dir.cleanup()

    def dump(self, netdev, text):
        os.makedirs(os.path.join(self.root, "ethtool", netdev), exist_ok=True)
        with open(os.path.join(self.root, "ethtool", netdev, "stats"), "w") as f:
            f.write(text)

    def convert(self):
        out = os.path.join(self.root, "ethtool.prom")
        problems = ethtool_textfile.write_textfile(os.path.join(self.root, "ethtool"), out)
        with open(out) as f:
            return f.read(), problems

    def test_one_family_per_metric_with_device_label(self):
        self.dump("enp24s0np0", "NIC statistics:\n     rx_prio3_pause: 12\n     tx_prio3_pause: 7\n")
        self.dump("enp40s0np0", "NIC statistics:\n     rx_prio3_pause: 3\n")
        text, problems = self.convert()
        self.assertEqual(problems, [])
        self.assertEqual(text, (
            "# HELP node_ethtool_received_prio3_pause Network interface rx_prio3_pause\n"
            "# TYPE node_ethtool_received_prio3_pause untyped\n"
            'node_ethtool_received_prio3_pause{device="enp24s0np0"} 12\n'
            'node_ethtool_received_prio3_pause{device="enp40s0np0"} 3\n'
            "# HELP node_ethtool_transmitted_prio3_pause Network interface tx_prio3_pause\n"
            "# TYPE node_ethtool_transmitted_prio3_pause untyped\n"
            'node_ethtool_transmitted_prio3_pause{device="enp24s0np0"} 7\n'))

    def test_bad_line_is_reported_with_file_and_line_and_the_rest_kept(self):
        self.dump("enp24s0np0", "NIC statistics:\n     rx_prio3_pause: 12\n     garbage\n"
                  "     tx_prio3_pause: lots\n     rx_prio0_bytes: 5\n")
        text, problems = self.convert()
        path = os.path.join(self.root, "ethtool", "enp24s0np0", "stats")
        self.assertEqual(len(problems), 2)
        self.assertTrue(problems[0].startswith(f"{path}:3: "), problems[0])
        self.assertTrue(problems[1].startswith(f"{path}:4: "), problems[1])
        self.assertIn('node_ethtool_received_prio3_pause{device="enp24s0np0"} 12', text)
        self.assertIn('node_ethtool_received_prio0_bytes{device="enp24s0np0"} 5', text)
        self.assertNotIn("transmitted_prio3_pause", text)

    def test_a_nic_that_went_away_and_no_dumps_at_all(self):
        self.dump("enp24s0np0", "NIC statistics:\n     rx_prio3_pause: 1\n")
        os.remove(os.path.join(self.root, "ethtool", "enp24s0np0", "stats"))
        text, problems = self.convert()
        self.assertEqual((text, problems), ("", []))
        out = os.path.join(self.root, "none.prom")
        self.assertEqual(ethtool_textfile.write_textfile(os.path.join(self.root, "x"), out), [])
        with open(out) as f:
            self.assertEqual(f.read(), "")


def alert(state, active_at, **labels):
    labels.setdefault("alertname", "RdmaLinkDown")
    return {"labels": labels, "annotations": {"summary": "s", "description": "d"},
            "state": state, "activeAt": active_at, "value": "1e+00"}


SECOND = 1_000_000_000
T0 = 1_700_000_000 * SECOND  # 2023-11-14T22:13:20Z


class AlertTrackerTest(unittest.TestCase):
    def tracker(self):
        return alerts.AlertTracker(
            {"RdmaLinkDown": (0.0, 10.0), "RocePfcPausesSent": (60.0, 10.0)},
            lambda host, netdev: {("gpu-node-003", "enp24s0np0"): "mlx5_0"}.get((host, netdev)))

    def test_rfc3339(self):
        self.assertEqual(alerts.parse_rfc3339_ns("2023-11-14T22:13:20Z"), T0)
        self.assertEqual(alerts.parse_rfc3339_ns("2023-11-14T22:13:20.5Z"), T0 + SECOND // 2)
        self.assertEqual(alerts.parse_rfc3339_ns("2023-11-14T22:13:20.000000007Z"), T0 + 7)
        self.assertEqual(alerts.parse_rfc3339_ns("2023-11-14T23:13:20.25+01:00"),
                         T0 + SECOND // 4)

    def test_fired_is_active_plus_for_rounded_up_to_evaluations(self):
        self.assertEqual(alerts.fired_at_ns(T0, 60, 10, T0 + 70 * SECOND), T0 + 60 * SECOND)
        self.assertEqual(alerts.fired_at_ns(T0, 65, 10, T0 + 90 * SECOND), T0 + 70 * SECOND)
        self.assertEqual(alerts.fired_at_ns(T0, 0, 10, T0 + SECOND), T0)
        # Never later than the poll that saw it firing.
        self.assertEqual(alerts.fired_at_ns(T0, 60, 10, T0 + 30 * SECOND), T0 + 30 * SECOND)

    def test_firing_then_resolved(self):
        t = self.tracker()
        labels = {"host": "gpu-node-002", "device": "mlx5_1", "port": "1", "severity": "critical",
                  "playbook": "link_flap", "instance": "127.0.0.1:9", "job": "node"}
        t.observe([alert("firing", "2023-11-14T22:13:20Z", **labels)], T0 + SECOND)
        (d,) = t.diagnoses()
        self.assertEqual(d["state"], "DIAGNOSIS_STATE_FIRING")
        self.assertEqual(d["playbook"], "link_flap")
        self.assertEqual(d["severity"], "SEVERITY_CRITICAL")
        self.assertEqual(d["culprit"], [{"name": "host", "value": "gpu-node-002"},
                                        {"name": "device", "value": "mlx5_1"},
                                        {"name": "port", "value": "1"}])
        self.assertEqual(d["active_since_unix_nano"], str(T0))
        self.assertEqual(d["fired_at_unix_nano"], str(T0))
        self.assertEqual(d["explained_by"], "")
        t.observe([], T0 + 5 * SECOND)
        (d,) = t.diagnoses()
        self.assertEqual(d["state"], "DIAGNOSIS_STATE_RESOLVED")
        self.assertEqual(d["resolved_at_unix_nano"], str(T0 + 5 * SECOND))
        self.assertEqual(d["fired_at_unix_nano"], str(T0))

    def test_pending_never_fired_and_netdev_named_by_its_rdma_device(self):
        t = self.tracker()
        storm = alert("pending", "2023-11-14T22:13:20Z", alertname="RocePfcPausesSent",
                      host="gpu-node-003", device="enp24s0np0", severity="critical",
                      playbook="pfc_storm")
        gone = alert("pending", "2023-11-14T22:13:20Z", host="gpu-node-004", device="mlx5_0")
        t.observe([storm, gone], T0 + SECOND)
        t.observe([storm], T0 + 2 * SECOND)  # the other went away without firing: dropped
        (d,) = t.diagnoses()
        self.assertEqual(d["state"], "DIAGNOSIS_STATE_PENDING")
        self.assertNotIn("fired_at_unix_nano", d)
        self.assertEqual(d["culprit"], [{"name": "host", "value": "gpu-node-003"},
                                        {"name": "device", "value": "mlx5_0"},
                                        {"name": "interface", "value": "enp24s0np0"}])
        storm["state"] = "firing"
        t.observe([storm], T0 + 61 * SECOND)
        (d,) = t.diagnoses()
        self.assertEqual(d["state"], "DIAGNOSIS_STATE_FIRING")
        self.assertEqual(d["fired_at_unix_nano"], str(T0 + 60 * SECOND))

    def test_one_record_per_label_set(self):
        t = self.tracker()
        a = alert("firing", "2023-11-14T22:13:20Z", host="gpu-node-001", device="mlx5_0")
        b = alert("firing", "2023-11-14T22:13:30Z", host="gpu-node-001", device="mlx5_1")
        t.observe([a, b], T0 + 11 * SECOND)
        t.observe([b, a], T0 + 12 * SECOND)
        ids = [d["id"] for d in t.diagnoses()]
        self.assertEqual(len(set(ids)), 2)
        self.assertEqual([d["active_since_unix_nano"] for d in t.diagnoses()],
                         [str(T0), str(T0 + 10 * SECOND)])


if __name__ == "__main__":
    unittest.main()
