#!/usr/bin/python3
"""The Query API from outside, as any gRPC client would call it (tests/e2e/query_api_python.sh).

Runs under Debian's /usr/bin/python3 with python3-grpcio, on stubs that the script generated
from proto/ with python3-grpc-tools into --gen (and from a hand-written reflection.proto). The
daemon watches a simulated fabric where gpu-node-003/mlx5_2 starts a PFC storm at a known time
(--truth, the simulator's ground truth). Every RPC is called and its content asserted:

  ListAgents (every agent connected and healthy), WatchDiagnoses (SYNCED, then the storm's
  FIRING; a second watch gets it as INITIAL), ListDiagnoses with each filter, GetDiagnosis (its
  evidence; NOT_FOUND), QuerySeries (a selector's samples, an expression's instant values),
  Topology, ListPlaybooks, bad arguments (INVALID_ARGUMENT), and server reflection
  (grpc.reflection.v1alpha ListServices, and the file that defines railwatch.v1.Query).
  With --token (the daemon has --query_tokens): every call carries it; none or a wrong one is
  UNAUTHENTICATED, ForgetAgent with it (read-only) PERMISSION_DENIED.

Exit 0 when all holds; 1 with "FAIL: ..." on the first check that does not.
"""

import argparse
import os
import queue
import sys
import threading
import time

import grpc


def fail(message):
    print(f"FAIL: {message}", file=sys.stderr)
    sys.exit(1)


def check(condition, message):
    if not condition:
        fail(message)


class BearerToken(grpc.UnaryUnaryClientInterceptor, grpc.UnaryStreamClientInterceptor):
    """Adds `authorization: Bearer TOKEN` to every call, as railwatchd --query_tokens wants."""

    def __init__(self, token):
        self.metadata = ("authorization", f"Bearer {token}")

    def _details(self, details):
        return details._replace(metadata=list(details.metadata or []) + [self.metadata])

    def intercept_unary_unary(self, continuation, details, request):
        return continuation(self._details(details), request)

    def intercept_unary_stream(self, continuation, details, request):
        return continuation(self._details(details), request)


def check_refusals(channel, pb, query_pb2_grpc, timeout):
    """Without the token, with a wrong one, or an admin RPC with a read-only one: refused."""
    bare = query_pb2_grpc.QueryStub(channel)
    for metadata, want in [(None, "needs credentials"),
                           ([("authorization", "Bearer not-a-token")], "not one this daemon knows")]:
        try:
            bare.ListAgents(pb.ListAgentsRequest(), timeout=timeout, metadata=metadata)
            fail(f"ListAgents with metadata {metadata} was served")
        except grpc.RpcError as e:
            check(e.code() == grpc.StatusCode.UNAUTHENTICATED and want in e.details(),
                  f"ListAgents with metadata {metadata}: {e.code()} {e.details()}")
    print("auth: no token and a wrong token are UNAUTHENTICATED")


def culprit(d):
    return {label.name: label.value for label in d.culprit}


def until(seconds, what, fn):
    """Calls fn until it returns something true; that value, or FAIL after `seconds`."""
    deadline = time.monotonic() + seconds
    last_error = None
    while time.monotonic() < deadline:
        try:
            value = fn()
            if value:
                return value
        except grpc.RpcError as e:  # the daemon may still be starting
            last_error = e
        time.sleep(0.2)
    fail(f"timed out after {seconds}s waiting for {what}" + (f" ({last_error})" if last_error else ""))


