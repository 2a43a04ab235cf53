#include "exec/connect_broker.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <linux/capability.h>
#include <linux/netlink.h>
#include <linux/openat2.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <utility>

#include "core/syscall_error.h"
#include "exec/abstract_owner.h"
#include "exec/notified_task.h"
#include "linux/system_headers/seccomp.h"
#include "net/address_class.h"

namespace cordon::exec {
namespace {

using core::UniqueFd;

constexpr int kEventsPerRound = 16;

// The notification names a thread; pidfd_open wants its thread group leader.
pid_t ThreadGroupOf(pid_t tid) {
  UniqueFd fd(::open(ProcPath(tid, "status").c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return -1;
  char buffer[4096];
  const ssize_t n = ::read(fd.get(), buffer, sizeof buffer - 1);
  if (n <= 0) return -1;
  buffer[n] = '\0';
  const char* line = std::strstr(buffer, "\nTgid:");
  if (line == nullptr) return -1;
  return static_cast<pid_t>(std::strtol(line + 6, nullptr, 10));
}

int SocketOption(int fd, int option) {
  int value = -1;
  socklen_t size = sizeof value;
  if (::getsockopt(fd, SOL_SOCKET, option, &value, &size) != 0) return -1;
  return value;
}

struct Resolved {
  UniqueFd socket_file;  // O_PATH of the socket inode the command's path names
  int err = 0;
  bool by_rule = false;  // err is cordon's refusal (outside the writable areas), not the path's
};

// Resolves `path` (from sun_path) as the command would: in its root (/proc/TID/root, which is
// its own mount namespace's root, or the host's in the fallback), relative paths from its
// working directory, symlinks followed inside that root. The check is made on the inode
// reached (its path as the command sees it), and the connect later goes to that same inode.
Resolved ResolveInView(pid_t tid, std::string path, const std::vector<std::string>& beneath) {
  if (path.front() != '/') {
    const std::string cwd = ReadLinkPath(ProcPath(tid, "cwd"));
    if (cwd.empty()) return {{}, EACCES};
    path = cwd + "/" + path;
  }
  UniqueFd root = OpenRoot(tid);
  if (!root) return {{}, EACCES};
  open_how how{};
  how.flags = O_PATH | O_CLOEXEC;
  how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
  UniqueFd target(
      static_cast<int>(::syscall(SYS_openat2, root.get(), path.c_str(), &how, sizeof how)));
  if (!target) return {{}, errno};  // ENOENT, ENOTDIR, EACCES, ...: what connect would say
  struct stat st {};
  if (::fstat(target.get(), &st) != 0 || !S_ISSOCK(st.st_mode)) return {{}, ECONNREFUSED};
  // A read-only mount is never a writable area, even below one by path: the read_only mode's
  // workspace bound over the private /tmp, a .git bound read-only inside a writable root.
  struct statfs fs {};
  if (::fstatfs(target.get(), &fs) != 0 || (fs.f_flags & ST_RDONLY) != 0) {
    return {{}, EACCES, true};
  }
  // The inode's path below the root of the mount tree it lives in: for the command's mount
  // namespace, the path as the command sees it.
  const std::string seen = ReadLinkPath("/proc/self/fd/" + std::to_string(target.get()));
  if (seen.empty()) return {{}, EACCES};
  if (!ConnectBroker::IsBeneath(seen, beneath)) {
    return {{}, EACCES, true};
  }
  return {std::move(target), 0};
}

// "93.184.216.34:443", "[2001:db8::1]:443"; the port alone for another family.
std::string FormatAddress(const sockaddr_storage& address, std::uint16_t* port) {
  char text[INET6_ADDRSTRLEN] = {};
  if (address.ss_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(&address);
    *port = ntohs(in->sin_port);
    ::inet_ntop(AF_INET, &in->sin_addr, text, sizeof text);
    return std::string(text) + ":" + std::to_string(*port);
  }
  const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&address);
  *port = ntohs(in6->sin6_port);
  ::inet_ntop(AF_INET6, &in6->sin6_addr, text, sizeof text);
  return "[" + std::string(text) + "]:" + std::to_string(*port);
}

// This host, as the kernel takes a connect there: the loopback, or the unspecified address
// (net::IsUnspecified), which it connects to the loopback. In the sandbox's own network
// namespace, the sandbox's.
bool IsOwnHost(const sockaddr_storage& address) {
  std::uint16_t port = 0;
  const unsigned len = address.ss_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
  const std::optional<net::IpAddress> ip = net::AddressOf(address, len, &port);
  return ip && net::IsOwnHost(*ip);
}

// Whether a TCP socket of this process's network namespace (the host's: the supervisor's)
// listens on `port` on the loopback or every address: read from /proc/self/net/tcp{,6}, never by
// connecting to it.
bool HostListens(std::uint16_t port) {
  for (const char* table : {"/proc/self/net/tcp", "/proc/self/net/tcp6"}) {
    UniqueFd fd(::open(table, O_RDONLY | O_CLOEXEC));
    if (!fd) continue;
    std::string text;
    char buffer[8192];
    for (ssize_t n; (n = ::read(fd.get(), buffer, sizeof buffer)) != 0;) {
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 || text.size() > (8u << 20)) break;
      text.append(buffer, static_cast<std::size_t>(n));
    }
    // "  0: 0100007F:1F90 00000000:0000 0A ..." (address:port in hex; state 0A is LISTEN)
    std::size_t at = text.find('\n');  // past the header
    while (at != std::string::npos && at + 1 < text.size()) {
      const std::size_t end = text.find('\n', at + 1);
      std::string_view row(text.data() + at + 1,
                           (end == std::string::npos ? text.size() : end) - at - 1);
      at = end;
      std::string_view fields[4];
      for (std::string_view& field : fields) {
        const std::size_t start = row.find_first_not_of(' ');
        if (start == std::string_view::npos) break;
        row.remove_prefix(start);
        const std::size_t space = row.find(' ');
        field = row.substr(0, space);
        row.remove_prefix(space == std::string_view::npos ? row.size() : space);
      }
      const std::size_t sep = fields[1].find(':');
      if (fields[3] != "0A" || sep == std::string_view::npos) continue;
      const std::string_view local = fields[1].substr(0, sep);
      if (std::strtoul(std::string(fields[1].substr(sep + 1)).c_str(), nullptr, 16) != port) {
        continue;
      }
      const bool any = local.find_first_not_of('0') == std::string_view::npos;
      const bool loopback4 = local.size() == 8 && local.ends_with("7F");
      const bool loopback6 = local == "00000000000000000000000001000000" ||
                             (local.size() == 32 && local.starts_with("0000000000000000FFFF0000") &&
                              local.ends_with("7F"));
      if (any || loopback4 || loopback6) return true;
    }
  }
  return false;
}

constexpr const char* kNetworkFix =
    "allow the names it needs: cordon run --allow-domain NAME (network by domain), or the whole "
    "network: cordon run --network allow, or sandbox.network in your config";

// A name lookup is most often a package install: it can also run offline from cordon's tool
// cache, which `cordon cache seed` fills from the host's own caches (decision 0049).
constexpr const char* kDnsFix =
    "allow the names it needs: cordon run --allow-domain NAME (network by domain), or the whole "
    "network: cordon run --network allow; or, for a package install, install offline from "
    "cordon's tool cache (fill it from the host's caches with: cordon cache seed)";

constexpr const char* kHostSocketFix =
    "by design: a host service's socket is not reachable from the sandbox; use the service "
    "from outside cordon";

// The destination a connect named, as much of it as a sockaddr_storage holds.
sockaddr_storage CopyAddress(const void* addr, unsigned len) {
  sockaddr_storage address{};
  std::memcpy(&address, addr, std::min<std::size_t>(len, sizeof address));
  return address;
}

// This process's effective CAP_NET_RAW (in its own user namespace: the host's, for a caller).
bool HoldsNetRaw() {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};
  if (::syscall(SYS_capget, &header, data) != 0) return false;
  return (data[CAP_TO_INDEX(CAP_NET_RAW)].effective & CAP_TO_MASK(CAP_NET_RAW)) != 0;
}

// The program task `tid` runs would have CAP_NET_RAW outside the sandbox, where no_new_privs
// does not hold it back: set-user-id root, or the capability in its file capabilities.
bool ProgramGainsNetRaw(pid_t tid) {
  const UniqueFd exe(::open(fmt::format("/proc/{}/exe", tid).c_str(), O_RDONLY | O_CLOEXEC));
  struct stat st {};
  if (!exe || ::fstat(exe.get(), &st) != 0) return false;
  if ((st.st_mode & S_ISUID) != 0 && st.st_uid == 0) return true;
  vfs_ns_cap_data caps{};
  const ssize_t n = ::fgetxattr(exe.get(), "security.capability", &caps, sizeof caps);
  if (n < static_cast<ssize_t>(XATTR_CAPS_SZ_2)) return false;
  return (caps.data[CAP_TO_INDEX(CAP_NET_RAW)].permitted & CAP_TO_MASK(CAP_NET_RAW)) != 0;
}

// The command's connect found no socket at an absolute path where the host has one: the
// sandbox's view left it out (its private /tmp, the hidden home) or covered it (a mask, which
// is no socket: ECONNREFUSED). The supervisor's own view is the host's.
// Looked up on the host only inside `hidden_areas` (where the view hides the host's), never
// through an automount point at its end, and never for a path with "..".
bool HiddenHostSocket(const std::string& path, int err,
                      const std::vector<std::string>& hidden_areas) {
  if (err != ENOENT && err != ENOTDIR && err != ECONNREFUSED) return false;
  if (path.empty() || path.front() != '/' || path.find("/../") != std::string::npos ||
      path.ends_with("/..") || !ConnectBroker::IsBeneath(path, hidden_areas)) {
    return false;
  }
  struct stat st {};
  return ::fstatat(AT_FDCWD, path.c_str(), &st, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT) == 0 &&
         S_ISSOCK(st.st_mode);
}

}  // namespace

