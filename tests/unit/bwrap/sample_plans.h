// Representative LaunchPlans built by hand (not by the planner, so a planner change shows up in
// the planner's tests, not here): the backends' renderers are golden-tested against them.
#pragma once

#include "plan/launch_plan.h"

namespace cordon::testing {

// workspace_write, network deny: private /tmp and HOME, the workspace writable with its .git
// read-only, two hidden credential paths, /run masked, Landlock and seccomp on.
inline plan::LaunchPlan WorkspaceWriteNetworkDeny() {
  plan::LaunchPlan p;
  p.argv = {"sh", "-c", "make test && echo 'done; $HOME'"};
  p.env = {"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/tmp/.cordon-home", "TMPDIR=/tmp",
           "LANG=C.UTF-8", "TERM=xterm-256color"};
  p.cwd = "/home/dev/project/src";
  p.workspace = "/home/dev/project";
  p.namespaces = {.user = true, .mount = true, .pid = true, .net = true, .ipc = true, .uts = true};
  using K = plan::MountOpKind;
  p.mounts = {{K::kTmpfs, "/tmp"},
              {K::kDirectory, "/tmp/.cordon-home"},
              {K::kTmpfs, "/var/tmp"},
              {K::kBindWritable, "/home/dev/project"},
              {K::kBindReadOnly, "/home/dev/project/.git"},
              {K::kMaskDirectory, "/home/dev/.ssh"},
              {K::kMaskFile, "/home/dev/.netrc"},
              {K::kMaskDirectory, "/run"}};
  p.landlock.abi = 6;
  p.landlock.writable = {"/home/dev/project", "/tmp", "/var/tmp", "/dev"};
  p.seccomp.enabled = true;
  p.seccomp.sockets = plan::SocketPolicy::kLocalFamilies;
  p.home = "/tmp/.cordon-home";
  p.tmpdir = "/tmp";
  return p;
}

// read_only, network allow: the workspace bound read-only, no net namespace, an extra writable
// root is absent (read_only has none), one configured hidden path with a space in its name.
inline plan::LaunchPlan ReadOnlyNetworkAllow() {
  plan::LaunchPlan p;
  p.argv = {"git", "status", "--short"};
  p.env = {"PATH=/usr/bin:/bin", "HOME=/tmp/.cordon-home", "TMPDIR=/tmp", "GIT_PAGER=cat"};
  p.cwd = "/srv/repo";
  p.workspace = "/srv/repo";
  p.namespaces = {.user = true, .mount = true, .pid = true, .net = false, .ipc = true, .uts = true};
  using K = plan::MountOpKind;
  p.mounts = {{K::kTmpfs, "/tmp"},
              {K::kDirectory, "/tmp/.cordon-home"},
              {K::kTmpfs, "/var/tmp"},
              {K::kBindReadOnly, "/srv/repo"},
              {K::kMaskDirectory, "/home/dev/.aws"},
              {K::kMaskFile, "/home/dev/secrets/api token.txt"}};
  p.landlock.abi = 7;
  p.landlock.writable = {"/tmp", "/var/tmp", "/dev"};
  p.seccomp.enabled = true;
  p.seccomp.sockets = plan::SocketPolicy::kAny;
  p.home = "/tmp/.cordon-home";
  p.tmpdir = "/tmp";
  return p;
}

// workspace_write with a second writable root and a linked worktree's git metadata (the .git
// file, its git dir and the common dir inside the second root), root caller (no user ns).
inline plan::LaunchPlan WorktreeWithExtraRoot() {
  plan::LaunchPlan p;
  p.argv = {"cargo", "build", "--release"};
  p.env = {"PATH=/usr/bin:/bin", "HOME=/tmp/.cordon-home", "TMPDIR=/tmp",
           "CARGO_HOME=/var/cache/cordon/cargo"};
  p.cwd = "/work/tree";
  p.workspace = "/work/tree";
  p.namespaces = {
      .user = false, .mount = true, .pid = true, .net = true, .ipc = true, .uts = false};
  using K = plan::MountOpKind;
  p.mounts = {{K::kTmpfs, "/tmp"},
              {K::kDirectory, "/tmp/.cordon-home"},
              {K::kTmpfs, "/var/tmp"},
              {K::kBindWritable, "/work/tree"},
              {K::kBindWritable, "/var/cache/cordon"},
              {K::kBindReadOnly, "/work/tree/.git"},
              {K::kBindReadOnly, "/var/cache/cordon/main/.git/worktrees/tree"},
              {K::kBindReadOnly, "/var/cache/cordon/main/.git"},
              // An ancestor pin of a hidden path and a host socket mask: both optional.
              {K::kBindWritable, "/work/tree/config", /*optional=*/true},
              {K::kMaskFile, "/work/tree/config/credentials.json"},
              {K::kMaskFile, "/run/docker.sock", /*optional=*/true}};
  p.seccomp.enabled = true;
  p.seccomp.sockets = plan::SocketPolicy::kLocalFamilies;
  p.home = "/tmp/.cordon-home";
  p.tmpdir = "/tmp";
  return p;
}

}  // namespace cordon::testing
