// Kernel messages about NICs and PCIe (logs/kernel_messages.h) on every real sample in
// fixtures/kmsg (../shared/realworld CATALOGUE.md section W: each sample with its facts), the
// /dev/kmsg record format, and the prefixes pasted text comes with.

#include "logs/kernel_messages.h"

#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "support/ttar.h"

namespace railwatch::logs {
namespace kernel_messages_test {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

struct Parsed {
  std::vector<LogEvent> events;
  KernelMessageParser::Stats stats;
  int not_mine = 0;  // lines FeedLine gave back
};

Parsed ParseText(const std::string& text, const std::string& source = "paste") {
  FakeClock clock(absl::FromUnixSeconds(1'742'300'000));  // March 2025
  KernelMessageParser parser(source, clock);
  Parsed p;
  int n = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++n;
    if (!parser.FeedLine(std::string_view(line.data(), line.size()), n, p.events)) ++p.not_mine;
  }
  parser.Flush(p.events);
  p.stats = parser.stats();
  return p;
}

Parsed ParseFixture(const std::string& name) {
  std::ifstream in(testing::FixturePath("kmsg/" + name));
  EXPECT_TRUE(in.good()) << name;
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!text.empty() && text.back() == '\n') text.pop_back();
  return ParseText(text, name);
}

std::vector<LogEvent> OfKind(const Parsed& p, const std::string& kind) {
  std::vector<LogEvent> out;
  for (const LogEvent& e : p.events) {
    if (e.kind == kind) out.push_back(e);
  }
  return out;
}

TEST(KernelMessages, Mlx5HealthCompromisedBlockIsOneEventPerFunction) {
  Parsed p =
      ParseFixture("kmsg_01_mlx5_cx6dx_health_compromised_fw_internal_error_print_health_info.log");
  std::vector<LogEvent> health = OfKind(p, "kernel.nic_health");
  ASSERT_EQ(health.size(), 6u);
  EXPECT_EQ(p.events.size(), 6u);
  EXPECT_EQ(p.not_mine, 0);
  EXPECT_EQ(p.stats.lines, 42u);
  EXPECT_EQ(p.stats.recognized, 42u);
  const LogEvent& first = health[0];
  EXPECT_EQ(first.Value("pci"), "0000:0d:00.0");
  EXPECT_EQ(first.Value("adapter"), "0000:0d:00");
  EXPECT_EQ(first.Value("driver"), "mlx5_core");
  EXPECT_EQ(first.Value("reason"), "miss_count");
  EXPECT_EQ(first.Value("uptime_s"), "445.937186");
  EXPECT_EQ(first.line, 1);
  EXPECT_EQ(first.Value("health_issue"), "firmware internal error");
  EXPECT_EQ(first.Value("fw_severity"), "ERROR");
  EXPECT_EQ(first.Value("fw_severity_level"), "3");
  EXPECT_EQ(first.Value("assert_var"),
            "0x0521945b,0x00000000,0x00000000,0x00000000,0x00000000,0x00000000");
  EXPECT_EQ(first.Value("assert_exit_ptr"), "0x21492f38");
  EXPECT_EQ(first.Value("assert_callra"), "0x2102d5f0");
  EXPECT_EQ(first.Value("fw_ver"), "22.44.1036");
  EXPECT_EQ(first.Value("fw_time"), "1742220438");
  EXPECT_EQ(first.Value("hw_id"), "0x00000212");
  EXPECT_EQ(first.Value("rfr"), "0");
  EXPECT_EQ(first.Value("irisc_index"), "3");
  EXPECT_EQ(first.Value("synd"), "0x1");
  EXPECT_EQ(first.Value("synd_text"), "firmware internal error");
  EXPECT_EQ(first.Value("ext_synd"), "0x8f7a");
  EXPECT_EQ(first.Value("raw_fw_ver"), "0x162c040c");
  EXPECT_EQ(first.fields.back().first, "message");
  EXPECT_THAT(first.raw, HasSubstr("device's health compromised"));
  // .2, .3, .4: the miss count alone; .1 with its own block; .5 alone. One adapter.
  std::vector<std::string> pcis;
  for (const LogEvent& e : health) {
    pcis.push_back(e.Value("pci"));
    EXPECT_EQ(e.Value("adapter"), "0000:0d:00");
  }
  EXPECT_THAT(pcis,
              ::testing::UnorderedElementsAre("0000:0d:00.0", "0000:0d:00.1", "0000:0d:00.2",
                                              "0000:0d:00.3", "0000:0d:00.4", "0000:0d:00.5"));
  for (const LogEvent& e : health) {
    if (e.Value("pci") == "0000:0d:00.1") {
      EXPECT_EQ(e.Value("ext_synd"), "0x8f7a");
      EXPECT_EQ(e.Value("uptime_s"), "447.473192");
    } else if (e.Value("pci") != "0000:0d:00.0") {
      EXPECT_EQ(e.Get("synd"), nullptr) << e.Value("pci");
    }
  }
}

TEST(KernelMessages, QuotedJournalCommandEntryFailures) {
  Parsed p = ParseFixture(
      "kmsg_02_mlx5_cx4_journal_cmd_work_handler_failed_alloc_cmd_entry_email_quoted.log");
  EXPECT_EQ(p.not_mine, 0);
  std::vector<LogEvent> timeouts = OfKind(p, "kernel.nic_command_timeout");
  ASSERT_EQ(timeouts.size(), 2u);
  for (const LogEvent& e : timeouts) {
    EXPECT_EQ(e.Value("reason"), "no_command_entry");
    EXPECT_EQ(e.Value("pci"), "0000:01:00.0");
    EXPECT_EQ(e.Value("host"), "store01");
    EXPECT_EQ(e.Value("func"), "cmd_work_handler");
    EXPECT_NE(e.time_unix_nano, 0);
  }
  // Nov 17 01:12:58 of the year before the clock's March 2025.
  EXPECT_EQ(timeouts[0].time_unix_nano,
            absl::ToUnixNanos(
                absl::FromCivil(absl::CivilSecond(2024, 11, 17, 1, 12, 58), absl::UTCTimeZone())));
  std::vector<LogEvent> info = OfKind(p, "kernel.nic_info");
  ASSERT_EQ(info.size(), 3u);
  EXPECT_EQ(info[0].Value("fw_version"), "12.28.1002");
  EXPECT_EQ(info[1].Value("what"), "pcie_bandwidth");
  EXPECT_EQ(info[1].Value("available_gbps"), "126.016");
  EXPECT_EQ(info[1].Value("link"), "8 GT/s x16");
  EXPECT_EQ(info[2].Value("what"), "module_event");
  EXPECT_EQ(info[2].Value("module"), "0");
  EXPECT_EQ(info[2].Value("module_status"), "Cable plugged");
  std::vector<LogEvent> errors = OfKind(p, "kernel.nic_error");
  ASSERT_EQ(errors.size(), 3u);
  EXPECT_EQ(errors[0].Value("device"), "mlx5_0");
  EXPECT_EQ(errors[0].Value("operation"), "async reg mr");
  EXPECT_EQ(errors[0].Value("errno"), "-11");
  EXPECT_EQ(errors[0].Value("errno_name"), "EAGAIN");
  EXPECT_EQ(errors[1].Value("operation"), "alloc td");
  EXPECT_EQ(errors[1].Value("pci"), "0000:01:00.0");
  EXPECT_EQ(errors[2].Value("device"), "mlx5_0");
  EXPECT_EQ(errors[2].Value("port"), "1");
  EXPECT_EQ(errors[2].Value("pci"), "");  // the ipoib line names no function
  EXPECT_EQ(errors[2].Value("operation"), "ipoib_intf_alloc");
}

TEST(KernelMessages, InsufficientSlotPowerDmesgTWithHost) {
  Parsed p = ParseFixture("kmsg_04_mlx5_insufficient_power_pcie_slot_27W_dmesg_T_host.log");
  ASSERT_EQ(p.events.size(), 1u);
  const LogEvent& e = p.events[0];
  EXPECT_EQ(e.kind, "kernel.pcie_power");
  EXPECT_EQ(e.Value("pci"), "0000:5c:00.0");
  EXPECT_EQ(e.Value("power_w"), "27");
  EXPECT_EQ(e.Value("status"), "insufficient");
  EXPECT_EQ(e.Value("host"), "ny2g1r12hh2");
  EXPECT_EQ(e.Value("func"), "mlx5_pcie_event");
  EXPECT_EQ(e.time_unix_nano,
            absl::ToUnixNanos(
                absl::FromCivil(absl::CivilSecond(2024, 12, 1, 14, 54, 40), absl::UTCTimeZone())));
}

TEST(KernelMessages, Cx5BootMessagesInDomain0004) {
  Parsed p =
      ParseFixture("kmsg_05_mlx5_cx5_boot_pcie_power_sufficient_75W_module_event_truncated.log");
  EXPECT_EQ(p.not_mine, 0);                              // the prompt line too
  EXPECT_EQ(OfKind(p, "kernel.pcie_power").size(), 0u);  // sufficient power is no problem
  std::vector<LogEvent> info = OfKind(p, "kernel.nic_info");
  std::vector<std::string> what;
  for (const LogEvent& e : info) what.push_back(e.Value("what") + "@" + e.Value("pci"));
  EXPECT_THAT(what, ElementsAre("firmware_version@0004:01:00.0", "pcie_bandwidth@0004:01:00.0",
                                "module_event@0004:01:00.0", "slot_power@0004:01:00.0",
                                "firmware_version@0004:01:00.1", "pcie_bandwidth@0004:01:00.1"));
  EXPECT_EQ(info[0].Value("fw_version"), "16.27.2048");
  EXPECT_EQ(info[1].Value("available_gbps"), "63.008");
  EXPECT_EQ(info[1].Value("link"), "8.0 GT/s PCIe x8");
  EXPECT_EQ(info[3].Value("power_w"), "75");
  EXPECT_EQ(info[3].Value("status"), "sufficient");
  EXPECT_EQ(info[0].Value("adapter"), "0004:01:00");
}

TEST(KernelMessages, AerCorrectedOldWordingWithAerPrefix) {
  Parsed p = ParseFixture("kmsg_07_aer_ethernet_nic_alx_corrected_badtlp_aer_prefix.log");
  ASSERT_EQ(p.events.size(), 1u);
  const LogEvent& e = p.events[0];
  EXPECT_EQ(e.kind, "kernel.pcie_aer");
  EXPECT_EQ(e.Value("pci"), "0000:07:00.0");
  EXPECT_EQ(e.Value("driver"), "alx");
  EXPECT_EQ(e.Value("aer_severity"), "corrected");
  EXPECT_EQ(e.Value("layer"), "Data Link Layer");
  EXPECT_EQ(e.Value("agent"), "Receiver ID");
  EXPECT_EQ(e.Value("root_port"), "0000:00:1d.0");
  EXPECT_EQ(e.Value("vendor_device"), "1969:e0b1");
  EXPECT_EQ(e.Value("error_status"), "00000040");
  EXPECT_EQ(e.Value("error_mask"), "00002000");
  EXPECT_EQ(e.Value("bits"), "BadTLP");
  EXPECT_EQ(e.Value("bit_numbers"), "6");
  EXPECT_EQ(p.stats.recognized, 4u);
}

TEST(KernelMessages, AerCorrectableNewWordingRootPortAndEndpoint) {
  Parsed p = ParseFixture("kmsg_08_aer_endpoint_correctable_rxerr_baddllp_dmesg_T_truncated.log");
  std::vector<LogEvent> aer = OfKind(p, "kernel.pcie_aer");
  ASSERT_EQ(aer.size(), 3u);
  // The block cut at the top of the capture: its bits say it is correctable.
  EXPECT_EQ(aer[0].Value("pci"), "0000:06:00.0");
  EXPECT_EQ(aer[0].Value("partial"), "1");
  EXPECT_EQ(aer[0].Value("aer_severity"), "corrected");
  EXPECT_EQ(aer[0].Value("bits"), "RxErr, BadDLLP, Timeout");
  EXPECT_EQ(aer[0].Value("first_error"), "RxErr");
  EXPECT_EQ(aer[0].Value("vendor_device"), "168c:003e");
  // The root port's own error.
  EXPECT_EQ(aer[1].Value("pci"), "0000:00:1d.3");
  EXPECT_EQ(aer[1].Value("agent"), "Transmitter ID");
  EXPECT_EQ(aer[1].Value("bits"), "Timeout");
  EXPECT_EQ(aer[1].Value("vendor_device"), "8086:54b3");
  EXPECT_EQ(aer[1].Value("root_port"), "");
  // The endpoint's, announced by the root port (twice: "Multiple").
  EXPECT_EQ(aer[2].Value("pci"), "0000:06:00.0");
  EXPECT_EQ(aer[2].Value("aer_severity"), "corrected");
  EXPECT_EQ(aer[2].Value("layer"), "Physical Layer");
  EXPECT_EQ(aer[2].Value("root_port"), "0000:00:1d.3");
  EXPECT_EQ(aer[2].Value("multiple"), "1");
  EXPECT_EQ(aer[2].Value("bits"), "RxErr, BadTLP");
  EXPECT_EQ(aer[2].Value("first_error"), "RxErr");
  EXPECT_EQ(aer[2].Value("error_status"), "000000c1");
  EXPECT_NE(aer[2].time_unix_nano, 0);
}

TEST(KernelMessages, DpcContainmentWithFatalErrorOnRootPort) {
  Parsed p = ParseFixture("kmsg_09_pcie_dpc_containment_uncorrected_fatal_sdes_rootport.log");
  ASSERT_EQ(p.events.size(), 1u);
  const LogEvent& e = p.events[0];
  EXPECT_EQ(e.kind, "kernel.pcie_dpc");
  EXPECT_EQ(e.Value("pci"), "0000:10:01.1");
  EXPECT_EQ(e.Value("driver"), "pcieport");
  EXPECT_EQ(e.Value("aer_severity"), "fatal");
  EXPECT_EQ(e.Value("bits"), "SDES");
  EXPECT_EQ(e.Value("first_error"), "SDES");
}

TEST(KernelMessages, BnxtLinkUpWrappedAndFec) {
  Parsed p = ParseFixture("kmsg_10_bnxt_en_nic_link_up_fec_bugzilla_hard_wrapped.log");
  EXPECT_EQ(p.not_mine, 0);
  ASSERT_EQ(p.events.size(), 1u);
  const LogEvent& e = p.events[0];
  EXPECT_EQ(e.kind, "kernel.nic_link");
  EXPECT_EQ(e.Value("state"), "up");
  EXPECT_EQ(e.Value("interface"), "eno1np0");
  EXPECT_EQ(e.Value("pci"), "0000:19:00.0");
  EXPECT_EQ(e.Value("speed_mbps"), "10000");
  EXPECT_EQ(e.Value("duplex"), "full");
  EXPECT_EQ(e.Value("flow_control"), "ON - receive & transmit");
  EXPECT_EQ(e.Value("fec_autoneg"), "off");
  EXPECT_EQ(e.Value("fec"), "None");
}

TEST(KernelMessages, Cx4LxProbeFailureFoldsItsSteps) {
  Parsed p = ParseFixture("kmsg_11_mlx5_cx4lx_probe_failed_handle_hca_cap.log");
  std::vector<LogEvent> probe = OfKind(p, "kernel.nic_probe_failed");
  ASSERT_EQ(probe.size(), 1u);
  const LogEvent& e = probe[0];
  EXPECT_EQ(e.Value("pci"), "0000:03:00.0");
  EXPECT_EQ(e.Value("failed_step"), "handle_hca_cap");
  EXPECT_EQ(e.Value("steps"), "handle_hca_cap, mlx5_load_one, probe");
  EXPECT_EQ(e.Value("errno"), "-22");
  EXPECT_EQ(e.Value("errno_name"), "EINVAL");
  EXPECT_EQ(e.line, 5);
  std::vector<LogEvent> info = OfKind(p, "kernel.nic_info");
  ASSERT_EQ(info.size(), 1u);
  EXPECT_EQ(info[0].Value("fw_version"), "14.32.1010");
  EXPECT_EQ(p.not_mine, 0);
}

TEST(KernelMessages, IrdmaAbnormalAeAndMadQpFatal) {
  Parsed p = ParseFixture("kmsg_12_irdma_ice_rocep_abnormal_ae_id_fatal_mad_qp_elided.log");
  EXPECT_EQ(p.not_mine, 0);  // the elision and the wrapped line too
  std::vector<LogEvent> ae = OfKind(p, "kernel.rdma_error");
  ASSERT_EQ(ae.size(), 1u);
  EXPECT_EQ(ae[0].Value("ae_id"), "0x401");
  EXPECT_EQ(ae[0].Value("qp_id"), "1");
  EXPECT_EQ(ae[0].Value("ae_src"), "5");
  EXPECT_EQ(ae[0].Value("device"), "rocep7s0f1");
  EXPECT_EQ(ae[0].Value("pci"), "0000:07:00.1");
  EXPECT_EQ(ae[0].Value("driver"), "ice");
  std::vector<LogEvent> fatal = OfKind(p, "kernel.rdma_fatal");
  ASSERT_EQ(fatal.size(), 1u);
  EXPECT_EQ(fatal[0].Value("device"), "rocep7s0f1");
  EXPECT_EQ(fatal[0].Value("event"), "1");
  EXPECT_EQ(fatal[0].Value("qp"), "1");
  EXPECT_EQ(fatal[0].Value("reason"), "mad_qp");
  EXPECT_EQ(p.events.size(), 2u);
}

TEST(KernelMessages, KmsgRecordsWithDictionary) {
  std::optional<KmsgRecord> r = ParseKmsgRecord(
      "3,1042,445937186,-;mlx5_core 0000:0d:00.0: poll_health:801:(pid 0): device's health "
      "compromised - reached miss count\n SUBSYSTEM=pci\n DEVICE=+pci:0000:0d:00.0\n");
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->facility, 0);
  EXPECT_EQ(r->level, 3);
  EXPECT_EQ(r->seq, 1042u);
  EXPECT_EQ(r->timestamp_usec, 445937186);
  EXPECT_EQ(r->Dictionary("DEVICE"), "+pci:0000:0d:00.0");
  EXPECT_EQ(r->Dictionary("SUBSYSTEM"), "pci");
  std::optional<KmsgRecord> user = ParseKmsgRecord("12,345,22728554254,-;railwatch-probe hello");
  ASSERT_TRUE(user.has_value());
  EXPECT_EQ(user->facility, 1);
  EXPECT_EQ(user->level, 4);
  std::string why;
  EXPECT_FALSE(ParseKmsgRecord("3,x,1,-;message", &why).has_value());
  EXPECT_THAT(why, HasSubstr("PRIORITY,SEQUENCE,TIMESTAMP,FLAGS"));
  EXPECT_FALSE(ParseKmsgRecord("no header", &why).has_value());

