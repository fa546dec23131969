// ListDiagnoses (each filter field, limit, order), GetDiagnosis, ListPlaybooks, Topology and
// ListAgents through a real gRPC server and the generated stub.
#include <algorithm>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "query_test_server.h"

namespace railwatch::testing {
namespace query_diagnoses_test {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::UnorderedElementsAre;

std::vector<std::string> Playbooks(const v1::ListDiagnosesResponse& r) {
  std::vector<std::string> out;
  for (const v1::Diagnosis& d : r.diagnoses()) out.push_back(d.playbook());
  return out;
}

class QueryDiagnosesTest : public ::testing::Test {
 protected:
  void SetUp() override { server_.RaiseThree(); }

  v1::ListDiagnosesResponse List(const v1::DiagnosisFilter& filter, uint32_t limit = 0,
                                 grpc::Status* status = nullptr) {
    v1::ListDiagnosesRequest req;
    *req.mutable_filter() = filter;
    req.set_limit(limit);
    v1::ListDiagnosesResponse resp;
    grpc::ClientContext ctx;
    grpc::Status s = server_.stub().ListDiagnoses(&ctx, req, &resp);
    if (status != nullptr) {
      *status = s;
    } else {
      EXPECT_TRUE(s.ok()) << s.error_message();
    }
    return resp;
  }

  // Lets the link flap's window pass: its diagnosis resolves; the others stay.
  void ResolveLinkFlap() {
    for (int i = 0; i < 65; ++i) {
      server_.Tick({{server_.link_downed, 1}, {server_.relay, 1000 + 200.0 * i},
                    {server_.carrier, 2 + i}});
    }
  }

