#include "config/overrides.h"

#include <fmt/format.h>

#include <algorithm>
#include <tuple>

#include "config/diagnostics.h"
#include "config/domains.h"
#include "config/resolve_paths.h"
#include "config/validate.h"

namespace cordon::config {
namespace {

constexpr std::string_view kSource = "command line";

// A relative path typed on the command line, made absolute against the working directory.
std::string Anchor(const std::string& text, const ConfigOverrides& overrides) {
  if (overrides.working_directory && !text.empty() && text.front() != '/' && text.front() != '~') {
    return (*overrides.working_directory / text).native();
  }
  return text;
}

template <typename Resolve>
Result<void> AddPaths(std::vector<std::filesystem::path>& target,
                      const std::vector<std::string>& typed, std::string_view flag,
                      const ConfigOverrides& overrides, const Resolve& resolve) {
  for (const std::string& text : typed) {
    Result<std::filesystem::path> resolved = resolve(Anchor(text, overrides));
    if (!resolved) {
      return Fail(ErrorCode::kConfig, fmt::format("{}: {} {}: {}", kSource, flag, Quote(text),
                                                  resolved.error().message));
    }
    if (std::find(target.begin(), target.end(), *resolved) == target.end()) {
      target.push_back(std::move(*resolved));
    }
  }
  return {};
}

// --allow-domain and --deny-domain: added to the file's lists, and the network they imply.
Result<void> ApplyDomainFlags(SandboxConfig& sandbox, const ConfigOverrides& overrides) {
  const std::pair<const char*, const std::vector<std::string>*> flags[] = {
      {"--allow-domain", &overrides.allowed_domains}, {"--deny-domain", &overrides.denied_domains}};
  for (const auto& [flag, typed] : flags) {
    if (typed->empty()) continue;
    if (overrides.network && *overrides.network != NetworkPolicy::kDomains) {
      return Fail(ErrorCode::kConfig,
                  fmt::format("{}: {} needs --network domains, not --network {} (or leave "
                              "--network out: {} selects domains)",
                              kSource, flag, NetworkPolicyName(*overrides.network), flag));
    }
    auto& target =
        typed == &overrides.allowed_domains ? sandbox.allowed_domains : sandbox.denied_domains;
    for (const std::string& text : *typed) {
      if (Result<void> added = AddDomainEntry(target, text, sandbox.domain_lists); !added) {
        return Fail(ErrorCode::kConfig, fmt::format("{}: {} {}: {}", kSource, flag, Quote(text),
                                                    added.error().message));
      }
    }
  }
  if (!overrides.network) {
    // An allow-domain opens what it names, whatever the file said; a deny-domain only narrows
    // a file's "allow" (to the allow list), and leaves "deny" closed.
    if (!overrides.allowed_domains.empty() ||
        (!overrides.denied_domains.empty() && sandbox.network == NetworkPolicy::kAllow)) {
      sandbox.network = NetworkPolicy::kDomains;
    }
  }
  return {};
}

}  // namespace

Result<void> ApplyOverrides(Config& config, const ConfigOverrides& overrides, const Env& env) {
  // Work on a copy so that a failing flag leaves `config` as it was.
  Config result = config;
  if (overrides.mode) result.sandbox.mode = *overrides.mode;
  if (overrides.network) result.sandbox.network = *overrides.network;
  if (overrides.backend) result.sandbox.backend = *overrides.backend;
  CORDON_TRY_VOID(ApplyDomainFlags(result.sandbox, overrides));
  if (overrides.home) result.sandbox.home = *overrides.home;
  if (overrides.tool_caches) result.sandbox.tool_caches = *overrides.tool_caches;
  if (overrides.protect_git_metadata) {
    result.sandbox.protect_git_metadata = *overrides.protect_git_metadata;
  }
  if (overrides.allow_outside_sandbox) {
    result.sandbox.allow_outside_sandbox = *overrides.allow_outside_sandbox;
  }
  CORDON_TRY_VOID(AddPaths(
      result.sandbox.writable_roots, overrides.writable_roots, "--writable-root", overrides,
      [&env](std::string_view text) { return ResolveWritableRoot(text, env); }));
  CORDON_TRY_VOID(AddPaths(result.sandbox.hidden_paths, overrides.hidden_paths, "--hide", overrides,
                           [&env](std::string_view text) { return ResolveHiddenPath(text, env); }));
  CORDON_TRY_VOID(
      AddPaths(result.sandbox.readable_paths, overrides.readable_paths, "--readable", overrides,
               [&env](std::string_view text) { return ResolveReadablePath(text, env); }));
  if (overrides.timeout) {
    auto max = std::chrono::milliseconds(static_cast<std::int64_t>(kMaxTimeoutSeconds * 1000));
    if (overrides.timeout->count() <= 0 || *overrides.timeout > max) {
      return Fail(ErrorCode::kConfig,
                  fmt::format("{}: --timeout: expected a number of seconds greater than 0 and at "
                              "most {}, found {} ms",
                              kSource, kMaxTimeoutSeconds, overrides.timeout->count()));
    }
    result.limits.timeout = *overrides.timeout;
  }
  if (overrides.output_bytes) {
    if (*overrides.output_bytes < kMinOutputBytes || *overrides.output_bytes > kMaxOutputBytes) {
      return Fail(ErrorCode::kConfig,
                  fmt::format("{}: --output-bytes: expected an integer number of bytes from {} "
                              "to {}, found {}",
                              kSource, kMinOutputBytes, kMaxOutputBytes, *overrides.output_bytes));
    }
    result.limits.output_bytes = *overrides.output_bytes;
  }
  const std::tuple<const char*, const std::optional<std::uint64_t>&, std::uint64_t&,
                   const CountRange&>
      counts[] = {
          {"--memory", overrides.memory_bytes, result.limits.memory_bytes, kMemoryBytesRange},
          {"--processes", overrides.processes, result.limits.processes, kProcessesRange},
          {"--open-files", overrides.open_files, result.limits.open_files, kOpenFilesRange},
          {"--cpu-seconds", overrides.cpu_seconds, result.limits.cpu_seconds, kCpuSecondsRange},
      };
  for (const auto& [flag, value, target, range] : counts) {
    if (!value) continue;
    if (!InRange(*value, range)) {
      return Fail(ErrorCode::kConfig,
                  fmt::format("{}: {}: expected 0 (no limit) or an integer number of {} from {} "
                              "to {}, found {}",
                              kSource, flag, range.unit, range.min, range.max, *value));
    }
    target = *value;
  }
  CORDON_TRY_VOID(ValidateConfig(result, kSource));
  config = std::move(result);
  return {};
}

}  // namespace cordon::config
