// Facts about this machine that `cordon doctor` needs beyond the kernel probe: the sysctls that
// gate user namespaces, whether this process already runs under a seccomp filter or in a
// container, the active LSMs, cgroup v2 delegation and the bubblewrap binary. Read from
// /proc/sys, /proc/self and /sys directly (never by running sysctl or another program), so the
// answer is the same inside a sandbox that has no such programs.
#pragma once

#include <map>
#include <optional>
#include <string>

namespace cordon::cli {

struct HostFacts {
  std::string kernel_release;  // uname -r
  unsigned uid = 0;            // effective uid
  std::string self_exe;        // this cordon binary (/proc/self/exe), for an AppArmor profile
  // Sysctl name (dotted, e.g. "user.max_user_namespaces") → value; nullopt when the file does
  // not exist on this kernel (e.g. unprivileged_userns_clone outside Debian/Ubuntu kernels).
  std::map<std::string, std::optional<std::string>> sysctls;
  // /proc/self/status: "Seccomp: 2" means a filter is already installed on this process (a
  // container runtime's profile, systemd's SystemCallFilter=, or an outer sandbox).
  int seccomp_mode = 0;
  int seccomp_filters = 0;
  bool no_new_privs = false;
  // CORDON_SANDBOX=1 in the environment: this process runs inside a cordon sandbox, whose
  // seccomp filter refuses new namespaces (a hint only: the probe decides what works).
  bool inside_cordon = false;
  // "docker", "podman", "systemd-nspawn", "lxc", "kubernetes", ... or empty when none is seen.
  std::string container;
  // /sys/kernel/security/lsm, e.g. "lockdown,capability,landlock,yama,apparmor"; empty when it
  // cannot be read (securityfs not mounted, or not readable for this user).
  std::string lsm;
  bool cgroup2 = false;            // /sys/fs/cgroup is a cgroup v2 hierarchy
  std::string cgroup_path;         // this process's cgroup ("0::/user.slice/...")
  bool cgroup_writable = false;    // this process may create a child cgroup there
  std::string cgroup_controllers;  // cgroup.controllers of that cgroup ("cpu memory pids")
  std::string bwrap_path;          // bwrap found on PATH (or /usr/bin/bwrap); empty: not found
  bool bwrap_setuid = false;
  // cordon-init (linux/init_reaper.h): its path when usable, else why not (Linux only).
  std::string init_reaper_path;
  std::string init_reaper_problem;
  // cordon-resolver (linux/resolver_program.h), the same way.
  std::string resolver_path;
  std::string resolver_problem;
};

// The sysctls doctor reports (dotted names).
inline constexpr const char* kDoctorSysctls[] = {
    "kernel.unprivileged_userns_clone",              // Debian/Ubuntu kernels only
    "user.max_user_namespaces",                      //
    "kernel.apparmor_restrict_unprivileged_userns",  // Ubuntu 23.10 and later
    "user.max_mnt_namespaces",                       //
    "user.max_pid_namespaces",                       //
    "user.max_net_namespaces",                       //
    "kernel.seccomp.actions_avail",                  //
};

// Reads every fact; a fact that cannot be read stays at its default. Never fails.
HostFacts ReadHostFacts();

// The value of /proc/sys/<name with dots as slashes>, trimmed; nullopt when absent.
std::optional<std::string> ReadSysctl(const std::string& dotted_name);

}  // namespace cordon::cli
