// The bubblewrap backend as one object: bwrap and the trampoline located and bwrap's ability to
// build a sandbox here probed once (per Session, src/session/backend_choice.cc, when the config
// may need it), then any number of launches.
//
//   Result<BwrapBackend> backend = BwrapBackend::Create(writable_roots);
//   if (!backend) ...                       // fail closed: the message says what to install/fix
//   Result<exec::LaunchedProcess> p = backend->Launch(plan, stdio);
#pragma once

#include <filesystem>
#include <vector>

#include "bwrap/locate.h"
#include "cordon/error.h"
#include "exec/launched_process.h"
#include "plan/launch_plan.h"

namespace cordon::bwrap {

class BwrapBackend {
 public:
  // Locates bwrap (`configured` or the distribution paths) and the trampoline, refusing either
  // inside `writable_roots`, then runs `bwrap ... true` with user, PID and network namespaces:
  // kUnavailable with bwrap's message when it cannot build them here (e.g. user namespaces
  // disabled and bwrap not setuid).
  // `trampoline`: where cordon-bwrap-exec is when not beside the executable (see launch.h).
  [[nodiscard]] static Result<BwrapBackend> Create(
      const std::vector<std::filesystem::path>& writable_roots,
      const std::filesystem::path& configured = {}, const std::filesystem::path& trampoline = {});

  [[nodiscard]] Result<exec::LaunchedProcess> Launch(const plan::LaunchPlan& plan,
                                                     const exec::StdioFds& stdio) const;

  const BwrapBinary& binary() const { return binary_; }
  // Setuid root: bwrap then builds namespaces that unprivileged user namespaces could not.
  bool setuid() const { return setuid_; }
  const std::filesystem::path& trampoline() const { return trampoline_; }

 private:
  BwrapBinary binary_;
  std::filesystem::path trampoline_;
  bool setuid_ = false;
};

}  // namespace cordon::bwrap