void ConnectBroker::Record(Denial denial) {
  if (denials_.size() >= RunResult::kMaxDenials) return;
  for (const Denial& seen : denials_) {
    if (seen.kind == denial.kind && seen.target == denial.target) return;
  }
  denials_.push_back(std::move(denial));
}

void ConnectBroker::RecordInet(const sockaddr_storage& address, int type, int err,
                               bool refused_tcp) {
  std::uint16_t port = 0;
  std::string target = FormatAddress(address, &port);
  // A UDP connect to port 0 carries nothing (no datagram can be sent there): it is how glibc's
  // getaddrinfo orders a name's addresses (RFC 6724: which source address each would use).
  if (type == SOCK_DGRAM && port == 0) return;
  const bool dns = port == 53;
  if (refused_tcp) {
    Record({dns ? "dns" : "connect", std::move(target), "landlock", "sandbox.network: deny",
            dns ? kDnsFix : kNetworkFix});
    return;
  }
  if (!rules_.private_network) return;
  const bool beyond = !IsOwnHost(address);
  if (rules_.domains && beyond) {
    // TCP beyond the loopback was decided by DecideOutside; what comes here is UDP or a DNS
    // query past cordon's resolver, neither of which goes out.
    Record({dns ? "dns" : (type == SOCK_DGRAM ? "udp" : "connect"), std::move(target), "network",
            dns ? "sandbox.network: domains (names resolve through the sandbox's own resolver, "
                  "127.0.0.1)"
                : "sandbox.network: domains (only TCP to allowed names goes out)",
            dns ? "look the name up through the system resolver (/etc/resolv.conf), which "
                  "cordon answers for the allowed domains"
                : "by design: network by domain forwards TCP connections to allowed names; "
                  "for anything else run with --network allow"});
    return;
  }
  // cordon's resolver answers on the loopback's port 53, over UDP and TCP.
  if (rules_.domains && dns) return;
  // In the sandbox's own network namespace there is only its loopback. A DNS query goes
  // nowhere: no resolver listens on its port 53 (binding it needs a capability no command
  // has), and the host's is beyond. Anything else beyond the loopback is unreachable.
  const bool unreachable = err == ENETUNREACH || err == EHOSTUNREACH || err == EADDRNOTAVAIL;
  if (dns && (beyond || type == SOCK_DGRAM || err == ECONNREFUSED)) {
    Record({"dns", std::move(target), "network", "sandbox.network: deny", kDnsFix});
  } else if (beyond && unreachable) {
    Record({"connect", std::move(target), "network", "sandbox.network: deny", kNetworkFix});
  } else if (!beyond && err == ECONNREFUSED && type == SOCK_STREAM && HostListens(port)) {
    // Nothing listens on the sandbox's loopback there, but the host's has a listener: the
    // command meant the host's service (a database, a dev server), which it cannot reach.
    Record({"connect", std::move(target), "network",
            fmt::format("sandbox.network: {} (the sandbox's loopback is its own, not the host's)",
                        rules_.domains ? "domains" : "deny"),
            kNetworkFix});
  }
}

