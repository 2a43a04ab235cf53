// BuildDoctorReport from made-up probes and host facts: what is required follows the planner,
// and each missing feature comes with the fix that matches its cause.
#include "cli/doctor_report.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace cordon::cli {
namespace {

using linux_native::KernelFeatures;

KernelFeatures AllPresent() {
  KernelFeatures f;
  f.user_namespace = f.mount_namespace = f.pid_namespace = f.net_namespace = f.ipc_namespace =
      f.uts_namespace = f.proc_mount = f.mount_setattr = f.seccomp = f.pidfd = true;
  f.seccomp_listener = true;
  f.landlock_abi = 7;
  f.limits.cgroups.memory = {limits::CgroupVersion::kV2, "/sys/fs/cgroup/cordon.slice"};
  f.limits.cgroups.pids = {limits::CgroupVersion::kV2, "/sys/fs/cgroup/cordon.slice"};
  f.limits.cgroups_probed = true;
  return f;
}

HostFacts Host() {
  HostFacts host;
  host.kernel_release = "6.18.0-test";
  host.uid = 1000;
  host.cgroup2 = true;
  host.cgroup_writable = true;
  host.bwrap_path = "/usr/bin/bwrap";
  host.init_reaper_path = "/usr/libexec/cordon/cordon-init";
  host.resolver_path = "/usr/libexec/cordon/cordon-resolver";
  return host;
}

const FeatureCheck& Feature(const DoctorReport& report, const std::string& id) {
  auto it = std::find_if(report.features.begin(), report.features.end(),
                         [&](const FeatureCheck& c) { return c.id == id; });
  EXPECT_NE(it, report.features.end()) << id;
  return *it;
}

bool AnyFixMentions(const FeatureCheck& check, const std::string& text) {
  return std::any_of(check.fixes.begin(), check.fixes.end(),
                     [&](const std::string& fix) { return fix.find(text) != std::string::npos; });
}

// ok is exactly "the planner can run it and no required feature is missing".
void ExpectConsistent(const DoctorReport& report) {
  bool required_missing = false;
  for (const FeatureCheck& c : report.features) {
    if (c.required && !c.present) required_missing = true;
    EXPECT_EQ(c.present, c.fixes.empty()) << c.id << ": a missing feature needs a fix";
    EXPECT_FALSE(c.used_for.empty()) << c.id;
    EXPECT_FALSE(c.without.empty()) << c.id;
  }
  EXPECT_EQ(report.ok, report.capabilities.can_run() && !required_missing);
}

TEST(DoctorReport, EverythingPresentIsOkAndListsEveryFeature) {
  DoctorReport report = BuildDoctorReport(Config{}, AllPresent(), Host());
  EXPECT_TRUE(report.ok);
  ExpectConsistent(report);
  for (const char* id :
       {"user_namespace", "mount_namespace", "pid_namespace", "net_namespace", "ipc_namespace",
        "uts_namespace", "proc_mount", "mount_setattr", "landlock", "seccomp", "seccomp_listener",
        "pidfd", "cgroups", "bubblewrap", "init_reaper"}) {
    EXPECT_TRUE(Feature(report, id).present) << id;
  }
}

TEST(DoctorReport, AnUnusableInitReaperIsNamedWithItsProblemButRequiresNothing) {
  HostFacts host = Host();
  host.init_reaper_path.clear();
  host.init_reaper_problem = "/usr/libexec/cordon/cordon-init is not a single-link executable file";
  DoctorReport report = BuildDoctorReport(Config{}, AllPresent(), host);
  const FeatureCheck& reaper = Feature(report, "init_reaper");
  EXPECT_FALSE(reaper.present);
  EXPECT_FALSE(reaper.required);
  EXPECT_EQ(reaper.detail, host.init_reaper_problem);
  EXPECT_TRUE(AnyFixMentions(reaper, "single link"));
  EXPECT_TRUE(report.ok) << "the guarantees hold without it";
  ExpectConsistent(report);
  // Twin: a usable one is present and shows where it is.
  const DoctorReport with_reaper = BuildDoctorReport(Config{}, AllPresent(), Host());
  const FeatureCheck& usable = Feature(with_reaper, "init_reaper");
  EXPECT_TRUE(usable.present);
  EXPECT_EQ(usable.detail, "/usr/libexec/cordon/cordon-init");
}

TEST(DoctorReport, AMissingResolverIsRequiredOnlyWithNetworkByDomain) {
  HostFacts host = Host();
  host.resolver_path.clear();
  host.resolver_problem = "realpath(/usr/libexec/cordon/cordon-resolver): No such file";
  DoctorReport report = BuildDoctorReport(Config{}, AllPresent(), host);
  const FeatureCheck& resolver = Feature(report, "resolver");
  EXPECT_FALSE(resolver.present);
  EXPECT_FALSE(resolver.required);
  EXPECT_EQ(resolver.detail, host.resolver_problem);
  EXPECT_TRUE(AnyFixMentions(resolver, "libexec/cordon/cordon-resolver"));
  EXPECT_TRUE(report.ok) << "the other network modes work without it";
  ExpectConsistent(report);
  // With network by domain it is required: not ok without it, ok with it.
  Config domains;
  domains.sandbox.network = NetworkPolicy::kDomains;
  const DoctorReport without = BuildDoctorReport(domains, AllPresent(), host);
  EXPECT_TRUE(Feature(without, "resolver").required);
  EXPECT_FALSE(without.ok);
  ExpectConsistent(without);
  const DoctorReport with = BuildDoctorReport(domains, AllPresent(), Host());
  EXPECT_TRUE(Feature(with, "resolver").present);
  EXPECT_TRUE(with.ok);
}

TEST(DoctorReport, NothingPresentIsNotOkForASandboxedMode) {
  DoctorReport report = BuildDoctorReport(Config{}, KernelFeatures{}, HostFacts{});
  EXPECT_FALSE(report.ok);
  ExpectConsistent(report);
  EXPECT_FALSE(report.capabilities.missing.empty());
}

TEST(DoctorReport, ModeOffNeedsNothing) {
  Config config;
  config.sandbox.mode = SandboxMode::kOff;
  DoctorReport report = BuildDoctorReport(config, KernelFeatures{}, HostFacts{});
  EXPECT_TRUE(report.ok);
  for (const FeatureCheck& c : report.features) EXPECT_FALSE(c.required) << c.id;
  ExpectConsistent(report);
}

TEST(DoctorReport, RequiredFeaturesAreThoseThePlannerCannotDoWithout) {
  // Seccomp is always required in a sandboxed mode (no other layer blocks those calls); the
  // UTS namespace (a private hostname) never is.
  DoctorReport report = BuildDoctorReport(Config{}, AllPresent(), Host());
  EXPECT_TRUE(Feature(report, "seccomp").required);
  EXPECT_FALSE(Feature(report, "uts_namespace").required);
  EXPECT_FALSE(Feature(report, "bubblewrap").required);
}

TEST(DoctorReport, UserNamespacesOffBySysctlGetTheSysctlFix) {
  KernelFeatures f = AllPresent();
  f.user_namespace = f.mount_namespace = f.pid_namespace = f.net_namespace = false;
  HostFacts host = Host();
  host.sysctls["kernel.unprivileged_userns_clone"] = "0";
  host.sysctls["user.max_user_namespaces"] = "0";
  DoctorReport report = BuildDoctorReport(Config{}, f, host);
  const FeatureCheck& userns = Feature(report, "user_namespace");
  EXPECT_FALSE(userns.present);
  EXPECT_TRUE(AnyFixMentions(userns, "sysctl -w kernel.unprivileged_userns_clone=1"));
  EXPECT_TRUE(AnyFixMentions(userns, "user.max_user_namespaces="));
  EXPECT_FALSE(AnyFixMentions(userns, "apparmor_parser"));
  ExpectConsistent(report);
  // Twin: with the sysctls allowing them, those fixes are not offered.
  HostFacts allowing = Host();
  allowing.sysctls["kernel.unprivileged_userns_clone"] = "1";
  DoctorReport allowed = BuildDoctorReport(Config{}, f, allowing);
  const FeatureCheck& other = Feature(allowed, "user_namespace");
  EXPECT_FALSE(AnyFixMentions(other, "kernel.unprivileged_userns_clone=1"));
}

TEST(DoctorReport, UbuntusAppArmorRestrictionGetsAProfileForThisBinary) {
  KernelFeatures f = AllPresent();
  f.user_namespace = false;
  HostFacts host = Host();
  host.self_exe = "/opt/cordon/bin/cordon";
  host.sysctls["kernel.apparmor_restrict_unprivileged_userns"] = "1";
  DoctorReport report = BuildDoctorReport(Config{}, f, host);
  const FeatureCheck& userns = Feature(report, "user_namespace");
  EXPECT_TRUE(AnyFixMentions(userns, "profile cordon /opt/cordon/bin/cordon"));
  EXPECT_TRUE(AnyFixMentions(userns, "userns,"));
  EXPECT_TRUE(AnyFixMentions(userns, "apparmor_parser -r"));
}

TEST(DoctorReport, AContainersSeccompFilterGetsContainerFlags) {
  KernelFeatures f = AllPresent();
  f.user_namespace = false;
  HostFacts host = Host();
  host.container = "docker";
  host.seccomp_mode = 2;
  host.seccomp_filters = 1;
  DoctorReport report = BuildDoctorReport(Config{}, f, host);
  const FeatureCheck& userns = Feature(report, "user_namespace");
  EXPECT_TRUE(AnyFixMentions(userns, "--security-opt seccomp=unconfined"));
  EXPECT_TRUE(AnyFixMentions(userns, "seccomp filter"));
  EXPECT_FALSE(AnyFixMentions(userns, "Kubernetes"));  // only the runtime that was detected
}

TEST(DoctorReport, InsideCordonTheFixSaysNestingIsRefusedByDesign) {
  KernelFeatures f = AllPresent();
  f.user_namespace = false;
  HostFacts host = Host();
  host.inside_cordon = true;
  host.seccomp_mode = 2;
  DoctorReport report = BuildDoctorReport(Config{}, f, host);
  const FeatureCheck& userns = Feature(report, "user_namespace");
  ASSERT_FALSE(userns.fixes.empty());
  EXPECT_NE(userns.fixes[0].find("inside a cordon sandbox"), std::string::npos);
  // Twin: the same filter outside cordon points at the filter's owner instead.
  host.inside_cordon = false;
  DoctorReport outside = BuildDoctorReport(Config{}, f, host);
  EXPECT_FALSE(AnyFixMentions(Feature(outside, "user_namespace"), "inside a cordon sandbox"));
}

TEST(DoctorReport, LandlockBuiltButNotEnabledGetsTheLsmBootParameter) {
  KernelFeatures f = AllPresent();
  f.landlock_abi = 0;
  HostFacts host = Host();
  host.lsm = "lockdown,capability,yama,apparmor";
  DoctorReport report = BuildDoctorReport(Config{}, f, host);
  const FeatureCheck& landlock = Feature(report, "landlock");
  EXPECT_FALSE(landlock.present);
  EXPECT_TRUE(AnyFixMentions(landlock, "lsm=landlock,lockdown,capability,yama,apparmor"));
  EXPECT_TRUE(AnyFixMentions(landlock, "built but not enabled"));
  // Twin: when the LSM list already names landlock, "not enabled" is not the diagnosis.
  host.lsm = "landlock,yama";
  DoctorReport listed = BuildDoctorReport(Config{}, f, host);
  const FeatureCheck& other = Feature(listed, "landlock");
  EXPECT_FALSE(AnyFixMentions(other, "built but not enabled"));
  EXPECT_FALSE(AnyFixMentions(other, "lsm=landlock,landlock"));
}

TEST(DoctorReport, AMemoryLimitRequiresADelegatedCgroup) {
  Config config;
  config.limits.memory_bytes = 1 << 30;
  HostFacts host = Host();
  host.cgroup_writable = false;
  host.cgroup_path = "/system.slice/x.service";
  KernelFeatures f = AllPresent();
  f.limits.cgroups = {};  // the limits probe found no usable cgroup
  DoctorReport report = BuildDoctorReport(config, f, host);
  const FeatureCheck& cgroup = Feature(report, "cgroups");
  EXPECT_TRUE(cgroup.required);
  EXPECT_FALSE(cgroup.present);
  EXPECT_TRUE(AnyFixMentions(cgroup, "Delegate=yes"));
  EXPECT_FALSE(report.ok);
  // Twins: without a memory limit the same host is fine; with usable cgroups the limit is.
  EXPECT_TRUE(BuildDoctorReport(Config{}, f, host).ok);
  EXPECT_TRUE(BuildDoctorReport(config, AllPresent(), host).ok);
}

TEST(DoctorReport, JsonHasTheDocumentedFields) {
  HostFacts host = Host();
  host.sysctls["kernel.unprivileged_userns_clone"] = std::nullopt;
  DoctorReport report = BuildDoctorReport(Config{}, AllPresent(), host);
  nlohmann::json j = DoctorReportToJson(report, Config{}, AllPresent(), host);
  EXPECT_EQ(j["ok"], true);
  EXPECT_EQ(j["kernel"]["landlock_abi"], 7);
  EXPECT_TRUE(j["sysctls"]["kernel.unprivileged_userns_clone"].is_null());
  EXPECT_EQ(j["landlock_abi_levels"].size(), 7u);
  EXPECT_EQ(j["features"][0]["id"], "user_namespace");
  for (const auto& feature : j["features"]) {
    for (const char* key :
         {"id", "name", "present", "required", "detail", "used_for", "without", "fixes"}) {
      EXPECT_TRUE(feature.contains(key)) << key;
    }
  }
  EXPECT_TRUE(j["capabilities"].contains("can_run"));
}

TEST(DoctorReport, TextMarksMissingFeaturesAndTheVerdict) {
  KernelFeatures f = AllPresent();
  f.seccomp = false;
  DoctorReport report = BuildDoctorReport(Config{}, f, Host());
  std::string text = FormatDoctorReport(report, Config{}, f, Host());
  EXPECT_NE(text.find("[MISSING] seccomp filters (required)"), std::string::npos) << text;
  EXPECT_NE(text.find("NOT OK"), std::string::npos);
  std::string fine = FormatDoctorReport(BuildDoctorReport(Config{}, AllPresent(), Host()), Config{},
                                        AllPresent(), Host());
  EXPECT_EQ(fine.find("[MISSING]"), std::string::npos) << fine;
  EXPECT_NE(fine.find("OK: every feature"), std::string::npos);
}

}  // namespace
}  // namespace cordon::cli
