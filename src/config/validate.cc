#include "config/validate.h"

#include <fmt/format.h>
#include <re2/re2.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "config/diagnostics.h"
#include "config/domains.h"
#include "config/host_run_files.h"

namespace cordon::config {

std::chrono::milliseconds TimeoutFromSeconds(double seconds) {
  auto ms = static_cast<std::int64_t>(std::llround(seconds * 1000.0));
  return std::chrono::milliseconds(std::max<std::int64_t>(ms, 1));
}

bool IsValidEnvironmentName(std::string_view name) {
  if (name.empty()) return false;
  auto is_alpha = [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
  };
  if (!is_alpha(name.front())) return false;
  for (char c : name) {
    if (!is_alpha(c) && !(c >= '0' && c <= '9')) return false;
  }
  return true;
}

Result<void> CheckPattern(std::string_view pattern) {
  RE2::Options options;
  // RE2 logs bad patterns to stderr by default; the error is reported through the Result.
  options.set_log_errors(false);
  RE2 compiled(re2::StringPiece(pattern.data(), pattern.size()), options);
  if (!compiled.ok()) return Fail(ErrorCode::kConfig, compiled.error());
  return {};
}

namespace {

Result<void> CheckPatterns(const std::vector<std::string>& patterns, std::string_view source,
                           std::string_view pointer) {
  for (std::size_t i = 0; i < patterns.size(); ++i) {
    if (auto checked = CheckPattern(patterns[i]); !checked) {
      return FailConfig(source, PointerAppend(pointer, i),
                        fmt::format("invalid regular expression {}: {}", Quote(patterns[i], 200),
                                    checked.error().message));
    }
  }
  return {};
}

Result<void> CheckPaths(const std::vector<std::filesystem::path>& paths, std::string_view what,
                        std::string_view source, std::string_view pointer) {
  for (std::size_t i = 0; i < paths.size(); ++i) {
    const std::string& text = paths[i].native();
    if (text.empty() || text.front() != '/') {
      return FailConfig(source, PointerAppend(pointer, i),
                        fmt::format("expected an absolute {}, found {}", what, Quote(text)));
    }
    if (text == "/") {
      return FailConfig(source, PointerAppend(pointer, i),
                        fmt::format("{} \"/\" is refused: it would cover the whole filesystem "
                                    "and disable the sandbox (use mode \"off\" if that is what "
                                    "you want)",
                                    what));
    }
  }
  return {};
}

Result<void> CheckEnvironment(const EnvironmentConfig& env, std::string_view source) {
  for (std::size_t i = 0; i < env.pass.size(); ++i) {
    if (!IsValidEnvironmentName(env.pass[i])) {
      return FailConfig(source, PointerAppend("/environment/pass", i),
                        fmt::format("expected a variable name ([A-Za-z_][A-Za-z0-9_]*), found {}",
                                    Quote(env.pass[i])));
    }
  }
  std::set<std::string_view> seen;
  for (const auto& [name, value] : env.set) {
    std::string pointer = PointerAppend("/environment/set", name);
    if (!IsValidEnvironmentName(name)) {
      return FailConfig(
          source, pointer,
          fmt::format("expected a variable name ([A-Za-z_][A-Za-z0-9_]*), found {}", Quote(name)));
    }
    if (!seen.insert(name).second) {
      return FailConfig(source, pointer, "the variable is set more than once");
    }
    if (value.find('\0') != std::string::npos) {
      return FailConfig(source, pointer, "the value contains a NUL character");
    }
  }
  return {};
}

Result<void> CheckNestedAgents(const std::vector<std::string>& names, std::string_view source) {
  for (std::size_t i = 0; i < names.size(); ++i) {
    const std::string& name = names[i];
    bool plain = !name.empty() && name.find_first_of(" \t\n\r\v\f/") == std::string::npos &&
                 name.find('\0') == std::string::npos;
    if (!plain) {
      return FailConfig(
          source, PointerAppend("/command_policy/nested_agents", i),
          fmt::format("expected a program name (no spaces or \"/\"), found {}", Quote(name)));
    }
  }
  return {};
}

Result<void> CheckLimits(const LimitsConfig& limits, std::string_view source) {
  auto max_timeout =
      std::chrono::milliseconds(static_cast<std::int64_t>(kMaxTimeoutSeconds * 1000));
  if (limits.timeout.count() <= 0 || limits.timeout > max_timeout) {
    return FailConfig(source, "/limits/timeout_seconds",
                      fmt::format("expected a number of seconds greater than 0 and at most {}, "
                                  "found {} ms",
                                  kMaxTimeoutSeconds, limits.timeout.count()));
  }
  const std::pair<const char*, std::pair<std::uint64_t, const CountRange*>> counts[] = {
      {"output_bytes", {limits.output_bytes, &kOutputBytesRange}},
      {"memory_bytes", {limits.memory_bytes, &kMemoryBytesRange}},
      {"processes", {limits.processes, &kProcessesRange}},
      {"open_files", {limits.open_files, &kOpenFilesRange}},
      {"cpu_seconds", {limits.cpu_seconds, &kCpuSecondsRange}},
  };
  for (const auto& [key, entry] : counts) {
    const auto& [value, range] = entry;
    if (InRange(value, *range)) continue;
    return FailConfig(source, fmt::format("/limits/{}", key),
                      fmt::format("expected {}an integer number of {} from {} to {}, found {}",
                                  range->zero_means_none ? "0 (no limit) or " : "", range->unit,
                                  range->min, range->max, value));
  }
  return {};
}

// Entries are relative paths of plain names; each one removed must be built in (a misspelt
// removal would otherwise leave the entry protected without a word).
Result<void> CheckHostRunFiles(const HostRunFilesConfig& files, std::string_view source) {
  const std::pair<const char*, const std::vector<std::string>*> lists[] = {
      {"add", &files.add}, {"remove", &files.remove}};
  for (const auto& [name, entries] : lists) {
    const std::string pointer = fmt::format("/sandbox/host_run_files/{}", name);
    for (std::size_t i = 0; i < entries->size(); ++i) {
      const std::string& entry = (*entries)[i];
      if (std::string problem = HostRunEntryProblem(entry); !problem.empty()) {
        return FailConfig(source, PointerAppend(pointer, i),
                          fmt::format("{} is not a path relative to a writable root: {}",
                                      Quote(entry, 200), problem));
      }
      if (entries != &files.remove) continue;
      const auto built_in = BuiltInHostRunFiles();
      if (std::none_of(built_in.begin(), built_in.end(),
                       [&](std::string_view b) { return SameHostRunEntry(b, entry); })) {
        return FailConfig(source, PointerAppend(pointer, i),
                          fmt::format("{} is not one of the built-in host-run files, so there is "
                                      "nothing to remove (`cordon status` lists them)",
                                      Quote(entry, 200)));
      }
    }
  }
  return {};
}

}  // namespace

Result<void> ValidateConfig(const Config& config, std::string_view source) {
  CORDON_TRY_VOID(CheckPaths(config.sandbox.writable_roots, "writable root", source,
                             "/sandbox/writable_roots"));
  CORDON_TRY_VOID(
      CheckPaths(config.sandbox.hidden_paths, "hidden path", source, "/sandbox/hidden_paths"));
  CORDON_TRY_VOID(CheckPaths(config.sandbox.readable_paths, "readable path", source,
                             "/sandbox/readable_paths"));
  CORDON_TRY_VOID(CheckHostRunFiles(config.sandbox.host_run_files, source));
  CORDON_TRY_VOID(CheckDomains(config.sandbox, source));
  if (!InRange(config.sandbox.nested_project_depth, kNestedProjectDepthRange)) {
    return FailConfig(source, "/sandbox/nested_project_depth",
                      fmt::format("expected an integer number of levels from {} to {}, found {}",
                                  kNestedProjectDepthRange.min, kNestedProjectDepthRange.max,
                                  config.sandbox.nested_project_depth));
  }
  CORDON_TRY_VOID(CheckPatterns(config.command_policy.deny, source, "/command_policy/deny"));
  CORDON_TRY_VOID(CheckPatterns(config.command_policy.allow, source, "/command_policy/allow"));
  CORDON_TRY_VOID(CheckNestedAgents(config.command_policy.nested_agents, source));
  CORDON_TRY_VOID(CheckLimits(config.limits, source));
  CORDON_TRY_VOID(CheckEnvironment(config.environment, source));
  return {};
}

}  // namespace cordon::config
