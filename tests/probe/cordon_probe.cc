// cordon_probe: a small program that the sandbox tests run *inside* the sandbox. Each
// subcommand tries one thing and prints one line on stdout: "ok", "ok <detail>", or the errno
// name of the failure ("EACCES", "EPERM", ...). Exit status 0 when the line is "ok...", 1 when
// the attempt failed, 2 on bad usage. Tests assert on the line, never on timing.
//
//   write PATH               create/truncate PATH and write "cordon\n"
//   read PATH                read PATH; "ok <bytes>"
//   mkdir PATH
//   connect-tcp HOST PORT    IPv4 TCP connect
//   connect-udp HOST PORT    IPv4 UDP connect (no datagram sent)
//   sendto-udp HOST PORT     one IPv4 UDP datagram with sendto(), no connect
//   serve-tcp PORT           listen on 127.0.0.1:PORT, print "listening", accept until killed
//   loopback-echo            bind+listen on 127.0.0.1:0 and connect to it (own loopback)
//   connect-unix PATH        AF_UNIX stream connect to a pathname socket
//   connect-abstract NAME    AF_UNIX stream connect to an abstract socket
//   unix-echo PATH           bind a pathname socket of its own, connect to it, pass a byte
//   abstract-echo NAME       the same with an abstract socket
//   unix-dgram-echo PATH     bind a datagram socket at PATH, connect another to it, pass a byte
//   connect-unix-dgram PATH  AF_UNIX datagram connect to PATH, then send one byte
//   sendto-unix-dgram PATH   one byte to PATH with sendto() from one end of a datagram
//                            socketpair (neither socket(AF_UNIX) nor connect() involved)
//   socketpair stream|dgram  an AF_UNIX socketpair of that type passes a byte
//   connect-uevent GROUPS    connect a NETLINK_KOBJECT_UEVENT socket to the multicast GROUPS
//                            (0: the kernel itself)
//   wait-socket PATH         wait (up to 10 s) until PATH is a socket; "ok" or ETIMEDOUT
//   connect-unix-race DECOY TARGET N
//                            listen on DECOY, then connect N times to an address that another
//                            thread keeps flipping between DECOY and TARGET (a check-then-use
//                            race on the address); "ok <connections that succeeded>"
//   chmod OCTAL PATH         chmod(PATH, OCTAL)
//   socket FAMILY            socket(2) for unix|inet|inet6|netlink|packet|vsock
//   caps                     "ok CapInh=.. CapPrm=.. CapEff=.. CapBnd=.. CapAmb=.."
//   status-field NAME        a field of /proc/self/status (NoNewPrivs, Seccomp, ...)
//   env NAME                 "ok <value>" or "unset"
//   ids                      "ok uid=U gid=G pid=P"
//   fds                      "ok <n>": descriptors open besides 0, 1, 2
//   daemonize FILE           double-fork + setsid; the daemon replaces FILE (atomically, by
//                            rename) every 20 ms forever ("<pid-in-sandbox> <counter>");
//                            prints "ok" at once
//   kill PID                 kill(PID, SIGKILL)
//   remount-rw PATH          mount(MS_REMOUNT|MS_BIND) without MS_RDONLY
//   mount-tmpfs PATH
//   unshare-user             unshare(CLONE_NEWUSER)
//   tiocsti                  ioctl(/dev/tty or stdin, TIOCSTI)
//   write-core-pattern       open /proc/sys/kernel/core_pattern for writing
//   sleep SECONDS
#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace {

int Result(bool ok, const std::string& detail = "") {
  if (ok) {
    std::printf("ok%s%s\n", detail.empty() ? "" : " ", detail.c_str());
    return 0;
  }
  const char* name = strerrorname_np(errno);
  std::printf("%s\n", name != nullptr ? name : "EUNKNOWN");
  return 1;
}

int Write(const char* path) {
  int fd = ::open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Result(false);
  bool ok = ::write(fd, "cordon\n", 7) == 7;
  ::close(fd);
  return Result(ok);
}

int Read(const char* path) {
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Result(false);
  char buffer[4096];
  long total = 0;
  ssize_t n;
  while ((n = ::read(fd, buffer, sizeof buffer)) > 0) total += n;
  ::close(fd);
  if (n < 0) return Result(false);
  return Result(true, std::to_string(total));
}

