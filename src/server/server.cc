#include "server/server.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <limits.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <limits>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "config/load.h"
#include "cordon/session.h"
#include "core/syscall_error.h"
#include "core/unique_fd.h"
#include "report/run_outcome.h"
#include "server/admission.h"
#include "server/client_check.h"
#include "server/context.h"
#include "server/helper_thread.h"
#include "server/peer.h"
#include "server/wire.h"
#include "session/run_for.h"
#include "session/session_internals.h"

namespace cordon::server {
namespace {

using Clock = std::chrono::steady_clock;

// SIGTERM or SIGINT asked the server to stop: it does as when idle (no new connection, the
// running commands finish, then its sessions end and release what they hold on the host).
// A signal handler can only set a flag; this one is the process's, as the signal is.
volatile std::sig_atomic_t g_stop_requested = 0;

void RequestStop(int /*signal*/) { g_stop_requested = 1; }

// A client has this long to send its request once connected.
constexpr int kRequestTimeoutSeconds = 10;

// Takes in (and drops, descriptors included) what a refused client sends, for at most a
// second: a client that was greeted sends its request before it reads the reply, and one that
// finds the connection closed under it would see a broken pipe instead of the refusal's
// reason. A client that keeps the connection open holds the worker no longer than that.
void DrainBriefly(int fd) {
  constexpr auto kDrainTime = std::chrono::seconds(1);
  constexpr std::size_t kDrainMax = kMaxBodyBytes + 65536;
  timeval timeout{1, 0};
  (void)::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  const Clock::time_point end = Clock::now() + kDrainTime;
  char buffer[16384];
  std::size_t total = 0;
  while (total < kDrainMax && Clock::now() < end) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);  // SCM_RIGHTS without a buffer: closed
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    total += static_cast<std::size_t>(n);
  }
}

// A resolved invocation with the caller's descriptors it uses, and the wait kAccepted carries.
struct ServedRun {
  RunRequest request;
  core::UniqueFd stdin_fd;  // only when request.has_stdin
  core::UniqueFd stdout_fd;
  core::UniqueFd stderr_fd;
  std::uint32_t wait_seconds = 0;
};

// The sessions of the configurations and workspaces served so far, most recently used first.
class SessionCache {
 public:
  explicit SessionCache(std::filesystem::path runtime_dir) : runtime_dir_(std::move(runtime_dir)) {}

  // The session kept for the request's configuration and workspace, if there is one; its
  // command counts as running until Release.
  std::optional<Session> Find(const RunRequest& request) {
    const std::string key = Key(request);
    std::lock_guard lock(mutex_);
    for (auto it = entries_.begin(); it != entries_.end(); ++it) {
      if (it->key == key) {
        ++it->running;
        entries_.splice(entries_.begin(), entries_, it);
        return it->session;
      }
    }
    return std::nullopt;
  }

  // The command Find or Get counted for the request's session has ended.
  void Release(const RunRequest& request) {
    const std::string key = Key(request);
    std::lock_guard lock(mutex_);
    for (Entry& entry : entries_) {
      if (entry.key != key) continue;
      if (entry.running > 0) --entry.running;
      entry.last_end = std::chrono::steady_clock::now();
      return;
    }
  }

  // Drops the sessions that ran nothing since `cutoff` (their zygotes and prepared sandboxes
  // with them); the workspaces of those dropped.
  std::vector<std::filesystem::path> DropUnusedSince(std::chrono::steady_clock::time_point cutoff) {
    std::vector<std::filesystem::path> workspaces;
    std::list<Entry> dropped;  // destroyed outside the lock: that kills and reaps their children
    {
      std::lock_guard lock(mutex_);
      for (auto it = entries_.begin(); it != entries_.end();) {
        const auto next = std::next(it);
        if (it->running == 0 && it->last_end < cutoff) {
          workspaces.push_back(it->workspace);
          dropped.splice(dropped.end(), entries_, it);
        }
        it = next;
      }
    }
    return workspaces;
  }

