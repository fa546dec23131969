// The real-world NCCL_DEBUG samples (tests/fixtures/logs, copied verbatim from
// shared/realworld): every field CATALOGUE.md lists for each one.

#include <set>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/logs/log_test_util.h"

namespace railwatch::logs::testing {
namespace nccl_samples_test {

using ::testing::ElementsAre;

TEST(NcclSamples, V2114SocketTwoNodesWithAllReduceTable) {
  Parsed p = ParseFixture("nccl_01_v2.11.4_net_socket_2node_allreduce_perf.log");
  EXPECT_EQ(p.stats.lines, 77u);
  EXPECT_EQ(p.stats.malformed, 0u);
  // The ssh warning and the trailing shell prompt are the only lines nobody understands.
  EXPECT_EQ(p.stats.unknown, 2u);

  const LogEvent& version = p.One("nccl.version");
  EXPECT_EQ(F(version, "version"), "2.11.4");
  EXPECT_EQ(F(version, "cuda"), "11.4");
  EXPECT_EQ(F(version, "host"), "<absent>");  // rank 0 printf()s it without the prefix

  auto inits = p.OfKind("nccl.comm_init");
  ASSERT_EQ(inits.size(), 2u);
  EXPECT_EQ(F(*inits[0], "host"), "ip-10-0-139-244");
  EXPECT_EQ(F(*inits[0], "pid"), "1465");
  EXPECT_EQ(F(*inits[0], "rank"), "0");
  EXPECT_EQ(F(*inits[0], "nranks"), "2");
  EXPECT_EQ(F(*inits[0], "cuda_dev"), "0");
  EXPECT_EQ(F(*inits[0], "bus_id"), "1e0");
  EXPECT_EQ(F(*inits[0], "comm"), "0x7f85a4000fa0");
  EXPECT_EQ(F(*inits[0], "phase"), "COMPLETE");
  // Rank 1's Init COMPLETE comes after the table header and must not break the table.
  EXPECT_EQ(F(*inits[1], "host"), "ip-10-0-142-242");
  EXPECT_EQ(F(*inits[1], "pid"), "46");
  EXPECT_EQ(F(*inits[1], "rank"), "1");
  EXPECT_EQ(F(*inits[1], "comm"), "0x7f7dec000fa0");
  EXPECT_EQ(inits[1]->line, 49);

  auto nets = p.OfKind("nccl.net");
  ASSERT_EQ(nets.size(), 2u);
  EXPECT_EQ(F(*nets[0], "transport"), "Socket");
  EXPECT_EQ(F(*nets[0], "interface"), "eth0");
  EXPECT_EQ(F(*nets[0], "address"), "10.0.139.244");
  EXPECT_EQ(F(*nets[1], "address"), "10.0.142.242");
  auto boots = p.OfKind("nccl.bootstrap");
  ASSERT_EQ(boots.size(), 2u);
  EXPECT_EQ(F(*boots[0], "interface"), "eth0");
  EXPECT_EQ(F(*boots[0], "address"), "10.0.139.244");
  EXPECT_EQ(F(*boots[1], "address"), "10.0.142.242");
  for (const LogEvent* e : p.OfKind("nccl.network")) EXPECT_EQ(F(*e, "network"), "Socket");

  // "Failed to open libibverbs.so[.1]": no IB on either host.
  auto no_ib = p.OfKind("nccl.no_device");
  ASSERT_EQ(no_ib.size(), 2u);
  EXPECT_EQ(F(*no_ib[0], "transport"), "IB");
  EXPECT_EQ(F(*no_ib[1], "host"), "ip-10-0-142-242");

  auto plugins = p.OfKind("nccl.net_plugin");
  ASSERT_EQ(plugins.size(), 2u);
  EXPECT_EQ(F(*plugins[0], "result"), "load_failed");
  EXPECT_EQ(F(*plugins[1], "result"), "internal");

  const LogEvent& channels = *p.OfKind("nccl.channels").at(0);
  EXPECT_EQ(F(channels, "coll_channels"), "2");
  EXPECT_EQ(F(channels, "p2p_channels"), "2");
  EXPECT_EQ(F(channels, "p2p_per_peer"), "1");
  EXPECT_EQ(F(*p.OfKind("nccl.ring").at(0), "nchannels"), "02");
  const LogEvent& threads = *p.OfKind("nccl.socket_threads").at(0);
  EXPECT_EQ(F(threads, "threads"), "2");
  EXPECT_EQ(F(threads, "sockets_per_thread"), "8");
  auto links = p.OfKind("nccl.channel");
  EXPECT_EQ(links.size(), 8u);
  EXPECT_EQ(F(*links[0], "via"), "NET/Socket/0");
  EXPECT_EQ(F(*links[0], "from_id"), "1e0");

  auto rows = p.OfKind("nccltests.result");
  ASSERT_EQ(rows.size(), 25u);
  EXPECT_EQ(F(*rows.front(), "size_bytes"), "8");
  EXPECT_EQ(F(*rows.back(), "size_bytes"), "134217728");
  EXPECT_EQ(F(*rows.back(), "oop_time_us"), "183560");  // integer once it is large
  EXPECT_EQ(F(*rows.back(), "type"), "float");
  EXPECT_EQ(F(*rows.back(), "redop"), "sum");
  EXPECT_EQ(F(*rows.back(), "oop_error"), "0e+00");
  const LogEvent& summary = p.One("nccltests.summary");
  EXPECT_EQ(F(summary, "avg_busbw_gbps"), "0.300212");
  EXPECT_EQ(F(summary, "max_busbw_gbps"), "0.82");
  EXPECT_EQ(F(summary, "rows"), "25");
  EXPECT_EQ(F(summary, "out_of_bounds"), "0");
  EXPECT_EQ(F(summary, "out_of_bounds_status"), "OK");
  EXPECT_EQ(F(summary, "test"), "all_reduce_perf");

  auto devices = p.OfKind("nccltests.device");
  ASSERT_EQ(devices.size(), 2u);
  EXPECT_EQ(F(*devices[1], "pid"), "46");
  EXPECT_EQ(F(*devices[1], "host"), "ip-10-0-142-242");
  EXPECT_EQ(F(*devices[1], "gpu"), "NVIDIA A10G");
}

TEST(NcclSamples, Status12Vendor129WithRoceGids) {
  Parsed p = ParseFixture("nccl_03_ib_status12_vendor129_roce_gid_ipv6.log");
  EXPECT_EQ(p.stats.malformed, 0u);
  EXPECT_EQ(p.stats.unknown, 0u);
  auto errs = p.OfKind("nccl.ib_completion_error");
  ASSERT_EQ(errs.size(), 3u);
  for (const LogEvent* e : errs) {
    EXPECT_EQ(F(*e, "host"), "kp-ddp-worker-0");
    EXPECT_EQ(F(*e, "pid"), "3468");
    EXPECT_EQ(F(*e, "tid"), "3905");
    EXPECT_EQ(F(*e, "cuda_dev"), "4");
    EXPECT_EQ(F(*e, "peer_address"), "10.216.210.236");
    EXPECT_EQ(F(*e, "status"), "12");
    EXPECT_EQ(F(*e, "status_name"), "IBV_WC_RETRY_EXC_ERR");
    EXPECT_EQ(F(*e, "vendor_err"), "129");
    EXPECT_EQ(F(*e, "vendor_err_hex"), "0x81");
    EXPECT_EQ(F(*e, "direction"), "Recv");
    EXPECT_EQ(F(*e, "len"), "0");
    EXPECT_EQ(F(*e, "format"), "status_kv");
    EXPECT_EQ(F(*e, "location"), "ib_plugin.c:1615");
  }
  EXPECT_EQ(F(*errs[0], "peer_port"), "54862");
  EXPECT_EQ(F(*errs[1], "peer_port"), "54862");
  EXPECT_EQ(F(*errs[2], "peer_port"), "49892");
  EXPECT_EQ(F(*errs[0], "opcode"), "0");
  EXPECT_EQ(F(*errs[1], "opcode"), "32616");
  // Two different local GIDs: two rails. "remoteGids" is glued to its GID in the log.
  EXPECT_EQ(F(*errs[0], "local_gid"), "fd00:1148:9000:5000:4:200:3:ff22");
  EXPECT_EQ(F(*errs[0], "remote_gids"), "fd00:1148:9000:5000:4:200:3:ff1f");
  EXPECT_EQ(F(*errs[1], "local_gid"), "fd00:1148:9000:5000:4:200:3:ff21");
  EXPECT_EQ(F(*errs[1], "remote_gids"), "fd00:1148:9000:5000:4:200:3:ff20");
  EXPECT_EQ(F(*errs[2], "local_gid"), "fd00:1148:9000:5000:4:200:3:ff22");

  auto chains = p.OfKind("nccl.error_chain");
  ASSERT_EQ(chains.size(), 3u);
  EXPECT_EQ(F(*chains[0], "first_error_kind"), "nccl.ib_completion_error");
  EXPECT_EQ(F(*chains[0], "first_error_line"), "1");
  EXPECT_EQ(F(*chains[0], "code"), "6");
  EXPECT_EQ(F(*chains[0], "code_name"), "ncclRemoteError");
  EXPECT_EQ(F(*chains[0], "thread"), "Progress Thread");
  EXPECT_EQ(F(*chains[0], "depth"), "3");
  EXPECT_EQ(F(*chains[0], "chain"),
            "transport/net.cc:1302 -> 6 | proxy.cc:698 -> 6 | proxy.cc:878 -> 6");
  // The excerpt stops inside the third chain: it is emitted at the end, without a thread.
  EXPECT_EQ(F(*chains[2], "first_error_line"), "11");
  EXPECT_EQ(F(*chains[2], "depth"), "2");
  EXPECT_EQ(F(*chains[2], "thread"), "<absent>");
}

TEST(NcclSamples, Error4Vendor81LinkLocalPeers) {
  Parsed p = ParseFixture("nccl_05_ib_error4_vendor81_linklocal_gid_h100.log");
  EXPECT_EQ(p.stats.malformed, 0u);
  auto errs = p.OfKind("nccl.ib_completion_error");
  ASSERT_EQ(errs.size(), 2u);
  EXPECT_EQ(F(*errs[0], "host"), "H100-2");
  EXPECT_EQ(F(*errs[0], "pid"), "19989");
  EXPECT_EQ(F(*errs[0], "tid"), "20082");
  EXPECT_EQ(F(*errs[0], "cuda_dev"), "1");
  EXPECT_EQ(F(*errs[0], "peer_address"), "fe80::966d:ae03:8b:df78%ib0");
  EXPECT_EQ(F(*errs[0], "peer_port"), "53249");
  EXPECT_EQ(F(*errs[1], "host"), "H100-1");
  EXPECT_EQ(F(*errs[1], "pid"), "9821");
  EXPECT_EQ(F(*errs[1], "tid"), "9920");
  EXPECT_EQ(F(*errs[1], "peer_address"), "fe80::966d:ae03:8b:df50%ib0");
  EXPECT_EQ(F(*errs[1], "peer_port"), "44413");
  for (const LogEvent* e : errs) {
    EXPECT_EQ(F(*e, "status"), "4");
    EXPECT_EQ(F(*e, "status_name"), "IBV_WC_LOC_PROT_ERR");
    EXPECT_EQ(F(*e, "vendor_err"), "81");
    EXPECT_EQ(F(*e, "vendor_err_hex"), "0x51");
    EXPECT_EQ(F(*e, "direction"), "Send");
    EXPECT_EQ(F(*e, "format"), "error_with_peer");
    EXPECT_EQ(F(*e, "location"), "transport/net_ib.cc:1295");
  }
  EXPECT_EQ(F(*errs[0], "opcode"), "32564");
  EXPECT_EQ(F(*errs[0], "len"), "32564");
  auto chains = p.OfKind("nccl.error_chain");
  ASSERT_EQ(chains.size(), 2u);
  EXPECT_EQ(F(*chains[0], "thread"), "Proxy Thread");
  EXPECT_EQ(F(*chains[1], "host"), "H100-1");
}

TEST(NcclSamples, LegacyFormatWithoutPeerAndTruncatedHost) {
  Parsed p = ParseFixture("nccl_08_ib_error12_no_peer_legacy_format.log");
  const LogEvent& e = p.One("nccl.ib_completion_error");
  EXPECT_EQ(F(e, "host"), "-worker-1");
  EXPECT_EQ(F(e, "pid"), "946");
  EXPECT_EQ(F(e, "tid"), "988");
  EXPECT_EQ(F(e, "cuda_dev"), "0");
  EXPECT_EQ(F(e, "status"), "12");
  EXPECT_EQ(F(e, "opcode"), "1");
  EXPECT_EQ(F(e, "len"), "0");
  EXPECT_EQ(F(e, "vendor_err"), "129");
  EXPECT_EQ(F(e, "peer_address"), "<absent>");
  EXPECT_EQ(F(e, "direction"), "<absent>");
  EXPECT_EQ(F(e, "format"), "error_no_peer");
  EXPECT_EQ(F(e, "location"), "transport/net_ib.cc:839");
  EXPECT_EQ(p.stats.recognized, 1u);
}

TEST(NcclSamples, V278RoceInitAndCreateCqFailure) {
  Parsed p = ParseFixture("nccl_10_v2.7.8_roce_init_ibv_create_cq_failed.log");
  EXPECT_EQ(p.stats.malformed, 0u);
  EXPECT_EQ(p.stats.unknown, 0u);
  const LogEvent& version = p.One("nccl.version");
  EXPECT_EQ(F(version, "version"), "2.7.8");
  EXPECT_EQ(F(version, "cuda"), "11.0");
  const LogEvent& net = p.One("nccl.net");
  EXPECT_EQ(F(net, "host"), "spark01");
  EXPECT_EQ(F(net, "pid"), "2683");
  EXPECT_EQ(F(net, "transport"), "IB");
  EXPECT_EQ(F(net, "devices"), "mlx5_1:1/RoCE");
  EXPECT_EQ(F(net, "device_names"), "mlx5_1");
  EXPECT_EQ(F(net, "ports"), "1");
  EXPECT_EQ(F(net, "link_layers"), "RoCE");
  // The older " ; OOB" spelling.
  EXPECT_EQ(F(net, "oob_interface"), "ens192f1");
  EXPECT_EQ(F(net, "oob_address"), "10.150.178.134");
  const LogEvent& boot = p.One("nccl.bootstrap");
  EXPECT_EQ(F(boot, "interface"), "ens192f1");  // "[0]ens192f1:..." (<= 2.10)
  EXPECT_EQ(F(boot, "address"), "10.150.178.134");
  EXPECT_EQ(F(*p.OfKind("nccl.ring").at(0), "nchannels"), "02");
  auto links = p.OfKind("nccl.channel");
  ASSERT_EQ(links.size(), 2u);
  EXPECT_EQ(F(*links[0], "from_rank"), "1");
  EXPECT_EQ(F(*links[0], "from_id"), "3000");
  EXPECT_EQ(F(*links[0], "to_rank"), "0");
  EXPECT_EQ(F(*links[0], "to_id"), "3000");
  EXPECT_EQ(F(*links[0], "direction"), "receive");
  EXPECT_EQ(F(*links[0], "net"), "IB");
  EXPECT_EQ(F(*links[0], "net_dev"), "0");
  const LogEvent& failed = p.One("nccl.call_failed");
  EXPECT_EQ(F(failed, "call"), "ibv_create_cq");
  EXPECT_EQ(F(failed, "location"), "misc/ibvwrap.cc:268");
  EXPECT_EQ(F(failed, "errno"), "<absent>");
  EXPECT_EQ(failed.line, 13);
}

TEST(NcclSamples, V256LauncherPrefixAndModifyQpInvalidArgument) {
  Parsed p = ParseFixture("nccl_16_v2.5.6_mpi_rank_prefix_ibv_modify_qp_invalid_argument.log");
  EXPECT_EQ(p.stats.malformed, 0u);
  EXPECT_EQ(p.stats.unknown, 0u);
  EXPECT_EQ(p.stats.blank, 1u);  // the bare "[155]" line
  for (const LogEvent& e : p.events) {
    EXPECT_EQ(F(e, "host"), "crow-ib-new-nccl-256-info-19") << e.kind;
    EXPECT_EQ(F(e, "pid"), "5330");
    EXPECT_EQ(F(e, "tid"), "7970");
    EXPECT_EQ(F(e, "cuda_dev"), "3");
    EXPECT_EQ(F(e, "launcher_tag"), "155");
  }
  auto links = p.OfKind("nccl.channel");
  ASSERT_EQ(links.size(), 4u);
  EXPECT_EQ(F(*links[0], "via"), "P2P/IPC");
  EXPECT_EQ(F(*links[0], "from_rank"), "5");
  EXPECT_EQ(F(*links[0], "from_id"), "3d000");
  EXPECT_EQ(F(*links[2], "from_rank"), "2");
  EXPECT_EQ(F(*links[2], "from_id"), "b2000");
  EXPECT_EQ(F(*links[2], "via"), "NET/IB/3");
  EXPECT_EQ(F(*links[2], "net_dev"), "3");
  EXPECT_EQ(F(*links[2], "direction"), "receive");
  const LogEvent& failed = p.One("nccl.call_failed");
  EXPECT_EQ(F(failed, "call"), "ibv_modify_qp");
  EXPECT_EQ(F(failed, "error"), "Invalid argument");
  EXPECT_EQ(F(failed, "errno"), "22");
  EXPECT_EQ(F(failed, "errno_name"), "EINVAL");
  const LogEvent& chain = p.One("nccl.error_chain");
  EXPECT_EQ(F(chain, "first_error_kind"), "nccl.call_failed");
  EXPECT_EQ(F(chain, "code"), "2");
  EXPECT_EQ(F(chain, "code_name"), "ncclSystemError");
  EXPECT_EQ(F(chain, "depth"), "7");
  EXPECT_EQ(F(chain, "origin"), "transport/net_ib.cc:368");
  EXPECT_THAT(F(chain, "chain"), ::testing::EndsWith("init.cc:617 -> 2 | init.cc:732 -> 2"));
}

TEST(NcclSamples, V2223InitStartWithNodesAndLocalRanks) {
  Parsed p = ParseFixture("nccl_19_v2.22.3_roce_init_start_nnodes_localranks_kubevirt.log");
  EXPECT_EQ(p.stats.malformed, 0u);
  const LogEvent& version = p.One("nccl.version");
  EXPECT_EQ(F(version, "version"), "2.22.3");
  EXPECT_EQ(F(version, "cuda"), "12.5");
  EXPECT_EQ(F(version, "host"), "node-001-b");  // >= 2.22 prints it with the prefix
  EXPECT_EQ(F(version, "pid"), "19447");
  auto inits = p.OfKind("nccl.comm_init");
  ASSERT_EQ(inits.size(), 2u);
  EXPECT_EQ(F(*inits[0], "rank"), "3");
  EXPECT_EQ(F(*inits[0], "cuda_dev"), "1");
  EXPECT_EQ(F(*inits[0], "bus_id"), "8000");
  EXPECT_EQ(F(*inits[1], "rank"), "2");
  EXPECT_EQ(F(*inits[1], "bus_id"), "7000");
  for (const LogEvent* e : inits) {
    EXPECT_EQ(F(*e, "nranks"), "4");
    EXPECT_EQ(F(*e, "comm_id"), "0xe12be0f58c2ac916");
    EXPECT_EQ(F(*e, "phase"), "START");
    EXPECT_EQ(F(*e, "api"), "ncclCommInitRank");
  }
  const LogEvent& info = p.One("nccl.comm_info");
  EXPECT_EQ(F(info, "nnodes"), "2");
  EXPECT_EQ(F(info, "local_ranks"), "2");
  EXPECT_EQ(F(info, "local_rank"), "1");
  EXPECT_EQ(F(info, "nranks"), "4");
  const LogEvent& net = p.One("nccl.net");
  EXPECT_EQ(F(net, "device_names"), "mlx5_0,mlx5_1");
  EXPECT_EQ(F(net, "ports"), "1,1");
  EXPECT_EQ(F(net, "link_layers"), "RoCE");
  EXPECT_EQ(F(net, "relaxed_ordering"), "1");
  EXPECT_EQ(F(net, "oob_interface"), "net2");
  EXPECT_EQ(F(net, "oob_address"), "10.194.10.5");
  auto env = p.OfKind("nccl.env");
  ASSERT_FALSE(env.empty());
  EXPECT_EQ(F(*env[0], "name"), "NCCL_SOCKET_IFNAME");
  EXPECT_EQ(F(*env[0], "value"), "net2");
}

TEST(NcclSamples, V284OpenMpiTagOutputPrefix) {
  Parsed p = ParseFixture("nccl_21_v2.8.4_openmpi_tag_output_prefix_bond_roce.log");
  EXPECT_EQ(p.stats.unknown, 0u);
  EXPECT_EQ(p.stats.malformed, 0u);
  const LogEvent& version = p.One("nccl.version");
  EXPECT_EQ(F(version, "version"), "2.8.4");
  EXPECT_EQ(F(version, "cuda"), "11.2");
  EXPECT_EQ(F(version, "mpi_rank"), "0");
  std::set<std::string> seen;
  for (const LogEvent* e : p.OfKind("nccl.bootstrap")) {
    seen.insert(F(*e, "mpi_rank") + " " + F(*e, "host") + " " + F(*e, "pid") + " " +
                F(*e, "address"));
  }
  EXPECT_THAT(seen, ElementsAre("0 j66d10267 290 11.158.244.23", "1 j66d10267 291 11.158.244.23",
                                "2 j63g01247 65 11.158.237.10", "3 j63g01247 66 11.158.237.10"));
  for (const LogEvent* e : p.OfKind("nccl.net")) {
    EXPECT_EQ(F(*e, "devices"), "mlx5_bond_0:1/RoCE");
    EXPECT_EQ(F(*e, "link_layers"), "RoCE");
  }
}

TEST(NcclSamples, SixteenRanksInitCompleteAndTimings) {
  Parsed p = ParseFixture("nccl_22_v2.2x_16rank_init_complete_commId_init_timings_tuner.log");
  EXPECT_EQ(p.stats.unknown, 0u);
  EXPECT_EQ(p.stats.malformed, 0u);
  // Local ranks 0-7: pids 222221-222228 drive CUDA devices 0-7.
  std::set<std::string> pid_dev;
  for (const LogEvent* e : p.OfKind("nccl.channels")) {
    pid_dev.insert(F(*e, "pid") + ":" + F(*e, "cuda_dev"));
    EXPECT_EQ(F(*e, "coll_channels"), "16");
    EXPECT_EQ(F(*e, "collnet_channels"), "16");
    EXPECT_EQ(F(*e, "nvls_channels"), "0");
    EXPECT_EQ(F(*e, "p2p_per_peer"), "2");
  }
  EXPECT_THAT(pid_dev, ElementsAre("222221:0", "222222:1", "222223:2", "222224:3", "222225:4",
                                   "222226:5", "222227:6", "222228:7"));
  auto inits = p.OfKind("nccl.comm_init");
  ASSERT_EQ(inits.size(), 2u);
  EXPECT_EQ(F(*inits[0], "rank"), "3");
  EXPECT_EQ(F(*inits[0], "bus_id"), "5d000");
  EXPECT_EQ(F(*inits[1], "rank"), "7");
  EXPECT_EQ(F(*inits[1], "bus_id"), "db000");
  for (const LogEvent* e : inits) {
    EXPECT_EQ(F(*e, "nranks"), "16");
    EXPECT_EQ(F(*e, "comm_id"), "0xde4443395863ef4a");
    EXPECT_EQ(F(*e, "phase"), "COMPLETE");
  }
  auto timings = p.OfKind("nccl.init_timings");
  ASSERT_EQ(timings.size(), 2u);
  EXPECT_EQ(F(*timings[0], "total_s"), "2.17");
  EXPECT_EQ(F(*timings[0], "alloc_s"), "1.56");
  EXPECT_EQ(F(*timings[0], "connections_s"), "0.20");
  EXPECT_EQ(F(*timings[1], "total_s"), "2.18");
  EXPECT_EQ(F(*timings[1], "rank"), "7");
}

TEST(NcclSamples, H800SocketSplitCommWithRemappedDevice) {
  Parsed p = ParseFixture("nccl_25_h800_socket_bootstrapSplit_init_start_nvls.log");
  EXPECT_EQ(p.stats.malformed, 0u);
  EXPECT_EQ(p.stats.unknown, 0u);
  std::set<std::string> pids;
  for (const LogEvent* e : p.OfKind("nccl.network")) {
    EXPECT_EQ(F(*e, "host"), "tj5-sc-ai-h800r-dev01");
    EXPECT_EQ(F(*e, "network"), "Socket");
    pids.insert(F(*e, "pid"));
  }
  EXPECT_THAT(pids, ElementsAre("531", "532", "533", "534"));
  auto splits = p.OfKind("nccl.comm_split");
  ASSERT_EQ(splits.size(), 4u);
  for (const LogEvent* e : splits) {
    EXPECT_EQ(F(*e, "color"), "116666945");
    EXPECT_EQ(F(*e, "nranks"), "4");
  }
  EXPECT_EQ(F(*splits[0], "parent"), "0x56224e876520");
  const LogEvent& init = p.One("nccl.comm_init");
  EXPECT_EQ(F(init, "cuda_dev"), "0");
  EXPECT_EQ(F(init, "nvml_dev"), "4");  // CUDA_VISIBLE_DEVICES remap
  EXPECT_EQ(F(init, "bus_id"), "9a000");
  EXPECT_EQ(F(init, "comm_id"), "0xdf334f4a507dd4c1");
  EXPECT_EQ(F(init, "phase"), "START");
}

}  // namespace
}  // namespace railwatch::logs::testing