// An IPv4 connect of a socket of `type`: TCP, or UDP (no datagram sent: what a resolver does
// before its query).
// An IPv4 socket of `type` and the address HOST:PORT; false (errno set) when either fails.
bool Ipv4(const char* host, const char* port, int type, int* fd, sockaddr_in* addr) {
  *fd = ::socket(AF_INET, type | SOCK_CLOEXEC, 0);
  if (*fd < 0) return false;
  *addr = sockaddr_in{};
  addr->sin_family = AF_INET;
  addr->sin_port = htons(static_cast<uint16_t>(std::atoi(port)));
  if (::inet_pton(AF_INET, host, &addr->sin_addr) != 1) {
    errno = EINVAL;
    return false;
  }
  return true;
}

int ConnectInet(const char* host, const char* port, int type) {
  int fd = -1;
  sockaddr_in addr{};
  if (!Ipv4(host, port, type, &fd, &addr)) return Result(false);
  return Result(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
}

// A connect made the way curl and ssh -o ConnectTimeout make theirs: non-blocking, then poll
// and SO_ERROR for the outcome.
int ConnectTcpNonBlocking(const char* host, const char* port) {
  int fd = -1;
  sockaddr_in addr{};
  if (!Ipv4(host, port, SOCK_STREAM | SOCK_NONBLOCK, &fd, &addr)) return Result(false);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) return Result(true);
  if (errno != EINPROGRESS) return Result(false);
  pollfd p{fd, POLLOUT, 0};
  if (::poll(&p, 1, 5000) != 1) {
    errno = ETIMEDOUT;
    return Result(false);
  }
  int err = 0;
  socklen_t size = sizeof err;
  if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &size) != 0) return Result(false);
  errno = err;
  return Result(err == 0);
}

int SendtoUdp(const char* host, const char* port) {
  int fd = -1;
  sockaddr_in addr{};
  if (!Ipv4(host, port, SOCK_DGRAM, &fd, &addr)) return Result(false);
  return Result(::sendto(fd, "x", 1, 0, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 1);
}

int LoopbackEcho() {
  int server = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (server < 0) return Result(false);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (::bind(server, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::listen(server, 1) != 0 ||
      ::getsockname(server, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    return Result(false);
  }
  int client = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (client < 0) return Result(false);
  if (::connect(client, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    return Result(false);
  }
  int accepted = ::accept(server, nullptr, nullptr);
  if (accepted < 0) return Result(false);
  char byte = 'x';
  bool ok = ::write(client, &byte, 1) == 1 && ::read(accepted, &byte, 1) == 1;
  return Result(ok);
}

// A server on 127.0.0.1:`port` that accepts and closes connections until killed; prints
// "listening" once it does (a dev server a background command starts).
int ServeTcp(const char* port) {
  int server = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (server < 0) return Result(false);
  const int one = 1;
  (void)::setsockopt(server, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(std::atoi(port)));
  if (::bind(server, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::listen(server, 16) != 0) {
    return Result(false);
  }
  std::printf("listening\n");
  std::fflush(stdout);
  for (;;) {
    const int accepted = ::accept(server, nullptr, nullptr);
    if (accepted >= 0) ::close(accepted);
  }
}

// Binds a unix socket of its own at `name` (a path, or an abstract name), connects to it and
// passes a byte: the sockets a command creates itself must keep working.
int UnixEcho(const char* name, bool abstract) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::size_t len = std::strlen(name);
  if (len + 2 > sizeof addr.sun_path) {
    errno = ENAMETOOLONG;
    return Result(false);
  }
  std::memcpy(addr.sun_path + (abstract ? 1 : 0), name, len);
  const auto size =
      static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + len + (abstract ? 1 : 0));
  int server = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (server < 0) return Result(false);
  if (::bind(server, reinterpret_cast<sockaddr*>(&addr), size) != 0 || ::listen(server, 1) != 0) {
    return Result(false);
  }
  int client = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (client < 0 || ::connect(client, reinterpret_cast<sockaddr*>(&addr), size) != 0) {
    return Result(false);
  }
  int accepted = ::accept(server, nullptr, nullptr);
  if (accepted < 0) return Result(false);
  char byte = 'x';
  const bool ok = ::write(client, &byte, 1) == 1 && ::read(accepted, &byte, 1) == 1;
  if (!abstract) ::unlink(name);
  return Result(ok);
}

int ConnectUnix(const char* name, bool abstract) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Result(false);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::size_t len = std::strlen(name);
  if (len + 2 > sizeof addr.sun_path) {
    errno = ENAMETOOLONG;
    return Result(false);
  }
  std::memcpy(addr.sun_path + (abstract ? 1 : 0), name, len);
  socklen_t size =
      static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + len + (abstract ? 1 : 0));
  return Result(::connect(fd, reinterpret_cast<sockaddr*>(&addr), size) == 0);
}

sockaddr_un PathAddress(const char* path, socklen_t* size) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path, sizeof addr.sun_path - 1);
  *size = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + std::strlen(addr.sun_path) + 1);
  return addr;
}

