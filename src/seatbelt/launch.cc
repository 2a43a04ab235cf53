#include "seatbelt/launch.h"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/paths.h"
#include "core/syscall_error.h"
#include "exec/spawn_unsandboxed.h"
#include "seatbelt/held_parents.h"
#include "seatbelt/probe.h"
#include "seatbelt/profile.h"

namespace cordon::seatbelt {
namespace {

constexpr int kMaxDepth = 128;

bool IsDot(const char* name) {
  return name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0'));
}

// Removes `name` below `dirfd` without following symlinks: a link the command planted is
// removed, never its target. Directories are made writable first (the command may have
// chmod'ed them). Best effort.
void RemoveAt(int dirfd, const char* name, int depth) {
  if (::unlinkat(dirfd, name, 0) == 0 || errno == ENOENT) return;
  if (depth > kMaxDepth) return;
  (void)::fchmodat(dirfd, name, 0700, AT_SYMLINK_NOFOLLOW);
  const int fd = ::openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return;
  DIR* dir = ::fdopendir(fd);
  if (dir == nullptr) {
    ::close(fd);
    return;
  }
  std::vector<std::string> entries;
  while (const dirent* entry = ::readdir(dir)) {
    if (!IsDot(entry->d_name)) entries.emplace_back(entry->d_name);
  }
  for (const std::string& entry : entries) RemoveAt(::dirfd(dir), entry.c_str(), depth + 1);
  ::closedir(dir);
  (void)::unlinkat(dirfd, name, AT_REMOVEDIR);
}

// The per-command HOME/TMPDIR; removed with everything in it when destroyed. It also keeps
// the profile the command ran under, to tell sandbox-exec's own failure from the command's.
class PrivateDir : public exec::RunResource {
 public:
  explicit PrivateDir(std::filesystem::path path) : path_(std::move(path)) {}
  PrivateDir(const PrivateDir&) = delete;
  PrivateDir& operator=(const PrivateDir&) = delete;
  ~PrivateDir() override { RemoveAt(AT_FDCWD, path_.c_str(), 0); }
  const std::filesystem::path& path() const { return path_; }

  // The missing directories on the way to protected paths, made for this run.
  void Hold(HeldParents parents) { parents_ = std::move(parents); }

  void KeepProfile(std::filesystem::path sandbox_exec, SeatbeltProfile profile) {
    sandbox_exec_ = std::move(sandbox_exec);
    profile_ = std::move(profile);
  }

  // sandbox-exec exits 65 or 71 when it cannot compile or apply the profile, before the
  // command runs; a command may exit so too. Only then is the same profile applied again to
  // /usr/bin/true: when that fails alike (FailsAlike), it was sandbox-exec's failure and
  // nothing ran.
  std::string SetupFailure(int exit_code) override {
    if (exit_code != kSandboxExecProfileRefused && exit_code != kSandboxExecApplyFailed) return {};
    if (sandbox_exec_.empty()) return {};
    std::string why = FailsAlike(sandbox_exec_, profile_, exit_code);
    return why.empty() ? why : "seatbelt backend: " + why;
  }

