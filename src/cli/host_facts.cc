#include "cli/host_facts.h"

#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/statfs.h>

#include "linux/init_reaper.h"
#include "linux/resolver_program.h"
#endif

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string_view>

namespace cordon::cli {
namespace {

std::optional<std::string> ReadSmallFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::string text;
  char buffer[4096];
  // Bounded: these are one-line kernel files; never read a huge or endless file whole.
  in.read(buffer, sizeof buffer);
  text.assign(buffer, static_cast<std::size_t>(in.gcount()));
  return text;
}

std::string Trim(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ' || text.back() == '\t' ||
                           text.back() == '\0')) {
    text.pop_back();
  }
  std::size_t start = 0;
  while (start < text.size() && (text[start] == ' ' || text[start] == '\t')) ++start;
  return text.substr(start);
}

// "Seccomp:\t2" → 2; -1 when the field is not there.
int StatusField(const std::string& status, std::string_view name) {
  std::istringstream lines(status);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.compare(0, name.size(), name) == 0 && line.size() > name.size() &&
        line[name.size()] == ':') {
      return std::atoi(line.c_str() + name.size() + 1);
    }
  }
  return -1;
}

std::string DetectContainer() {
  struct stat info {};
  if (::stat("/.dockerenv", &info) == 0) return "docker";
  if (::stat("/run/.containerenv", &info) == 0) return "podman";
  // systemd-nspawn, LXC and others put container=NAME into PID 1's environment; readable as
  // root (or as the container's own user).
  if (auto environ = ReadSmallFile("/proc/1/environ")) {
    std::string_view rest(*environ);
    while (!rest.empty()) {
      std::size_t end = rest.find('\0');
      std::string_view entry = rest.substr(0, end);
      if (entry.starts_with("container=")) return std::string(entry.substr(10));
      if (end == std::string_view::npos) break;
      rest.remove_prefix(end + 1);
    }
  }
  if (std::getenv("KUBERNETES_SERVICE_HOST") != nullptr) return "kubernetes";
  return "";
}

std::string FindOnPath(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::string dirs = path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin";
  std::istringstream split(dirs);
  std::string dir;
  while (std::getline(split, dir, ':')) {
    if (dir.empty()) continue;
    std::string candidate = dir + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return ::access(("/usr/bin/" + name).c_str(), X_OK) == 0 ? "/usr/bin/" + name : "";
}

void ReadCgroup(HostFacts& facts) {
#if defined(__linux__)
  constexpr long kCgroup2SuperMagic = 0x63677270;  // CGROUP2_SUPER_MAGIC, linux/magic.h
  struct statfs fs {};
  facts.cgroup2 = ::statfs("/sys/fs/cgroup", &fs) == 0 && fs.f_type == kCgroup2SuperMagic;
#else
  facts.cgroup2 = false;  // cgroups are Linux's
#endif
  if (!facts.cgroup2) return;
  auto self = ReadSmallFile("/proc/self/cgroup");
  if (!self) return;
  // cgroup v2 has one line "0::/path".
  std::istringstream lines(*self);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.starts_with("0::")) facts.cgroup_path = line.substr(3);
  }
  if (facts.cgroup_path.empty()) return;
  const std::string dir = "/sys/fs/cgroup" + (facts.cgroup_path == "/" ? "" : facts.cgroup_path);
  facts.cgroup_writable = ::access(dir.c_str(), W_OK) == 0;
  facts.cgroup_controllers = Trim(ReadSmallFile(dir + "/cgroup.controllers").value_or(""));
}

}  // namespace

std::optional<std::string> ReadSysctl(const std::string& dotted_name) {
  std::string path = "/proc/sys/" + dotted_name;
  for (std::size_t i = std::string_view("/proc/sys/").size(); i < path.size(); ++i) {
    if (path[i] == '.') path[i] = '/';
  }
  auto text = ReadSmallFile(path);
  if (!text) return std::nullopt;
  return Trim(*text);
}

HostFacts ReadHostFacts() {
  HostFacts facts;
  struct utsname name {};
  if (::uname(&name) == 0) facts.kernel_release = name.release;
  facts.uid = ::geteuid();
  char exe[4096];
  if (ssize_t n = ::readlink("/proc/self/exe", exe, sizeof exe - 1); n > 0) {
    facts.self_exe.assign(exe, static_cast<std::size_t>(n));
  }
  for (const char* sysctl : kDoctorSysctls) facts.sysctls[sysctl] = ReadSysctl(sysctl);
  {
    // A few KiB: read whole (ReadSmallFile's one buffer could cut it short).
    std::ifstream in("/proc/self/status");
    std::stringstream whole;
    whole << in.rdbuf();
    const std::string text = whole.str();
    facts.seccomp_mode = std::max(0, StatusField(text, "Seccomp"));
    facts.seccomp_filters = std::max(0, StatusField(text, "Seccomp_filters"));
    facts.no_new_privs = StatusField(text, "NoNewPrivs") == 1;
  }
  const char* in_cordon = std::getenv("CORDON_SANDBOX");
  facts.inside_cordon = in_cordon != nullptr && std::string_view(in_cordon) == "1";
  facts.container = DetectContainer();
  facts.lsm = Trim(ReadSmallFile("/sys/kernel/security/lsm").value_or(""));
  ReadCgroup(facts);
  facts.bwrap_path = FindOnPath("bwrap");
  if (!facts.bwrap_path.empty()) {
    struct stat info {};
    facts.bwrap_setuid = ::stat(facts.bwrap_path.c_str(), &info) == 0 &&
                         (info.st_mode & S_ISUID) != 0 && info.st_uid == 0;
  }
#if defined(__linux__)
  facts.init_reaper_path = linux_native::InitReaperPath().string();
  facts.init_reaper_problem = linux_native::InitReaperProblem();
  facts.resolver_path = linux_native::ResolverPath().string();
  facts.resolver_problem = linux_native::ResolverProblem();
#endif
  return facts;
}

}  // namespace cordon::cli
