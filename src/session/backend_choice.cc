#include "session/backend_choice.h"

#include <fmt/format.h>
#include <stdlib.h>

#include <mutex>
#include <string>
#include <system_error>
#include <utility>

#include "core/paths.h"
#include "core/syscall_error.h"
#include "plan/backend_selection.h"
#include "seatbelt/launch.h"
#include "seatbelt/probe.h"
#if defined(__linux__)
#include "linux/launcher.h"
#endif

namespace cordon::session {
namespace {

// Set by tests and embedders before sessions are created; read once per Session::Create.
struct TrampolineOverride {
  std::mutex mutex;
  std::filesystem::path path;
  std::filesystem::path sandbox_exec;  // tests only (SetSandboxExecForTesting)
};

TrampolineOverride& Override() {
  static TrampolineOverride instance;
  return instance;
}

// [[maybe_unused]]: bubblewrap is Linux-only.
[[maybe_unused]] std::filesystem::path TrampolinePath() {
  TrampolineOverride& o = Override();
  std::lock_guard lock(o.mutex);
  return o.path;
}

std::filesystem::path SandboxExecOverride() {
  TrampolineOverride& o = Override();
  std::lock_guard lock(o.mutex);
  return o.sandbox_exec;
}

// Runs the Seatbelt probe in a scratch directory of its own, removed afterwards.
Result<void> ProbeSandboxExec(const std::filesystem::path& sandbox_exec) {
  std::string pattern = "/tmp/cordon-sb-probe-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) return core::FailSyscall("mkdtemp", pattern);
  Result<std::filesystem::path> scratch = core::Canonical(pattern);  // macOS: /private/tmp
  Result<void> probed = scratch ? seatbelt::ProbeSeatbelt(*scratch, sandbox_exec)
                                : Result<void>(std::unexpected(scratch.error()));
  std::error_code ignored;
  std::filesystem::remove_all(pattern, ignored);
  return probed;
}

void ProbeSeatbeltBackend(const Config& config, SessionBackends& backends) {
  std::filesystem::path sandbox_exec = SandboxExecOverride();
#if defined(__APPLE__)
  if (sandbox_exec.empty()) sandbox_exec = seatbelt::kSandboxExec;
#endif
  plan::SeatbeltProbe& probe = backends.probes.seatbelt;
  probe.platform = !sandbox_exec.empty();
  if (!probe.platform || !plan::NeedsSeatbeltProbe(config)) return;
  probe.probed = true;
  if (Result<void> probed = ProbeSandboxExec(sandbox_exec); !probed) {
    probe.detail = probed.error().message;
    return;
  }
  probe.usable = true;
  probe.detail = fmt::format("sandbox-exec at {} enforces a test profile", sandbox_exec.string());
  backends.sandbox_exec = std::move(sandbox_exec);
}

// Every path the command may write in any mode: bwrap and the trampoline must lie in none.
[[maybe_unused]] std::vector<std::filesystem::path> WritablePaths(
    const Config& config, const std::filesystem::path& workspace) {
  std::vector<std::filesystem::path> paths{workspace};
  for (const auto& root : config.sandbox.writable_roots) {
    Result<std::filesystem::path> canonical = core::Canonical(root);
    paths.push_back(canonical ? *canonical : root);
  }
  return paths;
}

}  // namespace

void SetBwrapTrampoline(std::filesystem::path path) {
  TrampolineOverride& o = Override();
  std::lock_guard lock(o.mutex);
  o.path = std::move(path);
}

void SetSandboxExecForTesting(std::filesystem::path path) {
  TrampolineOverride& o = Override();
  std::lock_guard lock(o.mutex);
  o.sandbox_exec = std::move(path);
}

SessionBackends ProbeBackends(const Config& config, const linux_native::KernelFeatures& features,
                              const std::filesystem::path& workspace) {
  SessionBackends backends;
  ProbeSeatbeltBackend(config, backends);
  if (!plan::NeedsBwrapProbe(config, features)) return backends;
  plan::BwrapProbe& probe = backends.probes.bwrap;
  probe.probed = true;
#if !defined(__linux__)
  (void)workspace;
  probe.detail = "bubblewrap is Linux-only (fix: backend auto or seatbelt on macOS)";
  return backends;
#else
  Result<bwrap::BwrapBackend> created =
      bwrap::BwrapBackend::Create(WritablePaths(config, workspace), {}, TrampolinePath());
  if (!created) {
    probe.detail = created.error().message;
    return backends;
  }
  const bwrap::BwrapVersion& v = created->binary().version;
  probe.usable = true;
  probe.setuid = created->setuid();
  probe.detail = fmt::format("bubblewrap {}.{}.{} at {}", v.major, v.minor, v.patch,
                             created->binary().path.string());
  backends.bwrap = std::move(*created);
  return backends;
#endif
}

Result<exec::LaunchedProcess> LaunchSandboxed(const SessionBackends& backends,
                                              zygote::ZygoteSlot& zygote,
                                              const plan::LaunchPlan& plan,
                                              const exec::StdioFds& stdio,
                                              const limits::CgroupAttach& cgroup) {
  if (plan.enforcement.backend == plan::BackendName(plan::Backend::kSeatbelt)) {
    // Chosen only when the probe found sandbox-exec enforcing; no cgroups on macOS (the
    // assessment refuses those limits): guard both anyway (fail closed).
    if (backends.sandbox_exec.empty()) {
      return Fail(ErrorCode::kUnavailable, "seatbelt backend: chosen but not available");
    }
    if (plan.limits.needs_cgroup()) {
      return Fail(ErrorCode::kUnavailable,
                  "seatbelt backend: memory and process limits need a cgroup, which macOS does "
                  "not have (fix: unset limits.memory_bytes and limits.processes)");
    }
    return seatbelt::Launch(plan, stdio, {.sandbox_exec = backends.sandbox_exec});
  }
#if !defined(__linux__)
  (void)zygote;
  (void)cgroup;
  return Fail(ErrorCode::kUnavailable,
              fmt::format("{} backend: Linux-only (fix: backend auto or seatbelt on macOS)",
                          plan.enforcement.backend));
#else
  if (plan.enforcement.backend == plan::BackendName(plan::Backend::kBwrap)) {
    // The assessment chooses bwrap only when the probe found it usable, and refuses resource
    // limits under it; guard both anyway (fail closed, never run without a planned limit).
    if (!backends.bwrap) {
      return Fail(ErrorCode::kUnavailable, "bwrap backend: chosen but not available");
    }
    const limits::ResourceLimits& r = plan.limits.rlimits;
    if (plan.limits.needs_cgroup() || r.open_files != 0 || r.cpu_seconds != 0 || r.processes != 0) {
      return Fail(ErrorCode::kUnavailable,
                  "bwrap backend: resource limits are not enforced by this backend (fix: backend "
                  "native, or unset the limits)");
    }
    return backends.bwrap->Launch(plan, stdio);
  }
  // A long-lived session's commands join its prepared namespaces (src/zygote); otherwise, or
  // when the zygote cannot serve this plan, the one-shot launch builds them.
  if (std::optional<Result<exec::LaunchedProcess> > joined = zygote.Launch(plan, stdio, cgroup)) {
    return std::move(*joined);
  }
  return linux_native::Launch(plan, stdio, cgroup);
#endif
}

}  // namespace cordon::session