// A datagram socket of its own at `path`, reached by connect() + send() from another one.
int UnixDgramEcho(const char* path) {
  socklen_t size = 0;
  sockaddr_un addr = PathAddress(path, &size);
  int server = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (server < 0 || ::bind(server, reinterpret_cast<sockaddr*>(&addr), size) != 0) {
    return Result(false);
  }
  int client = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (client < 0 || ::connect(client, reinterpret_cast<sockaddr*>(&addr), size) != 0) {
    return Result(false);
  }
  char byte = 'x';
  const bool ok = ::send(client, &byte, 1, 0) == 1 && ::recv(server, &byte, 1, 0) == 1;
  ::unlink(path);
  return Result(ok);
}

int ConnectUnixDgram(const char* path) {
  socklen_t size = 0;
  sockaddr_un addr = PathAddress(path, &size);
  int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr*>(&addr), size) != 0) {
    return Result(false);
  }
  char byte = 'x';
  return Result(::send(fd, &byte, 1, 0) == 1);
}

int SendtoUnixDgram(const char* path) {
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, pair) != 0) return Result(false);
  socklen_t size = 0;
  sockaddr_un addr = PathAddress(path, &size);
  char byte = 'x';
  return Result(::sendto(pair[0], &byte, 1, 0, reinterpret_cast<sockaddr*>(&addr), size) == 1);
}

int SocketPair(std::string_view kind) {
  if (kind != "stream" && kind != "dgram") return 2;
  int pair[2];
  const int type = kind == "stream" ? SOCK_STREAM : SOCK_DGRAM;
  if (::socketpair(AF_UNIX, type | SOCK_CLOEXEC, 0, pair) != 0) return Result(false);
  char byte = 'x';
  return Result(::send(pair[0], &byte, 1, 0) == 1 && ::recv(pair[1], &byte, 1, 0) == 1);
}

int ConnectUevent(const char* groups) {
  int fd = ::socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_KOBJECT_UEVENT);
  if (fd < 0) return Result(false);
  sockaddr_nl addr{};
  addr.nl_family = AF_NETLINK;
  addr.nl_groups = static_cast<unsigned>(std::strtoul(groups, nullptr, 0));
  return Result(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
}

int WaitSocket(const char* path) {
  for (int i = 0; i < 1000; ++i) {
    struct stat st {};
    if (::stat(path, &st) == 0 && S_ISSOCK(st.st_mode)) return Result(true);
    ::usleep(10 * 1000);
  }
  errno = ETIMEDOUT;
  return Result(false);
}

