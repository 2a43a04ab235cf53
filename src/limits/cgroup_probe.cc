// ProbeCgroups: finds where this process may create per-run cgroups, by trying it.
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <sstream>
#include <vector>

#include "limits/cgroup.h"
#include "limits/cgroup_files.h"

namespace cordon::limits {
namespace {

namespace fs = std::filesystem;

struct CgroupMount {
  fs::path mount_point;
  std::string root;  // the mount's root inside the hierarchy ("/" unless bind-mounted)
  bool v2 = false;
  std::string super_options;  // v1: the controllers, e.g. "rw,memory"
};

// mountinfo escapes space, tab, newline and backslash as \ooo.
std::string Unescape(std::string_view field) {
  const auto octal = [&](std::size_t k) { return field[k] >= '0' && field[k] <= '7'; };
  std::string out;
  for (std::size_t i = 0; i < field.size(); ++i) {
    if (field[i] == '\\' && i + 3 < field.size() && octal(i + 1) && octal(i + 2) && octal(i + 3)) {
      out += static_cast<char>((field[i + 1] - '0') * 64 + (field[i + 2] - '0') * 8 +
                               (field[i + 3] - '0'));
      i += 3;
      continue;
    }
    out += field[i];
  }
  return out;
}

std::vector<CgroupMount> ReadCgroupMounts(const fs::path& proc_self) {
  std::vector<CgroupMount> mounts;
  Result<std::string> text = ReadSmallFile(proc_self / "mountinfo");
  if (!text) return mounts;
  std::istringstream lines(*text);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream fields(line);
    std::vector<std::string> f;
    for (std::string word; fields >> word;) f.push_back(word);
    // id parent dev root mount_point options [optional...] - fstype source super_options
    std::size_t dash = 6;
    while (dash < f.size() && f[dash] != "-") ++dash;
    if (dash + 1 >= f.size()) continue;
    const std::string& fstype = f[dash + 1];
    if (fstype != "cgroup" && fstype != "cgroup2") continue;
    mounts.push_back(CgroupMount{Unescape(f[4]), Unescape(f[3]), fstype == "cgroup2",
                                 dash + 3 < f.size() ? f[dash + 3] : std::string()});
  }
  return mounts;
}

bool HasOption(const std::string& options, std::string_view name) {
  std::istringstream in(options);
  for (std::string item; std::getline(in, item, ',');) {
    if (item == name) return true;
  }
  return false;
}

// /proc/self/cgroup: "0::/path" for v2, "N:memory:/path" (or "N:cpu,cpuacct:/path") for v1.
std::map<std::string, std::string> ReadOwnCgroups(const fs::path& proc_self) {
  std::map<std::string, std::string> own;  // controller (or "" for v2) -> path
  Result<std::string> text = ReadSmallFile(proc_self / "cgroup");
  if (!text) return own;
  std::istringstream lines(*text);
  std::string line;
  while (std::getline(lines, line)) {
    const std::size_t first = line.find(':');
    const std::size_t second = line.find(':', first + 1);
    if (first == std::string::npos || second == std::string::npos) continue;
    const std::string controllers = line.substr(first + 1, second - first - 1);
    const std::string path = line.substr(second + 1);
    if (controllers.empty()) {
      own[""] = path;
      continue;
    }
    std::istringstream in(controllers);
    for (std::string c; std::getline(in, c, ',');) own[c] = path;
  }
  return own;
}

// The directory of cgroup `path` through `mount`, or empty when the mount does not show it.
fs::path DirectoryOf(const CgroupMount& mount, const std::string& path) {
  if (mount.root == "/") return mount.mount_point / fs::path(path).relative_path();
  if (path == mount.root) return mount.mount_point;
  if (path.starts_with(mount.root + "/")) {
    return mount.mount_point / fs::path(path.substr(mount.root.size() + 1));
  }
  return {};
}

bool ListsController(const fs::path& file, std::string_view controller) {
  Result<std::string> text = ReadSmallFile(file);
  if (!text) return false;
  std::istringstream in(*text);
  for (std::string word; in >> word;) {
    if (word == controller) return true;
  }
  return false;
}

// The real test: a cgroup can be created (and removed) below `parent`.
Result<void> TryCreate(const fs::path& parent) {
  const fs::path test = parent / ("cordon-probe-" + RandomSuffix());
  if (::mkdir(test.c_str(), 0755) != 0) {
    return Fail(ErrorCode::kUnavailable,
                fmt::format("mkdir({}): {}", test.string(), std::strerror(errno)));
  }
  (void)::rmdir(test.c_str());
  return {};
}

// Root on v2: <mount>/cordon.slice, with `controller` enabled in the root and in the slice.
Result<fs::path> PrepareV2Slice(const fs::path& mount, std::string_view controller) {
  const fs::path slice = mount / "cordon.slice";
  if (::mkdir(slice.c_str(), 0755) != 0 && errno != EEXIST) {
    return Fail(ErrorCode::kUnavailable,
                fmt::format("mkdir({}): {}", slice.string(), std::strerror(errno)));
  }
  const std::string enable = fmt::format("+{}", controller);
  for (const fs::path& dir : {mount, slice}) {
    if (ListsController(dir / "cgroup.subtree_control", controller)) continue;
    if (auto written = WriteSmallFile(dir / "cgroup.subtree_control", enable); !written) {
      return std::unexpected(written.error());
    }
  }
  return slice;
}

CgroupController ProbeV2(const std::vector<CgroupMount>& mounts,
                         const std::map<std::string, std::string>& own, std::string_view controller,
                         std::string& notes) {
  const auto note = [&](const std::string& text) {
    notes += fmt::format("{}{}: {}", notes.empty() ? "" : "; ", controller, text);
  };
  const CgroupMount* v2 = nullptr;
  for (const CgroupMount& m : mounts) {
    if (m.v2 && v2 == nullptr) v2 = &m;
  }
  auto own_path = own.find("");
  if (v2 == nullptr || own_path == own.end()) return {};
  if (!ListsController(v2->mount_point / "cgroup.controllers", controller)) {
    note(fmt::format("cgroup v2 at {} has no {} controller (it may be bound to a v1 hierarchy)",
                     v2->mount_point.string(), controller));
    return {};
  }
  fs::path parent;
  if (::geteuid() == 0) {
    Result<fs::path> slice = PrepareV2Slice(v2->mount_point, controller);
    if (!slice) {
      note(slice.error().message);
      return {};
    }
    parent = *slice;
  } else {
    // A delegated parent: writable by us and already distributing the controller. Our own
    // cgroup cannot be used (it holds processes, and a v2 cgroup with processes cannot
    // distribute memory or pids to children).
    const fs::path self = DirectoryOf(*v2, own_path->second);
    if (self.empty() || self == v2->mount_point) return {};
    parent = self.parent_path();
    if (!ListsController(parent / "cgroup.subtree_control", controller) ||
        ::access(parent.c_str(), W_OK) != 0 ||
        ::access((parent / "cgroup.procs").c_str(), W_OK) != 0) {
      note(fmt::format("cgroup v2: {} is not delegated to this user with the controller enabled",
                       parent.string()));
      return {};
    }
  }
  if (auto created = TryCreate(parent); !created) {
    note(created.error().message);
    return {};
  }
  return {CgroupVersion::kV2, parent};
}

CgroupController ProbeV1(const std::vector<CgroupMount>& mounts,
                         const std::map<std::string, std::string>& own, std::string_view controller,
                         std::string& notes) {
  auto own_path = own.find(std::string(controller));
  if (own_path == own.end()) return {};
  for (const CgroupMount& m : mounts) {
    if (m.v2 || !HasOption(m.super_options, controller)) continue;
    const fs::path parent = DirectoryOf(m, own_path->second);
    if (parent.empty()) continue;
    if (auto created = TryCreate(parent); !created) {
      notes += fmt::format("{}{}: cgroup v1: {}", notes.empty() ? "" : "; ", controller,
                           created.error().message);
      return {};
    }
    return {CgroupVersion::kV1, parent};
  }
  return {};
}

}  // namespace

CgroupSupport ProbeCgroups(const fs::path& proc_self) {
  CgroupSupport support;
  const std::vector<CgroupMount> mounts = ReadCgroupMounts(proc_self);
  const std::map<std::string, std::string> own = ReadOwnCgroups(proc_self);
  for (auto [controller, out] :
       {std::pair{"memory", &support.memory}, std::pair{"pids", &support.pids}}) {
    *out = ProbeV2(mounts, own, controller, support.notes);
    if (out->version == CgroupVersion::kNone)
      *out = ProbeV1(mounts, own, controller, support.notes);
    if (out->version == CgroupVersion::kNone &&
        support.notes.find(controller) == std::string::npos) {
      support.notes += fmt::format("{}{}: no cgroup hierarchy with this controller is mounted",
                                   support.notes.empty() ? "" : "; ", controller);
    }
  }
  for (const CgroupController* c : {&support.memory, &support.pids}) {
    if (c->version == CgroupVersion::kV2) {
      support.kill_file = std::filesystem::exists(c->parent / "cgroup.kill");
    }
  }
  return support;
}

}  // namespace cordon::limits
