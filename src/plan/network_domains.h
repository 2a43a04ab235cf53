// What a plan takes from sandbox.network "domains" (docs/network-domains.md, decision 0050):
// the rules the supervisor's resolver and connect broker apply, and the mount that gives the
// sandbox cordon's resolv.conf.
#pragma once

#include <optional>

#include "cordon/config.h"
#include "cordon/error.h"
#include "net/domain_rules.h"
#include "net/parent_proxy.h"
#include "plan/launch_plan.h"

namespace cordon::plan {

// The rules of network "domains" (nullopt for another mode); a pattern the loader should have
// refused fails the plan.
[[nodiscard]] Result<std::optional<net::DomainRules>> PlanDomainRules(const SandboxConfig& sandbox);

// Fills `caps.parent_proxy` for a domains config and the caller's environment; a parent that
// cannot be chained is added to `caps.missing` (every domains run is refused then).
void DescribeParentProxy(const SandboxConfig& sandbox, const std::vector<std::string>& caller_env,
                         Capabilities& caps);

// A kResolverConfig mount over the host's resolv.conf as its links resolve (a link into /run
// ends in the sandbox's private /run, where the mount point is made). nullopt when there is
// none, or it dangles: glibc then asks 127.0.0.1 anyway, where cordon's resolver answers.
std::optional<MountOp> ResolverConfigMount();

// The parent proxy of a domains run (sandbox.parent_proxy and the caller's environment), or
// nullopt (another mode, "none", or no proxy in the environment). One cordon cannot use fails
// the plan, naming it.
[[nodiscard]] Result<std::optional<net::ParentProxy>> PlanParentProxy(
    const SandboxConfig& sandbox, const std::vector<std::string>& caller_env);

}  // namespace cordon::plan