  // Whether a session may be made for a request Find has none for (server/admission.h).
  bool AdmitsNew() {
    std::lock_guard lock(mutex_);
    return AdmitsNewSession(entries_.size(), kMaxSessions, OldestIdle(), Running(),
                            std::chrono::steady_clock::now());
  }

  // The kept session, else a new one (kept from now on).
  Result<Session> Get(const RunRequest& request) {
    if (std::optional<Session> found = Find(request)) return *found;
    const std::string key = Key(request);
    // Created outside the lock (it probes the kernel); two clients racing for a new key make
    // two sessions, and the second to finish uses the first's (below).
    // The point of the server: each session gets its zygote and keeps the next command's
    // sandbox prepared (decisions 0010, 0023).
    CORDON_TRY(Session session,
               Session::Create(request.config, request.workspace,
                               SessionOptions{.long_lived = true, .runtime_dir = runtime_dir_}));
    // The session pinned the directory its name reached just now (plan/launch_plan.h): kept
    // only when that is the client's, or every later request for it would be refused.
    const plan::FileId& pinned = SessionInternals::StateOf(session).workspace_id;
    if (pinned.dev != request.workspace_dev || pinned.ino != request.workspace_ino) {
      return Fail(ErrorCode::kUnavailable,
                  fmt::format("the workspace {} changed while the request was on its way",
                              request.workspace.string()));
    }
    std::list<Entry> evicted;  // declared before the lock: destroyed (its children killed and
                               // reaped) after the lock is released
    std::lock_guard lock(mutex_);
    for (auto it = entries_.begin(); it != entries_.end(); ++it) {
      if (it->key != key) continue;
      ++it->running;  // made meanwhile by another client: one entry per key, counted once each
      entries_.splice(entries_.begin(), entries_, it);
      return it->session;
    }
    entries_.push_front(
        Entry{key, request.workspace, session, 1, std::chrono::steady_clock::now()});
    // Past the limit, the least recently used idle sessions go; one running a command is never
    // dropped (its Release would be lost), so the cache may stay above the limit until one is
    // idle (at most kMaxConnections run at once).
    while (entries_.size() > kMaxSessions) {
      auto idle = std::find_if(entries_.rbegin(), entries_.rend(),
                               [](const Entry& e) { return e.running == 0; });
      if (idle == entries_.rend()) break;
      evicted.splice(evicted.end(), entries_, std::next(idle).base());
    }
    return session;
  }

 private:
  static std::string Key(const RunRequest& request) {
    // The directory, not only its name: a workspace made anew gets a session of its own.
    std::string key = request.config_key + '\0' + request.workspace.native() + '\0' +
                      fmt::format("{}:{}", request.workspace_dev, request.workspace_ino);
    for (const auto& own : request.config.sandbox.own_config) key += '\0' + own.native();
    return key;
  }

  struct Entry {
    std::string key;
    std::filesystem::path workspace;
    Session session;
    int running = 0;                                 // commands started and not yet released
    std::chrono::steady_clock::time_point last_end;  // when the last of them ended
  };
  // With mutex_ held: when the least recently used session that runs nothing ended its last
  // command (nullopt: every kept session runs one), and the commands all of them run.
  std::optional<std::chrono::steady_clock::time_point> OldestIdle() const {
    for (auto it = entries_.rbegin(); it != entries_.rend(); ++it) {
      if (it->running == 0) return it->last_end;
    }
    return std::nullopt;
  }
  int Running() const {
    int running = 0;
    for (const Entry& entry : entries_) running += entry.running;
    return running;
  }
  const std::filesystem::path runtime_dir_;
  std::mutex mutex_;
  std::list<Entry> entries_;
};

// The file `name` names in `directory` (a descriptor, or AT_FDCWD with a path), not followed:
// to tell the socket this server bound from one put there since.
std::optional<FileId> FileAt(int directory, const char* name) {
  struct stat st {};
  if (::fstatat(directory, name, &st, AT_SYMLINK_NOFOLLOW) != 0) return std::nullopt;
  return FileId{static_cast<std::uint64_t>(st.st_dev), static_cast<std::uint64_t>(st.st_ino)};
}

