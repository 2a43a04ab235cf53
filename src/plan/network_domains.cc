#include "plan/network_domains.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <filesystem>
#include <system_error>

namespace cordon::plan {

Result<std::optional<net::DomainRules>> PlanDomainRules(const SandboxConfig& sandbox) {
  if (sandbox.network != NetworkPolicy::kDomains) return std::optional<net::DomainRules>{};
  CORDON_TRY(net::DomainRules rules,
             net::DomainRules::Parse(sandbox.allowed_domains, sandbox.denied_domains));
  return std::optional<net::DomainRules>(std::move(rules));
}

Result<std::optional<net::ParentProxy>> PlanParentProxy(
    const SandboxConfig& sandbox, const std::vector<std::string>& caller_env) {
  if (sandbox.network != NetworkPolicy::kDomains) return std::optional<net::ParentProxy>{};
  Result<std::optional<net::ParentProxy>> parent =
      net::ParentProxyFor(sandbox.parent_proxy, sandbox.parent_proxy_by_name, caller_env);
  if (!parent) {
    return Fail(ErrorCode::kUnavailable, parent.error().message +
                                             " (a domains run is refused rather than sent past the "
                                             "network's proxy)");
  }
  return parent;
}

void DescribeParentProxy(const SandboxConfig& sandbox, const std::vector<std::string>& caller_env,
                         Capabilities& caps) {
  Result<std::optional<net::ParentProxy>> parent = PlanParentProxy(sandbox, caller_env);
  if (!parent) {
    caps.missing.push_back(parent.error().message);
  } else if (*parent) {
    caps.parent_proxy = fmt::format("{} (from {}{})", (*parent)->Address(), (*parent)->source,
                                    (*parent)->by_name ? "; asked by name where the host's DNS "
                                                         "has no answer"
                                                       : "");
  }
}

std::optional<MountOp> ResolverConfigMount() {
  std::error_code ec;
  const std::filesystem::path file = std::filesystem::canonical("/etc/resolv.conf", ec);
  struct stat st {};
  if (ec || ::stat(file.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  return MountOp{MountOpKind::kResolverConfig, file};
}

}  // namespace cordon::plan
