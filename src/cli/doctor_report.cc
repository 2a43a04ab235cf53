#include "cli/doctor_report.h"

#include <fmt/format.h>

#include <functional>

#include "cli/doctor_fixes.h"
#include "plan/launch_plan.h"
#include "report/json_report.h"

namespace cordon::cli {
namespace {

using linux_native::KernelFeatures;

// Every feature present, Landlock at the newest ABI cordon knows.
KernelFeatures Everything(const KernelFeatures& probed) {
  KernelFeatures f = probed;
  f.user_namespace = f.mount_namespace = f.pid_namespace = f.net_namespace = f.ipc_namespace =
      f.uts_namespace = f.proc_mount = f.mount_setattr = f.seccomp = f.pidfd = true;
  f.landlock_abi = std::max(probed.landlock_abi, kNewestLandlockAbi);
  for (limits::CgroupController* c : {&f.limits.cgroups.memory, &f.limits.cgroups.pids}) {
    if (c->version == limits::CgroupVersion::kNone) *c = {limits::CgroupVersion::kV2, "/"};
  }
  return f;
}

// bwrap as found on this host: it can build its namespaces when the kernel has them and bwrap
// is setuid or user namespaces work; it needs no mount_setattr (the session's own probe, at
// run time, tries it for real).
plan::BackendProbes HostProbes(const HostFacts& host, const KernelFeatures& f) {
  plan::BackendProbes probes;
  probes.bwrap.probed = true;
  if (host.bwrap_path.empty()) {
    probes.bwrap.detail = "bubblewrap not found (install it: apt install bubblewrap)";
    return probes;
  }
  probes.bwrap.usable = (host.bwrap_setuid || f.user_namespace) && f.mount_namespace &&
                        f.pid_namespace && f.net_namespace && f.proc_mount;
  probes.bwrap.setuid = host.bwrap_setuid;
  probes.bwrap.detail = probes.bwrap.usable
                            ? fmt::format("bubblewrap at {}", host.bwrap_path)
                            : fmt::format(
                                  "bubblewrap at {} is not setuid and user namespaces "
                                  "are unavailable",
                                  host.bwrap_path);
  return probes;
}

bool Runs(const Config& config, const KernelFeatures& f, const HostFacts& host) {
  return plan::DescribeCapabilities(config, f, HostProbes(host, f)).can_run();
}

// Required: with everything else present, the planner refuses the configuration without it.
bool RequiredWithout(const Config& config, const KernelFeatures& probed, const HostFacts& host,
                     const std::function<void(KernelFeatures&)>& take_away) {
  KernelFeatures f = Everything(probed);
  take_away(f);
  return !Runs(config, f, host);
}

int LowestLandlockAbi(const Config& config, const KernelFeatures& probed, const HostFacts& host) {
  for (int abi = 0; abi <= kNewestLandlockAbi; ++abi) {
    KernelFeatures f = Everything(probed);
    f.landlock_abi = abi;
    if (Runs(config, f, host)) return abi;
  }
  return 0;  // not satisfiable by Landlock at all: another feature decides
}

std::string Pick(bool present, const std::string& works, const std::string& fails) {
  return present ? works : fails;
}

struct NamespaceRow {
  const char* id;
  const char* name;
  bool KernelFeatures::*field;
  const char* kind;
  const char* config_option;
  const char* used_for;
  const char* without;
};

constexpr NamespaceRow kNamespaceRows[] = {
    {"mount_namespace", "mount namespaces", &KernelFeatures::mount_namespace, "mount",
     "CONFIG_NAMESPACES",
     "the sandbox's own view of the filesystem: host read-only, writable binds, private /tmp and "
     "HOME, masks over credential stores, read-only .git",
     "no private /tmp or HOME, no hidden credential paths, no read-only .git; only Landlock "
     "could confine writes"},
    {"pid_namespace", "PID namespaces", &KernelFeatures::pid_namespace, "PID", "CONFIG_PID_NS",
     "a process tree that dies as a whole (cordon's init is PID 1) and cannot see or signal "
     "host processes",
     "double-forked or setsid processes could outlive the command; host processes stay visible"},
    {"net_namespace", "network namespaces", &KernelFeatures::net_namespace, "network",
     "CONFIG_NET_NS", "network deny: a private network stack with only its own loopback",
     "network deny then rests on Landlock TCP rules (ABI >= 4) plus the seccomp socket-family "
     "filter, or is refused"},
    {"ipc_namespace", "IPC namespaces", &KernelFeatures::ipc_namespace, "IPC", "CONFIG_IPC_NS",
     "private System V IPC and POSIX message queues",
     "the command shares the host's System V shared memory, semaphores and message queues"},
    {"uts_namespace", "UTS namespaces", &KernelFeatures::uts_namespace, "UTS", "CONFIG_UTS_NS",
     "a hostname of its own (\"cordon\", or the container's where its seccomp profile refuses "
     "sethostname) that the command cannot change outside",
     "the command sees the host's hostname"},
};

}  // namespace

DoctorReport BuildDoctorReport(const Config& config, const KernelFeatures& f,
                               const HostFacts& host) {
  DoctorReport report;
  report.capabilities = plan::DescribeCapabilities(config, f, HostProbes(host, f));
  report.landlock_abi_required = LowestLandlockAbi(config, f, host);
  auto required = [&](const std::function<void(KernelFeatures&)>& take_away) {
    return RequiredWithout(config, f, host, take_away);
  };

  report.features.push_back(FeatureCheck{
      .id = "user_namespace",
      .name = "user namespaces",
      .present = f.user_namespace,
      .required = required([](KernelFeatures& k) { k.user_namespace = false; }),
      .detail = Pick(f.user_namespace, "unshare(CLONE_NEWUSER) with an own uid/gid map works",
                     "unshare(CLONE_NEWUSER) is refused for this user"),
      .used_for = "creating every other namespace without root, and a user-namespace root that "
                  "owns the sandbox's mounts",
      .without = "no mount, PID or network namespaces for an unprivileged user: no private /tmp "
                 "and HOME, no hidden credential paths, no read-only .git, no process-tree "
                 "containment; only Landlock and seccomp remain",
      .fixes = f.user_namespace ? std::vector<std::string>{} : UserNamespaceFixes(host)});

  for (const NamespaceRow& row : kNamespaceRows) {
    const bool present = f.*(row.field);
    report.features.push_back(FeatureCheck{
        .id = row.id,
        .name = row.name,
        .present = present,
        .required = required([&row](KernelFeatures& k) { k.*(row.field) = false; }),
        .detail = !f.user_namespace
                      ? "not tried (no user namespace)"
                      : Pick(present, fmt::format("a new {} namespace works", row.kind),
                             fmt::format("unshare of a {} namespace fails", row.kind)),
        .used_for = row.used_for,
        .without = row.without,
        .fixes = present ? std::vector<std::string>{}
                         : (f.user_namespace
                                ? NamespaceFixes(host, row.kind, row.config_option)
                                : std::vector<std::string>{"comes with user namespaces (above)"})});
  }

  report.features.push_back(FeatureCheck{
      .id = "proc_mount",
      .name = "fresh /proc mount",
      .present = f.proc_mount,
      .required = required([](KernelFeatures& k) { k.proc_mount = false; }),
      .detail = Pick(f.proc_mount, "a new procfs mounts in a new PID namespace",
                     "mount(\"proc\") in a new PID namespace fails or was not tried"),
      .used_for = "a /proc that shows only the sandbox's own processes",
      .without = "the namespace sandbox cannot start (the host's /proc would expose other "
                 "processes' files)",
      .fixes = f.proc_mount ? std::vector<std::string>{} : ProcMountFixes(host)});

  report.features.push_back(FeatureCheck{
      .id = "mount_setattr",
      .name = "mount_setattr(2)",
      .present = f.mount_setattr,
      .required = required([](KernelFeatures& k) { k.mount_setattr = false; }),
      .detail = Pick(f.mount_setattr, "recursive read-only remounts work",
                     "mount_setattr is missing or refused"),
      .used_for = "making the host tree read-only recursively in one step",
      .without = "the read-only host view cannot be built: the namespace sandbox cannot start",
      .fixes = f.mount_setattr ? std::vector<std::string>{} : MountSetattrFixes(host)});

  const int abi_required = report.landlock_abi_required;
  const bool landlock_ok = f.landlock_abi >= 1 && f.landlock_abi >= abi_required;
  report.features.push_back(FeatureCheck{
      .id = "landlock",
      .name = "Landlock",
      .present = landlock_ok,
      .required = abi_required > 0,
      .detail = f.landlock_abi > 0
                    ? fmt::format("ABI {} (newest known to cordon: {})", f.landlock_abi,
                                  kNewestLandlockAbi)
                    : "landlock_create_ruleset fails: not built, not enabled, or refused",
      .used_for = "a second layer under the mount view: write rules, TCP rules (ABI >= 4), "
                  "abstract-socket and signal scoping (ABI >= 6); the only filesystem layer "
                  "without namespaces",
      .without = "writes are confined by the mount namespace alone (one layer instead of two); "
                 "without namespaces either, nothing confines writes",
      .fixes = landlock_ok ? std::vector<std::string>{}
                           : LandlockFixes(host, f.landlock_abi, abi_required)});

  report.features.push_back(FeatureCheck{
      .id = "seccomp",
      .name = "seccomp filters",
      .present = f.seccomp,
      .required = required([](KernelFeatures& k) { k.seccomp = false; }),
      .detail = Pick(f.seccomp, "a filter installs after no_new_privs",
                     "prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER) fails"),
      .used_for = "refusing dangerous calls in the sandbox: new namespaces and mounts, keyrings, "
                  "bpf, io_uring, TIOCSTI, and socket families when the network is denied",
      .without = "those calls stay open to the command; cordon refuses to run (fail closed)",
      .fixes = f.seccomp ? std::vector<std::string>{} : SeccompFixes(host)});

  report.features.push_back(FeatureCheck{
      .id = "seccomp_listener",
      .name = "seccomp user notification",
      .present = f.seccomp_listener,
      .required = false,
      .detail = Pick(f.seccomp_listener, "a filter with a listener installs",
                     "seccomp(SECCOMP_FILTER_FLAG_NEW_LISTENER) fails (EBUSY: this process runs "
                     "under a sandbox whose filter has one already)"),
      .used_for = "the supervisor performs the command's connect() calls, so host unix sockets "
                  "bound during a run outside the writable areas stay unreachable "
                  "(docs/decisions/0019)",
      .without = "below Landlock ABI 9 a host socket bound while the command runs is reachable "
                 "(inside cordon, the outer sandbox's broker still applies)",
      .fixes = f.seccomp_listener
                   ? std::vector<std::string>{}
                   : std::vector<std::string>{
                         "run cordon outside other sandboxes that broker system calls (Linux >= "
                         "5.0 has user notification)"}});

  report.features.push_back(FeatureCheck{
      .id = "pidfd",
      .name = "pidfd",
      .present = f.pidfd,
      .required = required([](KernelFeatures& k) { k.pidfd = false; }),
      .detail = Pick(f.pidfd, "pidfd_open works", "pidfd_open fails"),
      .used_for = "waiting for and killing the command's init without pid-reuse races",
      .without = "the supervisor falls back to the pid and polls for the exit more often",
      .fixes = f.pidfd ? std::vector<std::string>{} : PidfdFixes()});

  // What the limits probe found usable (cgroup v2 with delegation, or the v1 controllers as
  // root on a hybrid host; src/limits/cgroup.h), not only whether v2 is writable.
  const limits::CgroupSupport& cgroups = f.limits.cgroups;
  const bool memory_ok = cgroups.memory.version != limits::CgroupVersion::kNone;
  const bool pids_ok = cgroups.pids.version != limits::CgroupVersion::kNone;
  auto where = [](const limits::CgroupController& c) {
    return c.version == limits::CgroupVersion::kNone
               ? std::string("unusable")
               : fmt::format("cgroup {} below {}",
                             c.version == limits::CgroupVersion::kV2 ? "v2" : "v1",
                             c.parent.string());
  };
  report.features.push_back(FeatureCheck{
      .id = "cgroups",
      .name = "cgroups for per-run limits",
      .present = memory_ok && pids_ok,
      .required = required([](KernelFeatures& k) { k.limits.cgroups = {}; }),
      .detail = fmt::format("memory: {}; pids: {}{}{}", where(cgroups.memory), where(cgroups.pids),
                            cgroups.notes.empty() ? "" : "; ", cgroups.notes),
      .used_for = "memory and process-count limits of the whole process tree (limits.memory_bytes, "
                  "limits.processes)",
      .without = "limits.memory_bytes cannot be enforced (a run that sets it is refused); "
                 "limits.processes falls back to RLIMIT_NPROC (unprivileged, with user "
                 "namespaces) or is refused",
      .fixes = memory_ok && pids_ok ? std::vector<std::string>{} : CgroupFixes(host)});

  const bool reaper = !host.init_reaper_path.empty();
  report.features.push_back(FeatureCheck{
      .id = "init_reaper",
      .name = "cordon-init",
      .present = reaper,
      .required = false,
      .detail = reaper ? host.init_reaper_path
                       : (host.init_reaper_problem.empty() ? std::string("not found")
                                                           : host.init_reaper_problem),
      .used_for = "the sandbox's PID 1 once the command has started, and the sandboxes that the "
                  "run server and the MCP server prepare ahead of each command",
      .without = "each sandbox's init stays a copy of the cordon process, and long-lived "
                 "sessions prepare no sandboxes: served commands start more slowly",
      .fixes = reaper ? std::vector<std::string>{}
                      : std::vector<std::string>{
                            "install cordon-init next to cordon (libexec/cordon/cordon-init), "
                            "owned by root or you, not writable by others, with a single link: "
                            "remove other hard links to it (perf's build-id cache makes one: "
                            "find ~/.debug -samefile <cordon-init> -delete; profile with perf "
                            "record --no-buildid-cache)"}});

  const bool resolver = !host.resolver_path.empty();
  report.features.push_back(FeatureCheck{
      .id = "resolver",
      .name = "cordon-resolver",
      .present = resolver,
      .required = config.sandbox.mode != SandboxMode::kOff &&
                  config.sandbox.network == NetworkPolicy::kDomains,
      .detail = resolver ? host.resolver_path
                         : (host.resolver_problem.empty() ? std::string("not found")
                                                          : host.resolver_problem),
      .used_for = "network by domain: it answers the sandbox's lookups (sandbox.network: "
                  "domains, --allow-domain)",
      .without = "a run with network by domain is refused; the other network modes work",
      .fixes = resolver ? std::vector<std::string>{}
                        : std::vector<std::string>{
                              "install cordon-resolver next to cordon "
                              "(libexec/cordon/cordon-resolver), owned by root or you, not "
                              "writable by others, with a single link"}});

  const bool bwrap = !host.bwrap_path.empty();
  report.features.push_back(FeatureCheck{
      .id = "bubblewrap",
      .name = "bubblewrap (bwrap)",
      .present = bwrap,
      .required = config.sandbox.mode != SandboxMode::kOff &&
                  config.sandbox.backend == BackendChoice::kBwrap,
      .detail = bwrap ? fmt::format("{}{}", host.bwrap_path, host.bwrap_setuid ? " (setuid)" : "")
                      : "bwrap not found on PATH",
      .used_for = "the bubblewrap backend (--backend bwrap), and auto where the native "
                  "backend's namespaces are unusable but bwrap (setuid) can build them",
      .without = "--backend bwrap is refused; auto falls back to Landlock only where the native "
                 "namespaces are unusable",
      .fixes = bwrap ? std::vector<std::string>{} : BubblewrapFixes()});

  report.ok = report.capabilities.can_run();
  for (const FeatureCheck& check : report.features) {
    if (check.required && !check.present) report.ok = false;
  }
  return report;
}

nlohmann::json DoctorReportToJson(const DoctorReport& report, const Config& config,
                                  const KernelFeatures& f, const HostFacts& host) {
  nlohmann::json features = nlohmann::json::array();
  for (const FeatureCheck& c : report.features) {
    features.push_back({{"id", c.id},
                        {"name", c.name},
                        {"present", c.present},
                        {"required", c.required},
                        {"detail", c.detail},
                        {"used_for", c.used_for},
                        {"without", c.without},
                        {"fixes", c.fixes}});
  }
  nlohmann::json levels = nlohmann::json::array();
  for (const LandlockLevel& level : kLandlockLevels) {
    levels.push_back({{"abi", level.abi},
                      {"linux", level.linux_version},
                      {"adds", level.adds},
                      {"present", f.landlock_abi >= level.abi}});
  }
  nlohmann::json sysctls = nlohmann::json::object();
  for (const auto& [name, value] : host.sysctls) {
    sysctls[name] = value ? nlohmann::json(*value) : nlohmann::json(nullptr);
  }
  return {{"ok", report.ok},
          {"configuration",
           {{"mode", SandboxModeName(config.sandbox.mode)},
            {"network", NetworkPolicyName(config.sandbox.network)},
            {"backend", BackendChoiceName(config.sandbox.backend)}}},
          {"kernel", {{"release", host.kernel_release}, {"landlock_abi", f.landlock_abi}}},
          {"host",
           {{"uid", host.uid},
            {"inside_cordon", host.inside_cordon},
            {"container", host.container},
            {"seccomp_mode", host.seccomp_mode},
            {"seccomp_filters", host.seccomp_filters},
            {"no_new_privs", host.no_new_privs},
            {"lsm", host.lsm},
            {"cgroup",
             {{"v2", host.cgroup2},
              {"path", host.cgroup_path},
              {"writable", host.cgroup_writable},
              {"controllers", host.cgroup_controllers}}}}},
          {"sysctls", sysctls},
          {"features", features},
          {"landlock_abi_levels", levels},
          {"landlock_abi_required", report.landlock_abi_required},
          {"probe_notes", f.notes},
          {"capabilities", report::CapabilitiesToJson(report.capabilities)}};
}

}  // namespace cordon::cli