  QueryTestServer server_;
};

TEST_F(QueryDiagnosesTest, NoFilterListsAllNewestFirst) {
  v1::ListDiagnosesResponse r = List({});
  EXPECT_THAT(Playbooks(r), ElementsAre("peer_flap", "switch_relay", "link_flap"));
  for (int i = 1; i < r.diagnoses_size(); ++i) {
    EXPECT_GT(r.diagnoses(i - 1).active_since_unix_nano(), r.diagnoses(i).active_since_unix_nano());
  }
}

TEST_F(QueryDiagnosesTest, FilterByState) {
  v1::DiagnosisFilter f;
  f.add_states(v1::DIAGNOSIS_STATE_PENDING);
  EXPECT_THAT(Playbooks(List(f)), ElementsAre("switch_relay"));
  f.clear_states();
  f.add_states(v1::DIAGNOSIS_STATE_FIRING);
  EXPECT_THAT(Playbooks(List(f)), ElementsAre("peer_flap", "link_flap"));
  f.add_states(v1::DIAGNOSIS_STATE_PENDING);
  EXPECT_EQ(List(f).diagnoses_size(), 3);
  f.clear_states();
  f.add_states(v1::DIAGNOSIS_STATE_RESOLVED);
  EXPECT_EQ(List(f).diagnoses_size(), 0);
  ResolveLinkFlap();
  EXPECT_THAT(Playbooks(List(f)), ElementsAre("link_flap"));
}

TEST_F(QueryDiagnosesTest, FilterBySeverityAndPlaybook) {
  v1::DiagnosisFilter f;
  f.add_severities(v1::SEVERITY_CRITICAL);
  f.add_severities(v1::SEVERITY_INFO);
  EXPECT_THAT(Playbooks(List(f)), ElementsAre("peer_flap", "link_flap"));
  f.clear_severities();
  f.add_severities(v1::SEVERITY_WARNING);
  EXPECT_THAT(Playbooks(List(f)), ElementsAre("switch_relay"));
  f.clear_severities();
  f.add_playbooks("link_flap");
  f.add_playbooks("peer_flap");
  EXPECT_THAT(Playbooks(List(f)), ElementsAre("peer_flap", "link_flap"));
}

TEST_F(QueryDiagnosesTest, FilterByHostMatchesHostOrPeerHost) {
  v1::DiagnosisFilter f;
  f.set_host("gpu-node-001");
  EXPECT_THAT(Playbooks(List(f)), ElementsAre("link_flap"));
  f.set_host("gpu-node-002");
  EXPECT_THAT(Playbooks(List(f)), ElementsAre("peer_flap"));
  f.set_host("gpu-node-999");
  EXPECT_EQ(List(f).diagnoses_size(), 0);
}

TEST_F(QueryDiagnosesTest, FilterBySwitchMatchesSwitchOrLeaf) {
  v1::DiagnosisFilter f;
  f.set_switch_("leaf-1");
  EXPECT_THAT(Playbooks(List(f)), ElementsAre("peer_flap", "switch_relay"));
  f.set_switch_("spine-0");
  EXPECT_EQ(List(f).diagnoses_size(), 0);
}

TEST_F(QueryDiagnosesTest, FilterBySinceKeepsActiveAndRecentlyResolved) {
  const int64_t before_resolve = server_.clock.NowNanos();
  ResolveLinkFlap();
  v1::DiagnosisFilter f;
  f.set_since_unix_nano(before_resolve);
  EXPECT_THAT(Playbooks(List(f)), UnorderedElementsAre("peer_flap", "switch_relay", "link_flap"));
  f.set_since_unix_nano(server_.clock.NowNanos() + 1);
  EXPECT_THAT(Playbooks(List(f)), UnorderedElementsAre("peer_flap", "switch_relay"))
      << "a diagnosis resolved before `since` is left out; active ones stay";
}

TEST_F(QueryDiagnosesTest, FieldsCombine) {
  v1::DiagnosisFilter f;
  f.set_switch_("leaf-1");
  f.add_states(v1::DIAGNOSIS_STATE_FIRING);
  EXPECT_THAT(Playbooks(List(f)), ElementsAre("peer_flap"));
}

TEST_F(QueryDiagnosesTest, LimitKeepsTheNewest) {
  EXPECT_THAT(Playbooks(List({}, 2)), ElementsAre("peer_flap", "switch_relay"));
  EXPECT_THAT(Playbooks(List({}, 1)), ElementsAre("peer_flap"));
  EXPECT_EQ(List({}, 10).diagnoses_size(), 3);
}

TEST_F(QueryDiagnosesTest, BadFiltersAreInvalidArgument) {
  auto expect_invalid = [&](const v1::DiagnosisFilter& f, const std::string& words) {
    grpc::Status s;
    List(f, 0, &s);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << words;
    EXPECT_THAT(s.error_message(), HasSubstr(words));
  };
  v1::DiagnosisFilter f;
  f.add_states(static_cast<v1::DiagnosisState>(7));
  expect_invalid(f, "filter.states: 7 is not a diagnosis state");
  f.Clear();
  f.add_states(v1::DIAGNOSIS_STATE_UNSPECIFIED);
  expect_invalid(f, "filter.states: 0");
  f.Clear();
  f.add_severities(static_cast<v1::Severity>(9));
  expect_invalid(f, "filter.severities: 9 is not a severity");
  f.Clear();
  f.set_since_unix_nano(-5);
  expect_invalid(f, "filter.since_unix_nano: -5 is negative");
  f.Clear();
  f.add_playbooks("link_flapp");
  expect_invalid(f, "no playbook \"link_flapp\" is loaded (loaded: link_flap, switch_relay, "
                    "peer_flap)");
}

TEST_F(QueryDiagnosesTest, GetDiagnosisHasFullEvidenceAndNotFoundOtherwise) {
  v1::GetDiagnosisRequest req;
  req.set_id(server_.IdOf("link_flap"));
  v1::Diagnosis d;
  {
    grpc::ClientContext ctx;
    ASSERT_TRUE(server_.stub().GetDiagnosis(&ctx, req, &d).ok());
  }
  EXPECT_EQ(d.playbook(), "link_flap");
  EXPECT_EQ(d.state(), v1::DIAGNOSIS_STATE_FIRING);
  ASSERT_EQ(d.evidence_size(), 1);
  EXPECT_THAT(d.evidence(0).series(), HasSubstr("fabric_rdma_link_downed_total"));
  EXPECT_GE(d.evidence(0).points_size(), 2);
  EXPECT_EQ(d.blast_radius().jobs_size(), 1) << "the topology's job runs on gpu-node-001";

  req.set_id("no-such-id");
  grpc::ClientContext ctx;
  grpc::Status s = server_.stub().GetDiagnosis(&ctx, req, &d);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_THAT(s.error_message(), HasSubstr("no-such-id"));
}

TEST_F(QueryDiagnosesTest, ListPlaybooksWithActiveCounts) {
  v1::ListPlaybooksResponse r;
  grpc::ClientContext ctx;
  ASSERT_TRUE(server_.stub().ListPlaybooks(&ctx, {}, &r).ok());
  ASSERT_EQ(r.playbooks_size(), 3);
  const v1::PlaybookInfo& flap = r.playbooks(0);
  EXPECT_EQ(flap.name(), "link_flap");
  EXPECT_EQ(flap.severity(), v1::SEVERITY_CRITICAL);
  EXPECT_TRUE(flap.enabled());
  EXPECT_EQ(flap.condition(), "increase(fabric_rdma_link_downed_total[1m]) > 0");
  EXPECT_EQ(flap.canonical_condition(), "increase(fabric_rdma_link_downed_total[1m]) > 0");
  EXPECT_THAT(flap.culprit(), ElementsAre("host", "device", "port"));
  EXPECT_THAT(flap.explains(), ElementsAre("switch_relay"));
  EXPECT_THAT(flap.tags(), ElementsAre("link"));
  EXPECT_EQ(flap.runbook(), "https://runbooks.example/link-flap");
  EXPECT_THAT(flap.source(), HasSubstr("query-test.yaml:2:"));
  EXPECT_EQ(flap.firing(), 1u);
  EXPECT_EQ(flap.pending(), 0u);
  const v1::PlaybookInfo& relay = r.playbooks(1);
  EXPECT_EQ(relay.name(), "switch_relay");
  EXPECT_DOUBLE_EQ(relay.for_seconds(), 10);
  EXPECT_DOUBLE_EQ(relay.keep_firing_for_seconds(), 30);
  EXPECT_EQ(relay.pending(), 1u);
  EXPECT_EQ(relay.firing(), 0u);
}

TEST_F(QueryDiagnosesTest, TopologyAndJobs) {
  v1::TopologyResponse r;
  grpc::ClientContext ctx;
  ASSERT_TRUE(server_.stub().Topology(&ctx, {}, &r).ok());
  EXPECT_EQ(r.file(), "topology.yaml");
  ASSERT_EQ(r.hosts_size(), 2);
  EXPECT_EQ(r.hosts(0).name(), "gpu-node-001");
  ASSERT_EQ(r.hosts(0).nics_size(), 1);
  EXPECT_EQ(r.hosts(0).nics(0).device(), "mlx5_0");
  EXPECT_EQ(r.hosts(0).nics(0).switch_(), "leaf-1");
  EXPECT_EQ(r.hosts(0).nics(0).switch_port(), "Ethernet0");
  EXPECT_EQ(r.hosts(0).nics(0).rail(), 0);
  ASSERT_EQ(r.switches_size(), 2);
  EXPECT_EQ(r.switches(0).name(), "leaf-1");
  EXPECT_EQ(r.switches(0).dialect(), "sonic");
  ASSERT_EQ(r.switches(0).links_size(), 1);
  EXPECT_EQ(r.switches(0).links(0).peer(), "spine-0");
  ASSERT_EQ(r.jobs_size(), 1);
  EXPECT_EQ(r.jobs(0).name(), "train");
  EXPECT_EQ(r.jobs(0).source(), "topology");
  EXPECT_EQ(r.jobs(0).gpus(), 16u);
  EXPECT_THAT(r.jobs(0).hosts(), ElementsAre("gpu-node-001", "gpu-node-002"));
}

}  // namespace
}  // namespace railwatch::testing
