// What a plan takes from sandbox.network "domains" (docs/network-domains.md, decision 0050):
// the rules the supervisor's resolver and connect broker apply, and the mount that gives the
// sandbox cordon's resolv.conf.
#pragma once

#include <optional>

#include "cordon/config.h"
#include "cordon/error.h"
#include "net/domain_rules.h"
#include "plan/launch_plan.h"

namespace cordon::plan {

// The rules of network "domains" (nullopt for another mode); a pattern the loader should have
// refused fails the plan.
[[nodiscard]] Result<std::optional<net::DomainRules>> PlanDomainRules(const SandboxConfig& sandbox);

// A kResolverConfig mount over the host's resolv.conf as its links resolve (a link into /run
// ends in the sandbox's private /run, where the mount point is made). nullopt when there is
// none, or it dangles: glibc then asks 127.0.0.1 anyway, where cordon's resolver answers.
std::optional<MountOp> ResolverConfigMount();

}  // namespace cordon::plan
