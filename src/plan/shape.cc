#include "plan/shape.h"

namespace cordon::plan {

Shape ShapeOf(const LaunchPlan& plan) {
  // Every field of LaunchPlan, in order: adding one breaks this line until it is classified.
  [[maybe_unused]] const auto& [sandboxed, argv, env, cwd, workspace, enforcement, namespaces,
                                mounts, absent_protected, absent_hidden, placeholders, landlock,
                                seccomp, unix_connect_beneath, home, tmpdir, hostname, domains,
                                parent_proxy, limits] = plan;
  // Per command, applied by every launch whatever was prepared:
  //   argv, env, cwd: sent to the prepared process or set by the joiner;
  //   workspace: a session has one; its bind (and its FileId) is in `mounts`;
  //   enforcement: the report of what this run enforces;
  //   absent_protected: placeholders the run holds on the host;
  //   absent_hidden: Seatbelt's path rules only (a backend that prepares nothing); empty with
  //     a mount namespace, where landlock.readable (in the shape) leaves them out;
  //   placeholders: made on the host and covered inside for each command alone;
  //   home, tmpdir: paths inside the per-command private /tmp, named in `env`;
  //   limits.cgroup: a run with a cgroup is never prepared (zygote/prepared_command.h).
  // domains, parent_proxy: in the shape, though a plan with them is never prepared either (its
  // network namespace and resolver are its own: zygote/zygote_slot.cc).
  return Shape{
      SandboxShape{sandboxed, namespaces, hostname, mounts, seccomp, domains, parent_proxy},
      PreparedExtras{landlock, limits.rlimits, unix_connect_beneath}};
}

bool SameSandboxShape(const LaunchPlan& a, const LaunchPlan& b) {
  return ShapeOf(a).sandbox == ShapeOf(b).sandbox;
}

bool SamePreparedShape(const LaunchPlan& a, const LaunchPlan& b) {
  const Shape x = ShapeOf(a);
  const Shape y = ShapeOf(b);
  return x.sandbox == y.sandbox && x.prepared == y.prepared;
}

}  // namespace cordon::plan
