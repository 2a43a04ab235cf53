// Plan and DescribeCapabilities: the pure decisions of the native backend. Everything here is
// computed from the config, the kernel probe and the request; the backend only replays it.
#include <fmt/format.h>

#include "core/paths.h"
#include "linux/system_headers/landlock.h"
#include "plan/assessment.h"
#include "plan/environment.h"
#include "plan/hidden_paths.h"
#include "plan/launch_plan.h"
#include "plan/mount_ops.h"

namespace cordon::plan {
namespace {

namespace lsys = linux_native::sys;

std::string JoinMissing(const std::vector<std::string>& missing) {
  std::string text = "cannot sandbox as configured (fail closed): ";
  for (std::size_t i = 0; i < missing.size(); ++i) {
    if (i > 0) text += "; ";
    text += missing[i];
  }
  return text;
}

Result<std::filesystem::path> ResolveCwd(const PlanRequest& request) {
  if (request.cwd.empty()) return request.workspace;
  CORDON_TRY(std::filesystem::path cwd, core::Canonical(request.cwd));
  if (!core::IsWithin(cwd, request.workspace)) {
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("working directory {} is outside the workspace {}", cwd.string(),
                            request.workspace.string()));
  }
  return cwd;
}

// Landlock as the second layer on writes (the first when there is no mount namespace), TCP
// rules only when nothing else denies the network, and IPC scoping where the ABI has it.
LandlockRules BuildLandlock(const Config& config, const Assessment& a, int abi,
                            const std::vector<std::filesystem::path>& writable_roots) {
  LandlockRules rules;
  if (abi < 1) return rules;
  rules.abi = abi;
  rules.handled_fs = lsys::WriteFsAccess(abi);
  rules.writable = writable_roots;
  // The private tmpfs mounts exist only with a mount namespace; without one /tmp is the host's
  // (the backend then adds its own private directory).
  if (a.namespaces.mount) {
    rules.writable.emplace_back(kPrivateTmp);
    if (auto var_tmp = core::Canonical("/var/tmp"); var_tmp && *var_tmp != kPrivateTmp) {
      rules.writable.push_back(*var_tmp);
    }
  }
  // /dev/null, /dev/tty and the pts instance are written by ordinary tools.
  rules.writable.emplace_back("/dev");
  if (a.landlock_tcp) rules.handled_net = lsys::kAccessNetBindTcp | lsys::kAccessNetConnectTcp;
  if (abi >= 6) {
    rules.scoped = lsys::kScopeSignal;
    // Host abstract sockets (X11, D-Bus, ...) are network access in disguise when the network
    // is denied; with network allow they are part of what the user allowed.
    if (config.sandbox.network == NetworkPolicy::kDeny) {
      rules.scoped |= lsys::kScopeAbstractUnixSocket;
    }
  }
  return rules;
}

}  // namespace

Result<LaunchPlan> Plan(const Config& config, const linux_native::KernelFeatures& features,
                        const PlanRequest& request) {
  if (request.argv.empty()) return Fail(ErrorCode::kInvalidArgument, "empty command");
  if (!request.workspace.is_absolute()) {
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("workspace {} is not an absolute path", request.workspace.string()));
  }
  LaunchPlan plan;
  plan.argv = request.argv;
  plan.workspace = request.workspace;
  CORDON_TRY(plan.cwd, ResolveCwd(request));

  Assessment a = Assess(config, features);
  plan.enforcement = a.enforcement;
  if (config.sandbox.mode == SandboxMode::kOff) {
    // Unsandboxed on purpose (explicit `off` / --unsafe): the caller's own behaviour, including
    // its environment.
    plan.sandboxed = false;
    plan.env = request.caller_env;
    return plan;
  }
  if (!a.missing.empty()) return Fail(ErrorCode::kUnavailable, JoinMissing(a.missing));

  CORDON_TRY(std::vector<std::filesystem::path> roots,
             WritableRoots(config.sandbox, request.workspace));
  plan.namespaces = a.namespaces;
  if (a.namespaces.mount) {
    plan.mounts = BuildMountOps(config.sandbox, request.workspace, roots);
    // Masks after the writable binds, so a secret inside a writable root is hidden as well.
    std::vector<MountOp> hidden = BuildHiddenPathOps(config.sandbox, request.caller_home);
    plan.mounts.insert(plan.mounts.end(), hidden.begin(), hidden.end());
    if (config.sandbox.network == NetworkPolicy::kDeny) {
      std::vector<MountOp> runtime = BuildRuntimeDirMasks(roots);
      plan.mounts.insert(plan.mounts.end(), runtime.begin(), runtime.end());
    }
  }
  plan.landlock = BuildLandlock(config, a, features.landlock_abi, roots);
  plan.seccomp = SeccompSettings{.enabled = true, .sockets = a.sockets};
  plan.home = kPrivateHome;
  plan.tmpdir = kPrivateTmp;
  plan.env = BuildEnvironment(request.caller_env, config.environment, plan.home, plan.tmpdir);
  return plan;
}

Capabilities DescribeCapabilities(const Config& config,
                                  const linux_native::KernelFeatures& features) {
  Assessment a = Assess(config, features);
  Capabilities caps;
  caps.mode = config.sandbox.mode;
  caps.network = config.sandbox.network;
  caps.backend = a.enforcement.backend;
  if (config.sandbox.mode == SandboxMode::kOff) {
    caps.backend_reason = "mode off: commands run unsandboxed";
  } else if (a.namespaces.mount) {
    caps.backend_reason = "native: user, mount and PID namespaces are available";
  } else {
    caps.backend_reason = "native without namespaces: Landlock and seccomp only";
  }
  caps.enforcement = a.enforcement;
  caps.filesystem_enforced = a.filesystem_enforced;
  caps.network_enforced = a.network_enforced;
  caps.missing = a.missing;
  caps.unsupported = a.unsupported;
  return caps;
}

}  // namespace cordon::plan