class Server {
 public:
  Server(const ServerOptions& options, Confinement own, core::UniqueFd listener, FileId socket)
      : options_(options),
        own_(own),
        listener_(std::move(listener)),
        socket_file_(socket),
        sessions_(options.runtime_dir) {}

  // Serves until idle: workers wait in accept() themselves (no hand-over from an accepting
  // thread to a new one per connection), one spare kept waiting while others run commands.
  void Run();

 private:
  void Worker();
  void StartWorker();  // with threads_mutex_ held
  // True when it ran a command: only that keeps the server from its idle exit (a caller it
  // leaves its commands to, or refuses, must not keep it alive: decision 0030).
  // The client is checked on `helper` meanwhile (client_check.h).
  bool Handle(core::UniqueFd connection, HelperThread& helper);
  // Runs the request's command. `admit` lets the client in (or says why not); it is called
  // before anything is created or started for the client, possibly more than once. nullopt:
  // left to the client (no session for it, and none may be made now: server/admission.h).
  std::optional<Result<report::RunOutcome>> Execute(int connection, ServedRun& run,
                                                    const std::function<Result<void>()>& admit);
  // Resolves a client's invocation as its own cordon would resolve its command line; nullopt
  // when the client is to run it itself. Only reads.
  std::optional<ServedRun> Resolve(ReceivedRequest& received);
  void Log(const std::string& line);
  // Logs "<log_prefix>: <why>" and replies kRefused ("the run server <reply_prefix>: <why>"):
  // the client then runs the command itself. False: nothing ran.
  bool Refuse(int fd, std::string_view log_prefix, std::string_view reply_prefix,
              const Error& error);

  const ServerOptions& options_;
  // This process's confinement, read once: the bar every client is checked against.
  const Confinement own_;
  core::UniqueFd listener_;
  const FileId socket_file_;  // the socket file as bound: clients reach the server through it
  SessionCache sessions_;
  std::mutex log_mutex_;
  std::atomic<int> active_{0};
  // Steady-clock time of the last connection accepted or finished.
  std::atomic<Clock::rep> last_activity_{Clock::now().time_since_epoch().count()};
  std::atomic<bool> stopping_{false};
  std::mutex threads_mutex_;
  std::condition_variable threads_done_;
  int threads_ = 0;  // workers alive
  int waiting_ = 0;  // workers in accept()
};

void Server::Log(const std::string& line) {
  if (options_.log == nullptr) return;
  std::lock_guard lock(log_mutex_);
  fmt::print(options_.log, "cordon serve: {}\n", line);
  std::fflush(options_.log);
}