  // A record that names its device only in the dictionary.
  FakeClock clock;
  KernelMessageParser parser("/dev/kmsg", clock);
  std::vector<LogEvent> events;
  KmsgRecord ib = *ParseKmsgRecord(
      "3,7,1000,-;Fatal error (1) on MAD QP (1)\n SUBSYSTEM=infiniband\n "
      "DEVICE=+infiniband:mlx5_3\n");
  parser.FeedRecord(ib, 123, events);
  KmsgRecord power = *ParseKmsgRecord(
      "4,8,2000,-;mlx5_core 0000:5c:00.0: mlx5_pcie_event:299:(pid 268269): Detected "
      "insufficient power on the PCIe slot (27W).\n SUBSYSTEM=pci\n DEVICE=+pci:0000:5c:00.0\n");
  parser.FeedRecord(power, 456, events);
  parser.Flush(events);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].kind, "kernel.rdma_fatal");
  EXPECT_EQ(events[0].Value("device"), "mlx5_3");
  EXPECT_EQ(events[0].time_unix_nano, 123);
  EXPECT_EQ(events[1].kind, "kernel.pcie_power");
  EXPECT_EQ(events[1].time_unix_nano, 456);
  EXPECT_EQ(events[1].Value("seq"), "8");
  EXPECT_EQ(events[1].Value("uptime_s"), "0.002000");
  EXPECT_EQ(events[1].Value("level"), "warning");
  EXPECT_EQ(parser.stats().lines, 2u);
}

