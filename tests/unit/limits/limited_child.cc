#include "limited_child.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "exec/process_control.h"

namespace cordon::limits::testing {

RunResult RunLimited(const std::vector<std::string>& argv, const LimitedRun& run,
                     RunCgroup* cgroup_for_supervisor) {
  int out[2];
  int err[2];
  if (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0) std::abort();
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const CgroupAttach attach = run.cgroup != nullptr ? run.cgroup->attach() : CgroupAttach{};

  const pid_t pid = ::fork();
  if (pid == 0) {
    // The order the backend uses: cgroup first (every later process is born inside), then
    // the rlimits, then exec.
    if (AttachSelf(attach) != 0) ::_exit(121);
    if (!ApplyResourceLimits(run.rlimits).ok()) ::_exit(122);
    if (::setsid() < 0) ::_exit(123);
    if (::dup2(out[1], 1) != 1 || ::dup2(err[1], 2) != 2) ::_exit(124);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  ::close(out[1]);
  ::close(err[1]);
  exec::LaunchedProcess process;
  process.pid = pid;
  process.pidfd = exec::OpenPidfd(pid);
  process.kill_process_group = true;
  for (int fd : {out[0], err[0]}) ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  exec::SuperviseOptions options;
  options.timeout = run.timeout;
  options.cgroup = cgroup_for_supervisor;
  options.cpu_limited = run.cpu_limited;
  options.output_cap = 64 * 1024;
  return exec::Supervise(std::move(process),
                         exec::OutputReaders{core::UniqueFd(out[0]), core::UniqueFd(err[0])},
                         options);
}

}  // namespace cordon::limits::testing