bool ConnectBroker::IsBeneath(std::string_view view_path, const std::vector<std::string>& beneath) {
  if (view_path.empty() || view_path.front() != '/') return false;
  for (std::string_view root : beneath) {
    while (root.size() > 1 && root.back() == '/') root.remove_suffix(1);
    if (root.empty() || root == "/") continue;  // never planned; never everything
    if (view_path.starts_with(root) &&
        (view_path.size() == root.size() || view_path[root.size()] == '/')) {
      return true;
    }
  }
  return false;
}

Result<std::unique_ptr<ConnectBroker>> ConnectBroker::Create(UniqueFd listener, ConnectRules rules,
                                                             ResolverHandover resolver) {
  // Thread ids from the listener are in this process's PID namespace, and the broker reads
  // /proc/<tid>/{root,cwd}: a /proc of another PID namespace (unshare -p without remounting
  // it) would name other tasks. Refuse to broker then: the command's connects fail (ENOSYS).
  // The write-intent calls still continue then, unexamined.
  char self[32] = {};
  const ssize_t n = ::readlink("/proc/self", self, sizeof self - 1);
  const bool blind = n <= 0 || std::strtol(self, nullptr, 10) != ::getpid();
  // Each observed call waits for the supervisor: wake it on the caller's CPU and switch to it
  // (Linux 6.6; older kernels wake it elsewhere, as before).
  (void)::ioctl(listener.get(), linux_native::sys::kSeccompIoctlNotifSetFlags,
                linux_native::sys::kSeccompUserNotifFdSyncWakeUp);
  UniqueFd epoll(::epoll_create1(EPOLL_CLOEXEC));
  if (!epoll) return core::FailSyscall("epoll_create1", "EPOLL_CLOEXEC");
  std::unique_ptr<ConnectBroker> broker(
      new ConnectBroker(std::move(listener), std::move(epoll), std::move(rules), blind));
  if (broker->rules_.domains && broker->rules_.parent) {
    CORDON_TRY(broker->parent_address_, ResolveParentProxy(*broker->rules_.parent));
    std::uint16_t port = 0;
    const std::optional<net::IpAddress> parent =
        net::AddressOf(broker->parent_address_, sizeof broker->parent_address_, &port);
    const std::vector<net::IpAddress> own = net::HostAddresses();
    broker->parent_own_host_ = !parent || net::IsOwnHost(*parent) ||
                               std::find(own.begin(), own.end(), *parent) != own.end();
  }
  if (broker->rules_.domains) {
    if (!resolver.datagram || !resolver.stream || !resolver.proxy || resolver.program < 0) {
      return Fail(ErrorCode::kUnavailable,
                  "network by domain: the sandbox's resolver sockets or cordon-resolver are "
                  "missing, so nothing would answer the sandbox's lookups");
    }
    CORDON_TRY(broker->resolver_,
               ResolverProcess::Start(std::move(resolver), *broker->rules_.domains,
                                      UpstreamDns::HostResolver()));
    broker->resolver_->set_parent_proxy(broker->rules_.parent.has_value());
    for (const int fd : {broker->resolver_->channel_fd(), broker->resolver_->upstream_fd()}) {
      if (fd < 0) continue;  // no upstream: questions are answered SERVFAIL (ResolverProcess)
      epoll_event event{};
      event.events = EPOLLIN;
      event.data.u64 = static_cast<std::uint64_t>(fd);
      if (::epoll_ctl(broker->epoll_.get(), EPOLL_CTL_ADD, fd, &event) != 0) {
        return core::FailSyscall("epoll_ctl", "cordon-resolver's channel and upstream socket");
      }
    }
  }
  return broker;
}

