#include "plan/environment.h"

#include <algorithm>
#include <map>

#include "plan/toolchain_env.h"

namespace cordon::plan {

bool IsDefaultPassedName(std::string_view name) {
  static constexpr std::string_view kNames[] = {"PATH", "TERM",      "LANG",    "LANGUAGE",
                                                "TZ",   "COLORTERM", "NO_COLOR"};
  if (std::find(std::begin(kNames), std::end(kNames), name) != std::end(kNames)) return true;
  return (name.starts_with("LC_") && name.size() > 3) || IsToolchainName(name);
}

std::vector<std::string> BuildEnvironment(const std::vector<std::string>& caller_env,
                                          const EnvironmentConfig& config,
                                          const std::filesystem::path& home,
                                          const std::filesystem::path& tmpdir,
                                          const std::vector<std::string>& defaults,
                                          const std::vector<std::string>& sandbox_facts) {
  auto passed = [&](std::string_view name) {
    return IsDefaultPassedName(name) ||
           std::find(config.pass.begin(), config.pass.end(), name) != config.pass.end();
  };
  std::map<std::string, std::string, std::less<>> vars;
  for (const std::string& entry : caller_env) {
    std::size_t eq = entry.find('=');
    if (eq == std::string::npos || eq == 0) continue;
    std::string_view name(entry.data(), eq);
    if (!passed(name) || vars.contains(name)) continue;
    vars.emplace(std::string(name), entry.substr(eq + 1));
  }
  if (!vars.contains("PATH")) vars.emplace("PATH", std::string(kDefaultPath));
  for (const std::string& entry : defaults) {
    const std::size_t eq = entry.find('=');
    if (eq == std::string::npos || eq == 0) continue;
    vars.emplace(entry.substr(0, eq), entry.substr(eq + 1));  // a caller's value stays
  }
  for (const auto& [name, value] : config.set) vars[name] = value;
  vars["HOME"] = home.string();
  vars["TMPDIR"] = tmpdir.string();
  vars["CORDON_SANDBOX"] = "1";
  for (const std::string& entry : sandbox_facts) {
    const std::size_t eq = entry.find('=');
    if (eq != std::string::npos && eq > 0) vars[entry.substr(0, eq)] = entry.substr(eq + 1);
  }

  std::vector<std::string> env;
  env.reserve(vars.size());
  for (const auto& [name, value] : vars) env.push_back(name + "=" + value);
  return env;
}

std::vector<std::string> SandboxFacts(SandboxMode mode, NetworkPolicy network, HomeView home) {
  return {std::string("CORDON_SANDBOX_MODE=") + SandboxModeName(mode),
          std::string("CORDON_SANDBOX_NETWORK=") + NetworkPolicyName(network),
          std::string("CORDON_SANDBOX_HOME=") + HomeViewName(home)};
}

}  // namespace cordon::plan
