#include "exec/supervisor.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "exec/output_capture.h"
#include "exec/pass_through.h"
#include "exec/process_control.h"
#if defined(__linux__)
#include "exec/connect_broker.h"
#include "exec/init_report.h"
#endif

namespace cordon::exec {
namespace {

#if !defined(__linux__)
// The connect broker answers seccomp notifications, which exist only on Linux: elsewhere no
// backend hands over a listener, and this stand-in is never created (ADR 0020).
class ConnectBroker {
 public:
  static Result<std::unique_ptr<ConnectBroker>> Create(core::UniqueFd, ConnectRules) {
    return Fail(ErrorCode::kUnavailable, "connect broker: Linux only");
  }
  int fd() const { return -1; }
  int listener_fd() const { return -1; }
  void Service() {}
  std::chrono::steady_clock::time_point NextDeadline() const {
    return std::chrono::steady_clock::time_point::max();
  }
  std::vector<Denial> TakeDenials() { return {}; }
};
#endif

using Clock = std::chrono::steady_clock;

// One read per ready stream per poll round. 128 KiB keeps the syscall count low when a command
// floods its output, while bounding the time between deadline checks. Not zero-filled: its
// pages cost nothing until a read fills them (a quiet command never touches them).
constexpr std::size_t kReadChunk = 128 * 1024;
// Without a pidfd the supervisor cannot poll for the exit and checks this often instead.
constexpr int kExitPollMs = 20;

HeadTailBuffer Capture(const SuperviseOptions& options) {
  return options.capture_output ? HeadTailBuffer(options.output_cap) : HeadTailBuffer::CountOnly();
}

struct Stream {
  OutputStream which;
  core::UniqueFd fd;
  HeadTailBuffer capture;  // count-only without SuperviseOptions::capture_output
  std::optional<PassThrough> sink;
  bool splice = false;        // the bytes go to the sink without passing through `buffer_`
  core::UniqueFd owned_sink;  // SuperviseOptions::own_sinks: closed when the stream ends

  // The stream has ended (EOF or a broken pipe): an owned sink goes at once.
  void End() {
    fd.Reset();
    sink.reset();
    owned_sink.Reset();
  }
};

Stream MakeStream(OutputStream which, core::UniqueFd fd, const SuperviseOptions& options) {
  Stream stream{which, std::move(fd), Capture(options), std::nullopt, false};
  const int sink = options.sinks[which == OutputStream::kStdout ? 0 : 1];
  if (sink >= 0) {
    stream.sink.emplace(sink);
    if (options.own_sinks) stream.owned_sink = core::UniqueFd(sink);
    // A captured stream has to be read to be kept: only an uncaptured one is spliced.
    stream.splice = !options.capture_output;
  }
  return stream;
}

// The sandbox init's report (init_report.h): the command's wait status (one int), then from
// cordon-init what was left running; or EOF without it. It comes in one write.
struct StatusChannel {
  core::UniqueFd fd;
  std::array<unsigned char, sizeof(InitReport)> bytes{};
  std::size_t got = 0;
  bool have = false;

  bool pending() const { return fd.valid(); }

  void ReadOnce() {
    const ssize_t n = ::read(fd.get(), bytes.data() + got, bytes.size() - got);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
    if (n > 0) {
      got += static_cast<std::size_t>(n);
      have = got >= sizeof(int);
      if (got < bytes.size()) return;
    }
    fd.Reset();  // complete, EOF or a broken channel: nothing more will come
  }

  int status() const {
    int value = 0;
    std::memcpy(&value, bytes.data(), sizeof value);
    return value;
  }

  // The processes cordon-init found still running when the command ended, and their names;
  // nullopt when the report does not say (an older or other init).
  std::optional<std::pair<int, std::vector<std::string>>> left_running() const {
    if (got < sizeof(InitReport)) return std::nullopt;
    InitReport report{};
    std::memcpy(&report, bytes.data(), sizeof report);
    std::vector<std::string> names;
    for (std::size_t at = 0; at < sizeof report.names && report.names[at] != '\0';) {
      const std::size_t end =
          std::find(report.names + at, report.names + sizeof report.names, '\0') - report.names;
      names.emplace_back(report.names + at, end - at);
      at = end + 1;
    }
    return std::pair{report.left_running, std::move(names)};
  }

