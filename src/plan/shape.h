// The shape of a plan: what a sandbox built ahead of its command (a session's zygote, a
// prepared command) takes from the plan it was built from, and so what another plan must
// share with it to run there. Everything else in a plan is applied per command.
//
// The shape is a tuple of references into the plan, compared element by element with each
// member type's defaulted equality: no comparison written out field by field, and ShapeOf
// names every LaunchPlan field (a structured binding of all of them), so a new field does not
// build until it is put in the shape or marked per command.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "limits/resource_limits.h"
#include "plan/launch_plan.h"

namespace cordon::plan {

// What a zygote's namespaces and mount view are built from.
using SandboxShape = std::tuple<const bool&,                  // sandboxed
                                const Namespaces&,            // namespaces
                                const std::string&,           // hostname
                                const std::vector<MountOp>&,  // mounts, with their FileIds
                                const SeccompSettings&,       // seccomp (compiled once)
                                const std::optional<net::DomainRules>&,   // domains
                                const std::optional<net::ParentProxy>&>;  // parent_proxy

// What a prepared command applies before its command arrives, beyond the zygote's.
using PreparedExtras =
    std::tuple<const LandlockRules&,                        // landlock
               const limits::ResourceLimits&,               // limits.rlimits
               const std::vector<std::filesystem::path>&>;  // unix_connect_beneath

struct Shape {
  SandboxShape sandbox;
  PreparedExtras prepared;
};

// Views into `plan`: valid as long as it is.
Shape ShapeOf(const LaunchPlan& plan);

// A zygote built from `a` may run `b`.
bool SameSandboxShape(const LaunchPlan& a, const LaunchPlan& b);
// A sandbox prepared from `a` may run `b` (the zygote's shape and the prepared extras).
bool SamePreparedShape(const LaunchPlan& a, const LaunchPlan& b);

}  // namespace cordon::plan
