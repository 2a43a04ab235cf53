#include "mcp/tool_schema.h"

#include <fmt/format.h>

#include <string>

#include "mcp/lifecycle.h"

namespace cordon::mcp {

using nlohmann::json;

json RunCommandInputSchema() {
  return json{
      {"type", "object"},
      {"properties",
       {{"command",
         {{"type", "string"},
          {"description",
           "Shell text, run as /bin/sh -c COMMAND (pipes, &&, redirections work)."}}},
        {"cwd",
         {{"type", "string"},
          {"description",
           "Working directory: relative to the workspace, or an absolute path inside it. "
           "Default: the workspace."}}},
        {"timeout_seconds",
         {{"type", "number"},
          {"exclusiveMinimum", 0},
          {"description",
           "Wall-clock limit; the command's whole process tree is killed when it passes. "
           "Capped by the configured timeout."}}},
        {"outside_sandbox",
         {{"type", "boolean"},
          {"description",
           "Ask a person to approve running this one command without the OS sandbox (the "
           "command policy still applies). Only when the sandbox blocks something the task "
           "really needs; requires justification."}}},
        {"justification",
         {{"type", "string"},
          {"description",
           "Required with outside_sandbox: why the command must run outside the sandbox, shown "
           "to the person who approves it."}}}}},
      {"required", json::array({"command"})}};
}

json RunCommandOutputSchema() {
  return json{
      {"type", "object"},
      {"properties",
       {{"status",
         {{"type", "string"},
          {"description", "exited, signaled, timed_out, denied or setup_failed"}}},
        {"exit_code",
         {{"type", "integer"},
          {"description",
           "The command's exit code; 124 timed out, 125 not set up, 126 denied, 128+N signal N"}}},
        {"stdout", {{"type", "string"}}},
        {"stderr", {{"type", "string"}}},
        {"timed_out", {{"type", "boolean"}}},
        {"denied", {{"type", "boolean"}, {"description", "The command did not run: refused"}}},
        {"truncated",
         {{"type", "integer"},
          {"description", "Output bytes dropped from the middle (both streams)"}}},
        {"reason",
         {{"type", "string"}, {"description", "Why it was denied or failed; empty otherwise"}}},
        {"outside_sandbox", {{"type", "boolean"}}},
        {"duration_ms", {{"type", "number"}}},
        {"decision", {{"type", "object"}}},
        {"denials",
         {{"type", "array"},
          {"description",
           "What cordon refused during the run, each with kind, target, layer, rule and fix "
           "(docs/denials.md)"},
          {"items", {{"type", "object"}}}}},
        {"enforcement", {{"type", "object"}}}}},
      {"required", json::array({"status", "exit_code", "stdout", "stderr", "timed_out", "denied",
                                "truncated", "reason"})}};
}

json RunCommandTool(const Capabilities& sandbox, std::string_view protocol_version) {
  std::string description = fmt::format(
      "Run a shell command (/bin/sh -c) in the workspace, behind cordon's command policy and "
      "OS sandbox (mode {}, network {}). Returns the exit code, stdout and stderr. A refused "
      "command comes back as a result saying why; adapt instead of retrying it unchanged.",
      SandboxModeName(sandbox.mode), NetworkPolicyName(sandbox.network));
  if (!sandbox.can_run())
    description += " This machine cannot enforce the sandbox: every command is refused.";
  json tool = {{"name", std::string(kRunCommandTool)},
               {"description", std::move(description)},
               {"inputSchema", RunCommandInputSchema()}};
  if (VersionAtLeast(protocol_version, "2025-03-26")) {
    tool["annotations"] = {{"title", "Run a shell command in cordon's sandbox"},
                           {"readOnlyHint", false},
                           {"destructiveHint", true},
                           {"idempotentHint", false},
                           {"openWorldHint", sandbox.network == NetworkPolicy::kAllow}};
  }
  if (VersionAtLeast(protocol_version, "2025-06-18")) {
    tool["title"] = "Run command (sandboxed)";
    tool["outputSchema"] = RunCommandOutputSchema();
  }
  return tool;
}

}  // namespace cordon::mcp
