#include "server/control.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include "core/syscall_error.h"
#include "core/unique_fd.h"
#include "server/peer.h"

namespace cordon::server {
namespace {

// A connection to the socket, or an invalid descriptor when nothing listens there.
Result<core::UniqueFd> Connect(const ServerPaths& paths) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  const std::string path = paths.socket.string();
  if (path.size() >= sizeof address.sun_path) {
    return Fail(ErrorCode::kInvalidArgument, fmt::format("socket path too long: {}", path));
  }
  std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
  core::UniqueFd socket(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!socket) return core::FailSyscall("socket", "AF_UNIX");
  if (::connect(socket.get(), reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0 ||
      errno == EAGAIN) {
    return socket;  // EAGAIN: a full backlog; the listener is still there
  }
  if (errno == ENOENT || errno == ECONNREFUSED) return core::UniqueFd();
  return core::FailSyscall("connect", path);
}

bool Listening(const ServerPaths& paths) {
  Result<core::UniqueFd> socket = Connect(paths);
  return socket && socket->valid();
}

}  // namespace

Result<ServerStatus> QueryServer(const ServerPaths& paths) {
  ServerStatus status;
  if (Result<void> dir = CheckDirectory(paths.directory, false); !dir) {
    if (dir.error().code == ErrorCode::kNotFound) return status;
    return std::unexpected(std::move(dir).error());
  }
  CORDON_TRY(core::UniqueFd socket, Connect(paths));
  if (!socket) return status;
  ucred peer{};
  socklen_t size = sizeof peer;
  if (::getsockopt(socket.get(), SOL_SOCKET, SO_PEERCRED, &peer, &size) != 0) {
    return core::FailSyscall("getsockopt", "SO_PEERCRED, " + paths.socket.string());
  }
  if (peer.uid != ::geteuid() || peer.pid <= 0) {
    return Fail(ErrorCode::kUnavailable,
                fmt::format("the process listening at {} (pid {}) is not this user's run server",
                            paths.socket.string(), peer.pid));
  }
  status.running = true;
  status.pid = peer.pid;
  if (Result<Confinement> own = OwnConfinement(); own) {
    if (Result<void> same = CheckServer(*own, socket.get()); !same) {
      if (same.error().code == ErrorCode::kNotFound) return ServerStatus{};  // it just exited
      status.stale = same.error().message;
    }
  }
  return status;
}

Result<ServerStatus> StopServer(const ServerPaths& paths, std::chrono::milliseconds grace) {
  CORDON_TRY(ServerStatus status, QueryServer(paths));
  if (!status.running) return status;
  // Signalled through a pidfd of the listener: never another process that took its pid.
  CORDON_TRY(core::UniqueFd socket, Connect(paths));
  if (!socket) return status;  // gone meanwhile
  CORDON_TRY(Peer peer, PeerOf(socket.get()));
  socket.Reset();
  for (const int signal : {SIGTERM, SIGKILL}) {
    if (::syscall(SYS_pidfd_send_signal, peer.pidfd.get(), signal, nullptr, 0) != 0 &&
        errno != ESRCH) {
      return core::FailSyscall("pidfd_send_signal",
                               fmt::format("{}, {}", status.pid, ::strsignal(signal)));
    }
    const auto until = std::chrono::steady_clock::now() + grace;
    while (std::chrono::steady_clock::now() < until) {
      if (!Listening(paths)) return status;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  if (!Listening(paths)) return status;
  return Fail(ErrorCode::kSystem, fmt::format("the run server (pid {}) still listens at {} after "
                                              "SIGKILL",
                                              status.pid, paths.socket.string()));
}

}  // namespace cordon::server
