#include "plan/environment.h"

#include <algorithm>
#include <map>

#include "net/sandbox_proxy.h"
#include "plan/toolchain_env.h"

namespace cordon::plan {

bool IsCertificateName(std::string_view name) {
  static constexpr std::string_view kNames[] = {"SSL_CERT_FILE",       "SSL_CERT_DIR",
                                                "NODE_EXTRA_CA_CERTS", "REQUESTS_CA_BUNDLE",
                                                "CURL_CA_BUNDLE",      "GIT_SSL_CAINFO"};
  return std::find(std::begin(kNames), std::end(kNames), name) != std::end(kNames);
}

bool IsDefaultPassedName(std::string_view name) {
  static constexpr std::string_view kNames[] = {"PATH", "TERM",      "LANG",    "LANGUAGE",
                                                "TZ",   "COLORTERM", "NO_COLOR"};
  if (std::find(std::begin(kNames), std::end(kNames), name) != std::end(kNames)) return true;
  return (name.starts_with("LC_") && name.size() > 3) || IsToolchainName(name) ||
         IsCertificateName(name);
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
  // Each "NAME=value" entry with a name, to `add` (entries without one are ignored).
  auto each = [](const std::vector<std::string>& entries, auto add) {
    for (const std::string& entry : entries) {
      const std::size_t eq = entry.find('=');
      if (eq != std::string::npos && eq > 0) {
        add(std::string_view(entry).substr(0, eq), std::string_view(entry).substr(eq + 1));
      }
    }
  };
  each(caller_env, [&](std::string_view name, std::string_view value) {
    if (passed(name) && !vars.contains(name)) vars.emplace(name, value);
  });
  if (!vars.contains("PATH")) vars.emplace("PATH", std::string(kDefaultPath));
  // A caller's value stays.
  each(defaults, [&](std::string_view name, std::string_view value) { vars.emplace(name, value); });
  for (const auto& [name, value] : config.set) vars[name] = value;
  vars["HOME"] = home.string();
  vars["TMPDIR"] = tmpdir.string();
  vars["CORDON_SANDBOX"] = "1";
  each(sandbox_facts, [&](std::string_view name, std::string_view value) {
    vars.insert_or_assign(std::string(name), std::string(value));
  });

  std::vector<std::string> env;
  env.reserve(vars.size());
  for (const auto& [name, value] : vars) env.push_back(name + "=" + value);
  return env;
}

std::vector<std::string> SandboxFacts(SandboxMode mode, NetworkPolicy network, HomeView home) {
  std::vector<std::string> facts{
      std::string("CORDON_SANDBOX_MODE=") + SandboxModeName(mode),
      std::string("CORDON_SANDBOX_NETWORK=") + NetworkPolicyName(network),
      std::string("CORDON_NETWORK=") + NetworkPolicyName(network),
      std::string("CORDON_SANDBOX_HOME=") + HomeViewName(home)};
  if (network == NetworkPolicy::kDomains) {
    for (std::string& variable : net::ProxyEnvironment()) facts.push_back(std::move(variable));
  }
  return facts;
}

}  // namespace cordon::plan