  // The bytes the command left in its private tmpfs mounts; 0 when the report does not say.
  unsigned long long discarded_bytes() const {
    if (got < sizeof(InitReport)) return 0;
    InitReport report{};
    std::memcpy(&report, bytes.data(), sizeof report);
    return report.discarded_bytes;
  }
};

// What a size reads as: bytes, KiB or MiB with one decimal.
std::string ReadableSize(unsigned long long bytes) {
  if (bytes < 1024) return fmt::format("{} bytes", bytes);
  if (bytes < 1024ull * 1024) return fmt::format("{:.1f} KiB", static_cast<double>(bytes) / 1024);
  return fmt::format("{:.1f} MiB", static_cast<double>(bytes) / (1024.0 * 1024));
}

// The report of what the command left in its private /tmp, HOME, /var/tmp and /dev/shm, which
// vanish with it: an agent that expected a cache or an output file there learns where it went.
std::optional<Denial> DiscardedDenial(unsigned long long bytes) {
  if (bytes == 0) return std::nullopt;
  return Denial{
      "discarded",
      fmt::format("{} left in the private /tmp, HOME, /var/tmp and /dev/shm", ReadableSize(bytes)),
      "mount view", "the command's scratch space ends with it",
      "by design: write what must outlive the command in the workspace or a "
      "writable root (sandbox.writable_roots); tools' caches persist with "
      "sandbox.tool_caches"};
}

// The denial for processes the command left running, which die with its PID namespace.
std::optional<Denial> LeftRunningDenial(int count, const std::vector<std::string>& names) {
  if (count <= 0) return std::nullopt;
  std::string listed;
  for (const std::string& name : names) listed += (listed.empty() ? "" : ", ") + name;
  if (static_cast<int>(names.size()) < count) listed += listed.empty() ? "..." : ", ...";
  return Denial{"killed_at_exit",
                fmt::format("{} process{} ({})", count, count == 1 ? "" : "es", listed),
                "pid namespace", "the command's process tree ends with it",
                "by design: start a service and what uses it in one command, or with cordon "
                "mcp's start_background"};
}

int MillisUntil(Clock::time_point now, Clock::time_point when) {
  if (when <= now) return 0;
  const auto ms = std::chrono::ceil<std::chrono::milliseconds>(when - now).count();
  return ms > std::numeric_limits<int>::max() ? std::numeric_limits<int>::max()
                                              : static_cast<int>(ms);
}

class Supervisor {
 public:
  Supervisor(LaunchedProcess process, OutputReaders output, const SuperviseOptions& options)
      : process_(std::move(process)),
        options_(options),
        streams_{MakeStream(OutputStream::kStdout, std::move(output.stdout_read), options),
                 MakeStream(OutputStream::kStderr, std::move(output.stderr_read), options)},
        callback_enabled_(static_cast<bool>(options.on_output)),
        buffer_(new char[kReadChunk]) {
    status_.fd = std::move(process_.status_fd);
    sandboxed_init_ = status_.fd.valid();
    if (status_.fd.valid()) {
      const int flags = ::fcntl(status_.fd.get(), F_GETFL);
      if (flags >= 0) (void)::fcntl(status_.fd.get(), F_SETFL, flags | O_NONBLOCK);
    }
    // The command's connect() calls wait for this broker (ADR 0019). Without one they must
    // fail, not hang: dropping the listener makes them return ENOSYS.
    if (process_.connect_listener.valid()) {
      auto broker =
          ConnectBroker::Create(std::move(process_.connect_listener),
                                std::move(process_.connect_rules), std::move(process_.resolver));
      if (broker) {
        broker_ = std::move(*broker);
      } else {
        // The command already runs, but can reach nothing beyond its loopback without the
        // broker (its connects fail): the run still ends now, with the reason.
        broken_broker_ = std::move(broker).error().message;
      }
    }
  }

  RunResult Run();

 private:
  bool StreamsOpen() const { return streams_[0].fd.valid() || streams_[1].fd.valid(); }
  void ReadStream(Stream& stream);
  // The splice path of ReadStream. false: the stream falls back to reading, starting now.
  bool SpliceStream(Stream& stream);
  void Deliver(OutputStream which, std::string_view data);
  bool PollOnce(Clock::time_point now);
  void OnExit();
  void FailInternal(std::string message);
  void KillAll();
  void ReportLimits(RunResult& result) const;
  RunResult Finish();
  RunResult FinishStatus();

