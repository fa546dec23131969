#pragma once

// `railwatch triage` on pasted kernel messages (dmesg, dmesg -T, journalctl -k, kern.log, cat
// /dev/kmsg, quoted in a mail or not; logs/kernel_messages.h): what the kernel says about NICs
// and their PCIe links. One finding per adapter and kind (the functions of one adapter
// reporting the same firmware failure are one finding), with what the lines mean and the
// commands that confirm it on the host; the NICs' firmware versions, PCIe bandwidth and slot
// power as context. The diagnosis (nic_unhealthy, nic_failing, pcie_degraded,
// pcie_uncorrectable) comes from the playbooks the events fire (triage/playbook_replay.h).

#include <string>
#include <vector>

#include "logs/log_event.h"
#include "triage/findings.h"

namespace railwatch {

// Findings from the kernel.* events among `events`, appended to `findings`; lines for
// `context`.
void AnalyzeKernelMessages(const std::vector<logs::LogEvent>& events,
                           std::vector<TriageFinding>& findings, std::vector<std::string>& context);

}  // namespace railwatch