std::optional<Result<report::RunOutcome>> Server::Execute(
    int connection, ServedRun& run, const std::function<Result<void>()>& admit) {
  RunRequest& r = run.request;
  // The directory the invocation resolved to, not just its name: refuse another one.
  struct stat st {};
  if (::stat(r.workspace.c_str(), &st) != 0) return core::FailSyscall("stat", r.workspace.string());
  if (static_cast<std::uint64_t>(st.st_dev) != r.workspace_dev ||
      static_cast<std::uint64_t>(st.st_ino) != r.workspace_ino) {
    return Fail(ErrorCode::kUnavailable,
                fmt::format("the workspace {} is no longer the directory the client's command "
                            "line named (its name was moved?)",
                            r.workspace.string()));
  }
  // A session (its probes, its prepared sandboxes) is only created for a client let in.
  std::optional<Session> found = sessions_.Find(r);
  // Counted as running until this run is over, found or made below (admission.h).
  struct Released {
    SessionCache& cache;
    const RunRequest& request;
    bool counted = false;
    ~Released() {
      if (counted) cache.Release(request);
    }
  } released{sessions_, r, found.has_value()};
  if (!found) {
    // Every kept session busy: the client runs it, one-shot (server/admission.h).
    if (!sessions_.AdmitsNew()) return std::nullopt;
    CORDON_TRY_VOID(admit());
    // Get looks again: another client may have made it while admit waited.
    Result<Session> created = sessions_.Get(r);
    if (!created) return std::unexpected(created.error());
    released.counted = true;
    found = std::move(*created);
  }
  const Session& session = *found;
  // A command without a sandbox would run with whatever of this process's context /proc does
  // not show (a Landlock domain, the keyring): its caller runs it (decision 0030).
  if (session.config().sandbox.mode == SandboxMode::kOff) {
    return Fail(ErrorCode::kUnavailable,
                "mode off (no sandbox) runs in the client, never in the run server");
  }
  CommandRequest request;
  request.argv = std::move(r.argv);
  request.shell_text = std::move(r.shell_text);
  request.cwd = r.cwd;
  session::Caller caller;
  caller.env = std::move(r.env);
  if (!r.home.empty()) caller.home = r.home;
  // A client that dies (or is killed) closes its end: that is this run's cancellation.
  request.cancel_fd = connection;
  if (!r.json) {
    // Handed over: the run closes each as soon as it is done with it, so that a sandbox its
    // session prepares right after the run (cloned from this process) does not hold the
    // client's stdout and keep the client's reader from seeing EOF.
    request.capture_output = false;
    caller.take_fds = true;
    request.stdout_fd = run.stdout_fd.Release();
    request.stderr_fd = run.stderr_fd.Release();
    if (r.has_stdin) request.stdin_fd = run.stdin_fd.Release();
  } else if (r.has_stdin) {
    request.stdin_fd = run.stdin_fd.get();  // copied from (a pipe or file: --json keeps none)
  }
  // Nothing of the command is created before the client is let in.
  caller.before_start = admit;
  const RunResult result = session::RunFor(session, request, caller);
  return report::RenderRunOutcome(result, r.json, session.config().limits.timeout, !r.quiet);
}

std::optional<ServedRun> Server::Resolve(ReceivedRequest& received) {
  // The client's directory is the descriptor it sent: its path as this process sees it now
  // (the client checked it shares our mount namespace and root), whatever its text said.
  Invocation& invocation = received.invocation;
  const int here_fd = received.fds[3].get();
  struct stat here {};
  const std::string here_link = fmt::format("/proc/self/fd/{}", here_fd);
  std::array<char, PATH_MAX> here_path{};
  const ssize_t here_size = ::readlink(here_link.c_str(), here_path.data(), here_path.size());
  // A directory removed meanwhile (its path reads "... (deleted)"): the client's to report.
  if (::fstat(here_fd, &here) != 0 || !S_ISDIR(here.st_mode) || here.st_nlink == 0 ||
      here_size <= 0 || static_cast<std::size_t>(here_size) >= here_path.size() ||
      here_path[0] != '/') {
    return std::nullopt;  // gone or unreachable: the client runs it itself
  }
  invocation.cwd.assign(here_path.data(), static_cast<std::size_t>(here_size));
  invocation.cwd_dev = static_cast<std::uint64_t>(here.st_dev);
  invocation.cwd_ino = static_cast<std::uint64_t>(here.st_ino);
  std::optional<ResolvedInvocation> resolved;
  if (options_.resolve_invocation) {
    resolved = options_.resolve_invocation(invocation, here_fd, received.fds[0].get());
  }
  received.fds[3].Reset();
  if (!resolved) return std::nullopt;
  ServedRun run;
  run.request = std::move(resolved->request);
  // With --json the output is captured and replied; the caller's descriptors are not used.
  if (!run.request.json) {
    run.stdout_fd = std::move(received.fds[1]);
    run.stderr_fd = std::move(received.fds[2]);
  }
  if (run.request.has_stdin) run.stdin_fd = std::move(received.fds[0]);
  const auto seconds = std::chrono::ceil<std::chrono::seconds>(resolved->timeout).count();
  run.wait_seconds = static_cast<std::uint32_t>(
      std::clamp<std::int64_t>(seconds, 1, std::numeric_limits<std::uint32_t>::max()));
  return run;
}

