// Host-side helpers of the escape harness: files, listeners, the victim process.
#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstddef>
#include <cstring>
#include <thread>

#include "escape_harness.h"

namespace cordon::escape_test {

void WriteFile(const std::filesystem::path& path, const std::string& content) {
  std::filesystem::create_directories(path.parent_path());
  test_support::WriteFile(path, content);
}

bool IsRoot() { return ::geteuid() == 0; }

std::string HostAddress() {
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return {};
  std::string found;
  for (ifaddrs* it = list; it != nullptr && found.empty(); it = it->ifa_next) {
    if (it->ifa_addr == nullptr || it->ifa_addr->sa_family != AF_INET) continue;
    if ((it->ifa_flags & IFF_LOOPBACK) != 0 || (it->ifa_flags & IFF_UP) == 0) continue;
    char text[INET_ADDRSTRLEN] = {};
    const auto* in = reinterpret_cast<const sockaddr_in*>(it->ifa_addr);
    if (::inet_ntop(AF_INET, &in->sin_addr, text, sizeof text) != nullptr) found = text;
  }
  ::freeifaddrs(list);
  return found;
}

namespace {

int BoundInet(Fixture& f, int type, const std::string& address, const std::string& name) {
  const int fd = ::socket(AF_INET, type | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return 0;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  socklen_t len = sizeof addr;
  if (::inet_pton(AF_INET, address.c_str(), &addr.sin_addr) != 1 ||
      ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      (type == SOCK_STREAM && ::listen(fd, 16) != 0) ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    ::close(fd);
    return 0;
  }
  f.sockets.push_back(fd);
  f.vars["FD_" + name] = std::to_string(fd);
  f.vars["TYPE_" + name] = std::to_string(type);
  return ntohs(addr.sin_port);
}

}  // namespace

int ListenTcp(Fixture& f, const std::string& address, const std::string& name) {
  return BoundInet(f, SOCK_STREAM, address, name);
}

int ListenUdp(Fixture& f, const std::string& address, const std::string& name) {
  return BoundInet(f, SOCK_DGRAM, address, name);
}

bool ListenUnix(Fixture& f, const std::string& path, bool abstract, const std::string& name) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return false;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() + 2 > sizeof addr.sun_path) {
    ::close(fd);
    return false;
  }
  std::memcpy(addr.sun_path + (abstract ? 1 : 0), path.data(), path.size());
  const auto size =
      static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + path.size() + (abstract ? 1 : 0));
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), size) != 0 || ::listen(fd, 16) != 0) {
    ::close(fd);
    return false;
  }
  // Any user may connect (the test may run as another user than the socket's owner).
  if (!abstract) ::chmod(path.c_str(), 0777);
  f.sockets.push_back(fd);
  f.vars["FD_" + name] = std::to_string(fd);
  f.vars["TYPE_" + name] = std::to_string(SOCK_STREAM);
  return true;
}

bool Received(const Fixture& f, const std::string& name) {
  const auto fd_it = f.vars.find("FD_" + name);
  const auto type_it = f.vars.find("TYPE_" + name);
  if (fd_it == f.vars.end() || type_it == f.vars.end()) return false;
  const int fd = std::stoi(fd_it->second);
  if (std::stoi(type_it->second) == SOCK_DGRAM) {
    char byte;
    return ::recv(fd, &byte, 1, MSG_DONTWAIT) >= 0;
  }
  const int conn = ::accept4(fd, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
  if (conn < 0) return false;
  ::close(conn);
  return true;
}

void StartVictim(Fixture& f, const std::vector<std::string>& env,
                 const std::filesystem::path& cwd) {
  std::vector<std::string> strings = {"PATH=/usr/bin:/bin"};
  strings.insert(strings.end(), env.begin(), env.end());
  std::vector<char*> envp;
  for (auto& s : strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  const std::string binary = AttackBinary();
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (::chdir(cwd.c_str()) != 0) ::_exit(127);
    const char* argv[] = {binary.c_str(), "victim", nullptr};
    ::execve(binary.c_str(), const_cast<char**>(argv), envp.data());
    ::_exit(127);
  }
  f.victim = pid;
  f.vars["VICTIM"] = std::to_string(pid);
  // The victim must be past execve (its environ and ptracer setting in place) before the
  // attack runs: wait until /proc shows the new program.
  for (int i = 0; i < 200; ++i) {
    if (ReadFile("/proc/" + std::to_string(pid) + "/cmdline").find("victim") != std::string::npos) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  f.teardown.push_back([pid] {
    // Only while it is still our unreaped child: a reaped pid may belong to someone else now.
    if (::waitpid(pid, nullptr, WNOHANG) == 0) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
  });
}

void StartHostHelper(Fixture& f, const std::vector<std::string>& args) {
  std::vector<std::string> strings = {AttackBinary()};
  strings.insert(strings.end(), args.begin(), args.end());
  if (!args.empty() && args[0] == "/bin/sh") strings.erase(strings.begin());
  const pid_t pid = ::fork();
  if (pid == 0) {
    std::vector<char*> argv;
    for (auto& s : strings) argv.push_back(s.data());
    argv.push_back(nullptr);
    const int null = ::open("/dev/null", O_WRONLY);
    ::dup2(null, 1);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  f.teardown.push_back([pid] {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
  });
}

bool VictimDied(const Fixture& f) {
  if (f.victim <= 0) return false;
  int status = 0;
  for (int i = 0; i < 50; ++i) {
    const pid_t r = ::waitpid(f.victim, &status, WNOHANG);
    if (r == f.victim) return true;
    if (r < 0) return true;  // already reaped by an earlier check
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

}  // namespace cordon::escape_test
