#include "linux/init_reaper.h"

#include <string>
#include <utility>

#include "core/paths.h"
#include "linux/helper_program.h"

namespace cordon::linux_native {
namespace {

namespace fs = std::filesystem;

HelperProgram& Reaper() {
  static auto* program = new HelperProgram(kInitReaperName, "linux");  // never destroyed
  return *program;
}

}  // namespace

void SetInitReaperPath(fs::path path) { Reaper().SetPath(std::move(path)); }

int InitReaperFdFor(const plan::LaunchPlan& plan) {
  // Only where init has nothing left to do on the host: with its own PID namespace (the kernel
  // kills the rest when it exits) and mount namespace (the private tmpfs vanish by themselves).
  // The Landlock-only fallback's init kills orphans and removes its private directory itself.
  if (!plan.namespaces.user || !plan.namespaces.mount || !plan.namespaces.pid) return -1;
  const HelperProgram::Snapshot reaper = Reaper().Get();
  if (reaper.fd < 0) return -1;
  // In a mount namespace the host paths the command can write are exactly the writable binds
  // (Landlock's /tmp and HOME are private tmpfs there, over the host's).
  for (const plan::MountOp& op : plan.mounts) {
    if (op.kind == plan::MountOpKind::kBindWritable && core::IsWithin(reaper.path, op.path)) {
      return -1;
    }
  }
  return reaper.fd;
}

std::string InitReaperProblem() { return Reaper().Get().problem; }

fs::path InitReaperPath() { return Reaper().Get().path; }

}  // namespace cordon::linux_native
