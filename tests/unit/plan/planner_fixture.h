// Fabricated kernel features and requests shared by the planner tests.
#pragma once

#include <string>

#include "linux/kernel_features.h"
#include "plan/launch_plan.h"

namespace cordon::plan::plan_test {

using linux_native::KernelFeatures;

inline KernelFeatures Everything() {
  KernelFeatures f;
  f.user_namespace = f.mount_namespace = f.pid_namespace = f.net_namespace = true;
  f.ipc_namespace = f.uts_namespace = f.proc_mount = f.mount_setattr = true;
  f.landlock_abi = 7;
  f.seccomp = f.pidfd = true;
  return f;
}

inline KernelFeatures NoNamespaces(int landlock_abi) {
  KernelFeatures f;
  f.landlock_abi = landlock_abi;
  f.seccomp = true;
  f.seccomp_listener = true;  // not inside another brokering sandbox
  f.mount_setattr = true;
  return f;
}

inline Config Default() { return Config{}; }  // workspace_write, network deny

inline PlanRequest Request() {
  PlanRequest r;
  r.argv = {"/bin/true"};
  r.workspace = "/usr";  // exists everywhere, canonical, holds no home
  r.caller_env = {"PATH=/usr/bin", "CORDON_CANARY_SECRET=x"};
  return r;
}

inline bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace cordon::plan::plan_test
