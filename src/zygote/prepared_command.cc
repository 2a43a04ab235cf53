#include "zygote/prepared_command.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <utility>

#include "core/fd_passing.h"
#include "core/syscall_error.h"
#include "exec/process_control.h"
#include "linux/child_context.h"
#include "linux/error_pipe.h"
#include "linux/exec_request.h"
#include "linux/launcher.h"
#include "zygote/zygote.h"

namespace cordon::zygote {
namespace {

using linux_native::ExecFailure;
using linux_native::ExecFailureStep;
using linux_native::ExecRequestHeader;

bool SameLandlock(const plan::LandlockRules& a, const plan::LandlockRules& b) {
  return a.abi == b.abi && a.handled_fs == b.handled_fs && a.writable == b.writable &&
         a.readable == b.readable && a.list_root == b.list_root &&
         a.handled_net == b.handled_net && a.scoped == b.scoped;
}

bool SameRlimits(const limits::ResourceLimits& a, const limits::ResourceLimits& b) {
  return a.open_files == b.open_files && a.cpu_seconds == b.cpu_seconds &&
         a.processes == b.processes;
}

void Append(std::string& body, const std::string& text) {
  body += text;
  body.push_back('\0');
}

// Writes all of `data`; the stub reads while we write. 0 or the errno.
int SendAll(int fd, const char* data, std::size_t size) {
  while (size > 0) {
    const ssize_t n = ::send(fd, data, size, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return 0;
}

// EOF (the request socket closed at a successful execve): nullopt. A failure report: it.
Result<std::optional<ExecFailure>> ReadOutcome(int fd) {
  ExecFailure failure;
  std::size_t got = 0;
  while (got < sizeof failure) {
    const ssize_t n = ::read(fd, reinterpret_cast<char*>(&failure) + got, sizeof failure - got);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      return core::FailSyscall("read", "the prepared command's request socket");
    }
    got += static_cast<std::size_t>(n);
  }
  if (got == 0) return std::nullopt;
  if (got != sizeof failure) {
    return Fail(ErrorCode::kSystem, "prepared command: truncated start report");
  }
  return failure;
}

linux_native::Step ToStep(std::uint32_t step) {
  switch (static_cast<ExecFailureStep>(step)) {
    case ExecFailureStep::kStdio:
      return linux_native::Step::kStdio;
    case ExecFailureStep::kChdir:
      return linux_native::Step::kChdir;
    case ExecFailureStep::kExecve:
      return linux_native::Step::kExecve;
    case ExecFailureStep::kRequest:
      break;
  }
  return linux_native::Step::kExecStub;
}

}  // namespace

bool SamePreparedShape(const plan::LaunchPlan& a, const plan::LaunchPlan& b) {
  return SameShape(a, b) && SameLandlock(a.landlock, b.landlock) &&
         SameRlimits(a.limits.rlimits, b.limits.rlimits) &&
         a.unix_connect_beneath == b.unix_connect_beneath && !a.limits.needs_cgroup() &&
         !b.limits.needs_cgroup();
}

PreparedCommand::PreparedCommand(exec::LaunchedProcess launched, core::UniqueFd request,
                                 plan::LaunchPlan shape)
    : launched_(std::move(launched)), request_(std::move(request)), shape_(std::move(shape)) {}

PreparedCommand::~PreparedCommand() { Discard(); }

void PreparedCommand::Discard() {
  if (launched_.pid <= 0) return;
  exec::KillTree(launched_);
  (void)exec::Reap(launched_);
  launched_.pid = -1;
}

bool PreparedCommand::Alive() const {
  if (launched_.pid <= 0 || !launched_.pidfd.valid()) return false;
  pollfd p{launched_.pidfd.get(), POLLIN, 0};
  return ::poll(&p, 1, 0) == 0;  // a pidfd polls readable once the process has exited
}

Result<exec::LaunchedProcess> PreparedCommand::Start(const plan::LaunchPlan& plan,
                                                     const exec::StdioFds& stdio) {
  if (launched_.pid <= 0) return Fail(ErrorCode::kUnavailable, "prepared command: already used");
  if (plan.argv.empty()) return Fail(ErrorCode::kInvalidArgument, "empty command");
  const std::vector<std::string> candidates =
      linux_native::ExecCandidates(plan.argv.front(), plan.env);
  ExecRequestHeader header;
  std::string body;
  Append(body, plan.cwd.native());
  for (const std::string& arg : plan.argv) Append(body, arg);
  for (const std::string& entry : plan.env) Append(body, entry);
  for (const std::string& path : candidates) Append(body, path);
  if (body.size() > linux_native::kExecRequestMaxBody) {
    return Fail(ErrorCode::kInvalidArgument, "command line and environment are too large");
  }
  header.body_bytes = static_cast<std::uint32_t>(body.size());
  header.argc = static_cast<std::uint32_t>(plan.argv.size());
  header.envc = static_cast<std::uint32_t>(plan.env.size());
  header.pathc = static_cast<std::uint32_t>(candidates.size());
  int fds[3];
  int count = 0;
  const int wanted[3] = {stdio.stdin_fd, stdio.stdout_fd, stdio.stderr_fd};
  for (int i = 0; i < 3; ++i) {
    if (wanted[i] < 0) continue;
    header.stdio_mask |= 1u << i;
    fds[count++] = wanted[i];
  }
  if (const int err = core::SendWithFds(request_.get(), &header, sizeof header, fds, count);
      err != 0) {
    Discard();
    // The stub was gone before it got anything: nothing ran.
    if (err == EPIPE || err == ECONNRESET) {
      return Fail(ErrorCode::kUnavailable, "prepared command: its sandbox is gone");
    }
    return core::FailSyscall("sendmsg", "the prepared command's request socket", err);
  }
  if (const int err = SendAll(request_.get(), body.data(), body.size()); err != 0) {
    Discard();
    return core::FailSyscall("send", "the prepared command's request socket", err);
  }
  Result<std::optional<ExecFailure>> outcome = ReadOutcome(request_.get());
  if (!outcome || outcome->has_value()) {
    Discard();
    if (!outcome) return std::unexpected(std::move(outcome).error());
    const ExecFailure& failure = **outcome;
    linux_native::StepReport report;
    report.step = ToStep(failure.step);
    report.err = failure.err;
    return std::unexpected(linux_native::StepError(plan, report));
  }
  request_.Reset();
  exec::LaunchedProcess started = std::move(launched_);
  launched_ = exec::LaunchedProcess{};  // pid -1: nothing left to discard
  return started;
}

}  // namespace cordon::zygote
