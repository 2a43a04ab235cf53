// `cordon sandbox status | off | read_only | workspace_write | network deny|allow|domains |
// network allow-domain|deny-domain D | network parent-proxy auto|none|URL |
// home auto|read_only|hidden | tool-caches shared|workspace|off`: inspect or change the sandbox
// section of the user config. Writes are atomic; a change applies to new sessions only — a session
// that is running keeps the configuration it pinned at start.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdio>
#include <string_view>

#include "cli/subcommands.h"
#include "config/enums.h"
#include "config/load.h"
#include "config/overrides.h"
#include "config/update.h"
#include "net/domain_pattern.h"
#include "net/parent_proxy.h"

namespace cordon::cli {
namespace {

struct SandboxOptions {
  std::vector<std::string> words;
};

void PrintSandbox(const std::filesystem::path& path, const Config& config, bool exists) {
  fmt::print("config:                {}{}\n", path.string(),
             exists ? "" : " (not present: defaults)");
  fmt::print("mode:                  {}\n", SandboxModeName(config.sandbox.mode));
  fmt::print("network:               {}\n", NetworkPolicyName(config.sandbox.network));
  for (const std::string& pattern : config.sandbox.allowed_domains) {
    fmt::print("domains allow:         {}\n", pattern);
  }
  for (const std::string& pattern : config.sandbox.denied_domains) {
    fmt::print("domains deny:          {}\n", pattern);
  }
  for (const auto& [name, patterns] : config.sandbox.domain_lists) {
    fmt::print("domain_list:           @{} = {}\n", name, fmt::join(patterns, " "));
  }
  fmt::print("parent_proxy:          {}\n", config.sandbox.parent_proxy);
  if (config.sandbox.network != NetworkPolicy::kDomains &&
      (!config.sandbox.allowed_domains.empty() || !config.sandbox.denied_domains.empty())) {
    fmt::print("                       (the domain lists apply with network domains only)\n");
  }
  fmt::print("home:                  {}\n", HomeViewName(config.sandbox.home));
  fmt::print("tool_caches:           {}\n", ToolCachesName(config.sandbox.tool_caches));
  for (const auto& readable : config.sandbox.readable_paths) {
    fmt::print("readable_path:         {}\n", readable.string());
  }
  fmt::print("protect_git_metadata:  {}\n", config.sandbox.protect_git_metadata);
  fmt::print("protect_host_run_files: {}\n", config.sandbox.protect_host_run_files);
  fmt::print("nested_project_depth:   {}\n", config.sandbox.nested_project_depth);
  for (const std::string& entry : config.sandbox.host_run_files.add) {
    fmt::print("host_run_files add:    {}\n", entry);
  }
  for (const std::string& entry : config.sandbox.host_run_files.remove) {
    fmt::print("host_run_files remove: {}\n", entry);
  }
  fmt::print("allow_outside_sandbox: {}\n", config.sandbox.allow_outside_sandbox);
  fmt::print("backend:               {}\n", BackendChoiceName(config.sandbox.backend));
  for (const auto& root : config.sandbox.writable_roots) {
    fmt::print("writable_root:         {}\n", root.string());
  }
}

int RunSandbox(const GlobalOptions& global, const SandboxOptions& options) {
  auto path = ConfigFilePath(global);
  if (!path) return ReportSetupError(path.error());
  const config::Env env = config::FromProcessEnvironment();
  const std::vector<std::string>& w = options.words;

  config::SettingChange change;
  if (w.empty() || (w.size() == 1 && w[0] == "status")) {
    std::error_code ec;
    const bool exists = std::filesystem::exists(*path, ec);
    auto config = config::LoadUserConfig(
        std::optional<std::filesystem::path>(exists ? std::optional(*path) : std::nullopt), env);
    if (!config) return ReportSetupError(config.error());
    PrintSandbox(*path, *config, exists);
    return 0;
  }
  if (w.size() == 1) {
    auto mode = config::ParseSandboxMode(w[0]);
    if (!mode) return ReportSetupError(mode.error());
    change = {"/sandbox/mode", SandboxModeName(*mode)};
  } else if (w.size() == 3 && w[0] == "network" &&
             (w[1] == "allow-domain" || w[1] == "deny-domain")) {
    // Checked before the file is touched; an "@name" is kept as written (the list may change
    // later) and checked against the file's lists when the result is validated.
    std::string entry = w[2];
    if (!entry.starts_with('@')) {
      auto pattern = net::ParseDomainPattern(entry);
      if (!pattern) return ReportSetupError(pattern.error());
      entry = pattern->ToString();
    }
    change = {w[1] == "allow-domain" ? "/sandbox/domains/allow" : "/sandbox/domains/deny", entry,
              /*add_to_list=*/true};
  } else if (w.size() == 3 && w[0] == "network" && w[1] == "parent-proxy") {
    // Checked before the file is touched: auto, none, or an http:// URL without credentials.
    if (Result<void> parent = net::CheckParentProxySetting(w[2]); !parent) {
      return ReportSetupError(parent.error());
    }
    change = {"/sandbox/parent_proxy", w[2]};
  } else if (w.size() == 2 && w[0] == "network") {
    auto network = config::ParseNetworkPolicy(w[1]);
    if (!network) return ReportSetupError(network.error());
    change = {"/sandbox/network", NetworkPolicyName(*network)};
  } else if (w.size() == 2 && w[0] == "home") {
    auto home = config::ParseHomeView(w[1]);
    if (!home) return ReportSetupError(home.error());
    change = {"/sandbox/home", HomeViewName(*home)};
  } else if (w.size() == 2 && w[0] == "tool-caches") {
    auto caches = config::ParseToolCaches(w[1]);
    if (!caches) return ReportSetupError(caches.error());
    change = {"/sandbox/tool_caches", ToolCachesName(*caches)};
  } else {
    std::string joined;
    for (const auto& word : w) joined += (joined.empty() ? "" : " ") + word;
    fmt::print(stderr,
               "cordon: sandbox: unknown request \"{}\"; expected status, off, read_only, "
               "workspace_write, network deny|allow|domains, network allow-domain|deny-domain "
               "DOMAIN, network parent-proxy auto|none|URL, home auto|read_only|hidden, or "
               "tool-caches shared|workspace|off\n",
               joined);
    return kExitSetupFailed;
  }
  auto updated = config::UpdateConfigFile(*path, env, change);
  if (!updated) return ReportSetupError(updated.error());
  PrintSandbox(*path, *updated, true);
  fmt::print("Saved. The change applies to new sessions; running ones keep their configuration.\n");
  return 0;
}

}  // namespace

Subcommand AddSandboxCommand(CLI::App& root, const GlobalOptions& global) {
  CLI::App* app = root.add_subcommand(
      "sandbox",
      "Inspect or change the sandbox settings in the user config: status | off | read_only | "
      "workspace_write | network deny|allow|domains | network allow-domain|deny-domain DOMAIN | "
      "network parent-proxy auto|none|URL | home auto|read_only|hidden | tool-caches "
      "shared|workspace|off");
  app->require_subcommand(0, 1);  // none: status
  // One CLI11 subcommand per request, so --help, the man page and the completions list them.
  app->add_subcommand("status", "Show the sandbox settings of the user config (the default)");
  for (std::string_view mode : config::kSandboxModeNames) {
    app->add_subcommand(std::string(mode),
                        fmt::format("Set sandbox.mode to {} (new sessions only)", mode));
  }
  // network: one subcommand per policy, and two that add to the domain lists.
  auto domain = std::make_shared<std::string>();
  CLI::App* network_app = app->add_subcommand(
      "network", "Set sandbox.network, or add to its domain lists (new sessions only)");
  // Anything else is kept, so that RunSandbox names it with the valid choices.
  network_app->require_subcommand(0, 1)->allow_extras();
  for (std::string_view policy : config::kNetworkPolicyNames) {
    network_app->add_subcommand(
        std::string(policy), fmt::format("Set sandbox.network to {} (new sessions only)", policy));
  }
  for (const char* side : {"allow", "deny"}) {
    CLI::App* add = network_app->add_subcommand(
        fmt::format("{}-domain", side),
        fmt::format("Add a host name (*.example.org, :PORT), address or @list to "
                    "sandbox.domains.{} (new sessions only)",
                    side));
    add->add_option("domain", *domain, "The pattern, or @NAME of a sandbox.domain_lists list")
        ->required()
        ->type_name("DOMAIN");
  }
  auto parent = std::make_shared<std::string>();
  network_app
      ->add_subcommand("parent-proxy",
                       "Set sandbox.parent_proxy: the proxy that network domains' connections "
                       "go through (new sessions only)")
      ->add_option("proxy", *parent, "auto (the caller's https_proxy), none, or http://HOST:PORT")
      ->required()
      ->type_name("auto|none|URL");
  auto home = std::make_shared<std::string>();
  CLI::App* home_app =
      app->add_subcommand("home",
                          "Set sandbox.home: what commands see of the real homes (new "
                          "sessions only)");
  home_app->add_option("view", *home, "auto, read_only or hidden")
      ->required()
      ->type_name(ChoiceTypeName(config::kHomeViewNames));
  auto caches = std::make_shared<std::string>();
  CLI::App* caches_app = app->add_subcommand(
      "tool-caches",
      "Set sandbox.tool_caches: where the tools' caches live across commands (new sessions "
      "only)");
  caches_app->add_option("setting", *caches, "shared, workspace or off")
      ->required()
      ->type_name(ChoiceTypeName(config::kToolCachesNames));
  return {app, [&global, app, domain, parent, home, caches] {
            SandboxOptions options;
            for (const CLI::App* chosen : app->get_subcommands()) {
              options.words.push_back(chosen->get_name());
              if (chosen->get_name() == "network") {
                for (const CLI::App* request : chosen->get_subcommands()) {
                  options.words.push_back(request->get_name());
                  if (request->get_name().ends_with("-domain")) options.words.push_back(*domain);
                  if (request->get_name() == "parent-proxy") options.words.push_back(*parent);
                }
                // Extra words make the request unknown; none at all is an empty policy.
                const std::vector<std::string> extra = chosen->remaining(/*recurse=*/true);
                options.words.insert(options.words.end(), extra.begin(), extra.end());
                if (options.words.size() == 1) options.words.emplace_back();
              }
              if (chosen->get_name() == "home") options.words.push_back(*home);
              if (chosen->get_name() == "tool-caches") options.words.push_back(*caches);
            }
            return RunSandbox(global, options);
          }};
}

}  // namespace cordon::cli
