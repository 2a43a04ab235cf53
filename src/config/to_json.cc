#include "config/to_json.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

namespace cordon::config {
namespace {

// ordered_json keeps insertion order, which is the documented order of the keys.
using OrderedJson = nlohmann::ordered_json;

OrderedJson PathList(const std::vector<std::filesystem::path>& paths) {
  OrderedJson list = OrderedJson::array();
  for (const auto& path : paths) list.push_back(path.native());
  return list;
}

OrderedJson StringList(const std::vector<std::string>& items) {
  OrderedJson list = OrderedJson::array();
  for (const auto& item : items) list.push_back(item);
  return list;
}

// Whole seconds are written as integers ("600", not "600.0"); other values as the shortest
// decimal that reads back to the same millisecond count.
OrderedJson Seconds(std::chrono::milliseconds timeout) {
  if (timeout.count() % 1000 == 0) return OrderedJson(timeout.count() / 1000);
  return OrderedJson(static_cast<double>(timeout.count()) / 1000.0);
}

OrderedJson ToDocument(const Config& config) {
  OrderedJson sandbox = OrderedJson::object();
  sandbox["mode"] = SandboxModeName(config.sandbox.mode);
  sandbox["network"] = NetworkPolicyName(config.sandbox.network);
  OrderedJson domains = OrderedJson::object();
  domains["allow"] = StringList(config.sandbox.allowed_domains);
  domains["deny"] = StringList(config.sandbox.denied_domains);
  sandbox["domains"] = std::move(domains);
  // std::map: sorted by name, the order the reader's (unordered) objects come back in.
  OrderedJson domain_lists = OrderedJson::object();
  for (const auto& [name, patterns] : config.sandbox.domain_lists) {
    domain_lists[name] = StringList(patterns);
  }
  sandbox["domain_lists"] = std::move(domain_lists);
  sandbox["parent_proxy"] = config.sandbox.parent_proxy;
  sandbox["parent_proxy_by_name"] = config.sandbox.parent_proxy_by_name;
  sandbox["writable_roots"] = PathList(config.sandbox.writable_roots);
  sandbox["protect_git_metadata"] = config.sandbox.protect_git_metadata;
  sandbox["protect_host_run_files"] = config.sandbox.protect_host_run_files;
  sandbox["nested_project_depth"] = config.sandbox.nested_project_depth;
  OrderedJson host_run_files = OrderedJson::object();
  host_run_files["add"] = StringList(config.sandbox.host_run_files.add);
  host_run_files["remove"] = StringList(config.sandbox.host_run_files.remove);
  sandbox["host_run_files"] = std::move(host_run_files);
  sandbox["allow_outside_sandbox"] = config.sandbox.allow_outside_sandbox;
  sandbox["hidden_paths"] = PathList(config.sandbox.hidden_paths);
  sandbox["home"] = HomeViewName(config.sandbox.home);
  sandbox["readable_paths"] = PathList(config.sandbox.readable_paths);
  sandbox["tool_caches"] = ToolCachesName(config.sandbox.tool_caches);
  sandbox["explain_file_denials"] = config.sandbox.explain_file_denials;
  sandbox["backend"] = BackendChoiceName(config.sandbox.backend);

  OrderedJson policy = OrderedJson::object();
  policy["deny"] = StringList(config.command_policy.deny);
  policy["allow"] = StringList(config.command_policy.allow);
  policy["default_deny"] = config.command_policy.default_deny;
  policy["nested_agents"] = StringList(config.command_policy.nested_agents);
  policy["deny_unknown_command_words"] = config.command_policy.deny_unknown_command_words;

  OrderedJson limits = OrderedJson::object();
  limits["timeout_seconds"] = Seconds(config.limits.timeout);
  limits["output_bytes"] = config.limits.output_bytes;
  limits["memory_bytes"] = config.limits.memory_bytes;
  limits["processes"] = config.limits.processes;
  limits["open_files"] = config.limits.open_files;
  limits["cpu_seconds"] = config.limits.cpu_seconds;

  // Sorted by name: the reader returns them sorted (JSON objects are unordered), so this is the
  // one order in which writing and reading agree.
  auto variables = config.environment.set;
  std::sort(variables.begin(), variables.end());
  OrderedJson set = OrderedJson::object();
  for (const auto& [name, value] : variables) set[name] = value;
  OrderedJson environment = OrderedJson::object();
  environment["pass"] = StringList(config.environment.pass);
  environment["set"] = std::move(set);

  OrderedJson document = OrderedJson::object();
  document["sandbox"] = std::move(sandbox);
  document["command_policy"] = std::move(policy);
  document["limits"] = std::move(limits);
  document["environment"] = std::move(environment);
  return document;
}

}  // namespace

std::string ToJson(const Config& config) {
  return ToDocument(config).dump(2, ' ', /*ensure_ascii=*/false,
                                 OrderedJson::error_handler_t::replace) +
         "\n";
}

Result<std::string> ToJsonChecked(const Config& config) {
  // nlohmann's dump throws on invalid UTF-8 in strict mode; this is the adapter.
  try {
    return ToDocument(config).dump(2, ' ', /*ensure_ascii=*/false,
                                   OrderedJson::error_handler_t::strict) +
           "\n";
  } catch (const nlohmann::json::exception& error) {
    return Fail(
        ErrorCode::kConfig,
        fmt::format("cannot write the config: a value is not valid UTF-8 ({})", error.what()));
  }
}

}  // namespace cordon::config
