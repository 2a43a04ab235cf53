// A run for another process: what cordon's run server adds to a CommandRequest when it runs a
// command for a `cordon run` client. Not part of the public API: a library caller runs its own
// commands (Session::Run), with its own environment, home and descriptors.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "cordon/error.h"
#include "cordon/run.h"
#include "cordon/session.h"

namespace cordon::session {

struct Caller {
  // The run takes ownership of the request's stdin_fd, stdout_fd and stderr_fd (those >= 0) and
  // closes each as early as it can, on every path: stdin once the command has started, an
  // output descriptor as soon as its stream has ended. A sandbox the session prepares meanwhile
  // is cloned from this process and would otherwise hold them, keeping the client's reader
  // from seeing EOF. false: the caller keeps owning them (Session::Run).
  bool take_fds = false;
  // The client's environment ("NAME=value") and home: the environment's pass list and the
  // hidden paths under the home come from these. Unset: this process's environ and $HOME.
  std::optional<std::vector<std::string>> env;
  std::optional<std::filesystem::path> home;
  // Called at most once: after the policy has allowed the command and before the run creates
  // anything (placeholders, pipes, cgroup, processes), after the planning. Not called for a run
  // that fails before (a denial, a working directory outside the workspace, a plan that cannot be
  // made). An error refuses the run: kSetupFailed with the error's message, nothing started.
  // The server judges its client's context meanwhile (decision 0032). Unset: nothing to wait
  // for.
  std::function<Result<void>()> before_start;
};

// Session::Run for `caller`: the same policy, plan, launch and supervision.
RunResult RunFor(const Session& session, const CommandRequest& request, const Caller& caller,
                 const OutputCallback& on_output = {});

}  // namespace cordon::session
