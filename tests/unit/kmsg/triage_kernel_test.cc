// `railwatch triage` on pasted kernel messages (the real samples in fixtures/kmsg): the NIC and
// PCIe findings, the commands that confirm them, the diagnosis of the shipped playbooks
// (nic_unhealthy, pcie_degraded, pcie_uncorrectable), JSON, and kernel lines among a log.

#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "cli/commands.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "support/ttar.h"
#include "unit/triage_run.h"

namespace railwatch {
namespace triage_kernel_test {

using testing::Block;
using ::testing::HasSubstr;
using ::testing::Not;
using testing::Triage;
using testing::TriageRun;

std::string Fixture(const std::string& prefix) {
  static const char* kFiles[] = {
      "kmsg_01_mlx5_cx6dx_health_compromised_fw_internal_error_print_health_info.log",
      "kmsg_02_mlx5_cx4_journal_cmd_work_handler_failed_alloc_cmd_entry_email_quoted.log",
      "kmsg_04_mlx5_insufficient_power_pcie_slot_27W_dmesg_T_host.log",
      "kmsg_05_mlx5_cx5_boot_pcie_power_sufficient_75W_module_event_truncated.log",
      "kmsg_07_aer_ethernet_nic_alx_corrected_badtlp_aer_prefix.log",
      "kmsg_08_aer_endpoint_correctable_rxerr_baddllp_dmesg_T_truncated.log",
      "kmsg_09_pcie_dpc_containment_uncorrected_fatal_sdes_rootport.log",
      "kmsg_10_bnxt_en_nic_link_up_fec_bugzilla_hard_wrapped.log",
      "kmsg_11_mlx5_cx4lx_probe_failed_handle_hca_cap.log",
      "kmsg_12_irdma_ice_rocep_abnormal_ae_id_fatal_mad_qp_elided.log"};
  for (const char* f : kFiles) {
    if (std::string(f).rfind(prefix, 0) == 0) return testing::FixturePath(std::string("kmsg/") + f);
  }
  return "<no fixture " + prefix + ">";
}

TEST(TriageKernel, FirmwareHealthOfSixFunctionsIsOneFinding) {
  TriageRun r = Triage({Fixture("kmsg_01")});
  EXPECT_EQ(r.code, kExitOk);
  EXPECT_EQ(r.err, "");
  EXPECT_THAT(r.out, HasSubstr("Read 42 lines of kernel messages in"));
  EXPECT_THAT(r.out, HasSubstr(": 6 NIC and PCIe events."));
  std::string health = Block(r.out, "FAIL  NIC firmware health:");
  EXPECT_THAT(health, HasSubstr("health poll missed (device's health compromised), synd 0x1 "
                                "(firmware internal error), ext_synd 0x8f7a, 6 reports"));
  EXPECT_THAT(health, HasSubstr("(6 functions of one adapter)"));
  EXPECT_THAT(health, HasSubstr("firmware      22.44.1036"));
  EXPECT_THAT(health, HasSubstr("445.937186 to 447.729198 s after boot"));
  EXPECT_THAT(health, HasSubstr("devlink health show pci/0000:0d:00.0"));
  EXPECT_THAT(health, HasSubstr("playbook      nic_unhealthy (warning)"));
  EXPECT_THAT(health, HasSubstr("devlink health diagnose pci/0000:0d:00.0 reporter fw"));
  // One report per function: a warning, not yet nic_failing.
  EXPECT_THAT(r.out, Not(HasSubstr("nic_failing")));
}

TEST(TriageKernel, QuotedJournalCommandEntriesNameTheHost) {
  TriageRun r = Triage({Fixture("kmsg_02")});
  EXPECT_EQ(r.code, kExitOk);
  std::string timeouts = Block(r.out,
                               "FAIL  NIC firmware commands not answered: no free command "
                               "entry, 2 reports");
  EXPECT_THAT(timeouts, HasSubstr("where         store01 mlx5_core 0000:01:00.0"));
  EXPECT_THAT(timeouts, HasSubstr("nic_unhealthy (warning): NIC unhealthy on store01"));
  EXPECT_THAT(timeouts, HasSubstr("ssh store01 devlink health show pci/0000:01:00.0"));
  EXPECT_THAT(timeouts, HasSubstr("ssh store01 mlxfwmanager -d 0000:01:00.0 --query"));
  EXPECT_THAT(r.out, HasSubstr("WARN  NIC driver calls failed: alloc td (EAGAIN)"));
  EXPECT_THAT(r.out,
              HasSubstr("NIC 0000:01:00.0 on store01: firmware 12.28.1002, PCIe 126.016 Gb/s "
                        "(8 GT/s x16), module 0: Cable"));
}

TEST(TriageKernel, InsufficientSlotPowerIsPcieDegraded) {
  TriageRun r = Triage({Fixture("kmsg_04")});
  EXPECT_EQ(r.code, kExitOk);
  std::string power = Block(r.out, "WARN  PCIe slot gives the NIC too little power: 27 W");
  EXPECT_THAT(power, HasSubstr("where         ny2g1r12hh2 mlx5_core 0000:5c:00.0"));
  EXPECT_THAT(power, HasSubstr("pcie_degraded (warning): PCIe degraded on ny2g1r12hh2"));
  EXPECT_THAT(power, HasSubstr("slot_power"));
  EXPECT_THAT(power, HasSubstr("ssh ny2g1r12hh2 lspci -vvv -s 0000:5c:00.0"));
}

TEST(TriageKernel, BootMessagesAreContextOnly) {
  TriageRun r = Triage({Fixture("kmsg_05"), Fixture("kmsg_10")});
  EXPECT_EQ(r.code, kExitOk);
  EXPECT_THAT(r.out, HasSubstr("No failure found."));
  EXPECT_THAT(r.out, Not(HasSubstr("playbook")));
  // (Context lines wrap at 100 columns.)
  EXPECT_THAT(r.out, HasSubstr("NIC 0004:01:00.0: firmware 16.27.2048, PCIe 63.008 Gb/s (8.0 GT/s "
                               "PCIe x8), module 0: Cable"));
  EXPECT_THAT(r.out, HasSubstr("plugged, slot power 75 W\n"));
  EXPECT_THAT(r.out, HasSubstr("NIC 0004:01:00.1: firmware 16.27.2048"));
  EXPECT_THAT(r.out, HasSubstr("INFO  NIC link up: 10000 Mb/s, full duplex, FEC None, flow control "
                               "ON - receive & transmit"));
}

TEST(TriageKernel, CorrectedAerBelowTheRateIsAWarningWithoutADiagnosis) {
  TriageRun r = Triage({Fixture("kmsg_07"), Fixture("kmsg_08")});
  EXPECT_EQ(r.code, kExitOk);
  std::string alx = Block(r.out, "WARN  PCIe AER corrected errors: Data Link Layer (BadTLP)");
  EXPECT_THAT(alx, HasSubstr("root port     0000:00:1d.0"));
  EXPECT_THAT(alx, HasSubstr("cat /sys/bus/pci/devices/0000:07:00.0/aer_dev_correctable"));
  std::string endpoint = Block(r.out,
                               "WARN  PCIe AER corrected errors: Physical Layer (RxErr, "
                               "BadDLLP, Timeout, BadTLP), 2 reports");
  EXPECT_THAT(endpoint, HasSubstr("ath10k_pci 0000:06:00.0"));
  EXPECT_THAT(endpoint, HasSubstr("root port     0000:00:1d.3"));
  EXPECT_THAT(r.out, Not(HasSubstr("pcie_degraded")));  // 4 corrected errors: under 10 an hour
}

TEST(TriageKernel, ContainmentIsCriticalAndProbeFailureAndMadQpAreUnhealthy) {
  TriageRun dpc = Triage({Fixture("kmsg_09")});
  std::string c = Block(dpc.out, "FAIL  PCIe Downstream Port Containment: fatal error (SDES)");
  EXPECT_THAT(c, HasSubstr("pcie_uncorrectable (critical)"));
  EXPECT_THAT(c, HasSubstr("lspci -tv"));

  TriageRun probe = Triage({Fixture("kmsg_11")});
  std::string p =
      Block(probe.out, "FAIL  NIC probe failed: handle_hca_cap failed, error -22 (EINVAL)");
  EXPECT_THAT(p, HasSubstr("steps         handle_hca_cap, mlx5_load_one, probe"));
  EXPECT_THAT(p, HasSubstr("firmware      14.32.1010"));
  EXPECT_THAT(p, HasSubstr("nic_unhealthy (warning)"));

  TriageRun mad = Triage({Fixture("kmsg_12")});
  std::string m = Block(mad.out, "FAIL  RDMA device fatal error: fatal error (1) on the MAD QP");
  EXPECT_THAT(m, HasSubstr("nic_unhealthy (warning)"));
  EXPECT_THAT(m, HasSubstr("0000:07:00"));  // the function its ice line named
  EXPECT_THAT(mad.out, HasSubstr("WARN  RDMA asynchronous errors: ae_id 0x401 on QP 1"));
}

TEST(TriageKernel, JsonHasTheEventsFindingsAndSummary) {
  TriageRun r = Triage({Fixture("kmsg_01")}, "", /*json=*/true);
  EXPECT_EQ(r.code, kExitOk);
  int events = 0, findings = 0;
  nlohmann::json summary;
  for (absl::string_view line : absl::StrSplit(r.out, '\n', absl::SkipEmpty())) {
    nlohmann::json j = nlohmann::json::parse(line);
    if (j["kind"] == "kernel.nic_health") {
      ++events;
      EXPECT_EQ(j["adapter"], "0000:0d:00");
    } else if (j["kind"] == "triage.finding") {
      ++findings;
      EXPECT_EQ(j["event_kind"], "kernel.nic_health");
      EXPECT_EQ(j["level"], "FAIL");
      ASSERT_EQ(j["diagnoses"].size(), 1u);
      EXPECT_EQ(j["diagnoses"][0]["playbook"], "nic_unhealthy");
    } else if (j["kind"] == "triage.summary") {
      summary = j;
    }
  }
  EXPECT_EQ(events, 6);
  EXPECT_EQ(findings, 1);
  EXPECT_EQ(summary["verdict"], "failure");
  ASSERT_EQ(summary["kernel"].size(), 1u);
  EXPECT_EQ(summary["kernel"][0]["lines"], 42);
  EXPECT_EQ(summary["kernel"][0]["events"], 6);
}

TEST(TriageKernel, KernelLinesAmongAnNcclLogAreBothRead) {
  const std::string text =
      "gpu-node-004:5120:5120 [1] NCCL INFO NET/IB : Using [0]mlx5_1:1/RoCE ; OOB "
      "eth0:10.0.0.4<0>\n"
      "Mar 17 14:00:02 gpu-node-004 kernel: mlx5_core 0000:28:00.0: ENABLE_HCA(0x104) timeout. "
      "Will cause a leak of a command resource\n"
      "gpu-node-004:5120:5300 [1] NCCL WARN NET/IB : Got completion from peer 10.0.1.9<41122> with "
      "status=12 opcode=0 len=0 vendor err 129 (Send) hca mlx5_1\n";
  TriageRun r = Triage({"-"}, text);
  EXPECT_THAT(r.out, HasSubstr("FAIL  NIC firmware commands not answered: command timed out"));
  EXPECT_THAT(r.out, HasSubstr("IB completion error"));
  EXPECT_THAT(r.out, HasSubstr("Read 1 lines of kernel messages in -"));
}

}  // namespace triage_kernel_test
}  // namespace railwatch