ConnectBroker::ConnectBroker(UniqueFd listener, UniqueFd epoll, ConnectRules rules, bool blind)
    : listener_(std::move(listener)),
      epoll_(std::move(epoll)),
      rules_(std::move(rules)),
      observer_(rules_.writes),
      blind_(blind),
      caller_net_raw_(HoldsNetRaw()) {}

void ConnectBroker::Service() {
  if (listener_open_) {
    pollfd p{listener_.get(), POLLIN, 0};
    if (::poll(&p, 1, 0) > 0) {
      if ((p.revents & POLLIN) != 0) {
        HandleNotification();
      } else if ((p.revents & (POLLHUP | POLLERR)) != 0) {
        listener_open_ = false;  // no process uses the filter any more
      }
    }
  }
  if (parked_.empty() && !resolver_) return;
  epoll_event events[kEventsPerRound];
  const int n = ::epoll_wait(epoll_.get(), events, kEventsPerRound, 0);
  for (int i = 0; i < n; ++i) {
    const int fd = static_cast<int>(events[i].data.u64);
    if (resolver_ && fd == resolver_->channel_fd()) {
      DrainResolver();  // closes the channel (leaving the epoll set) when the resolver is gone
    } else if (resolver_ && fd == resolver_->upstream_fd()) {
      resolver_->OnUpstreamReadable();
    } else {
      FinishParked(fd);
    }
  }
  // After what came: a reply that arrived by the deadline is taken, not failed.
  ExpireTunnels();
}

