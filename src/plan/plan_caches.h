// What a long-lived session keeps between its plans (decisions 0022, 0027): the watched copy
// of /etc's root-only scan and the watched hidden-path views, about half of a plan's system
// calls. Owned by the session (Session::State of a long-lived session) and handed to the
// planner in PlanRequest::caches; a plan without it scans every time, as a one-shot process
// that plans once should. Nothing here is process-wide: two sessions keep their own.
#pragma once

#include "plan/hidden_watch.h"
#include "plan/nested_projects.h"
#include "plan/root_only_watch.h"

namespace cordon::plan {

struct PlanCaches {
  RootOnlyCache root_only;
  HiddenViewCache hidden;
  NestedProjectsCache nested;
};

}  // namespace cordon::plan
