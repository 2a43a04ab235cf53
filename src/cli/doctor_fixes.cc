#include "cli/doctor_fixes.h"

#include <fmt/format.h>

#include "cli/doctor_report.h"

namespace cordon::cli {
namespace {

std::string Sysctl(const HostFacts& host, const std::string& name) {
  auto it = host.sysctls.find(name);
  if (it == host.sysctls.end() || !it->second) return "";
  return *it->second;
}

std::string Persist(const std::string& assignment) {
  return fmt::format(
      "sysctl -w {0}  (to keep it after a reboot: echo '{0}' > "
      "/etc/sysctl.d/60-cordon.conf)",
      assignment);
}

// Container flags that lift a runtime's default seccomp and AppArmor confinement of
// unshare/mount, for the runtime doctor detected (all of them when it saw none).
void AddContainerFixes(const HostFacts& host, std::vector<std::string>& fixes) {
  const std::string& c = host.container;
  if (c.empty() || c == "docker" || c == "podman") {
    fixes.push_back(
        "Docker/Podman: their default seccomp profile refuses unshare(CLONE_NEWUSER) and their "
        "default AppArmor profile refuses mount: start the container with --security-opt "
        "seccomp=unconfined --security-opt apparmor=unconfined (or a seccomp profile that "
        "also allows unshare, clone, setns, mount, umount2, pivot_root and mount_setattr)");
  }
  if (c.empty() || c == "kubernetes") {
    fixes.push_back(
        "Kubernetes: set the pod's securityContext.seccompProfile.type: Unconfined and "
        "appArmorProfile.type: Unconfined");
  }
  if (c.empty() || c == "systemd-nspawn") {
    fixes.push_back(
        "systemd-nspawn: allow the calls with --system-call-filter='unshare setns mount "
        "umount2 pivot_root mount_setattr' (unverified: check the defaults of your systemd "
        "version)");
  }
  if (c.empty() || c == "lxc") {
    fixes.push_back("LXC/Incus: set security.nesting=true on the container");
  }
}

}  // namespace

std::vector<std::string> UserNamespaceFixes(const HostFacts& host) {
  std::vector<std::string> fixes;
  if (host.inside_cordon) {
    fixes.push_back(
        "this cordon runs inside a cordon sandbox (CORDON_SANDBOX=1), whose seccomp filter "
        "refuses new user namespaces by design; nested sandboxes are not supported yet: run "
        "this cordon outside the sandbox");
  } else if (host.seccomp_mode == 2) {
    fixes.push_back(fmt::format(
        "this process already runs under {} seccomp filter(s): a container runtime, a systemd "
        "unit's SystemCallFilter= or an outer sandbox (cordon's own sandbox among them) refuses "
        "new user namespaces. Run cordon outside that sandbox, or relax the filter as below",
        host.seccomp_filters));
  }
  if (Sysctl(host, "kernel.unprivileged_userns_clone") == "0") {
    fixes.push_back(Persist("kernel.unprivileged_userns_clone=1"));
  }
  if (Sysctl(host, "user.max_user_namespaces") == "0") {
    fixes.push_back(Persist("user.max_user_namespaces=15000"));
  }
  if (Sysctl(host, "kernel.apparmor_restrict_unprivileged_userns") == "1") {
    const std::string exe = host.self_exe.empty() ? "/usr/bin/cordon" : host.self_exe;
    fixes.push_back(fmt::format(
        "Ubuntu restricts unprivileged user namespaces through AppArmor: give cordon a profile "
        "that allows them. Write /etc/apparmor.d/cordon containing\n"
        "  abi <abi/4.0>,\n  include <tunables/global>\n"
        "  profile cordon {} flags=(unconfined) {{\n    userns,\n  }}\n"
        "then run: apparmor_parser -r /etc/apparmor.d/cordon. (Or lift the restriction for the "
        "whole machine: {})",
        exe, Persist("kernel.apparmor_restrict_unprivileged_userns=0")));
  }
  if (host.seccomp_mode == 2 || !host.container.empty()) AddContainerFixes(host, fixes);
  if (fixes.empty()) {
    fixes.push_back(
        "no sysctl here restricts user namespaces: the kernel may lack CONFIG_USER_NS=y, or a "
        "security module refuses them; if cordon runs in a container, see below");
    AddContainerFixes(host, fixes);
  }
  return fixes;
}

std::vector<std::string> NamespaceFixes(const HostFacts& host, const std::string& kind,
                                        const std::string& config_option) {
  std::vector<std::string> fixes = {fmt::format(
      "a kernel with {}=y; the {} namespace limit (user.max_*_namespaces) must be above 0",
      config_option, kind)};
  if (host.seccomp_mode == 2 || !host.container.empty()) AddContainerFixes(host, fixes);
  return fixes;
}

std::vector<std::string> ProcMountFixes(const HostFacts& host) {
  std::vector<std::string> fixes = {
      "the container masks parts of /proc (read-only or empty mounts over /proc/sys, "
      "/proc/kcore, ...), so the kernel refuses a fresh /proc. Docker: --security-opt "
      "systempaths=unconfined; Podman: --security-opt unmask=ALL; Kubernetes: "
      "securityContext.procMount: Unmasked (needs a pod with hostUsers: false)"};
  if (host.container.empty()) {
    fixes.push_back("outside a container: check that /proc is mounted and not overmounted");
  }
  return fixes;
}

std::vector<std::string> MountSetattrFixes(const HostFacts& host) {
  std::vector<std::string> fixes = {
      fmt::format("Linux 5.12 or later (this kernel: {})", host.kernel_release)};
  if (host.seccomp_mode == 2 || !host.container.empty()) {
    fixes.push_back(
        "in a container: a seccomp profile that allows mount_setattr (older runtimes' default "
        "profiles predate it), or --security-opt seccomp=unconfined");
  }
  return fixes;
}

std::vector<std::string> LandlockFixes(const HostFacts& host, int abi, int abi_required) {
  std::vector<std::string> fixes;
  if (abi == 0) {
    if (!host.lsm.empty() && host.lsm.find("landlock") == std::string::npos) {
      fixes.push_back(fmt::format(
          "Landlock is built but not enabled: add it to the kernel command line, "
          "lsm=landlock,{} (e.g. GRUB_CMDLINE_LINUX in /etc/default/grub, then update-grub and "
          "reboot)",
          host.lsm));
    } else {
      fixes.push_back(
          "Linux 5.13 or later built with CONFIG_SECURITY_LANDLOCK=y, and \"landlock\" in the "
          "lsm= boot parameter (e.g. lsm=landlock,lockdown,yama,integrity,apparmor)");
    }
    if (host.seccomp_mode == 2 || !host.container.empty()) {
      fixes.push_back(
          "in a container: a seccomp profile that allows landlock_create_ruleset, "
          "landlock_add_rule and landlock_restrict_self");
    }
  }
  if (abi_required > abi && abi_required <= kNewestLandlockAbi) {
    const LandlockLevel& level = kLandlockLevels[abi_required - 1];
    fixes.push_back(
        fmt::format("this configuration needs Landlock ABI {} ({}): Linux {} or later "
                    "(this kernel: {})",
                    level.abi, level.adds, level.linux_version, host.kernel_release));
  }
  return fixes;
}

std::vector<std::string> SeccompFixes(const HostFacts& host) {
  std::vector<std::string> fixes = {
      "a kernel built with CONFIG_SECCOMP=y and CONFIG_SECCOMP_FILTER=y"};
  if (!host.container.empty()) {
    fixes.push_back(
        "in a container: a runtime that lets the container install its own filters "
        "(gVisor and some emulated environments do not)");
  }
  return fixes;
}

std::vector<std::string> PidfdFixes() { return {"Linux 5.3 or later (pidfd_open)"}; }

std::vector<std::string> CgroupFixes(const HostFacts& host) {
  std::vector<std::string> fixes;
  if (!host.cgroup2) {
    fixes.push_back(
        "boot with the unified cgroup v2 hierarchy: systemd.unified_cgroup_hierarchy=1 on the "
        "kernel command line (the default since systemd 247 on most distributions)");
    return fixes;
  }
  fixes.push_back(fmt::format(
      "delegate a cgroup to this user: run cordon inside a delegated scope, e.g. systemd-run "
      "--user --scope -p Delegate=yes cordon ... (this process's cgroup {} is not writable)",
      host.cgroup_path.empty() ? "(unknown)" : host.cgroup_path));
  if (!host.container.empty()) {
    fixes.push_back(
        "in a container: give it a private, writable cgroup namespace (Docker: "
        "--cgroupns=private on a cgroup v2 host)");
  }
  return fixes;
}

std::vector<std::string> BubblewrapFixes() {
  return {"install it: apt install bubblewrap (Debian/Ubuntu) or dnf install bubblewrap"};
}

}  // namespace cordon::cli