void ConnectBroker::Respond(std::uint64_t id, int err) const {
  seccomp_notif_resp response{};
  response.id = id;
  response.error = -err;
  // ENOENT: the caller was interrupted or died meanwhile; nobody waits for this answer.
  (void)::ioctl(listener_.get(), SECCOMP_IOCTL_NOTIF_SEND, &response);
}

void ConnectBroker::ObserveRawSocket(const seccomp_notif& request) {
  const int family = static_cast<int>(request.data.args[0]);
  const pid_t tid = static_cast<pid_t>(request.pid);
  // The command holds no capability, so the kernel refuses it; that is cordon's doing only
  // where the caller could have made it: it holds CAP_NET_RAW, or the program would have
  // gained it (set-user-id root, or CAP_NET_RAW as a file capability, as Debian's ping has).
  // Arguments the kernel refuses before any capability check are the command's own error.
  const auto type = static_cast<std::uint64_t>(request.data.args[1]);
  const auto protocol = static_cast<std::int64_t>(static_cast<int>(request.data.args[2]));
  if ((type & ~std::uint64_t{0xf | SOCK_NONBLOCK | SOCK_CLOEXEC}) != 0 || protocol < 0 ||
      protocol >= IPPROTO_MAX) {
    return;
  }
  if (!caller_net_raw_ && !ProgramGainsNetRaw(tid)) return;
  // The program was read from the task that still waits in this call (not a reused id).
  std::uint64_t id = request.id;
  if (::ioctl(listener_.get(), SECCOMP_IOCTL_NOTIF_ID_VALID, &id) != 0) return;
  Record({"socket",
          fmt::format("raw {} socket (protocol {})", family == AF_INET6 ? "AF_INET6" : "AF_INET",
                      static_cast<int>(request.data.args[2])),
          "capabilities", "sandboxed commands hold no capabilities (CAP_NET_RAW)",
          "by design: a raw socket needs CAP_NET_RAW, which no sandboxed command holds or gains "
          "from a set-id or file-capability program; run such a tool (ping, traceroute, a "
          "packet capture) outside cordon"});
}

void ConnectBroker::ObserveDatagram(const seccomp_notif& request) {
  const pid_t tid = static_cast<pid_t>(request.pid);
  const int len = static_cast<int>(request.data.args[5]);
  sockaddr_storage address{};
  if (!rules_.private_network || len < static_cast<int>(sizeof(sockaddr_in)) ||
      static_cast<std::size_t>(len) > sizeof address ||
      !ReadMemory(tid, request.data.args[4], &address, static_cast<std::size_t>(len))) {
    return;
  }
  if (address.ss_family != AF_INET && address.ss_family != AF_INET6) return;
  // A datagram socket of that family: a connected stream socket ignores the address.
  UniqueFd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, ThreadGroupOf(tid), 0)));
  if (!pidfd) return;
  UniqueFd socket(static_cast<int>(
      ::syscall(SYS_pidfd_getfd, pidfd.get(), static_cast<int>(request.data.args[0]), 0)));
  if (!socket || SocketOption(socket.get(), SO_TYPE) != SOCK_DGRAM ||
      SocketOption(socket.get(), SO_DOMAIN) != address.ss_family) {
    return;
  }
  std::uint64_t id = request.id;
  if (::ioctl(listener_.get(), SECCOMP_IOCTL_NOTIF_ID_VALID, &id) != 0) return;
  // Beyond the sandbox's loopback there is no route in its own network namespace.
  RecordInet(address, SOCK_DGRAM, IsOwnHost(address) ? 0 : ENETUNREACH, false);
}