TEST(KernelMessages, PrefixesOfPastedText) {
  // journalctl -o short-iso, syslog with dmesg's time inside, a caller id, dmesg -r, cat
  // /dev/kmsg with its dictionary, and a line of another format left alone.
  Parsed p = ParseText(
      "2025-03-17T14:00:01+0000 gpu-node-007 kernel: mlx5_core 0000:18:00.0: "
      "wait_func_handle_exec_timeout:1130:(pid 12): cmd[0]: ENABLE_HCA(0x104) No done completion\n"
      "Mar 17 14:00:02 gpu-node-007 kernel: [ 1234.567890] mlx5_core 0000:18:00.0: "
      "ENABLE_HCA(0x104) timeout. Will cause a leak of a command resource\n"
      "[  12.345678] [ T1645] bnxt_en 0000:3b:00.0 ens1f0np0: Firmware fatal reset event received\n"
      "<3>[  13.000000] bnxt_en 0000:3b:00.0 ens1f0np0: Error (timeout: 500015) msg {0x23 0x1a5} "
      "len:0\n"
      "3,99,445937186,-;pcieport 0000:17:01.0: DPC: containment event, status:0x1f01 "
      "source:0x0000\n"
      " SUBSYSTEM=pci\n"
      " DEVICE=+pci:0000:17:01.0\n"
      "gpu-node-003:4120:4120 [0] NCCL INFO NET/IB : No device found.");
  EXPECT_EQ(p.not_mine, 1);
  ASSERT_EQ(p.events.size(), 5u);
  EXPECT_EQ(p.events[0].kind, "kernel.nic_command_timeout");
  EXPECT_EQ(p.events[0].Value("reason"), "no_done_completion");
  EXPECT_EQ(p.events[0].Value("command"), "ENABLE_HCA");
  EXPECT_EQ(p.events[0].Value("opcode"), "0x104");
  EXPECT_EQ(p.events[0].Value("cmd_index"), "0");
  EXPECT_EQ(p.events[0].Value("host"), "gpu-node-007");
  EXPECT_EQ(p.events[0].time_unix_nano, absl::ToUnixNanos(absl::FromUnixSeconds(1742220001)));
  EXPECT_EQ(p.events[1].Value("reason"), "timeout");
  EXPECT_EQ(p.events[1].Value("uptime_s"), "1234.567890");
  EXPECT_EQ(p.events[1].Value("host"), "gpu-node-007");
  EXPECT_EQ(p.events[2].kind, "kernel.nic_health");
  EXPECT_EQ(p.events[2].Value("reason"), "fw_fatal_reset");
  EXPECT_EQ(p.events[2].Value("interface"), "ens1f0np0");
  EXPECT_EQ(p.events[3].kind, "kernel.nic_command_timeout");
  EXPECT_EQ(p.events[3].Value("reason"), "hwrm_timeout");
  EXPECT_EQ(p.events[3].Value("timeout_ms"), "500015");
  EXPECT_EQ(p.events[3].Value("command"), "0x23");
  EXPECT_EQ(p.events[3].Value("level"), "err");
  EXPECT_EQ(p.events[4].kind, "kernel.pcie_dpc");
  EXPECT_EQ(p.events[4].Value("dpc_status"), "0x1f01");
  EXPECT_EQ(p.events[4].Value("seq"), "99");
}

