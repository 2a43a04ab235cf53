#include "config/json_reader.h"

#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <span>

#include "config/diagnostics.h"
#include "config/enums.h"
#include "config/validate.h"

namespace cordon::config {
namespace {

using Json = nlohmann::json;

// The key tables are the single list of accepted keys: the reader, AcceptedKeyPointers() and
// (through a test) docs/config.schema.json all follow them.
constexpr std::string_view kTopKeys[] = {"sandbox", "command_policy", "limits", "environment"};
constexpr std::string_view kSandboxKeys[] = {"mode",
                                             "network",
                                             "domains",
                                             "domain_lists",
                                             "parent_proxy",
                                             "parent_proxy_by_name",
                                             "writable_roots",
                                             "protect_git_metadata",
                                             "protect_host_run_files",
                                             "host_run_files",
                                             "nested_project_depth",
                                             "allow_outside_sandbox",
                                             "hidden_paths",
                                             "home",
                                             "readable_paths",
                                             "tool_caches",
                                             "explain_file_denials",
                                             "backend"};
constexpr std::string_view kHostRunFilesKeys[] = {"add", "remove"};
constexpr std::string_view kDomainsKeys[] = {"allow", "deny"};
constexpr std::string_view kPolicyKeys[] = {"deny", "allow", "default_deny", "nested_agents",
                                            "deny_unknown_command_words"};
constexpr std::string_view kLimitsKeys[] = {"timeout_seconds", "output_bytes", "memory_bytes",
                                            "processes",       "open_files",   "cpu_seconds"};
constexpr std::string_view kEnvironmentKeys[] = {"pass", "set"};

std::span<const std::string_view> KeysOf(std::string_view section) {
  if (section == "sandbox") return kSandboxKeys;
  if (section == "command_policy") return kPolicyKeys;
  if (section == "limits") return kLimitsKeys;
  return kEnvironmentKeys;
}

// One reader per document: carries the source name into every message.
class Reader {
 public:
  explicit Reader(std::string_view source) : source_(source) {}

  Result<void> CheckObject(const Json& value, const std::string& pointer,
                           std::span<const std::string_view> known) const {
    if (!value.is_object()) return Mismatch(pointer, "an object", value);
    for (const auto& [key, child] : value.items()) {
      bool is_known = false;
      for (std::string_view name : known) is_known = is_known || name == key;
      if (is_known) continue;
      std::string message = fmt::format("unknown key {}", Quote(key));
      if (std::string_view guess = ClosestName(key, known); !guess.empty()) {
        message += fmt::format(" (did you mean {}?)", Quote(guess));
      }
      message += fmt::format("; the keys allowed here are {}", QuoteList(known));
      return FailConfig(source_, PointerAppend(pointer, key), message);
    }
    return {};
  }

  Result<std::string> String(const Json& value, const std::string& pointer) const {
    if (!value.is_string()) return Mismatch(pointer, "a string", value);
    const auto& text = value.get_ref<const std::string&>();
    // Paths, names and environment values end at a NUL when they reach the kernel.
    if (text.find('\0') != std::string::npos) {
      return FailConfig(
          source_, pointer,
          fmt::format("expected a string without NUL characters, found {}", Quote(text)));
    }
    return text;
  }

  Result<bool> Bool(const Json& value, const std::string& pointer) const {
    if (!value.is_boolean()) return Mismatch(pointer, "true or false", value);
    return value.get<bool>();
  }

  Result<std::vector<std::string>> StringArray(const Json& value,
                                               const std::string& pointer) const {
    if (!value.is_array()) return Mismatch(pointer, "an array of strings", value);
    std::vector<std::string> out;
    for (std::size_t i = 0; i < value.size(); ++i) {
      CORDON_TRY(std::string text, String(value[i], PointerAppend(pointer, i)));
      out.push_back(std::move(text));
    }
    return out;
  }

  template <typename Enum, std::size_t N>
  Result<Enum> EnumValue(const Json& value, const std::string& pointer,
                         const std::array<std::string_view, N>& names,
                         Result<Enum> (*parse)(std::string_view)) const {
    std::string expected = fmt::format("one of {}", QuoteList(names));
    if (!value.is_string()) return Mismatch(pointer, expected, value);
    const auto& text = value.get_ref<const std::string&>();
    Result<Enum> parsed = parse(text);
    if (parsed) return *parsed;
    std::string message = fmt::format("expected {}, found {}", expected, DescribeJson(value));
    if (std::string_view guess = ClosestName(text, names); !guess.empty()) {
      message += fmt::format(" (did you mean {}?)", Quote(guess));
    }
    return FailConfig(source_, pointer, message);
  }

  std::unexpected<Error> Mismatch(const std::string& pointer, std::string_view expected,
                                  const Json& found) const {
    return FailConfig(source_, pointer,
                      fmt::format("expected {}, found {}", expected, DescribeJson(found)));
  }