 private:
  std::filesystem::path path_;
  std::filesystem::path sandbox_exec_;
  SeatbeltProfile profile_;
  HeldParents parents_;
};

Result<std::unique_ptr<PrivateDir>> CreatePrivateDir(const std::filesystem::path& base) {
  CORDON_TRY(std::filesystem::path canonical_base, core::Canonical(base));
  std::string pattern = (canonical_base / "cordon-sb-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) return core::FailSyscall("mkdtemp", pattern);
  auto dir = std::make_unique<PrivateDir>(pattern);  // owns it from here: removed on failure
  for (const char* sub : {"home", "tmp"}) {
    const std::filesystem::path path = dir->path() / sub;
    if (::mkdir(path.c_str(), 0700) != 0) return core::FailSyscall("mkdir", path.string());
  }
  return dir;
}

// realpath of the deepest existing ancestor, the rest appended: a path the command may create
// (a .git that must not appear) is matched where it would land.
std::filesystem::path CanonicalOrSelf(const std::filesystem::path& path) {
  if (Result<std::filesystem::path> canonical = core::Canonical(path)) return *canonical;
  const std::filesystem::path parent = path.parent_path();
  if (parent.empty() || parent == path) return path;
  return CanonicalOrSelf(parent) / path.filename();
}

void CanonicalizeAll(std::vector<std::filesystem::path>& paths) {
  for (std::filesystem::path& p : paths) p = CanonicalOrSelf(p);
}

// plan.env with HOME and TMPDIR replaced (or added), in the original order otherwise.
std::vector<std::string> PrivateEnvironment(const std::vector<std::string>& env,
                                            const std::filesystem::path& dir) {
  const std::string home = "HOME=" + (dir / "home").string();
  const std::string tmpdir = "TMPDIR=" + (dir / "tmp").string();
  bool has_home = false;
  bool has_tmpdir = false;
  std::vector<std::string> out;
  out.reserve(env.size() + 2);
  for (const std::string& entry : env) {
    const std::string_view e(entry);
    if (e.starts_with("HOME=")) {
      out.push_back(home);
      has_home = true;
    } else if (e.starts_with("TMPDIR=")) {
      out.push_back(tmpdir);
      has_tmpdir = true;
    } else {
      out.push_back(entry);
    }
  }
  if (!has_home) out.push_back(home);
  if (!has_tmpdir) out.push_back(tmpdir);
  return out;
}

// Network is allowed only when the plan says so twice: no denial is enforced, and the socket
// policy is the unrestricted one. Anything else denies (fail closed).
bool NetworkAllowed(const plan::LaunchPlan& plan) {
  return !plan.enforcement.network && plan.seccomp.sockets == plan::SocketPolicy::kAny;
}

}  // namespace

Result<exec::LaunchedProcess> Launch(const plan::LaunchPlan& plan, const exec::StdioFds& stdio,
                                     const LaunchOptions& options) {
  if (plan.argv.empty()) return Fail(ErrorCode::kInvalidArgument, "seatbelt: empty argv");
  if (!options.sandbox_exec.is_absolute()) {
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("seatbelt: sandbox-exec path {} is not absolute",
                            options.sandbox_exec.string()));
  }
  CORDON_TRY(std::unique_ptr<PrivateDir> dir, CreatePrivateDir(options.private_base));

  // Paths as the kernel matches them (resolved: /tmp is /private/tmp on macOS) before the
  // policy sorts them, so no read-only entry is dropped as lying outside a writable root that
  // it is in once resolved.
  plan::LaunchPlan resolved = plan;
  for (plan::MountOp& op : resolved.mounts) op.path = CanonicalOrSelf(op.path);
  CanonicalizeAll(resolved.absent_protected);
  CanonicalizeAll(resolved.absent_hidden);
  SeatbeltPolicy policy = SeatbeltPolicyFromPlan(resolved, dir->path(), NetworkAllowed(plan));
  dir->Hold(HeldParents::Make(policy));

  // The spawn of mode off, with sandbox-exec as the program: same session, descriptors,
  // signals and rlimits. Its argv[0] is absolute, so no PATH search happens for it.
  plan::LaunchPlan wrapped;
  wrapped.sandboxed = true;
  SeatbeltProfile profile = RenderSeatbelt(policy);
  wrapped.argv = SandboxExecArgv(profile, plan.argv);
  wrapped.argv.front() = options.sandbox_exec.string();
  wrapped.env = PrivateEnvironment(plan.env, dir->path());
  wrapped.cwd = plan.cwd.empty() ? plan.workspace : plan.cwd;
  wrapped.workspace = plan.workspace;
  wrapped.limits.rlimits = plan.limits.rlimits;

  Result<exec::LaunchedProcess> launched = exec::SpawnUnsandboxed(wrapped, stdio);
  if (!launched) {
    // Nothing ran: a setup error naming sandbox-exec, never the command's exit status (the
    // program that was not found is sandbox-exec, not the command).
    const ErrorCode code = launched.error().code == ErrorCode::kCommandNotFound
                               ? ErrorCode::kNotFound
                               : launched.error().code;
    return Fail(code,
                fmt::format("seatbelt backend: cannot start {}: {}", options.sandbox_exec.string(),
                            launched.error().message),
                launched.error().errno_value);
  }
  dir->KeepProfile(options.sandbox_exec, std::move(profile));
  launched->resource = std::move(dir);
  return launched;
}

}  // namespace cordon::seatbelt