void ConnectBroker::Continue(std::uint64_t id) const {
  seccomp_notif_resp response{};
  response.id = id;
  response.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
  (void)::ioctl(listener_.get(), SECCOMP_IOCTL_NOTIF_SEND, &response);
}

void ConnectBroker::HandleNotification() {
  seccomp_notif request{};  // the kernel wants it zeroed
  if (::ioctl(listener_.get(), SECCOMP_IOCTL_NOTIF_RECV, &request) != 0) return;
  const std::uint64_t id = request.id;
  const pid_t tid = static_cast<pid_t>(request.pid);
  if (request.data.nr == __NR_sendto) {
    if (!blind_ && tid > 0) ObserveDatagram(request);
    return Continue(id);
  }
  if (request.data.nr == __NR_socket) {
    if (!blind_ && tid > 0) ObserveRawSocket(request);
    return Continue(id);
  }
  if (request.data.nr != __NR_connect) {
    if (!rules_.writes.observe || !WriteObserver::Observes(request.data.nr)) {
      return Respond(id, ENOSYS);
    }
    if (!blind_) {
      if (std::optional<Denial> denial = observer_.Examine(request, listener_.get())) {
        Record(std::move(*denial));
      }
    }
    return Continue(id);
  }
  if (tid <= 0 || blind_) return Respond(id, ENOSYS);
  const int target_fd = static_cast<int>(request.data.args[0]);
  const int len = static_cast<int>(request.data.args[2]);  // socklen_t, taken as an int
  // The address, copied once: what the command's other threads write afterwards is not read.
  sockaddr_storage address{};
  if (len < 0 || static_cast<std::size_t>(len) > sizeof address) return Respond(id, EINVAL);
  if (len > 0 && !ReadMemory(tid, request.data.args[1], &address, static_cast<std::size_t>(len))) {
    return Respond(id, EFAULT);
  }
  // The socket itself (the same open file description): a later dup2 onto the number is moot.
  UniqueFd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, ThreadGroupOf(tid), 0)));
  if (!pidfd) return Respond(id, EACCES);
  UniqueFd socket(static_cast<int>(::syscall(SYS_pidfd_getfd, pidfd.get(), target_fd, 0)));
  if (!socket) return Respond(id, errno == EBADF ? EBADF : EACCES);
  struct stat st {};
  if (::fstat(socket.get(), &st) != 0 || !S_ISSOCK(st.st_mode)) return Respond(id, ENOTSOCK);
  const int domain = SocketOption(socket.get(), SO_DOMAIN);
  const int type = SocketOption(socket.get(), SO_TYPE);
  const int protocol = SocketOption(socket.get(), SO_PROTOCOL);
  const int family = len >= static_cast<int>(sizeof(sa_family_t)) ? address.ss_family : AF_UNSPEC;
  if (rules_.domains) {
    // A socket connected outside stays connected to what was allowed: never disconnected
    // (AF_UNSPEC) or connected anew, which would make it a free socket of the host's network.
    if (outside_.contains(st.st_ino)) return Respond(id, EISCONN);
    std::uint16_t port = 0;
    const std::optional<net::IpAddress> ip =
        family == domain ? net::AddressOf(address, static_cast<unsigned>(len), &port)
                         : std::nullopt;
    if (ip && type == SOCK_STREAM && (protocol == IPPROTO_TCP || protocol == 0) &&
        !IsOwnHost(address)) {
      return DecideOutside(id, tid, target_fd, socket.get(), address, *ip, port);
    }
  }

  const auto* unix_address = reinterpret_cast<const sockaddr_un*>(&address);
  constexpr int kPathOffset = offsetof(sockaddr_un, sun_path);
  Resolved resolved;
  UniqueFd abstract_held;  // pins a vetted abstract name to its socket until the connect is done
  sockaddr_un through_proc{};
  const void* connect_to = &address;
  unsigned connect_len = static_cast<unsigned>(len);
  if (domain == AF_UNIX && family == AF_UNIX && len > kPathOffset) {
    if (len > static_cast<int>(sizeof(sockaddr_un))) return Respond(id, EINVAL);
    if (unix_address->sun_path[0] == '\0') {
      // Abstract: per network namespace. In the sandbox's own, the names are the sandbox's;
      // in the host's, Landlock's scope (which our connect bypasses) allows only sockets of
      // the sandbox itself: one held by a process of the command's PID namespace.
      const std::string_view name(unix_address->sun_path + 1,
                                  static_cast<std::size_t>(len - kPathOffset - 1));
      if (!rules_.private_network && rules_.abstract_scoped) {
        abstract_held = HoldSandboxAbstractSocket(tid, name);
        if (!abstract_held) {
          Record({"unix_socket", "@" + std::string(name), "landlock",
                  "abstract unix sockets of the host are out of reach (decision 0004)",
                  kHostSocketFix});
          return Respond(id, EACCES);
        }
      }
    } else {
      const std::size_t max = static_cast<std::size_t>(len - kPathOffset);
      std::string path(unix_address->sun_path, strnlen(unix_address->sun_path, max));
      resolved = ResolveInView(tid, std::move(path), rules_.unix_beneath);
      if (resolved.err == 0) {
        through_proc.sun_family = AF_UNIX;
        const int written = std::snprintf(through_proc.sun_path, sizeof through_proc.sun_path,
                                          "/proc/self/fd/%d", resolved.socket_file.get());
        connect_to = &through_proc;
        connect_len = static_cast<unsigned>(kPathOffset + written + 1);
      }
    }
  } else if (domain == AF_NETLINK && family == AF_NETLINK &&
             len >= static_cast<int>(sizeof(sockaddr_nl))) {
    // The kernel checks a netlink destination (a port id or multicast groups, e.g. forged
    // uevents to udev) against the capabilities of the task that connects: ours, not the
    // command's. The command, which has none, may only connect to the kernel (0, no groups).
    const auto* netlink = reinterpret_cast<const sockaddr_nl*>(&address);
    if (netlink->nl_pid != 0 || netlink->nl_groups != 0) {
      Record({"netlink", fmt::format("port {} groups {:#x}", netlink->nl_pid, netlink->nl_groups),
              "seccomp", "netlink only to the kernel (decision 0019)",
              "by design: another process's netlink socket is not reachable from the sandbox"});
      return Respond(id, EPERM);
    }
  } else if (rules_.refuse_tcp && (domain == AF_INET || domain == AF_INET6) &&
             type == SOCK_STREAM && (protocol == IPPROTO_TCP || protocol == 0) &&
             family != AF_UNSPEC) {
    if (family == domain) RecordInet(address, type, EACCES, true);
    return Respond(id, EACCES);
  }
  // Everything above about the target (its memory, descriptor, root, cwd) was read while it
  // waited in this connect(): it still does, so the thread id named the same task throughout.
  if (::ioctl(listener_.get(), SECCOMP_IOCTL_NOTIF_ID_VALID, &id) != 0) return;
  if (resolved.err != 0) {
    const std::size_t max = static_cast<std::size_t>(len - kPathOffset);
    std::string path(unix_address->sun_path, strnlen(unix_address->sun_path, max));
    if (resolved.by_rule) {
      Record({"unix_socket", std::move(path), "seccomp",
              "unix sockets only beneath the writable roots (decision 0019)", kHostSocketFix});
    } else if (HiddenHostSocket(path, resolved.err, rules_.hidden_areas)) {
      Record({"unix_socket", std::move(path), "mount view",
              "a host socket the sandbox's view leaves out (its own /tmp and /run, the hidden "
              "home, sandbox.hidden_paths)",
              kHostSocketFix});
    }
    return Respond(id, resolved.err);
  }
  const int err = Connect(id, std::move(socket), connect_to, connect_len, type);
  if (err >= 0 && (domain == AF_INET || domain == AF_INET6) && family == domain) {
    RecordInet(address, type, err, false);
  }
  if (err >= 0) Respond(id, err);
}