  LaunchedProcess process_;
  const SuperviseOptions& options_;
  std::array<Stream, 2> streams_;
  StatusChannel status_;
  bool sandboxed_init_ = false;
  bool callback_enabled_ = false;
  std::unique_ptr<char[]> buffer_;
  std::unique_ptr<ConnectBroker> broker_;
  std::string broken_broker_;  // why the broker could not start (then the run fails at once)

  bool exited_ = false;
  bool timed_out_ = false;
  bool cancelled_ = false;
  ExitInfo exit_;
  std::string error_;
  Clock::time_point deadline_ = Clock::time_point::max();
  Clock::time_point drain_deadline_;
};

void Supervisor::Deliver(OutputStream which, std::string_view data) {
  if (!callback_enabled_) return;
  try {
    options_.on_output(which, data);
  } catch (...) {
    // Library code does not throw; a failing consumer loses the stream, the run goes on.
    callback_enabled_ = false;
  }
}

bool Supervisor::SpliceStream(Stream& stream) {
  const PassThrough::Outcome moved = stream.sink->Splice(stream.fd.get());
  switch (moved.status) {
    case PassThrough::Status::kMoved:
      stream.capture.Count(moved.bytes);
      return true;
    case PassThrough::Status::kEmpty:
      return true;
    case PassThrough::Status::kEof:
      stream.End();
      return true;
    case PassThrough::Status::kUnsupported:
      stream.splice = false;  // read and write from now on
      return false;
    case PassThrough::Status::kSinkBroken:
      // Nobody reads any more: the command's pipe closes too, so its next write fails as it
      // would on the caller's descriptor itself (SIGPIPE, EPIPE), instead of running on into
      // a pipe drained for nobody.
      stream.End();
      return true;
  }
  return false;
}

void Supervisor::ReadStream(Stream& stream) {
  if (stream.splice && SpliceStream(stream)) return;
  const ssize_t n = ::read(stream.fd.get(), buffer_.get(), kReadChunk);
  if (n > 0) {
    const std::string_view chunk(buffer_.get(), static_cast<std::size_t>(n));
    stream.capture.Append(chunk);
    if (!stream.sink) {
      Deliver(stream.which, chunk);
    } else if (!stream.sink->Write(chunk)) {
      stream.End();  // its reader is gone: so is the command's pipe (see SpliceStream)
    }
    return;
  }
  if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
  stream.End();  // EOF (every writer is gone) or a broken pipe
}

// The launched process has exited (a zombie). Its pid and process group id stay reserved until
// it is reaped, so the group kill below cannot reach a recycled id.
void Supervisor::OnExit() {
  if (process_.kill_process_group) (void)::kill(-process_.pid, SIGKILL);
  // Whatever is left in the run's cgroup belongs to the command that just ended, including
  // processes that left its process group (setsid) where there is no PID namespace.
  if (options_.cgroup != nullptr) options_.cgroup->Kill();
  Result<ExitInfo> reaped = Reap(process_);
  if (reaped) {
    exit_ = *reaped;
  } else if (error_.empty()) {
    error_ = reaped.error().message;
  }
  // bubblewrap's monitor exits as soon as the command did, while its init may still be taking
  // the namespace down: the run is over only when the whole sandbox is gone.
  if (!KillAndAwaitSandboxInit(process_, 10000) && error_.empty()) {
    error_ = "supervisor: the sandbox's init did not exit within 10 s of SIGKILL";
  }
  exited_ = true;
  drain_deadline_ = Clock::now() + options_.drain_grace;
  // init wrote the status before exiting, so it is in the pipe now if it ever will be.
  while (status_.pending()) {
    const std::size_t before = status_.got;
    status_.ReadOnce();
    if (status_.pending() && status_.got == before) break;  // EAGAIN: nothing was written
  }
}

// The tree (through init or the process group) and, when there is one, the cgroup: a process
// that left both (possible only without a PID namespace) is still in the cgroup.
void Supervisor::KillAll() {
  KillTree(process_);
  if (options_.cgroup != nullptr) options_.cgroup->Kill();
}

void Supervisor::FailInternal(std::string message) {
  if (error_.empty()) error_ = std::move(message);
  KillAll();
  if (!exited_) OnExit();
}

// One poll round. Returns false when supervision is over.
bool Supervisor::PollOnce(Clock::time_point now) {
  if (!exited_ && !timed_out_ && now >= deadline_) {
    // A process that finished just before the deadline (its exit not yet seen) did not time
    // out; anything still running is killed, tree and all.
    Result<bool> gone = HasExited(process_);
    if (gone && *gone) {
      OnExit();
    } else {
      KillAll();
      timed_out_ = true;
    }
  }
  // Done once everything was read, or at the drain deadline with whatever arrived by then.
  if (exited_ && ((!StreamsOpen() && !status_.pending()) || now >= drain_deadline_)) {
    return false;
  }

  std::array<pollfd, 7> fds{};
  std::array<int, 7> role{};  // 0, 1: streams; 2: status channel; 3: pidfd; 4: cancel; 5: broker
  nfds_t count = 0;
  for (int i = 0; i < 2; ++i) {
    if (!streams_[i].fd.valid()) continue;
    fds[count] = pollfd{streams_[i].fd.get(), POLLIN, 0};
    role[count++] = i;
  }
  if (status_.pending()) {
    fds[count] = pollfd{status_.fd.get(), POLLIN, 0};
    role[count++] = 2;
  }
  if (!exited_ && process_.pidfd.valid()) {
    fds[count] = pollfd{process_.pidfd.get(), POLLIN, 0};
    role[count++] = 3;
  }

  // The caller's cancel descriptor stays readable once signalled: watch it only until acted on.
  if (!exited_ && !cancelled_ && !timed_out_ && options_.cancel_fd >= 0) {
    fds[count] = pollfd{options_.cancel_fd, POLLIN, 0};
    role[count++] = 4;
  }

  if (!exited_ && broker_) {
    fds[count] = pollfd{broker_->fd(), POLLIN, 0};
    role[count++] = 5;
    if (broker_->listener_fd() >= 0) {
      fds[count] = pollfd{broker_->listener_fd(), POLLIN, 0};
      role[count++] = 5;
    }
  }

  int wait_ms = -1;
  if (exited_) {
    wait_ms = MillisUntil(now, drain_deadline_);
  } else {
    if (!timed_out_ && deadline_ != Clock::time_point::max()) wait_ms = MillisUntil(now, deadline_);
    if (!process_.pidfd.valid() && (wait_ms < 0 || wait_ms > kExitPollMs)) wait_ms = kExitPollMs;
    // A tunnel through the parent proxy waiting for its reply is failed when its time is up.
    if (broker_) {
      if (const Clock::time_point next = broker_->NextDeadline();
          next != Clock::time_point::max()) {
        const int until = MillisUntil(now, next);
        if (wait_ms < 0 || until < wait_ms) wait_ms = until;
      }
    }
  }

  const int ready = ::poll(fds.data(), count, wait_ms);
  if (ready < 0) {
    if (errno == EINTR) return true;
    FailInternal(fmt::format("supervisor: poll: {}", std::strerror(errno)));
    return true;
  }

  bool exit_seen = false;
  bool broker_served = false;
  for (nfds_t i = 0; i < count; ++i) {
    if (fds[i].revents == 0) continue;
    if (role[i] < 2) ReadStream(streams_[static_cast<std::size_t>(role[i])]);
    if (role[i] == 2) status_.ReadOnce();
    if (role[i] == 3) exit_seen = true;
    if (role[i] == 5 && !broker_served) {
      broker_->Service();
      broker_served = true;
    }
    if (role[i] == 4 && !exited_) {
      // Cancelled by the caller (an MCP client's notifications/cancelled): the whole tree goes
      // at once, exactly as on timeout.
      KillAll();
      cancelled_ = true;
    }
  }
  // A tunnel's deadline passed: served although none of the broker's descriptors is ready (and
  // whatever else kept the poll busy).
  if (!broker_served && !exited_ && broker_ && broker_->NextDeadline() <= Clock::now()) {
    broker_->Service();
  }
  if (!exited_ && !process_.pidfd.valid()) {
    Result<bool> gone = HasExited(process_);
    if (!gone) {
      FailInternal(gone.error().message);
      return true;
    }
    exit_seen = *gone;
  }
  if (!exited_ && exit_seen) OnExit();
  return true;
}

RunResult Supervisor::Run() {
  if (!broken_broker_.empty()) FailInternal(std::move(broken_broker_));
  if (options_.timeout.count() > 0) deadline_ = Clock::now() + options_.timeout;
  while (PollOnce(Clock::now())) {
  }
  return Finish();
}

// Which limits the run reached, and which one ended it. A SIGKILL with an OOM kill counted in
// the run's own cgroup is the memory limit (the OOM killer sends SIGKILL), and so is exit
// status 137 (128 + SIGKILL): how a shell reports the OOM-killed command it ran, as in
// `sh -c 'make | tail'` (the limit's victim is usually the largest process, not the shell).
void Supervisor::ReportLimits(RunResult& result) const {
  auto reached = [&](RunLimit limit) { result.limits_reached.push_back(limit); };
  if (result.stdout_data.truncated_bytes > 0 || result.stderr_data.truncated_bytes > 0) {
    reached(RunLimit::kOutput);
  }
  if (options_.cgroup != nullptr) {
    const limits::CgroupEvents events = options_.cgroup->ReadEvents();
    if (events.pids_max_reached) reached(RunLimit::kProcesses);
    if (events.oom_killed) {
      reached(RunLimit::kMemory);
      const bool killed =
          (result.status == RunStatus::kSignaled && result.signal == SIGKILL) ||
          (result.status == RunStatus::kExited && result.exit_code == 128 + SIGKILL);
      if (killed && !cancelled_) result.limit = RunLimit::kMemory;
    }
  }
  if (options_.cpu_limited && result.status == RunStatus::kSignaled && result.signal == SIGXCPU) {
    reached(RunLimit::kCpu);
    result.limit = RunLimit::kCpu;
  }
  if (result.status == RunStatus::kTimedOut) {
    reached(RunLimit::kTimeout);
    result.limit = RunLimit::kTimeout;
  }
}

RunResult Supervisor::Finish() {
  RunResult result = FinishStatus();
  if (result.status == RunStatus::kExited && process_.resource != nullptr) {
    if (std::string why = process_.resource->SetupFailure(result.exit_code); !why.empty()) {
      result.status = RunStatus::kSetupFailed;
      result.error = std::move(why);
    }
  }
  ReportLimits(result);
  if (broker_) {
    std::vector<Denial> brokered = broker_->TakeDenials();
    result.denials.insert(result.denials.begin(), brokered.begin(), brokered.end());
  }
  return result;
}

RunResult Supervisor::FinishStatus() {
  RunResult result;
  result.stdout_data = streams_[0].capture.Finish();
  result.stderr_data = streams_[1].capture.Finish();
  result.error = error_;
  if (timed_out_) {
    result.status = RunStatus::kTimedOut;
    result.signal = SIGKILL;
    return result;
  }
  if (cancelled_) {
    result.status = RunStatus::kSignaled;
    result.signal = SIGKILL;
    result.error = "cancelled";
    return result;
  }
  if (!error_.empty() && !status_.have) {
    result.status = RunStatus::kSetupFailed;
    return result;
  }
  ExitInfo command = exit_;
  if (status_.have) {
    command = DecodeWaitStatus(status_.status());
  } else if (sandboxed_init_ && !exit_.signaled) {
    // init is meant to report before it exits; without a report the command's status is
    // unknown, and init's own code is the best evidence left.
    result.error = fmt::format(
        "sandbox init exited with code {} without reporting the "
        "command's status",
        exit_.code);
  }
  result.status = command.signaled ? RunStatus::kSignaled : RunStatus::kExited;
  result.signal = command.signaled ? command.signal : 0;
  result.exit_code = command.signaled ? 0 : command.code;
  if (const auto left = status_.left_running()) {
    if (std::optional<Denial> killed = LeftRunningDenial(left->first, left->second)) {
      result.denials.push_back(std::move(*killed));
    }
  }
  if (std::optional<Denial> discarded = DiscardedDenial(status_.discarded_bytes())) {
    result.denials.push_back(std::move(*discarded));
  }
  return result;
}

}  // namespace

RunResult Supervise(LaunchedProcess process, OutputReaders output,
                    const SuperviseOptions& options) {
  Supervisor supervisor(std::move(process), std::move(output), options);
  return supervisor.Run();
}

}  // namespace cordon::exec
