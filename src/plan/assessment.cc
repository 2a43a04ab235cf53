#include "plan/assessment.h"

#include <fmt/format.h>

#include <utility>

#include "plan/backend_selection.h"

namespace cordon::plan {
namespace {

using linux_native::KernelFeatures;

// Why the namespace layer is unusable, with the fix, in the words `cordon doctor` shows.
std::string WhyNoNamespaces(const KernelFeatures& f) {
  if (!f.user_namespace) {
    return "user namespaces are unavailable to this user (fix: sysctl "
           "kernel.unprivileged_userns_clone=1 on Debian, or "
           "kernel.apparmor_restrict_unprivileged_userns=0 on Ubuntu, and "
           "user.max_user_namespaces > 0; in Docker add --security-opt seccomp=unconfined "
           "--security-opt apparmor=unconfined)";
  }
  if (!f.mount_namespace || !f.pid_namespace) {
    return "mount or PID namespaces cannot be created inside a user namespace (fix: a kernel "
           "with CONFIG_PID_NS and CONFIG_USER_NS, or allow unshare in the container's seccomp "
           "profile)";
  }
  if (!f.proc_mount) {
    return "a fresh /proc cannot be mounted in a new PID namespace (the container masks parts "
           "of /proc; fix: run the container with an unmasked /proc: docker --security-opt "
           "systempaths=unconfined, podman --security-opt unmask=ALL)";
  }
  if (!f.mount_setattr) return "mount_setattr(2) is missing (fix: Linux >= 5.12)";
  return "namespaces are usable";
}

std::string WhyNoLandlock(const KernelFeatures& f) {
  if (f.landlock_abi >= 1) return fmt::format("Landlock ABI {} is available", f.landlock_abi);
  return "Landlock is unavailable (fix: Linux >= 5.13 with CONFIG_SECURITY_LANDLOCK=y and "
         "\"landlock\" in the lsm= boot parameter)";
}

// A resource limit that is set but that nothing on this machine can enforce (decision 0007):
// the same check, and the same words, as PlanLimits.
void AssessLimits(const LimitsConfig& limits, const KernelFeatures& f, bool user_namespace,
                  Assessment& a) {
  Result<limits::LimitsPlan> planned = limits::PlanLimits(limits, f.limits, user_namespace);
  if (!planned) a.missing.push_back(planned.error().message);
}

// Network by domain (decision 0050): the sandbox's own network namespace, where the command's
// process binds the resolver's port before dropping its capabilities, and the connect broker,
// which makes the allowed connects outside and puts them in place (seccomp's ADDFD).
void AssessDomains(const KernelFeatures& f, bool use_bwrap, Assessment& a) {
  if (use_bwrap) {
    a.missing.push_back(
        "sandbox.network \"domains\" needs the native backend: bubblewrap drops every "
        "capability before cordon's code runs in its sandbox, so the sandbox's resolver cannot "
        "bind port 53 there (fix: --backend native, or --network deny or allow)");
  } else if (!a.namespaces.net) {
    a.missing.push_back(fmt::format(
        "sandbox.network \"domains\" needs a network namespace of the sandbox's own, and {} "
        "(fix: enable user namespaces, or --network deny or allow)",
        f.namespaces_usable() ? "unshare(CLONE_NEWNET) fails" : WhyNoNamespaces(f)));
  }
  if (!f.seccomp_listener) {
    a.missing.push_back(
        "sandbox.network \"domains\" needs seccomp user notification with ADDFD (Linux >= "
        "5.9), which cordon makes allowed connects through (fix: a newer kernel, or --network "
        "deny or allow)");
  }
}

// Seatbelt (macOS): the profile confines writes, hides the credential paths and denies the
// network; nothing of the Linux layers applies (docs/decisions/0020).
void AssessSeatbelt(const Config& config, const KernelFeatures& f, Assessment& a) {
  // Network by domain is confined like deny: no inet socket at all.
  const bool network_deny = config.sandbox.network != NetworkPolicy::kAllow;
  a.path_rules = true;
  if (config.sandbox.network == NetworkPolicy::kDomains) {
    a.missing.push_back(
        "sandbox.network \"domains\" is not available on the seatbelt backend yet (fix: "
        "--network deny, or --network allow)");
  }
  a.sockets = network_deny ? SocketPolicy::kUnixAndNetlink : SocketPolicy::kAny;
  AssessLimits(config.limits, f, /*user_namespace=*/false, a);
  // The hidden home is the profile's: reads denied beneath each home except the grants.
  a.home = config.sandbox.home == HomeView::kAuto ? HomeView::kHidden : config.sandbox.home;
  a.filesystem_enforced = a.missing.empty();
  a.network_enforced = network_deny && a.missing.empty();
  a.enforcement.filesystem = a.filesystem_enforced;
  a.enforcement.network = a.network_enforced;
  a.unsupported = {
      "seatbelt backend: not yet verified on a Mac (the profile is golden-tested, the launcher "
      "tested against a fake sandbox-exec on Linux)",
      "seatbelt backend: no PID namespace (the command sees the host's processes; its process "
      "group is killed when it exits or times out, a process that leaves the group by setsid "
      "survives the run)",
      "seatbelt backend: /tmp is the host's and read-only to the command (TMPDIR and HOME point "
      "to a private directory, removed after the run)",
      "seatbelt backend: hidden paths are denied by path (their names stay listable where "
      "their directory is readable: inside a grant or the workspace)",
      "seatbelt backend: the host's unix sockets inside the writable areas stay reachable (with "
      "network allow also the resolver's, mDNSResponder)",
  };
  if (a.home == HomeView::kHidden) {
    a.unsupported.push_back(
        "seatbelt backend: the hidden home is denied by path (neither readable nor listable, "
        "what the host creates there later too; stat of the directories leading to a grant "
        "is allowed): a file of it reached another way (a hard link outside the home, another "
        "volume with the home on it) is not hidden there");
  } else {
    a.unsupported.push_back(
        "secret path hiding beyond the built-in list and sandbox.hidden_paths (other files "
        "under the real home stay readable; sandbox.home \"hidden\" shows only what is "
        "granted)");
  }
}

}  // namespace

Assessment Assess(const Config& config, const KernelFeatures& f, const BackendProbes& backends) {
  Assessment a;
  const SandboxConfig& sandbox = config.sandbox;
  if (sandbox.mode == SandboxMode::kOff) {
    a.enforcement.backend = "none";
    // No sandbox is asked for; the resource limits still apply to the command.
    AssessLimits(config.limits, f, /*user_namespace=*/false, a);
    return a;  // network_enforced stays false
  }
  const BackendSelection selection = SelectBackend(config, f, backends);
  const bool use_bwrap = selection.backend == Backend::kBwrap;
  a.enforcement.backend = BackendName(selection.backend);
  a.backend_reason = selection.reason;
  a.missing = selection.missing;
  if (selection.backend == Backend::kSeatbelt) {
    AssessSeatbelt(config, f, a);
    return a;
  }
  // bubblewrap's trampoline sets no rlimits and joins no cgroup: a set limit is refused.
  if (use_bwrap) {
    const LimitsConfig& set = config.limits;
    for (const auto& [name, value] :
         {std::pair{"memory_bytes", set.memory_bytes}, std::pair{"processes", set.processes},
          std::pair{"open_files", set.open_files}, std::pair{"cpu_seconds", set.cpu_seconds}}) {
      if (value != 0) {
        a.missing.push_back(fmt::format(
            "limits.{} is set, but the bwrap backend does not enforce resource limits (fix: "
            "backend native, or set it to 0)",
            name));
      }
    }
  }
  // bubblewrap builds its own namespaces (setuid, or where the native mount view cannot).
  const bool use_ns = use_bwrap || f.namespaces_usable();
  // Network by domain starts from deny: the sandbox's own network namespace, which the
  // supervisor's resolver and connects open to the allowed names (docs/network-domains.md).
  const bool network_deny = sandbox.network != NetworkPolicy::kAllow;

  if (use_bwrap) {
    a.namespaces = Namespaces{.user = !backends.bwrap.setuid || f.user_namespace,
                              .mount = true,
                              .pid = true,
                              .net = network_deny,
                              .ipc = true,
                              .uts = true};
  } else if (use_ns) {
    a.namespaces = Namespaces{.user = true,
                              .mount = true,
                              .pid = true,
                              .net = network_deny && f.net_namespace,
                              .ipc = f.ipc_namespace,
                              .uts = f.uts_namespace};
  }
  const bool landlock = f.landlock_abi >= 1;

  // Filesystem: the mount view, or Landlock alone; with neither, refuse.
  if (!use_ns && !landlock) {
    a.missing.push_back(
        fmt::format("mode {} needs filesystem confinement, but neither namespaces nor Landlock is "
                    "available: {}; {}",
                    SandboxModeName(sandbox.mode), WhyNoNamespaces(f), WhyNoLandlock(f)));
  } else if (!use_ns) {
    // The Landlock-only fallback (docs/decisions/0005). Landlock rights granted on a directory
    // cover everything beneath it, so a .git inside a writable root cannot be excluded (nor
    // its creation refused): fail closed instead of running with unprotected git metadata.
    a.fallback = true;
    if (sandbox.mode == SandboxMode::kWorkspaceWrite && sandbox.protect_git_metadata) {
      a.missing_unless_view_holds.push_back(fmt::format(
          "protect_git_metadata needs a mount namespace (Landlock cannot keep .git read-only "
          "inside a writable workspace), and {} (fix: enable user namespaces, or set "
          "sandbox.protect_git_metadata to false to accept that the command may write .git)",
          WhyNoNamespaces(f)));
    }
    if (sandbox.mode == SandboxMode::kWorkspaceWrite && sandbox.protect_host_run_files) {
      a.missing_unless_view_holds.push_back(fmt::format(
          "protect_host_run_files needs a mount namespace (Landlock cannot keep agent and editor "
          "configs such as .claude/ or .mcp.json read-only inside a writable workspace), and {} "
          "(fix: enable user namespaces, or set sandbox.protect_host_run_files to false to "
          "accept that the command may rewrite what host tools run)",
          WhyNoNamespaces(f)));
    }
    if (sandbox.home == HomeView::kAuto) {
      a.unsupported.push_back(fmt::format(
          "the real homes are read-only, not hidden: sandbox.home \"auto\" hides them only in "
          "a mount namespace, and {} (fix: enable user namespaces)",
          WhyNoNamespaces(f)));
    } else if (sandbox.home == HomeView::kHidden) {
      a.missing.push_back(fmt::format(
          "sandbox.home \"hidden\" needs a mount namespace (Landlock alone would leave every "
          "name in the homes listable), and {} (fix: enable user namespaces, or set "
          "sandbox.home to \"read_only\")",
          WhyNoNamespaces(f)));
    }
  }
  if (!f.seccomp) {
    a.missing.push_back(
        "seccomp filters are unavailable (fix: a kernel with CONFIG_SECCOMP_FILTER=y, or a "
        "container runtime that allows seccomp(2))");
  }

  // Network deny: a private network namespace, or Landlock TCP rules plus a socket-family
  // filter (which also refuses AF_INET/AF_INET6 so UDP cannot leave either).
  if (network_deny) {
    if (a.namespaces.net) {
      a.sockets = SocketPolicy::kLocalFamilies;
    } else if (f.landlock_abi >= 4 && f.seccomp) {
      a.sockets = SocketPolicy::kUnixAndNetlink;
      a.landlock_tcp = true;
    } else {
      a.missing.push_back(fmt::format(
          "network deny needs a network namespace or Landlock ABI >= 4 with seccomp, and this "
          "machine has neither: {}; this kernel's Landlock ABI is {}{}",
          use_ns ? "unshare(CLONE_NEWNET) fails" : WhyNoNamespaces(f), f.landlock_abi,
          f.landlock_abi < 4 ? " (fix: Linux >= 6.7 for Landlock TCP rules)" : ""));
    }
  }

  if (sandbox.network == NetworkPolicy::kDomains) AssessDomains(f, use_bwrap, a);

  AssessLimits(config.limits, f, a.namespaces.user, a);

  Enforcement& e = a.enforcement;
  e.user_namespace = a.namespaces.user;
  e.mount_namespace = a.namespaces.mount;
  e.pid_namespace = a.namespaces.pid;
  e.net_namespace = a.namespaces.net;
  e.ipc_namespace = a.namespaces.ipc;
  e.landlock_abi = f.landlock_abi;
  e.seccomp = f.seccomp;
  e.capabilities_dropped = true;
  e.no_new_privs = true;
  a.filesystem_enforced = a.missing.empty();
  a.network_enforced = network_deny && a.missing.empty();
  e.filesystem = a.filesystem_enforced;
  e.network = a.network_enforced;

  a.home = sandbox.home != HomeView::kAuto ? sandbox.home
           : a.namespaces.mount            ? HomeView::kHidden
                                           : HomeView::kReadOnly;
  if (a.home == HomeView::kHidden) {
    a.unsupported.push_back(
        "the hidden home is known by its path and by the mount table (its second mounts are "
        "hidden too): a file of it reached another way (a hard link outside the home, an "
        "overlay or a network share with the home below) is not hidden there");
  } else if (sandbox.home == HomeView::kReadOnly) {
    a.unsupported.push_back(
        "secret path hiding beyond the built-in list and sandbox.hidden_paths (other files "
        "under the real home stay readable; sandbox.home \"hidden\" shows only what is "
        "granted)");
  }
  if (sandbox.mode == SandboxMode::kWorkspaceWrite &&
      (sandbox.protect_git_metadata || sandbox.protect_host_run_files)) {
    a.unsupported.push_back(fmt::format(
        "nested projects (their .git and host-run files) more than {} levels below a writable "
        "root (sandbox.nested_project_depth), or inside node_modules or a directory named like "
        "a host-run entry, are not protected; a project a command makes is protected from the "
        "next command on",
        sandbox.nested_project_depth));
  }
  // Host sockets bound during a run are closed on every kernel: the supervisor answers every
  // connect() (docs/decisions/0019).
  if (f.landlock_abi < 9) {
    a.unsupported.push_back(
        a.fallback ? "unix sockets: without a mount namespace and Landlock ABI 9 the command "
                     "cannot create AF_UNIX sockets (socket(AF_UNIX) and datagram socketpairs "
                     "are refused so that no host socket is reachable; stream and seqpacket "
                     "socketpairs work)"
                   : "datagrams sent with an explicit address (sendto/sendmsg) to a host "
                     "datagram socket bound after the command started, outside the writable "
                     "areas (connect() is checked; Landlock ABI 9 closes this)");
    if (!f.seccomp_listener) {
      a.unsupported.push_back(
          "host unix sockets bound after the command started are not refused: seccomp user "
          "notification is unavailable here (inside another sandbox that already brokers "
          "connects, that one's broker applies; Landlock ABI 9 closes this)");
    }
  } else if (!f.seccomp_listener) {
    // The outer sandbox's broker performs connect() outside this run's Landlock domain.
    a.unsupported.push_back(
        a.fallback ? "unix sockets: inside another sandbox that brokers connect(), "
                     "socket(AF_UNIX) and datagram socketpairs are refused (its broker would "
                     "connect outside this run's Landlock rules)"
                   : "connect() is answered by the outer sandbox's broker: this run's Landlock "
                     "rules for unix sockets and TCP ports do not apply to it, the outer "
                     "sandbox's do");
  }
  if (f.landlock_abi < 6) {
    a.unsupported.push_back(
        a.namespaces.net ? "abstract unix sockets are isolated by the network namespace only"
                         : "abstract unix sockets of the host stay reachable (needs a network "
                           "namespace or Landlock ABI 6)");
  }
  if (use_bwrap) {
    a.unsupported.insert(
        a.unsupported.end(),
        {"bwrap backend: /proc/fs and /proc/latency_stats stay as the kernel shows them (bwrap "
         "keeps only /proc/sys, sysrq-trigger, irq and bus read-only)"});
  }
  if (a.fallback) {
    a.unsupported.insert(
        a.unsupported.end(),
        {"fallback without namespaces: no PID namespace (the command sees the host's processes; "
         "its tree is killed by process group and a subreaper sweep, a process that leaves "
         "the group by setsid and double fork is reaped only while init lives)",
         "fallback without namespaces: /tmp is the host's and read-only to the command "
         "(TMPDIR and HOME point to a private directory)",
         "fallback without namespaces: hidden paths are enforced by a Landlock read allow-list "
         "(their names stay listable, their contents are unreadable)",
         "fallback without namespaces: root-only files stay readable to a root caller"});
    if (f.landlock_abi < 6) {
      a.unsupported.push_back(
          "fallback without namespaces: the command can signal the caller's other processes "
          "(Landlock ABI 6 scopes signals)");
    }
  }
  return a;
}

}  // namespace cordon::plan
