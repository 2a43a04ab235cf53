// The per-session zygote (src/zygote, ADR 0010) as the Session uses it: off unless the process
// runs long-lived sessions (the MCP server turns it on with SetLongLivedSessions), started
// with the first sandboxed command whose plan allows it, rebuilt when its holder died or a
// command's plan no longer fits it (then that command runs one-shot).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>

#include "cordon/error.h"
#include "exec/launched_process.h"
#include "limits/cgroup.h"
#include "plan/launch_plan.h"

namespace cordon::zygote {
class Zygote;
}

namespace cordon::session {

// Process-wide: sessions created or run after this prepare a zygote for their commands. For
// servers whose sessions run many commands; a one-shot `cordon run` never turns it on. Also
// keeps the planner's root-only scan of /etc watched instead of walked per plan (0022).
void SetLongLivedSessions(bool enabled);
bool LongLivedSessions();

// How many commands of this process were launched through a zygote (for tests and stats).
std::uint64_t ZygoteLaunches();

class ZygoteSlot {
 public:
  ZygoteSlot();
  ~ZygoteSlot();
  ZygoteSlot(const ZygoteSlot&) = delete;
  ZygoteSlot& operator=(const ZygoteSlot&) = delete;

  // Launches `plan` through the session's zygote, starting or rebuilding it when needed.
  // nullopt when the zygote cannot serve this plan: the caller launches one-shot.
  // `cgroup`: the run's cgroup, joined by the command process (linux_native::Launch).
  std::optional<Result<exec::LaunchedProcess>> Launch(const plan::LaunchPlan& plan,
                                                      const exec::StdioFds& stdio,
                                                      const limits::CgroupAttach& cgroup = {});

 private:
  std::mutex mutex_;
  std::shared_ptr<const zygote::Zygote> zygote_;
  bool unusable_ = false;  // the kernel refused a holder: this session runs one-shot
};

}  // namespace cordon::session
