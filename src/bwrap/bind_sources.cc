#include "bwrap/bind_sources.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <cerrno>

#include "bwrap/argv.h"
#include "core/syscall_error.h"
#include "linux/open_no_symlinks.h"

namespace cordon::bwrap {

Result<BindSources> OpenBindSources(const plan::LaunchPlan& plan, int first_fd) {
  BindSources sources;
  sources.numbers.assign(plan.mounts.size(), kBindByPath);
  for (std::size_t i = 0; i < plan.mounts.size(); ++i) {
    const plan::MountOp& op = plan.mounts[i];
    if (op.kind != plan::MountOpKind::kBindWritable &&
        op.kind != plan::MountOpKind::kBindReadOnly) {
      continue;
    }
    core::UniqueFd fd(linux_native::OpenNoSymlinks(op.path.c_str()));
    if (!fd) {
      if (op.optional && (errno == ENOENT || errno == ENOTDIR)) {
        sources.numbers[i] = kBindSkipped;
        continue;
      }
      return core::FailSyscall("openat2", op.path.string() + ", RESOLVE_NO_SYMLINKS");
    }
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0) {
      return core::FailSyscall("fstat", op.path.string());
    }
    if (op.id != plan::FileId{} && (static_cast<std::uint64_t>(st.st_dev) != op.id.dev ||
                                    static_cast<std::uint64_t>(st.st_ino) != op.id.ino)) {
      return Fail(ErrorCode::kSystem,
                  fmt::format("bwrap backend: the bind source {} is no longer the directory the "
                              "plan named (replaced since the plan)",
                              op.path.string()),
                  ESTALE);
    }
    sources.numbers[i] = first_fd + static_cast<int>(sources.fds.size());
    sources.fds.push_back(std::move(fd));
  }
  return sources;
}

}  // namespace cordon::bwrap