class Watch:
    """A WatchDiagnoses stream read on its own thread into a queue."""

    def __init__(self, stub, pb, request):
        self.call = stub.WatchDiagnoses(request)
        self.events = queue.Queue()
        self.error = None
        threading.Thread(target=self._read, args=(pb,), daemon=True).start()

    def _read(self, pb):
        try:
            for event in self.call:
                self.events.put(event)
        except grpc.RpcError as e:
            self.error = e
        self.events.put(None)

    def next(self, seconds, what):
        try:
            event = self.events.get(timeout=seconds)
        except queue.Empty:
            fail(f"no watch event within {seconds}s: expected {what}")
        if event is None:
            fail(f"the watch ended ({self.error}) before {what}")
        return event


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--server", required=True)
    ap.add_argument("--gen", required=True, help="where the generated stubs are")
    ap.add_argument("--truth", required=True)
    ap.add_argument("--topology", required=True)
    ap.add_argument("--hosts", type=int, default=8)
    ap.add_argument("--switches", type=int, default=6)
    ap.add_argument("--token", default="", help="a read-only bearer token (--query_tokens)")
    args = ap.parse_args()
    sys.path.insert(0, args.gen)
    from railwatch.v1 import query_pb2 as pb  # noqa: E402 (generated at test time)
    from railwatch.v1 import query_pb2_grpc, ingest_pb2, telemetry_pb2
    # package grpc.reflection.v1alpha, kept under another directory than grpc/ so that it does
    # not hide the grpc package.
    from grpc_reflection_v1alpha import reflection_pb2, reflection_pb2_grpc
    from google.protobuf import descriptor_pb2

    channel = grpc.insecure_channel(args.server)
    timeout = 10
    if args.token:
        check_refusals(channel, pb, query_pb2_grpc, timeout)
        channel = grpc.intercept_channel(channel, BearerToken(args.token))
        try:
            query_pb2_grpc.QueryStub(channel).ForgetAgent(
                pb.ForgetAgentRequest(agent_id="gpu-node-001"), timeout=timeout)
            fail("ForgetAgent with a read-only token was served")
        except grpc.RpcError as e:
            check(e.code() == grpc.StatusCode.PERMISSION_DENIED,
                  f"ForgetAgent with a read-only token: {e.code()} {e.details()}")
        print("auth: ForgetAgent with a read-only token is PERMISSION_DENIED")
    stub = query_pb2_grpc.QueryStub(channel)

    # ---- ListAgents: every host agent and the switch agent, connected and ok ----
    def all_healthy():
        agents = stub.ListAgents(pb.ListAgentsRequest(), timeout=timeout).agents
        ok = [a for a in agents if a.connected and a.health == "ok"]
        return agents if len(ok) == args.hosts + 1 else None

    agents = until(30, f"{args.hosts + 1} connected agents with health ok", all_healthy)
    by_id = {a.agent_id: a for a in agents}
    check("switch-agent" in by_id, f"no switch-agent among {sorted(by_id)}")
    switch_agent = by_id["switch-agent"]
    check(len(switch_agent.targets) == args.switches and all(t.connected for t in switch_agent.targets),
          f"switch agent targets: {[(t.name, t.connected) for t in switch_agent.targets]}")
    host = by_id.get("gpu-node-003")
    check(host is not None and host.role == ingest_pb2.AGENT_ROLE_HOST
          and host.hostname == "gpu-node-003",
          f"gpu-node-003's agent: {host}")
    check(host.batches_received > 0 and host.points_received > 0 and host.series > 0,
          f"gpu-node-003's agent has sent nothing: {host}")
    check(not host.problems and not host.failing_collectors and host.collectors,
          f"gpu-node-003: problems {list(host.problems)}, collectors {list(host.collectors)}")
    check(0 <= host.lag_seconds < 5, f"gpu-node-003 lag {host.lag_seconds}")
    print(f"ListAgents: {len(agents)} agents ok, switch agent with {len(switch_agent.targets)} targets")

    # ---- WatchDiagnoses before the storm: SYNCED, then the storm as it fires ----
    storm_filter = pb.DiagnosisFilter(playbooks=["pfc_storm"])
    before = Watch(stub, pb, pb.WatchDiagnosesRequest(filter=storm_filter, send_initial=True))
    first = before.next(10, "SYNCED")
    check(first.kind == pb.DiagnosisEvent.KIND_SYNCED,
          f"a watch started before the storm must begin with SYNCED, got {first}")
    if os.path.exists(args.truth):  # written at the first fault
        with open(args.truth, encoding="utf-8") as f:
            check("pfc_storm" not in f.read(), "the storm began before the watch: raise its offset")
    while True:
        event = before.next(60, "the storm's FIRING event")
        if event.kind == pb.DiagnosisEvent.KIND_FIRING:
            break
        check(event.kind == pb.DiagnosisEvent.KIND_PENDING, f"unexpected event before FIRING: {event}")
    storm = event.diagnosis
    check(storm.playbook == "pfc_storm" and storm.state == pb.DIAGNOSIS_STATE_FIRING,
          f"FIRING event: {storm.playbook} {storm.state}")
    where = culprit(storm)
    check(where.get("host") == "gpu-node-003" and where.get("device") == "mlx5_2",
          f"the storm's culprit: {where}")
    check(event.time_unix_nano >= storm.fired_at_unix_nano > 0, f"event time {event.time_unix_nano}")
    print(f"WatchDiagnoses: SYNCED, then FIRING pfc_storm {storm.id} on {where}")

    # A watch started now gets it as INITIAL, then SYNCED.
    after = Watch(stub, pb, pb.WatchDiagnosesRequest(filter=storm_filter, send_initial=True))
    initial = after.next(10, "INITIAL")
    check(initial.kind == pb.DiagnosisEvent.KIND_INITIAL and initial.diagnosis.id == storm.id,
          f"second watch's first event: {initial.kind} {initial.diagnosis.id}")
    while True:
        event = after.next(10, "SYNCED")
        if event.kind == pb.DiagnosisEvent.KIND_SYNCED:
            break
        check(event.kind == pb.DiagnosisEvent.KIND_INITIAL, f"before SYNCED: {event.kind}")
    after.call.cancel()
    before.call.cancel()
    print("WatchDiagnoses: a later watch gets INITIAL then SYNCED")

    # ---- ListDiagnoses with filters ----
    def listed(limit=0, **filter_fields):
        request = pb.ListDiagnosesRequest(filter=pb.DiagnosisFilter(**filter_fields), limit=limit)
        return list(stub.ListDiagnoses(request, timeout=timeout).diagnoses)

    firing = listed(states=[pb.DIAGNOSIS_STATE_FIRING])
    check(storm.id in [d.id for d in firing], "the storm is not among the firing diagnoses")
    check([d.id for d in listed(playbooks=["pfc_storm"], host="gpu-node-003")] == [storm.id],
          "host=gpu-node-003 and playbook pfc_storm must give the storm alone")
    check(storm.id in [d.id for d in listed(**{"switch": "leaf-r2"})],
          "switch=leaf-r2 must include the storm (culprit leaf)")
    check(storm.id not in [d.id for d in listed(host="gpu-node-001")], "host=gpu-node-001 gave the storm")
    check(storm.id not in [d.id for d in listed(**{"switch": "leaf-r0"})], "switch=leaf-r0 gave the storm")
    check(storm.id in [d.id for d in listed(severities=[pb.SEVERITY_CRITICAL])],
          "severity CRITICAL must include the storm")
    check(not listed(states=[pb.DIAGNOSIS_STATE_RESOLVED], playbooks=["pfc_storm"]),
          "a resolved pfc_storm before the storm ended")
    check(storm.id in [d.id for d in listed(since_unix_nano=time.time_ns())],
          "since=now must keep the active storm")
    check(len(listed(limit=1)) == 1, "limit=1")
    print(f"ListDiagnoses: {len(firing)} firing; filters by host, switch, state, severity, "
          "playbook, since and limit hold")

    # ---- GetDiagnosis: the full evidence ----
    full = stub.GetDiagnosis(pb.GetDiagnosisRequest(id=storm.id), timeout=timeout)
    series = [e for e in full.evidence if e.kind == "series"]
    check(series and any("fabric_pfc_pause_frames_total" in e.series for e in series),
          f"the storm's evidence: {[e.series for e in full.evidence]}")
    check(all(e.points for e in series), "series evidence without its samples")
    check(full.runbook and full.commands and full.location, "runbook, commands and location")
    check(full.blast_radius.jobs and full.blast_radius.jobs[0].job == "train",
          f"blast radius: {full.blast_radius}")
    try:
        stub.GetDiagnosis(pb.GetDiagnosisRequest(id="no-such-diagnosis"), timeout=timeout)
        fail("GetDiagnosis of an unknown id succeeded")
    except grpc.RpcError as e:
        check(e.code() == grpc.StatusCode.NOT_FOUND, f"unknown id: {e.code()}")
    print(f"GetDiagnosis: {len(full.evidence)} evidence items, {len(full.commands)} runbook commands, "
          f"location {full.location!r}; NOT_FOUND for an unknown id")

    # ---- QuerySeries: a selector's samples and an expression's values ----
    selector = ('fabric_pfc_pause_frames_total{switch="leaf-r2",interface="Ethernet8",'
                'direction="rx",priority="3"}')

    def storm_samples():
        # The last 30 s of the storming port's counter, once it holds a few seconds of storm.
        r = stub.QuerySeries(pb.QuerySeriesRequest(query=selector,
                                                   start_unix_nano=time.time_ns() - 30 * 10**9),
                             timeout=timeout)
        check(r.query_type == "selector" and r.matched == 1 and not r.truncated,
              f"selector: type {r.query_type}, matched {r.matched}")
        points = list(r.series[0].points)
        return (r, points) if points[-1].value - points[0].value > 20000 else None

    r, points = until(20, "20,000 pauses on leaf-r2 Ethernet8 in QuerySeries", storm_samples)
    s = r.series[0]
    check(s.name == "fabric_pfc_pause_frames_total" and s.kind == telemetry_pb2.SERIES_KIND_COUNTER,
          f"series {s.name} kind {s.kind}")
    check(len(points) >= 5, f"{len(points)} samples in 30 s")
    check(all(a.time_unix_nano < b.time_unix_nano for a, b in zip(points, points[1:])),
          "samples oldest first")
    expression = ('peer(rate(fabric_pfc_pause_frames_total{switch!="", direction="rx", '
                  'priority="3"}[3s]) > 2000)')
    r = stub.QuerySeries(pb.QuerySeriesRequest(query=expression), timeout=timeout)
    check(r.query_type == "expression", f"expression read as {r.query_type}")
    found = [{l.name: l.value for l in x.labels} for x in r.series]
    check(any(f.get("host") == "gpu-node-003" and f.get("device") == "mlx5_2" for f in found),
          f"peer() of the storming port: {found}")
    check(all(len(x.points) == 1 and x.points[0].value > 2000 for x in r.series),
          "one point per element, above 2000/s")
    r = stub.QuerySeries(pb.QuerySeriesRequest(query='{switch="leaf-r2"}', limit=3), timeout=timeout)
    check(r.truncated and r.matched > 3 and len(r.series) == 3,
          f"limit 3 of {{switch=\"leaf-r2\"}}: truncated {r.truncated}, matched {r.matched}")
    try:
        stub.QuerySeries(pb.QuerySeriesRequest(query="rat(x[1m])"), timeout=timeout)
        fail("a misspelt function was accepted")
    except grpc.RpcError as e:
        check(e.code() == grpc.StatusCode.INVALID_ARGUMENT and e.details().startswith("1:1: unknown function 'rat'"),
              f"parse error: {e.code()} {e.details()}")
    print(f"QuerySeries: selector with {len(points)} samples, expression naming "
          f"{[f.get('host') + '/' + f.get('device', '') for f in found if 'host' in f]}, truncation, "
          "INVALID_ARGUMENT with line:column")

    # ---- Topology ----
    topo = stub.Topology(pb.TopologyRequest(), timeout=timeout)
    check(topo.file == args.topology, f"topology file {topo.file!r}")
    hosts = {h.name: h for h in topo.hosts}
    check(len(hosts) == args.hosts and "gpu-node-003" in hosts, f"hosts {sorted(hosts)}")
    nic = [n for n in hosts["gpu-node-003"].nics if n.device == "mlx5_2"]
    check(nic and nic[0].rail == 2 and getattr(nic[0], "switch") == "leaf-r2",
          f"gpu-node-003/mlx5_2: {nic}")
    names = {s.name for s in topo.switches}
    check({"leaf-r2", "spine-0", "spine-1"} <= names, f"switches {sorted(names)}")
    check(any(j.name == "train" and len(j.hosts) == args.hosts for j in topo.jobs),
          f"jobs {[(j.name, list(j.hosts)) for j in topo.jobs]}")
    print(f"Topology: {len(hosts)} hosts, {len(names)} switches, jobs {[j.name for j in topo.jobs]}")

    # ---- ListPlaybooks ----
    playbooks = {p.name: p for p in stub.ListPlaybooks(pb.ListPlaybooksRequest(), timeout=timeout).playbooks}
    p = playbooks.get("pfc_storm")
    check(p is not None, f"no pfc_storm among {sorted(playbooks)}")
    check(p.firing >= 1 and p.enabled and p.severity == pb.SEVERITY_CRITICAL, f"pfc_storm: {p.firing} firing")
    check("fabric_pfc_pause_frames_total" in p.canonical_condition and p.condition and p.source,
          "pfc_storm's condition and source")
    check("pfc_pause_relay" in p.explains, f"pfc_storm explains {list(p.explains)}")
    print(f"ListPlaybooks: {len(playbooks)} playbooks; pfc_storm firing {p.firing}")

    # ---- Bad arguments ----
    for bad, words in ((pb.DiagnosisFilter(states=[7]), "filter.states"),
                       (pb.DiagnosisFilter(playbooks=["pfc_strom"]), "no playbook \"pfc_strom\"")):
        try:
            stub.ListDiagnoses(pb.ListDiagnosesRequest(filter=bad), timeout=timeout)
            fail(f"filter {bad} was accepted")
        except grpc.RpcError as e:
            check(e.code() == grpc.StatusCode.INVALID_ARGUMENT and words in e.details(),
                  f"bad filter: {e.code()} {e.details()}")
    print("INVALID_ARGUMENT for an unknown state and a misspelt playbook")

    # ---- Server reflection, as grpcurl uses it ----
    reflection = reflection_pb2_grpc.ServerReflectionStub(channel)
    requests = [reflection_pb2.ServerReflectionRequest(list_services=""),
                reflection_pb2.ServerReflectionRequest(file_containing_symbol="railwatch.v1.Query")]
    responses = list(reflection.ServerReflectionInfo(iter(requests), timeout=timeout))
    services = {s.name for s in responses[0].list_services_response.service}
    check({"railwatch.v1.Query", "railwatch.v1.Ingest"} <= services, f"reflection lists {sorted(services)}")
    files = [descriptor_pb2.FileDescriptorProto.FromString(b)
             for b in responses[1].file_descriptor_response.file_descriptor_proto]
    query_file = [f for f in files if f.name == "railwatch/v1/query.proto"]
    check(query_file and "Query" in [s.name for s in query_file[0].service],
          f"file containing railwatch.v1.Query: {[f.name for f in files]}")
    methods = [m.name for m in query_file[0].service[0].method]
    check("WatchDiagnoses" in methods and "QuerySeries" in methods, f"methods {methods}")
    print(f"reflection: services {sorted(services)}; railwatch.v1.Query has {len(methods)} methods")
    print("query_client: every check held")


if __name__ == "__main__":
    main()