int ConnectBroker::Connect(std::uint64_t id, UniqueFd socket, const void* addr, unsigned len,
                           int type) {
  // Never block the supervisor: connect non-blocking (the flag belongs to the open file
  // description, shared with the command, and is restored at once).
  const int flags = ::fcntl(socket.get(), F_GETFL);
  if (flags < 0) return errno;
  const bool blocking = (flags & O_NONBLOCK) == 0;
  if (blocking && ::fcntl(socket.get(), F_SETFL, flags | O_NONBLOCK) != 0) return errno;
  const int rc = ::connect(socket.get(), static_cast<const sockaddr*>(addr), len);
  const int err = rc == 0 ? 0 : errno;
  if (blocking) (void)::fcntl(socket.get(), F_SETFL, flags);
  if (err != EINPROGRESS) return err;
  if (!blocking) {
    Watch(std::move(socket), addr, len, type);
    return err;
  }
  // A blocking connect in progress (TCP): answer when it is done.
  if (parked_.size() >= kMaxParked + kMaxWatched) return EINTR;
  return Park(Parked{id, std::move(socket), CopyAddress(addr, len), type}) ? -1 : EINTR;
}

bool ConnectBroker::Park(Parked parked) {
  epoll_event event{};
  event.events = EPOLLOUT;
  event.data.u64 = static_cast<std::uint64_t>(parked.socket.get());
  if (::epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, parked.socket.get(), &event) != 0) return false;
  parked_.push_back(std::move(parked));
  return true;
}

