#include "support/host_processes.h"

#include <dirent.h>
#include <unistd.h>

#include <cstdlib>
#include <thread>

#include "support/host_files.h"

namespace cordon::test_support {
namespace {

// A zombie has exited: only its parent's wait is missing. A vanished pid counts as one.
bool IsZombie(pid_t pid) {
  const std::string stat = ReadFile("/proc/" + std::to_string(pid) + "/stat");
  const std::size_t paren = stat.rfind(')');
  return paren == std::string::npos || paren + 2 >= stat.size() || stat[paren + 2] == 'Z';
}

}  // namespace

std::vector<pid_t> PidsWithMarker(const std::string& marker) {
  std::vector<pid_t> pids;
  // An empty marker is in every command line: a caller that kills what it finds would kill
  // every process it may.
  if (marker.empty()) return pids;
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return pids;
  while (dirent* entry = ::readdir(proc)) {
    char* end = nullptr;
    const long pid = std::strtol(entry->d_name, &end, 10);
    if (pid <= 0 || *end != '\0' || pid == ::getpid()) continue;
    std::string cmdline = ReadFile("/proc/" + std::to_string(pid) + "/cmdline");
    for (char& c : cmdline) {
      if (c == '\0') c = ' ';
    }
    if (cmdline.find(marker) != std::string::npos && !IsZombie(static_cast<pid_t>(pid))) {
      pids.push_back(static_cast<pid_t>(pid));
    }
  }
  ::closedir(proc);
  return pids;
}

bool NoneWithMarker(const std::string& marker, std::chrono::milliseconds wait) {
  const auto until = std::chrono::steady_clock::now() + wait;
  while (!PidsWithMarker(marker).empty()) {
    if (std::chrono::steady_clock::now() >= until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

}  // namespace cordon::test_support