int ConnectUnixRace(const char* decoy, const char* target, int rounds) {
  socklen_t size = 0;
  sockaddr_un decoy_addr = PathAddress(decoy, &size);
  sockaddr_un target_addr = PathAddress(target, &size);
  int server = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (server < 0 || ::bind(server, reinterpret_cast<sockaddr*>(&decoy_addr), sizeof decoy_addr) ||
      ::listen(server, 64) != 0) {
    return Result(false);
  }
  // The address the kernel (or whoever checks it) reads; flipped without pause by the thread.
  static sockaddr_un shared;
  shared = decoy_addr;
  std::atomic<bool> stop{false};
  std::thread flipper([&] {
    while (!stop.load(std::memory_order_relaxed)) {
      std::memcpy(const_cast<char*>(static_cast<volatile char*>(shared.sun_path)),
                  target_addr.sun_path, sizeof shared.sun_path);
      std::memcpy(const_cast<char*>(static_cast<volatile char*>(shared.sun_path)),
                  decoy_addr.sun_path, sizeof shared.sun_path);
    }
  });
  int connected = 0;
  for (int i = 0; i < rounds; ++i) {
    // Non-blocking: a listener nobody accepts from (the target's) never blocks the loop.
    int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) break;
    if (::connect(fd, reinterpret_cast<sockaddr*>(&shared), sizeof shared) == 0) ++connected;
    ::close(fd);
    while (true) {  // keep the decoy's backlog empty
      int accepted = ::accept4(server, nullptr, nullptr, SOCK_CLOEXEC);
      if (accepted < 0) break;
      ::close(accepted);
    }
  }
  stop = true;
  flipper.join();
  ::unlink(decoy);
  return Result(true, std::to_string(connected));
}

int Socket(std::string_view family) {
  static const std::map<std::string_view, int> kFamilies = {
      {"unix", AF_UNIX},       {"inet", AF_INET},     {"inet6", AF_INET6},
      {"netlink", AF_NETLINK}, {"packet", AF_PACKET}, {"vsock", AF_VSOCK}};
  // A raw ICMP socket, as ping makes one where ICMP datagram sockets are not allowed.
  if (family == "raw") return Result(::socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_ICMP) >= 0);
  auto it = kFamilies.find(family);
  if (it == kFamilies.end()) return 2;
  int type = it->first == "netlink" || it->first == "packet" ? SOCK_RAW : SOCK_STREAM;
  if (it->first == "packet") type = SOCK_DGRAM;
  int fd = ::socket(it->second, type | SOCK_CLOEXEC, 0);
  return Result(fd >= 0);
}

std::string StatusField(std::string_view name) {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.starts_with(name) && line.size() > name.size() && line[name.size()] == ':') {
      std::size_t start = line.find_first_not_of(" \t", name.size() + 1);
      return start == std::string::npos ? "" : line.substr(start);
    }
  }
  return "?";
}

int Caps() {
  std::string out;
  for (const char* name : {"CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"}) {
    if (!out.empty()) out += ' ';
    out += std::string(name) + "=" + StatusField(name);
  }
  return Result(true, out);
}

int CountFds() {
  int count = 0;
  for (int fd = 3; fd < 1024; ++fd) {
    if (::fcntl(fd, F_GETFD) >= 0) ++count;
  }
  return Result(true, std::to_string(count));
}

int Daemonize(const char* file) {
  pid_t first = ::fork();
  if (first < 0) return Result(false);
  if (first > 0) return Result(true);  // the command itself exits at once
  ::setsid();
  if (::fork() != 0) ::_exit(0);
  // The daemon: detached from everything, ignoring the usual stop signals.
  ::signal(SIGTERM, SIG_IGN);
  ::signal(SIGHUP, SIG_IGN);
  ::signal(SIGINT, SIG_IGN);
  for (int fd = 0; fd < 3; ++fd) ::close(fd);
  // Written to a side file and renamed, so a kill mid-write never leaves an empty heartbeat.
  std::string temp = std::string(file) + ".tmp";
  for (long counter = 0;; ++counter) {
    char line[64];
    int n = std::snprintf(line, sizeof line, "%d %ld\n", ::getpid(), counter);
    int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd >= 0) {
      (void)!::write(fd, line, static_cast<std::size_t>(n));
      ::close(fd);
      ::rename(temp.c_str(), file);
    }
    ::usleep(20 * 1000);
  }
}