TEST(KernelMessages, LinkLimitedAndUncorrectableAer) {
  Parsed p = ParseText(
      "[    5.1] pci 0000:3b:00.0: 63.008 Gb/s available PCIe bandwidth, limited by 8.0 GT/s PCIe "
      "x8 link at 0000:3a:00.0 (capable of 252.048 Gb/s with 16.0 GT/s PCIe x16 link)\n"
      "[   90.0] pcieport 0000:3a:00.0: AER: Uncorrectable (Non-Fatal) error message received "
      "from 0000:3b:00.0\n"
      "[   90.0] mlx5_core 0000:3b:00.0: AER: PCIe Bus Error: severity=Uncorrectable (Non-Fatal), "
      "type=Transaction Layer, (Requester ID)\n"
      "[   90.0] mlx5_core 0000:3b:00.0: AER:   device [15b3:101d] error "
      "status/mask=00004000/00000000\n"
      "[   90.0] mlx5_core 0000:3b:00.0: AER:    [14] CmpltTO                (First)\n"
      "[   91.0] pcieport 0000:3a:00.0: AER: Uncorrected (Fatal) error received: 0000:3c:00.0\n"
      "[   92.0] mlx5_core 0000:3b:00.0: PCIe Bus Error: severity=Sometimes\n");
  std::vector<LogEvent> limited = OfKind(p, "kernel.pcie_link_limited");
  ASSERT_EQ(limited.size(), 1u);
  EXPECT_EQ(limited[0].Value("available_gbps"), "63.008");
  EXPECT_EQ(limited[0].Value("limited_by"), "8.0 GT/s PCIe x8");
  EXPECT_EQ(limited[0].Value("limiting_pci"), "0000:3a:00.0");
  EXPECT_EQ(limited[0].Value("capable_gbps"), "252.048");
  EXPECT_EQ(limited[0].Value("capable_link"), "16.0 GT/s PCIe x16");
  std::vector<LogEvent> aer = OfKind(p, "kernel.pcie_aer");
  ASSERT_EQ(aer.size(), 2u);
  EXPECT_EQ(aer[0].Value("aer_severity"), "nonfatal");
  EXPECT_EQ(aer[0].Value("root_port"), "0000:3a:00.0");
  EXPECT_EQ(aer[0].Value("bits"), "CmpltTO");
  EXPECT_EQ(aer[0].Value("agent"), "Requester ID");
  // A header no block followed (the details rate-limited): an event of its own.
  EXPECT_EQ(aer[1].Value("pci"), "0000:3c:00.0");
  EXPECT_EQ(aer[1].Value("aer_severity"), "fatal");
  EXPECT_EQ(aer[1].Value("header_only"), "1");
  EXPECT_EQ(aer[1].Value("root_port"), "0000:3a:00.0");
  // A severity nobody prints: malformed, with the line.
  EXPECT_EQ(p.stats.malformed, 1u);
  ASSERT_EQ(p.stats.problems.size(), 1u);
  EXPECT_EQ(p.stats.problems[0].line, 7);
}

TEST(KernelMessages, NothingFromOtherLogsOrGarbage) {
  Parsed p = ParseText(
      "gpu-node-003:4120:4120 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.3<0>\n"
      "[rank3]:[E321 02:07:08.408271257 ProcessGroupNCCL.cpp:616] Watchdog caught collective "
      "operation timeout\n"
      "random text\n"
      "\x01\x02\xff\n"
      ":::: 0000:zz:00.0: x\n");
  EXPECT_EQ(p.events.size(), 0u);
  EXPECT_EQ(p.stats.lines, 0u);
  EXPECT_EQ(p.not_mine, 6);  // the last, empty line included
}

TEST(KernelMessages, EveryKindIsListed) {
  std::vector<std::string> kinds(KernelEventKinds().begin(), KernelEventKinds().end());
  EXPECT_EQ(kinds.size(), 12u);
  for (const std::string& k : kinds) EXPECT_EQ(k.rfind("kernel.", 0), 0u) << k;
}

}  // namespace kernel_messages_test
}  // namespace railwatch::logs
