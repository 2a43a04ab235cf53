#include "plan/network_domains.h"

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

std::optional<MountOp> ResolverConfigMount() {
  std::error_code ec;
  const std::filesystem::path file = std::filesystem::canonical("/etc/resolv.conf", ec);
  struct stat st {};
  if (ec || ::stat(file.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  return MountOp{MountOpKind::kResolverConfig, file};
}

}  // namespace cordon::plan
