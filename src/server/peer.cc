#include "server/peer.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <charconv>
#include <csignal>
#include <cstring>
#include <string>
#include <vector>

#include "core/syscall_error.h"
#include "core/unique_fd.h"
#include "exec/process_control.h"
#include "linux/system_headers/syscalls.h"

namespace cordon::server {
namespace {

// <asm-generic/socket.h> of Linux 6.5; Debian 12's headers predate it.
constexpr int kSoPeerPidfd = 77;
// Largest /proc/PID/status read; the real one is about 1.5 KiB.
constexpr std::size_t kStatusMax = 16384;

// The numbers of a field, separated by tabs or spaces.
std::vector<long> Numbers(std::string_view text) {
  std::vector<long> numbers;
  std::size_t at = 0;
  while (at < text.size()) {
    while (at < text.size() && (text[at] == '\t' || text[at] == ' ')) ++at;
    if (at == text.size()) break;
    long value = 0;
    auto [end, ec] = std::from_chars(text.data() + at, text.data() + text.size(), value);
    if (ec != std::errc() || end == text.data() + at) return {};
    numbers.push_back(value);
    at = static_cast<std::size_t>(end - text.data());
  }
  return numbers;
}

Result<std::string> ReadStatus(int proc_dir, const std::string& what) {
  core::UniqueFd fd(::openat(proc_dir, "status", O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return core::FailSyscall("openat", what + "/status");
  char text[kStatusMax];  // on the stack: no 16 KiB to clear and fault in per client
  std::size_t got = 0;
  for (;;) {
    const ssize_t n = ::read(fd.get(), text + got, sizeof text - got);
    if (n < 0) {
      if (errno == EINTR) continue;
      return core::FailSyscall("read", what + "/status");
    }
    got += static_cast<std::size_t>(n);
    if (n == 0 || got == sizeof text) break;
  }
  return std::string(text, got);
}

}  // namespace

Result<Confinement> ParseStatus(std::string_view status) {
  Confinement c;
  auto need = [&](std::string_view name, std::size_t at_least) -> Result<std::vector<long>> {
    std::vector<long> numbers = Numbers(StatusField(status, name));
    if (numbers.size() < at_least) {
      return Fail(ErrorCode::kInvalidArgument,
                  fmt::format("/proc/PID/status: no readable \"{}:\" line", name));
    }
    return numbers;
  };
  CORDON_TRY(std::vector<long> uid, need("Uid", 2));
  CORDON_TRY(std::vector<long> nnp, need("NoNewPrivs", 1));
  CORDON_TRY(std::vector<long> filters, need("Seccomp_filters", 1));
  CORDON_TRY(std::vector<long> nspid, need("NSpid", 1));
  c.uid = static_cast<uid_t>(uid[1]);
  c.no_new_privs = nnp[0] != 0;
  c.seccomp_filters = static_cast<int>(filters[0]);
  c.pid_namespace_depth = static_cast<int>(nspid.size());
  return c;
}

namespace {

// The file /proc/PID/exe names (a process of the same user that is dumpable lets us see it).
void AddExecutable(int proc_dir, Confinement& c) {
  struct stat st {};
  if (::fstatat(proc_dir, "exe", &st, 0) != 0) return;
  c.exe_known = true;
  c.exe_dev = static_cast<std::uint64_t>(st.st_dev);
  c.exe_ino = static_cast<std::uint64_t>(st.st_ino);
}

}  // namespace

Result<Confinement> OwnConfinement() {
  core::UniqueFd self(::open("/proc/self", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!self.valid()) return core::FailSyscall("open", "/proc/self");
  CORDON_TRY(std::string status, ReadStatus(self.get(), "/proc/self"));
  CORDON_TRY(Confinement c, ParseStatus(status));
  AddExecutable(self.get(), c);
  c.context = ReadContext(::getpid(), self.get(), status);
  return c;
}

TrustFacts FactsOf(const Confinement& c) {
  return {static_cast<long>(c.uid), c.no_new_privs, c.seccomp_filters, c.pid_namespace_depth};
}

std::string Mismatch(const Confinement& own, const Confinement& peer) {
  switch (Judge(FactsOf(own), FactsOf(peer))) {
    case Distrust::kNone:
      return {};
    case Distrust::kOtherUser:
      return fmt::format("it runs as uid {}, not {}", peer.uid, own.uid);
    case Distrust::kNoNewPrivs:
      return "it runs with no_new_privs (sandboxed)";
    case Distrust::kMoreSeccompFilters:
      return fmt::format(
          "it runs under {} seccomp filters, more than this process's {} (sandboxed)",
          peer.seccomp_filters, own.seccomp_filters);
    case Distrust::kOtherPidNamespace:
      return fmt::format("it runs in another PID namespace (depth {}, not {})",
                         peer.pid_namespace_depth, own.pid_namespace_depth);
  }
  return "unknown";
}

namespace {

constexpr const char* kNoPid =
    "the other process has exited or lies outside this process's PID namespace";

// The pid behind the pidfd from its fdinfo's "Pid:" ("Pid:\t-1" once it has exited).
Result<long> PidOfFromFdinfo(int pidfd) {
  const std::string info = fmt::format("/proc/self/fdinfo/{}", pidfd);
  core::UniqueFd info_fd(::open(info.c_str(), O_RDONLY | O_CLOEXEC));
  if (!info_fd.valid()) return core::FailSyscall("open", info);
  char text[1024];
  const ssize_t n = ::read(info_fd.get(), text, sizeof text - 1);
  if (n <= 0) return core::FailSyscall("read", info);
  std::vector<long> pid =
      Numbers(StatusField(std::string_view(text, static_cast<std::size_t>(n)), "Pid"));
  if (pid.size() != 1 || pid[0] <= 0) return Fail(ErrorCode::kUnavailable, kNoPid);
  return pid[0];
}

// The pid behind the pidfd, in our PID namespace: PIDFD_GET_INFO (Linux 6.13), else fdinfo.
Result<long> PidOf(int pidfd) {
  linux_native::sys::PidfdInfo info{};
  info.mask = linux_native::sys::kPidfdInfoPid;
  if (::ioctl(pidfd, linux_native::sys::kPidfdGetInfo, &info) == 0 && info.pid > 0) {
    return static_cast<long>(info.pid);
  }
  if (errno == ESRCH) return Fail(ErrorCode::kUnavailable, kNoPid);
  return PidOfFromFdinfo(pidfd);  // an older kernel
}

}  // namespace

namespace {

// The /proc directory and status of the process behind `pidfd`, and its confinement parsed
// from that (without the executable and the context).
struct ProcEntry {
  core::UniqueFd dir;
  std::string status;
  Confinement confinement;
};

Result<ProcEntry> ProcEntryOf(int pidfd) {
  CORDON_TRY(const long pid, PidOf(pidfd));
  const std::string what = fmt::format("/proc/{}", pid);
  ProcEntry entry;
  entry.dir = core::UniqueFd(::open(what.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!entry.dir.valid()) return core::FailSyscall("open", what);
  // The directory was opened while the pidfd's process was alive: it is that process's, not a
  // later one's with a recycled PID.
  if (!exec::PidfdAlive(pidfd)) {
    return core::FailSyscall("pidfd_send_signal", fmt::format("pid {}, signal 0", pid));
  }
  CORDON_TRY(entry.status, ReadStatus(entry.dir.get(), what));
  CORDON_TRY(entry.confinement, ParseStatus(entry.status));
  entry.confinement.pid = static_cast<int>(pid);
  return entry;
}

}  // namespace

Result<Confinement> ConfinementOf(int pidfd, bool executable, bool context) {
  CORDON_TRY(ProcEntry entry, ProcEntryOf(pidfd));
  Confinement& c = entry.confinement;
  if (executable) AddExecutable(entry.dir.get(), c);
  if (context) c.context = ReadContext(c.pid, entry.dir.get(), entry.status);
  return std::move(c);
}

namespace {

// A pidfd of the process that connected `socket` (client side: that called listen()).
Result<core::UniqueFd> PeerPidfd(int socket) {
  int raw_pidfd = -1;
  socklen_t len = sizeof raw_pidfd;
  if (::getsockopt(socket, SOL_SOCKET, kSoPeerPidfd, &raw_pidfd, &len) != 0) {
    return Fail(ErrorCode::kUnavailable,
                fmt::format("getsockopt(SO_PEERPIDFD): {} (needs Linux 6.5 or later)",
                            std::strerror(errno)));
  }
  return core::UniqueFd(raw_pidfd);
}

}  // namespace

Result<Peer> ProcessOf(int pidfd) {
  CORDON_TRY(ProcEntry entry, ProcEntryOf(pidfd));
  Peer peer;
  peer.proc_dir = std::move(entry.dir);
  peer.status = std::move(entry.status);
  peer.confinement = std::move(entry.confinement);
  return peer;
}

Result<Peer> PeerOf(int socket) {
  CORDON_TRY(core::UniqueFd pidfd, PeerPidfd(socket));
  CORDON_TRY(Peer peer, ProcessOf(pidfd.get()));
  peer.pidfd = std::move(pidfd);
  return peer;
}

void AddContext(Peer& peer) {
  peer.confinement.context = ReadContext(peer.confinement.pid, peer.proc_dir.get(), peer.status);
}

Result<Peer> PeerWithContext(int socket) {
  CORDON_TRY(Peer peer, PeerOf(socket));
  AddContext(peer);
  return peer;
}

bool SameLiveProcess(const Peer& peer, int other_pidfd) {
  Result<long> other = PidOf(other_pidfd);
  return other && *other == peer.confinement.pid && exec::PidfdAlive(peer.pidfd.get()) &&
         exec::PidfdAlive(other_pidfd);
}

Result<Confinement> PeerConfinement(int socket, bool executable) {
  CORDON_TRY(core::UniqueFd pidfd, PeerPidfd(socket));
  return ConfinementOf(pidfd.get(), executable);
}

Result<void> CheckKernelNamesPeers() {
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) {
    return core::FailSyscall("socketpair", "AF_UNIX");
  }
  core::UniqueFd a(pair[0]);
  core::UniqueFd b(pair[1]);
  int raw_pidfd = -1;
  socklen_t len = sizeof raw_pidfd;
  if (::getsockopt(a.get(), SOL_SOCKET, kSoPeerPidfd, &raw_pidfd, &len) != 0) {
    return Fail(ErrorCode::kUnavailable,
                fmt::format("this kernel cannot name a socket's peer (getsockopt(SO_PEERPIDFD): "
                            "{}; Linux 6.5 or later): a run server could trust no client",
                            std::strerror(errno)));
  }
  core::UniqueFd pidfd(raw_pidfd);
  return {};
}

namespace {

Result<void> Trusted(const Confinement& own, Result<Confinement> other) {
  if (!other) return std::unexpected(std::move(other).error());
  if (std::string why = Mismatch(own, *other); !why.empty()) {
    return Fail(ErrorCode::kUnavailable, "the other end is not trusted: " + why);
  }
  return {};
}

}  // namespace

Result<void> CheckProcess(const Confinement& own, int pidfd) {
  return Trusted(own, ConfinementOf(pidfd));
}

Result<void> CheckPeer(const Confinement& own, int socket) {
  return Trusted(own, PeerConfinement(socket));
}

Result<void> CheckServer(const Confinement& own, int socket) {
  CORDON_TRY(core::UniqueFd pidfd, PeerPidfd(socket));
  Result<Confinement> server = ConfinementOf(pidfd.get(), /*executable=*/true);
  if (!server) return std::unexpected(std::move(server).error());
  CORDON_TRY_VOID(Trusted(own, *server));  // a sandboxed server is refused as such first
  if (!server->exe_known) {
    // A server that is exiting (killed, say) has let go of its executable before its socket:
    // a connection that came in between names no executable. Not "another executable": gone.
    pollfd exiting{pidfd.get(), POLLIN, 0};
    int ready = -1;
    while ((ready = ::poll(&exiting, 1, kExitingServerWaitMs)) < 0 && errno == EINTR) {
    }
    if (ready == 1) {
      return Fail(ErrorCode::kNotFound, "the run server exited while this run connected");
    }
    return Fail(ErrorCode::kUnavailable,
                fmt::format("cannot tell which executable the run server (pid {}) runs: its "
                            "/proc entry names none",
                            server->pid));
  }
  if (!own.exe_known || own.exe_dev != server->exe_dev || own.exe_ino != server->exe_ino) {
    return Fail(ErrorCode::kUnavailable,
                "it runs another cordon executable than this one (one started before an "
                "upgrade, or another install): stop it with `cordon serve --stop`, and the next "
                "`cordon run` starts a new one");
  }
  return {};
}

}  // namespace cordon::server
