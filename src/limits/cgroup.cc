#include "limits/cgroup.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>
#include <thread>

#include "core/syscall_error.h"
#include "limits/cgroup_files.h"

namespace cordon::limits {
namespace {

namespace fs = std::filesystem;

// After the sandbox's init is reaped its PID namespace is empty, but the kernel may still be
// finishing the last exits; rmdir says EBUSY until then.
constexpr int kRemoveAttempts = 200;
constexpr auto kRemoveWait = std::chrono::milliseconds(5);
// A fork bomb on v1 (no cgroup.kill) forks while we kill: rounds of kill-everything-listed.
constexpr int kKillRounds = 100;

std::string MissingMessage(std::string_view limit, std::string_view controller,
                           const CgroupSupport& support) {
  return fmt::format(
      "limits.{} is set but no cgroup with the {} controller can be used by this process{}. "
      "Fix: run cordon as root, or in a cgroup v2 subtree delegated to your user (e.g. "
      "`systemd-run --user --scope -p Delegate=yes cordon ...`), or remove limits.{} from the "
      "config (docs/limits.md)",
      limit, controller, support.notes.empty() ? "" : fmt::format(" ({})", support.notes), limit);
}

constexpr std::string_view kRunPrefix = "cordon-run-";

// Per-run cgroups left behind by a cordon that was killed (SIGKILL skips the destructor): their
// processes died with the sandbox's init, the empty directories stay. A name carries its
// creator's pid ("cordon-run-<pid>-<random>"); one whose creator is gone is removed. rmdir only
// removes an empty cgroup, and a live creator's (possibly still empty) cgroup is never touched.
void RemoveAbandoned(const fs::path& parent) {
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator(parent, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(kRunPrefix, 0) != 0) continue;
    const std::string rest = name.substr(kRunPrefix.size());
    const std::size_t dash = rest.find('-');
    if (dash == std::string::npos || dash == 0) continue;
    pid_t creator = 0;
    const auto parsed = std::from_chars(rest.data(), rest.data() + dash, creator);
    if (parsed.ec != std::errc() || parsed.ptr != rest.data() + dash) continue;  // not ours
    if (creator <= 0 || ::kill(creator, 0) == 0 || errno != ESRCH) continue;
    (void)::rmdir(entry.path().c_str());  // EBUSY (still populated): left for the next time
  }
}

}  // namespace

int AttachSelf(const CgroupAttach& attach) noexcept {
  for (int fd : attach.procs_fds) {
    if (fd < 0) continue;
    ssize_t n;
    do {
      n = ::write(fd, "0", 1);  // "0": the writing process itself
    } while (n < 0 && errno == EINTR);
    if (n < 0) return errno;
  }
  return 0;
}

