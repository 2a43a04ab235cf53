// `cordon doctor`'s findings, built without side effects from the kernel probe
// (linux_native::ProbeKernel), the host facts (sysctls, container, cgroups) and the
// configuration. Which features are *required* is not written down here: it is asked of the
// planner (plan::DescribeCapabilities) by taking each feature away in turn, so doctor and
// `cordon run` can never disagree about what a configuration needs.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/host_facts.h"
#include "cordon/capabilities.h"
#include "cordon/config.h"
#include "linux/kernel_features.h"

namespace cordon::cli {

struct FeatureCheck {
  std::string id;         // stable key in --json: "user_namespace", "landlock", ...
  std::string name;       // for people: "user namespaces"
  bool present = false;   // works for this user on this machine
  bool required = false;  // the configured guarantees cannot hold without it
  std::string detail;     // what the probe saw ("ABI 7", "EPERM from unshare(CLONE_NEWUSER)")
  std::string used_for;   // what cordon uses it for
  std::string without;    // what cordon loses without it
  std::vector<std::string> fixes;  // concrete fixes, the likeliest first; empty when present
};

// What each Landlock ABI level adds (landlock(7)).
struct LandlockLevel {
  int abi;
  const char* linux_version;
  const char* adds;
};
inline constexpr LandlockLevel kLandlockLevels[] = {
    {1, "5.13", "filesystem access control: read, write, execute, create and remove rights"},
    {2, "5.19", "LANDLOCK_ACCESS_FS_REFER: renaming and linking files between directories"},
    {3, "6.2", "LANDLOCK_ACCESS_FS_TRUNCATE: truncating files"},
    {4, "6.7", "TCP bind and connect rules (network deny without a network namespace)"},
    {5, "6.10", "LANDLOCK_ACCESS_FS_IOCTL_DEV: ioctl on device files"},
    {6, "6.12", "scoping: abstract unix sockets and signals outside the sandbox"},
    {7, "6.15", "audit logging controls for denials"},
};
inline constexpr int kNewestLandlockAbi = 7;

struct DoctorReport {
  std::vector<FeatureCheck> features;
  Capabilities capabilities;      // what `cordon status` reports for this configuration
  int landlock_abi_required = 0;  // lowest ABI the configuration can run with; 0: not needed
  bool ok = false;                // every required feature is present and nothing is missing
};

DoctorReport BuildDoctorReport(const Config& config, const linux_native::KernelFeatures& features,
                               const HostFacts& host);

nlohmann::json DoctorReportToJson(const DoctorReport& report, const Config& config,
                                  const linux_native::KernelFeatures& features,
                                  const HostFacts& host);

std::string FormatDoctorReport(const DoctorReport& report, const Config& config,
                               const linux_native::KernelFeatures& features, const HostFacts& host);

}  // namespace cordon::cli