int Tiocsti() {
  int fd = ::open("/dev/tty", O_RDWR | O_CLOEXEC);
  if (fd < 0) fd = 0;
  char c = ' ';
  return Result(::ioctl(fd, TIOCSTI, &c) == 0);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string_view> args(argv + 1, argv + argc);
  if (args.empty()) return 2;
  std::string_view cmd = args[0];
  auto arg = [&](std::size_t i) { return i < args.size() ? argv[i + 1] : nullptr; };
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  if (cmd == "write" && arg(1)) return Write(arg(1));
  if (cmd == "read" && arg(1)) return Read(arg(1));
  if (cmd == "mkdir" && arg(1)) return Result(::mkdir(arg(1), 0755) == 0);
  if (cmd == "connect-tcp" && arg(2)) return ConnectInet(arg(1), arg(2), SOCK_STREAM);
  if (cmd == "connect-udp" && arg(2)) return ConnectInet(arg(1), arg(2), SOCK_DGRAM);
  if (cmd == "connect-tcp-nonblock" && arg(2)) return ConnectTcpNonBlocking(arg(1), arg(2));
  if (cmd == "sendto-udp" && arg(2)) return SendtoUdp(arg(1), arg(2));
  if (cmd == "loopback-echo") return LoopbackEcho();
  if (cmd == "serve-tcp" && arg(1)) return ServeTcp(arg(1));
  if (cmd == "connect-unix" && arg(1)) return ConnectUnix(arg(1), false);
  if (cmd == "connect-abstract" && arg(1)) return ConnectUnix(arg(1), true);
  if (cmd == "unix-echo" && arg(1)) return UnixEcho(arg(1), false);
  if (cmd == "abstract-echo" && arg(1)) return UnixEcho(arg(1), true);
  if (cmd == "unix-dgram-echo" && arg(1)) return UnixDgramEcho(arg(1));
  if (cmd == "connect-unix-dgram" && arg(1)) return ConnectUnixDgram(arg(1));
  if (cmd == "sendto-unix-dgram" && arg(1)) return SendtoUnixDgram(arg(1));
  if (cmd == "socketpair" && arg(1)) return SocketPair(arg(1));
  if (cmd == "connect-uevent" && arg(1)) return ConnectUevent(arg(1));
  if (cmd == "wait-socket" && arg(1)) return WaitSocket(arg(1));
  if (cmd == "connect-unix-race" && arg(3))
    return ConnectUnixRace(arg(1), arg(2), std::atoi(arg(3)));
  if (cmd == "chmod" && arg(2)) {
    return Result(::chmod(arg(2), static_cast<mode_t>(std::strtol(arg(1), nullptr, 8))) == 0);
  }
  if (cmd == "socket" && arg(1)) return Socket(arg(1));
  if (cmd == "caps") return Caps();
  if (cmd == "status-field" && arg(1)) return Result(true, StatusField(arg(1)));
  if (cmd == "env" && arg(1)) {
    const char* value = std::getenv(arg(1));
    if (value == nullptr) {
      std::printf("unset\n");
      return 1;
    }
    return Result(true, value);
  }
  if (cmd == "ids") {
    return Result(true, "uid=" + std::to_string(::getuid()) + " gid=" + std::to_string(::getgid()) +
                            " pid=" + std::to_string(::getpid()));
  }
  if (cmd == "fds") return CountFds();
  if (cmd == "daemonize" && arg(1)) return Daemonize(arg(1));
  if (cmd == "kill" && arg(1)) return Result(::kill(std::atoi(arg(1)), SIGKILL) == 0);
  if (cmd == "remount-rw" && arg(1)) {
    return Result(::mount(nullptr, arg(1), nullptr, MS_REMOUNT | MS_BIND, nullptr) == 0);
  }
  if (cmd == "mount-tmpfs" && arg(1)) {
    return Result(::mount("tmpfs", arg(1), "tmpfs", 0, nullptr) == 0);
  }
  if (cmd == "unshare-user") return Result(::unshare(CLONE_NEWUSER) == 0);
  if (cmd == "tiocsti") return Tiocsti();
  if (cmd == "write-core-pattern") {
    int fd = ::open("/proc/sys/kernel/core_pattern", O_WRONLY | O_CLOEXEC);
    return Result(fd >= 0);
  }
  if (cmd == "sleep" && arg(1)) {
    ::sleep(static_cast<unsigned>(std::atoi(arg(1))));
    return Result(true);
  }
  std::fprintf(stderr, "cordon_probe: unknown or incomplete subcommand\n");
  return 2;
}