Result<std::unique_ptr<RunCgroup>> RunCgroup::Create(const CgroupSupport& support,
                                                     const CgroupRequest& request) {
  std::unique_ptr<RunCgroup> run(new RunCgroup());
  run->kill_file_ = support.kill_file;
  if (request.memory_bytes != 0 && support.memory.version == CgroupVersion::kNone) {
    return Fail(ErrorCode::kUnavailable, MissingMessage("memory_bytes", "memory", support));
  }
  if (request.pids_max != 0 && support.pids.version == CgroupVersion::kNone) {
    return Fail(ErrorCode::kUnavailable, MissingMessage("processes", "pids", support));
  }
  const std::string name = fmt::format("{}{}-{}", kRunPrefix, ::getpid(), RandomSuffix());
  for (const CgroupController* c : {&support.memory, &support.pids}) {
    const bool requested = c == &support.memory ? request.memory_bytes != 0 : request.pids_max != 0;
    if (requested) RemoveAbandoned(c->parent);
  }
  auto dir_for = [&](const CgroupController& c) -> Result<Dir*> {
    for (Dir& d : run->dirs_) {
      if (d.path.parent_path() == c.parent) return &d;  // v2: one cgroup for both controllers
    }
    Dir d;
    d.version = c.version;
    d.path = c.parent / name;
    if (::mkdir(d.path.c_str(), 0755) != 0) return core::FailSyscall("mkdir", d.path.string());
    run->paths_.push_back(d.path);
    run->dirs_.push_back(std::move(d));
    return &run->dirs_.back();
  };
  if (request.memory_bytes != 0) {
    CORDON_TRY(Dir * d, dir_for(support.memory));
    d->memory = true;
    const std::string bytes = std::to_string(request.memory_bytes);
    if (d->version == CgroupVersion::kV2) {
      CORDON_TRY_VOID(WriteSmallFile(d->path / "memory.max", bytes));
      // Without this the tree could swap its way past the limit.
      if (fs::exists(d->path / "memory.swap.max")) {
        CORDON_TRY_VOID(WriteSmallFile(d->path / "memory.swap.max", "0"));
      }
      // An OOM kill takes the whole command tree, not one process of it: a clear end.
      if (fs::exists(d->path / "memory.oom.group")) {
        CORDON_TRY_VOID(WriteSmallFile(d->path / "memory.oom.group", "1"));
      }
    } else {
      CORDON_TRY_VOID(WriteSmallFile(d->path / "memory.limit_in_bytes", bytes));
      // memory+swap, when swap accounting is on; must come after memory.limit_in_bytes.
      if (fs::exists(d->path / "memory.memsw.limit_in_bytes")) {
        CORDON_TRY_VOID(WriteSmallFile(d->path / "memory.memsw.limit_in_bytes", bytes));
      }
    }
  }
  if (request.pids_max != 0) {
    CORDON_TRY(Dir * d, dir_for(support.pids));
    d->pids = true;
    CORDON_TRY_VOID(WriteSmallFile(d->path / "pids.max", std::to_string(request.pids_max)));
  }
  for (Dir& d : run->dirs_) {
    const fs::path procs = d.path / "cgroup.procs";
    d.procs.Reset(::open(procs.c_str(), O_WRONLY | O_CLOEXEC));
    if (!d.procs) return core::FailSyscall("open", fmt::format("{}, O_WRONLY", procs.string()));
  }
  return run;
}

RunCgroup::~RunCgroup() { (void)Remove(); }

CgroupAttach RunCgroup::attach() const {
  CgroupAttach out;
  for (std::size_t i = 0; i < dirs_.size() && i < CgroupAttach::kMax; ++i) {
    out.procs_fds[i] = dirs_[i].procs.get();
  }
  return out;
}

void RunCgroup::Kill() {
  for (const Dir& d : dirs_) {
    if (d.version == CgroupVersion::kV2 && kill_file_ &&
        WriteSmallFile(d.path / "cgroup.kill", "1")) {
      continue;
    }
    for (int round = 0; round < kKillRounds; ++round) {
      Result<std::string> procs = ReadSmallFile(d.path / "cgroup.procs");
      if (!procs || procs->empty()) break;
      std::string_view rest = *procs;
      while (!rest.empty()) {
        const std::size_t end = rest.find('\n');
        const std::string_view line = rest.substr(0, end);
        rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
        pid_t pid = 0;
        if (std::from_chars(line.data(), line.data() + line.size(), pid).ec == std::errc() &&
            pid > 0) {
          (void)::kill(pid, SIGKILL);
        }
      }
    }
  }
}

CgroupEvents RunCgroup::ReadEvents() const {
  CgroupEvents events;
  for (const Dir& d : dirs_) {
    if (d.memory) {
      const bool v2 = d.version == CgroupVersion::kV2;
      Result<std::string> text =
          ReadSmallFile(d.path / (v2 ? "memory.events" : "memory.oom_control"));
      if (text)
        events.oom_killed = events.oom_killed || KeyedValue(*text, "oom_kill").value_or(0) > 0;
    }
    if (d.pids) {
      Result<std::string> text = ReadSmallFile(d.path / "pids.events");
      if (text) {
        events.pids_max_reached =
            events.pids_max_reached || KeyedValue(*text, "max").value_or(0) > 0;
      }
    }
  }
  return events;
}

Result<void> RunCgroup::Remove() {
  if (dirs_.empty()) return {};
  Kill();
  Result<void> result;
  for (Dir& d : dirs_) {
    d.procs.Reset();
    int attempt = 0;
    while (::rmdir(d.path.c_str()) != 0) {
      if (errno == ENOENT) break;
      if (errno != EBUSY || ++attempt >= kRemoveAttempts) {
        if (result) result = core::FailSyscall("rmdir", d.path.string());
        break;
      }
      if (attempt % 20 == 0) Kill();
      std::this_thread::sleep_for(kRemoveWait);
    }
  }
  dirs_.clear();
  return result;
}

}  // namespace cordon::limits