bool Server::Refuse(int fd, std::string_view log_prefix, std::string_view reply_prefix,
                    const Error& error) {
  Log(fmt::format("{}: {}", log_prefix, error.message));
  (void)SendReply(fd, ReplyKind::kRefused, 125, {},
                  fmt::format("the run server {}: {}\n", reply_prefix, error.message));
  return false;
}

bool Server::Handle(core::UniqueFd connection, HelperThread& helper) {
  const int fd = connection.get();
  // Every message read from here names its sender (the request's, checked below).
  if (Result<void> named = PassSenderPidfd(fd); !named) {
    return Refuse(fd, "refused a client", "refused this client", named.error());
  }
  // Whether to trust the client is known before anything else is done for it; whether a
  // command run here would inherit its context is read beside what follows (client_check.h).
  ClientCheck check(own_, fd, helper);
  // The greeting says that this server is running (a stopped one would hold the descriptors
  // the client hands over in flight, and whoever reads the client's output would wait); the
  // client sends its request once it has it.
  if (!SendReply(fd, ReplyKind::kHello, 0, {}, {})) return false;  // the client is gone
  if (const std::optional<Error>& refused = check.connector_refused()) {
    (void)Refuse(fd, "refused a client", "refused this client", *refused);
    DrainBriefly(fd);  // its request is not read, only let in: the client then reads why
    return false;
  }
  timeval timeout{kRequestTimeoutSeconds, 0};
  (void)::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  Result<ReceivedRequest> received = ReceiveRequest(fd);
  // A client that left before asking (`cordon serve --status` only looks) is no bad request.
  if (!received && received.error().errno_value == ECONNRESET) return false;
  if (!received) {
    (void)Refuse(fd, "bad request", "could not read the request", received.error());
    DrainBriefly(fd);  // the rest of what it sent is not read: the client then reads why
    return false;
  }
  // The sender, not only the connecting process: a sandboxed command's connect() is made by
  // its unconfined supervisor (decision 0019), but it sends its request itself.
  if (std::optional<Error> refused = check.SenderRefused(received->sender.get())) {
    return Refuse(fd, "refused a client", "refused this client", *refused);
  }
  // A trusted client. Until its context is judged, only reading: its command line resolved,
  // the policy and the plan (Execute); `admit` comes before anything is created or started.
  std::optional<ServedRun> run = Resolve(*received);
  // The client waits for kAccepted before the result: sent once, when the client is let in.
  bool accepted = false;
  auto accept = [&]() -> Result<void> {
    if (!run || accepted) return {};
    CORDON_TRY_VOID(SendReply(fd, ReplyKind::kAccepted, 0, {}, {}, run->wait_seconds));
    accepted = true;
    return {};
  };
  const std::function<Result<void>()> admit = [&]() -> Result<void> {
    // A command run here inherits this process's namespaces, cgroup, limits and credentials,
    // not its caller's: only for a caller whose are the same (decision 0030). A client's paths,
    // configuration file and workspace are also looked up here, which needs the same view.
    if (!check.ContextMismatch().empty()) {
      return Fail(ErrorCode::kUnavailable, "the client runs in another context");
    }
    return accept();
  };
  std::optional<Result<report::RunOutcome>> outcome;
  if (run) outcome = Execute(fd, *run, admit);
  if (run && !outcome && accepted) {
    // Never: Execute leaves a command to its client only before letting it in.
    return Refuse(fd, "could not serve", "could not run the command",
                  Error{ErrorCode::kInternal, 0, "left to the client after it was let in"});
  }
  if (const std::string& why = check.ContextMismatch(); !why.empty()) {
    Log("left a command to its client: " + why);
    (void)SendReply(fd, ReplyKind::kRunYourself, 0, {}, {});
    return false;
  }
  if (!outcome) {
    // Not logged per command when every session is busy (a loaded machine would fill the log).
    if (!run) Log("left a command line to its client (not one this server runs as it stands)");
    (void)SendReply(fd, ReplyKind::kRunYourself, 0, {}, {});
    return false;
  }
  // A run that ended before its gate (a denial, a plan that could not be made) still answers
  // in the order the front expects.
  if (!accept()) return false;  // the client is gone
  if (!*outcome) {
    return Refuse(fd, "could not serve", "could not run the command", outcome->error());
  }
  Log(fmt::format("ran a command (exit code {}, {:.2f} ms)", (*outcome)->exit_code,
                  static_cast<double>((*outcome)->duration.count()) / 1000.0));
  (void)SendReply(fd, ReplyKind::kRan, (*outcome)->exit_code, (*outcome)->stdout_text,
                  (*outcome)->stderr_text);
  return true;
}

