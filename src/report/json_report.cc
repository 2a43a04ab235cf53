#include "report/json_report.h"

namespace cordon::report {

using nlohmann::json;

json DecisionToJson(const Decision& decision) {
  json out = {{"verdict", decision.allowed() ? "allow" : "deny"},
              {"rule_id", decision.rule_id},
              {"reason", decision.reason},
              {"unparsed", decision.unparsed}};
  if (!decision.pattern.empty()) out["pattern"] = decision.pattern;
  if (!decision.matched_command.empty()) out["matched_command"] = decision.matched_command;
  return out;
}

json EnforcementToJson(const Enforcement& e) {
  return {{"backend", e.backend},
          {"filesystem", e.filesystem},
          {"network", e.network},
          {"layers",
           {{"user_namespace", e.user_namespace},
            {"mount_namespace", e.mount_namespace},
            {"pid_namespace", e.pid_namespace},
            {"net_namespace", e.net_namespace},
            {"ipc_namespace", e.ipc_namespace},
            {"landlock_abi", e.landlock_abi},
            {"seccomp", e.seccomp},
            {"capabilities_dropped", e.capabilities_dropped},
            {"no_new_privs", e.no_new_privs}}}};
}

json RunResultToJson(const RunResult& r) {
  json out = {{"status", RunStatusName(r.status)},
              {"exit_code", r.CliExitCode()},
              {"timed_out", r.status == RunStatus::kTimedOut},
              {"denied", r.status == RunStatus::kDenied},
              {"duration_ms", static_cast<double>(r.duration.count()) / 1000.0},
              {"stdout", r.stdout_data.data},
              {"stderr", r.stderr_data.data},
              {"stdout_bytes", r.stdout_data.total_bytes},
              {"stderr_bytes", r.stderr_data.total_bytes},
              {"stdout_truncated_bytes", r.stdout_data.truncated_bytes},
              {"stderr_truncated_bytes", r.stderr_data.truncated_bytes},
              {"decision", DecisionToJson(r.decision)},
              {"enforcement", EnforcementToJson(r.enforcement)}};
  if (r.status == RunStatus::kExited) out["command_exit_code"] = r.exit_code;
  if (r.status == RunStatus::kSignaled || r.status == RunStatus::kTimedOut) {
    out["signal"] = r.signal;
  }
  if (!r.error.empty()) out["error"] = r.error;
  out["limit"] = r.limit == RunLimit::kNone ? json(nullptr) : json(RunLimitName(r.limit));
  json reached = json::array();
  for (RunLimit limit : r.limits_reached) reached.push_back(RunLimitName(limit));
  out["limits_reached"] = std::move(reached);
  json denials = json::array();
  for (const Denial& d : r.denials) {
    denials.push_back({{"kind", d.kind},
                       {"target", d.target},
                       {"layer", d.layer},
                       {"rule", d.rule},
                       {"fix", d.fix}});
  }
  out["denials"] = std::move(denials);
  return out;
}

json LimitsToJson(const std::vector<LimitEnforcement>& limits) {
  json out = json::object();
  for (const LimitEnforcement& l : limits) {
    out[l.name] = {{"value", l.value},
                   {"enforced", l.enforced},
                   {"mechanism", l.mechanism.empty() ? json(nullptr) : json(l.mechanism)}};
  }
  return out;
}

json CapabilitiesToJson(const Capabilities& c) {
  return {{"mode", SandboxModeName(c.mode)},
          {"network", NetworkPolicyName(c.network)},
          {"domains", {{"allow", c.allowed_domains}, {"deny", c.denied_domains}}},
          {"parent_proxy", c.parent_proxy.empty() ? json(nullptr) : json(c.parent_proxy)},
          {"backend", c.backend},
          {"backend_reason", c.backend_reason},
          {"filesystem_enforced", c.filesystem_enforced},
          {"network_enforced", c.network_enforced},
          {"can_run", c.can_run()},
          {"missing", c.missing},
          {"unsupported", c.unsupported},
          {"host_run_files", c.host_run_files},
          {"nested_project_depth", c.nested_project_depth},
          {"home", HomeViewName(c.home)},
          {"readable_paths", c.readable_paths},
          {"tool_caches", ToolCachesName(c.tool_caches)},
          {"enforcement", EnforcementToJson(c.enforcement)},
          {"limits", LimitsToJson(c.limits)}};
}

std::string Dump(const json& value, int indent) {
  // Command output may be any bytes; invalid UTF-8 becomes U+FFFD instead of an exception.
  return value.dump(indent, ' ', false, json::error_handler_t::replace);
}

}  // namespace cordon::report
