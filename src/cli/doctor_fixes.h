// The concrete fixes `cordon doctor` prints for a missing feature, chosen from what the host
// facts say about the cause (a sysctl, an AppArmor restriction, a container's seccomp profile,
// a kernel option). Each string is one fix a person can apply; the likeliest comes first.
#pragma once

#include <string>
#include <vector>

#include "cli/host_facts.h"

namespace cordon::cli {

std::vector<std::string> UserNamespaceFixes(const HostFacts& host);
// `kind` is "mount", "PID", "network", "IPC" or "UTS"; `config_option` the kernel option.
std::vector<std::string> NamespaceFixes(const HostFacts& host, const std::string& kind,
                                        const std::string& config_option);
std::vector<std::string> ProcMountFixes(const HostFacts& host);
std::vector<std::string> MountSetattrFixes(const HostFacts& host);
std::vector<std::string> LandlockFixes(const HostFacts& host, int abi, int abi_required);
std::vector<std::string> SeccompFixes(const HostFacts& host);
std::vector<std::string> PidfdFixes();
std::vector<std::string> CgroupFixes(const HostFacts& host);
std::vector<std::string> BubblewrapFixes();

}  // namespace cordon::cli