void ConnectBroker::Watch(UniqueFd socket, const void* addr, unsigned len, int type) {
  const sockaddr_storage address = CopyAddress(addr, len);
  const int family = address.ss_family;
  // At most kMaxWatched at once (a connect to a full backlog can take minutes): the blocking
  // connects' room in parked_ stays, and what is not watched is only not reported.
  const auto watched = static_cast<std::size_t>(
      std::count_if(parked_.begin(), parked_.end(), [](const Parked& p) { return p.watch; }));
  if (!rules_.private_network || type != SOCK_STREAM || (family != AF_INET && family != AF_INET6) ||
      !IsOwnHost(address) || watched >= kMaxWatched) {
    return;
  }
  (void)Park(Parked{0, std::move(socket), address, type, true});
}

void ConnectBroker::FinishParked(int socket_fd) {
  auto it = std::find_if(parked_.begin(), parked_.end(),
                         [&](const Parked& p) { return p.socket.get() == socket_fd; });
  if (it == parked_.end()) return;
  if (it->watch) {
    // Done (EPOLLOUT, with EPOLLERR when it failed): closed at once means refused.
    tcp_info info{};
    socklen_t size = sizeof info;
    if (::getsockopt(socket_fd, IPPROTO_TCP, TCP_INFO, &info, &size) == 0 &&
        info.tcpi_state == TCP_CLOSE) {
      RecordInet(it->address, it->type, ECONNREFUSED, false);
    }
    (void)::epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, socket_fd, nullptr);
    parked_.erase(it);
    return;
  }
  int err = 0;
  socklen_t size = sizeof err;
  if (::getsockopt(socket_fd, SOL_SOCKET, SO_ERROR, &err, &size) != 0) err = errno;
  if (!it->tunnel_target.empty()) {
    // Through the parent proxy: done once the parent has answered (exec/parent_tunnel.cc).
    const int step = TunnelStep(*it, err);
    if (step < 0) return;
    err = step;
  }
  (void)Finish(it, err);
}

std::vector<ConnectBroker::Parked>::iterator ConnectBroker::Finish(std::vector<Parked>::iterator it,
                                                                   int err) {
  const int socket_fd = it->socket.get();
  (void)::epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, socket_fd, nullptr);
  if (it->proxy_tag >= 0) {
    // The proxy's: passed on once the kernel holds it connected for good (as HandOver does:
    // one still connecting could be reset and fast-opened elsewhere), or its error (the host
    // network's own answer).
    if (err == 0) err = HoldConnected(socket_fd, it->address);
    if (resolver_) {
      resolver_->SendConnectResult(static_cast<std::uint32_t>(it->proxy_tag), err,
                                   err == 0 ? socket_fd : -1);
    }
    --proxy_connects_;
    return parked_.erase(it);
  }
  if (it->install_fd >= 0) {
    // Made outside: the command's connect returns once its descriptor is this socket.
    // Refused by the host: its own error, unreported.
    if (err == 0) err = HandOver(*it);
    if (err >= 0) Respond(it->id, err);
    return parked_.erase(it);
  }
  Respond(it->id, err);
  const int family = it->address.ss_family;
  if (family == AF_INET || family == AF_INET6) RecordInet(it->address, it->type, err, false);
  return parked_.erase(it);
}

}  // namespace cordon::exec