void Server::StartWorker() {
  ++threads_;
  ++waiting_;
  std::thread([this] { Worker(); }).detach();
}

void Server::Worker() {
  HelperThread helper;  // checks this worker's clients (client_check.h)
  for (;;) {
    const int raw = ::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC);
    const int accept_errno = errno;
    // Out of descriptors: give the running commands a moment to return some.
    if (raw < 0 && (accept_errno == EMFILE || accept_errno == ENFILE)) ::usleep(10'000);
    std::unique_lock lock(threads_mutex_);
    if (stopping_.load()) {
      if (raw >= 0) ::close(raw);  // accepted while the server shut down: its client runs it
      --waiting_;
      if (--threads_ == 0) threads_done_.notify_all();
      return;
    }
    if (raw < 0) continue;  // EINTR, ECONNABORTED, EMFILE: try again
    core::UniqueFd connection(raw);
    if (active_.load() >= kMaxConnections) {
      lock.unlock();
      (void)SendReply(raw, ReplyKind::kRefused, 125, {},
                      "the run server is at its limit of concurrent runs\n");
      continue;
    }
    ++active_;
    --waiting_;
    // The next client finds a worker waiting already.
    if (waiting_ == 0 && threads_ < kMaxConnections + 1) StartWorker();
    lock.unlock();
    const bool ran = Handle(std::move(connection), helper);
    lock.lock();
    // In this order: Run() reads active_ before last_activity_. (A connection taken just as
    // Run() found the server idle is finished before it exits.)
    if (ran) last_activity_ = Clock::now().time_since_epoch().count();
    --active_;
    // Enough others wait: this one ends.
    if (waiting_ >= 2) {
      if (--threads_ == 0) threads_done_.notify_all();
      return;
    }
    ++waiting_;
  }
}

void Server::Run() {
  {
    std::lock_guard lock(threads_mutex_);
    StartWorker();
  }
  for (;;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    if (g_stop_requested != 0) {
      Log("asked to stop, exiting once the running commands end");
      break;
    }
    // Its socket file removed (the run directory with it) or replaced: no client can reach
    // this server any more, and a new one may already serve in its place.
    if (FileAt(AT_FDCWD, options_.paths.socket.c_str()) != socket_file_) {
      Log(
          fmt::format("its socket {} was removed or replaced: exiting once the running "
                      "commands end",
                      options_.paths.socket.string()));
      break;
    }
    // A session unused for as long as the server waits before its idle exit goes (its zygote
    // and prepared sandboxes with it): after a load, within that time, only the sessions
    // still used are kept.
    for (const auto& workspace : sessions_.DropUnusedSince(Clock::now() - options_.idle_timeout)) {
      Log(fmt::format("dropped the session of {}: unused for {} s", workspace.string(),
                      options_.idle_timeout.count()));
    }
    if (active_.load() != 0) continue;
    const Clock::time_point last{Clock::duration(last_activity_.load())};
    if (Clock::now() - last >= options_.idle_timeout) {
      Log("idle, exiting");
      break;
    }
  }
  // Wakes every worker in accept() (EINVAL from then on); one that took a connection at the
  // last moment finishes it first.
  stopping_ = true;
  (void)::shutdown(listener_.get(), SHUT_RDWR);
  std::unique_lock lock(threads_mutex_);
  threads_done_.wait(lock, [&] { return threads_ == 0; });
}

