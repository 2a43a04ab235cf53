// Session::Create and the read-only accessors. Create does everything that can fail once, so
// that Run only fails for reasons that belong to one command.
#include "cordon/session.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>

#include <optional>
#include <string>

#include "core/paths.h"
#include "core/syscall_error.h"
#include "plan/launch_plan.h"
#include "plan/mount_identity.h"
#include "plan/network_domains.h"
#include "session/planted_links.h"
#include "session/request.h"
#include "session/session_state.h"

namespace cordon {
namespace {

struct PinnedWorkspace {
  std::filesystem::path path;
  plan::FileId id;
};

// The workspace made canonical, and the directory it names now: every run of the session is
// planned for that very directory (plan/launch_plan.h, PlanRequest::workspace_id).
Result<PinnedWorkspace> CanonicalWorkspace(const std::filesystem::path& workspace) {
  if (workspace.empty()) return Fail(ErrorCode::kInvalidArgument, "the workspace path is empty");
  Result<std::filesystem::path> canonical = core::Canonical(workspace);
  if (!canonical) {
    return Fail(canonical.error().code,
                fmt::format("workspace {}: {}", workspace.string(), canonical.error().message),
                canonical.error().errno_value);
  }
  const std::optional<plan::Identified> info =
      plan::IdentifyAt(AT_FDCWD, canonical->c_str(), /*mask=*/false);
  if (!info) return core::FailSyscall("statx", fmt::format("workspace {}", canonical->string()));
  if (!S_ISDIR(info->mode)) {
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("workspace {} is not a directory", canonical->string()));
  }
  // "/" as the writable root would make workspace_write mean "write anywhere".
  if (*canonical == "/") {
    return Fail(ErrorCode::kInvalidArgument,
                "the workspace cannot be / (it would make the whole filesystem writable)");
  }
  return PinnedWorkspace{*std::move(canonical), info->id};
}

// The configured writable roots made canonical in place, and the directories they name now:
// each run binds only these (PlanRequest::writable_root_ids), never what a name reaches later.
// A root named through a link that a sandboxed command could have made is refused
// (planted_links.h).
Result<std::vector<plan::FileId>> PinWritableRoots(SandboxConfig& sandbox,
                                                   const std::filesystem::path& workspace) {
  if (sandbox.mode == SandboxMode::kWorkspaceWrite) {
    std::vector<std::filesystem::path> writable = {workspace};
    for (const std::filesystem::path& root : sandbox.writable_roots) {
      if (Result<std::filesystem::path> canonical = core::Canonical(root)) {
        writable.push_back(*std::move(canonical));
      }
    }
    for (const std::filesystem::path& root : sandbox.writable_roots) {
      CORDON_TRY_VOID(session::RefusePlantedLinks(root, writable));
    }
  }
  std::vector<plan::FileId> ids;
  for (std::filesystem::path& root : sandbox.writable_roots) {
    Result<std::filesystem::path> canonical = core::Canonical(root);
    if (!canonical) {
      return Fail(canonical.error().code,
                  fmt::format("writable root {}: {}", root.string(), canonical.error().message),
                  canonical.error().errno_value);
    }
    const std::optional<plan::Identified> found =
        plan::IdentifyAt(AT_FDCWD, canonical->c_str(), /*mask=*/false);
    if (!found) return core::FailSyscall("statx", fmt::format("writable root {}", root.string()));
    root = *std::move(canonical);
    ids.push_back(found->id);
  }
  return ids;
}

}  // namespace

Result<Session> Session::Create(Config config, std::filesystem::path workspace,
                                SessionOptions options) {
  CORDON_TRY(PinnedWorkspace pinned, CanonicalWorkspace(workspace));
  CORDON_TRY(std::vector<plan::FileId> root_ids, PinWritableRoots(config.sandbox, pinned.path));
  CORDON_TRY(Policy policy, Policy::Create(config.command_policy));
  // Parenthesised aggregate initialisation: the zygote slot (not movable) is built in place.
  linux_native::KernelFeatures features = linux_native::ProbeKernel();
  features.limits = limits::ProbeLimitsFor(config.limits);
  session::SessionBackends backends = session::ProbeBackends(config, features, pinned.path);
  if (options.prepared_commands < 0) options.prepared_commands = 0;
  std::unique_ptr<plan::PlanCaches> caches =
      options.long_lived ? std::make_unique<plan::PlanCaches>() : nullptr;
  // The placeholders a killed run of this user left on the host go now (nothing else of
  // cordon's stays behind it); those of live runs stay theirs.
  std::shared_ptr<const plan::PlaceholderRecords> records = plan::PlaceholderRecords::Open(
      options.runtime_dir.empty() ? std::nullopt
                                  : std::optional<std::string>(options.runtime_dir.string()));
  if (records) (void)records->CleanUp();
  auto state = std::make_shared<State>(std::move(config), std::move(pinned.path), pinned.id,
                                       std::move(root_ids), std::move(policy), std::move(features),
                                       std::move(backends), options, std::move(caches), options,
                                       std::move(records));
  return Session(std::move(state));
}

Decision Session::Check(std::string_view command_text) const {
  return state_->policy.Evaluate(command_text);
}

Capabilities Session::GetCapabilities() const {
  Capabilities caps;
  if (state_->features.limits.cgroups_probed) {
    caps = plan::DescribeCapabilities(state_->config, state_->features, state_->backends.probes,
                                      state_->workspace);
  } else {
    // Status shows what every limit could use here, set or not: probe the cgroups now (the
    // session's own runs never need them, or Create would have probed).
    linux_native::KernelFeatures features = state_->features;
    features.limits = limits::ProbeLimits();
    caps = plan::DescribeCapabilities(state_->config, features, state_->backends.probes,
                                      state_->workspace);
  }
  // The parent proxy comes from the caller's environment: this process's.
  plan::DescribeParentProxy(state_->config.sandbox, session::CallerEnvironment(), caps);
  return caps;
}

const Config& Session::config() const { return state_->config; }

const std::filesystem::path& Session::workspace() const { return state_->workspace; }

}  // namespace cordon