 private:
  std::string_view source_;
};

// An integer from `range` (or 0 when the range allows "no limit"). 2020-12 schemas count
// 4096.0 as an integer; so does the reader.
Result<std::uint64_t> ReadCount(const Reader& reader, const Json& value, const std::string& pointer,
                                const CountRange& range) {
  const std::string expected =
      range.zero_means_none
          ? fmt::format("0 (no limit) or an integer number of {} from {} to {}", range.unit,
                        range.min, range.max)
          : fmt::format("an integer number of {} from {} to {}", range.unit, range.min, range.max);
  if (!value.is_number()) return reader.Mismatch(pointer, expected, value);
  const double as_double = value.get<double>();
  if (value.is_number_float() && as_double != std::floor(as_double)) {
    return reader.Mismatch(pointer, expected, value);
  }
  if (value.is_number_integer() && !value.is_number_unsigned()) {
    return reader.Mismatch(pointer, expected, value);  // negative
  }
  if (as_double < 0 || as_double > static_cast<double>(range.max)) {
    return reader.Mismatch(pointer, expected, value);
  }
  const std::uint64_t count = value.is_number_unsigned() ? value.get<std::uint64_t>()
                                                         : static_cast<std::uint64_t>(as_double);
  if (!InRange(count, range)) return reader.Mismatch(pointer, expected, value);
  return count;
}

Result<void> ReadSandbox(const Reader& reader, const Json& json, SandboxConfig& out) {
  const std::string base = "/sandbox";
  CORDON_TRY_VOID(reader.CheckObject(json, base, kSandboxKeys));
  for (const auto& [key, value] : json.items()) {
    const std::string pointer = PointerAppend(base, key);
    if (key == "mode") {
      CORDON_TRY(out.mode, reader.EnumValue(value, pointer, kSandboxModeNames, &ParseSandboxMode));
    } else if (key == "network") {
      CORDON_TRY(out.network,
                 reader.EnumValue(value, pointer, kNetworkPolicyNames, &ParseNetworkPolicy));
    } else if (key == "domains") {
      // As written ("@name" entries included): NormaliseDomains() expands and checks them.
      CORDON_TRY_VOID(reader.CheckObject(value, pointer, kDomainsKeys));
      for (const auto& [side, entries] : value.items()) {
        CORDON_TRY(std::vector<std::string> read,
                   reader.StringArray(entries, PointerAppend(pointer, side)));
        (side == "allow" ? out.allowed_domains : out.denied_domains) = std::move(read);
      }
    } else if (key == "domain_lists") {
      if (!value.is_object()) {
        return reader.Mismatch(pointer, "an object of NAME: [\"pattern\", ...] lists", value);
      }
      out.domain_lists.clear();
      for (const auto& [name, entries] : value.items()) {
        CORDON_TRY(out.domain_lists[name],
                   reader.StringArray(entries, PointerAppend(pointer, name)));
      }
    } else if (key == "parent_proxy") {
      CORDON_TRY(out.parent_proxy, reader.String(value, pointer));
    } else if (key == "parent_proxy_by_name") {
      CORDON_TRY(out.parent_proxy_by_name, reader.Bool(value, pointer));
    } else if (key == "home") {
      CORDON_TRY(out.home, reader.EnumValue(value, pointer, kHomeViewNames, &ParseHomeView));
    } else if (key == "tool_caches") {
      CORDON_TRY(out.tool_caches,
                 reader.EnumValue(value, pointer, kToolCachesNames, &ParseToolCaches));
    } else if (key == "explain_file_denials") {
      CORDON_TRY(out.explain_file_denials, reader.Bool(value, pointer));
    } else if (key == "backend") {
      CORDON_TRY(out.backend,
                 reader.EnumValue(value, pointer, kBackendChoiceNames, &ParseBackendChoice));
    } else if (key == "protect_git_metadata") {
      CORDON_TRY(out.protect_git_metadata, reader.Bool(value, pointer));
    } else if (key == "protect_host_run_files") {
      CORDON_TRY(out.protect_host_run_files, reader.Bool(value, pointer));
    } else if (key == "host_run_files") {
      CORDON_TRY_VOID(reader.CheckObject(value, pointer, kHostRunFilesKeys));
      for (const auto& [list, entries] : value.items()) {
        CORDON_TRY(std::vector<std::string> read,
                   reader.StringArray(entries, PointerAppend(pointer, list)));
        (list == "add" ? out.host_run_files.add : out.host_run_files.remove) = std::move(read);
      }
    } else if (key == "nested_project_depth") {
      CORDON_TRY(out.nested_project_depth,
                 ReadCount(reader, value, pointer, kNestedProjectDepthRange));
    } else if (key == "allow_outside_sandbox") {
      CORDON_TRY(out.allow_outside_sandbox, reader.Bool(value, pointer));
    } else {  // writable_roots, hidden_paths, readable_paths: resolved by NormalisePaths()
      CORDON_TRY(std::vector<std::string> paths, reader.StringArray(value, pointer));
      auto& target = key == "writable_roots"   ? out.writable_roots
                     : key == "readable_paths" ? out.readable_paths
                                               : out.hidden_paths;
      target.assign(paths.begin(), paths.end());
    }
  }
  return {};
}

Result<void> ReadPolicy(const Reader& reader, const Json& json, PolicyConfig& out) {
  const std::string base = "/command_policy";
  CORDON_TRY_VOID(reader.CheckObject(json, base, kPolicyKeys));
  for (const auto& [key, value] : json.items()) {
    const std::string pointer = PointerAppend(base, key);
    if (key == "default_deny") {
      CORDON_TRY(out.default_deny, reader.Bool(value, pointer));
    } else if (key == "deny_unknown_command_words") {
      CORDON_TRY(out.deny_unknown_command_words, reader.Bool(value, pointer));
    } else if (key == "deny") {
      CORDON_TRY(out.deny, reader.StringArray(value, pointer));
    } else if (key == "allow") {
      CORDON_TRY(out.allow, reader.StringArray(value, pointer));
    } else {
      CORDON_TRY(out.nested_agents, reader.StringArray(value, pointer));
    }
  }
  return {};
}

Result<void> ReadLimits(const Reader& reader, const Json& json, LimitsConfig& out) {
  const std::string base = "/limits";
  CORDON_TRY_VOID(reader.CheckObject(json, base, kLimitsKeys));
  for (const auto& [key, value] : json.items()) {
    const std::string pointer = PointerAppend(base, key);
    if (key == "timeout_seconds") {
      const std::string expected =
          fmt::format("a number of seconds greater than 0 and at most {}", kMaxTimeoutSeconds);
      if (!value.is_number()) return reader.Mismatch(pointer, expected, value);
      double seconds = value.get<double>();
      if (!std::isfinite(seconds) || seconds <= 0 || seconds > kMaxTimeoutSeconds) {
        return reader.Mismatch(pointer, expected, value);
      }
      out.timeout = TimeoutFromSeconds(seconds);
    } else if (key == "output_bytes") {
      CORDON_TRY(out.output_bytes, ReadCount(reader, value, pointer, kOutputBytesRange));
    } else if (key == "memory_bytes") {
      CORDON_TRY(out.memory_bytes, ReadCount(reader, value, pointer, kMemoryBytesRange));
    } else if (key == "processes") {
      CORDON_TRY(out.processes, ReadCount(reader, value, pointer, kProcessesRange));
    } else if (key == "open_files") {
      CORDON_TRY(out.open_files, ReadCount(reader, value, pointer, kOpenFilesRange));
    } else {
      CORDON_TRY(out.cpu_seconds, ReadCount(reader, value, pointer, kCpuSecondsRange));
    }
  }
  return {};
}

Result<void> ReadEnvironment(const Reader& reader, const Json& json, EnvironmentConfig& out) {
  const std::string base = "/environment";
  CORDON_TRY_VOID(reader.CheckObject(json, base, kEnvironmentKeys));
  for (const auto& [key, value] : json.items()) {
    const std::string pointer = PointerAppend(base, key);
    if (key == "pass") {
      CORDON_TRY(out.pass, reader.StringArray(value, pointer));
      continue;
    }
    if (!value.is_object()) {
      return reader.Mismatch(pointer, "an object of NAME: \"value\" strings", value);
    }
    out.set.clear();
    for (const auto& [name, text] : value.items()) {
      CORDON_TRY(std::string checked, reader.String(text, PointerAppend(pointer, name)));
      out.set.emplace_back(name, std::move(checked));
    }
  }
  return {};
}

}  // namespace

Result<Config> ReadConfigJson(const nlohmann::json& document, std::string_view source) {
  Reader reader(source);
  Config config;
  if (!document.is_object()) {
    return FailConfig(
        source, "",
        fmt::format("expected a JSON object at the top level, found {}", DescribeJson(document)));
  }
  CORDON_TRY_VOID(reader.CheckObject(document, "", kTopKeys));
  if (auto it = document.find("sandbox"); it != document.end()) {
    CORDON_TRY_VOID(ReadSandbox(reader, *it, config.sandbox));
  }
  if (auto it = document.find("command_policy"); it != document.end()) {
    CORDON_TRY_VOID(ReadPolicy(reader, *it, config.command_policy));
  }
  if (auto it = document.find("limits"); it != document.end()) {
    CORDON_TRY_VOID(ReadLimits(reader, *it, config.limits));
  }
  if (auto it = document.find("environment"); it != document.end()) {
    CORDON_TRY_VOID(ReadEnvironment(reader, *it, config.environment));
  }
  return config;
}

std::vector<std::string> AcceptedKeyPointers() {
  std::vector<std::string> out;
  for (std::string_view section : kTopKeys) {
    std::string base = PointerAppend("", section);
    out.push_back(base);
    for (std::string_view key : KeysOf(section)) {
      const std::string pointer = PointerAppend(base, key);
      out.push_back(pointer);
      if (key == "domains") {
        for (std::string_view side : kDomainsKeys) out.push_back(PointerAppend(pointer, side));
      }
      if (key != "host_run_files") continue;
      for (std::string_view list : kHostRunFilesKeys) out.push_back(PointerAppend(pointer, list));
    }
  }
  return out;
}

}  // namespace cordon::config