// The lock is held by an open file description, which every process cloned from a server
// shares until it execs or exits: a server that was just killed may leave children that are
// still dying (a sandbox being prepared) and hold it for some milliseconds. Retry that long.
Result<void> TakeLock(int fd, const ServerPaths& paths) {
  constexpr int kAttempts = 50;  // 10 ms apart: half a second
  for (int attempt = 1;; ++attempt) {
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0) return {};
    if (errno == EINTR) continue;
    if (errno != EWOULDBLOCK) return core::FailSyscall("flock", paths.lock.string());
    if (attempt == kAttempts) {
      return Fail(ErrorCode::kUnavailable,
                  fmt::format("another run server is already serving {}", paths.socket.string()));
    }
    ::usleep(10'000);
  }
}

Result<core::UniqueFd> Listen(const ServerPaths& paths) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  const std::string path = paths.socket.string();
  if (path.size() >= sizeof address.sun_path) {
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("run server socket path {} is too long for a unix socket", path));
  }
  std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
  core::UniqueFd listener(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!listener.valid()) return core::FailSyscall("socket", "AF_UNIX, SOCK_STREAM");
  // We hold the lock: a socket file left here is a dead server's.
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) return core::FailSyscall("unlink", path);
  if (::bind(listener.get(), reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
    return core::FailSyscall("bind", path);
  }
  if (::chmod(path.c_str(), 0600) != 0) return core::FailSyscall("chmod", path + ", 0600");
  if (::listen(listener.get(), 64) != 0) return core::FailSyscall("listen", path);
  return listener;
}

}  // namespace

Result<void> Serve(const ServerOptions& options) {
  // Without it every client would be refused (and warned on every run): no server at all.
  CORDON_TRY_VOID(CheckKernelNamesPeers());
  CORDON_TRY_VOID(CheckDirectory(options.paths.directory, true));
  // Read once: the bar every client is checked against (an error here would refuse them all).
  CORDON_TRY(Confinement own, OwnConfinement());
  core::UniqueFd lock(
      ::open(options.paths.lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600));
  if (!lock.valid()) return core::FailSyscall("open", options.paths.lock.string());
  CORDON_TRY_VOID(TakeLock(lock.get(), options.paths));
  CORDON_TRY(core::UniqueFd listener, Listen(options.paths));
  // The run directory as it is now: its socket is removed through it at exit, so a directory
  // made anew in its place (and a newer server's socket there) is never touched.
  const core::UniqueFd directory(
      ::open(options.paths.directory.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW));
  if (!directory.valid()) return core::FailSyscall("open", options.paths.directory.string());
  const std::string socket_name = options.paths.socket.filename().string();
  const std::optional<FileId> socket_file = FileAt(directory.get(), socket_name.c_str());
  if (!socket_file) return core::FailSyscall("fstatat", options.paths.socket.string());
  // Only now: a line that scripts (and bench/startup_bench.cc) wait for before the first run.
  if (options.log != nullptr) {
    fmt::print(options.log, "cordon serve: listening on {} (exits after {} s idle)\n",
               options.paths.socket.string(), options.idle_timeout.count());
    std::fflush(options.log);
  }
  // A client that vanishes mid-reply must not kill the server.
  ::signal(SIGPIPE, SIG_IGN);
  // Stopped like an idle exit, so that running commands end and release their placeholders. (A
  // handler, not a blocked mask: a caught signal reverts to its default in every child at
  // exec, a blocked one would stay blocked in the commands.)
  struct sigaction stop {};
  stop.sa_handler = &RequestStop;
  ::sigemptyset(&stop.sa_mask);
  ::sigaction(SIGTERM, &stop, nullptr);
  ::sigaction(SIGINT, &stop, nullptr);
  Server server(options, own, std::move(listener), *socket_file);
  server.Run();
  // Still holding the lock: the socket file is ours to remove, unless the run directory was
  // removed meanwhile (the lock with it), where `directory` finds nothing any more.
  if (FileAt(directory.get(), socket_name.c_str()) == socket_file) {
    (void)::unlinkat(directory.get(), socket_name.c_str(), 0);
  }
  return {};
}

}  // namespace cordon::server
