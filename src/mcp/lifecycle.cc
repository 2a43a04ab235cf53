#include "mcp/lifecycle.h"

#include <fmt/format.h>

#include <algorithm>

#include "report/json_report.h"

namespace cordon::mcp {

using nlohmann::json;

std::string NegotiateVersion(const json& requested) {
  if (requested.is_string()) {
    const auto& text = requested.get_ref<const std::string&>();
    if (std::ranges::find(kSupportedProtocolVersions, text) != kSupportedProtocolVersions.end()) {
      return text;
    }
  }
  return std::string(kLatestProtocolVersion);
}

ClientFeatures ReadClientFeatures(const json& params, std::string_view version) {
  ClientFeatures features;
  if (!params.is_object()) return features;
  if (const auto info = params.find("clientInfo"); info != params.end() && info->is_object()) {
    if (const auto name = info->find("name"); name != info->end() && name->is_string()) {
      features.name = name->get<std::string>();
    }
  }
  const auto caps = params.find("capabilities");
  if (caps == params.end() || !caps->is_object()) return features;
  const auto elicitation = caps->find("elicitation");
  // Elicitation exists since 2025-06-18. From 2025-11-25 the capability lists its modes
  // ("form", "url"); an empty object still means form, for clients of the earlier revision.
  if (elicitation != caps->end() && elicitation->is_object() &&
      VersionAtLeast(version, "2025-06-18")) {
    features.elicitation_form = elicitation->empty() || elicitation->contains("form");
  }
  return features;
}

std::string Instructions(const Capabilities& sandbox) {
  std::string text = fmt::format(
      "cordon runs shell commands for you through one tool, run_command (/bin/sh -c TEXT, in "
      "the workspace or a cwd inside it). Every command first passes a command policy (some "
      "commands, such as sudo or piping downloads into a shell, are refused with the reason), "
      "then runs in an OS sandbox: mode {}, network {}.",
      SandboxModeName(sandbox.mode), NetworkPolicyName(sandbox.network));
  if (sandbox.mode == SandboxMode::kWorkspaceWrite) {
    text += " Writes are allowed only in the workspace and a private temporary directory;";
    text += " .git metadata may be read-only.";
  } else if (sandbox.mode == SandboxMode::kReadOnly) {
    text += " Nothing outside a private temporary directory is writable.";
  } else {
    text += " WARNING: mode off, commands are not confined.";
  }
  if (sandbox.network == NetworkPolicy::kDeny) {
    text += " Network access is off: downloads and package installs fail.";
  } else if (sandbox.network == NetworkPolicy::kDomains) {
    text += " Only the host names the user's configuration lists can be reached.";
  }
  text +=
      " If a command truly needs to run outside the sandbox, set outside_sandbox with a "
      "justification: a person is asked to approve that one command.";
  if (!sandbox.can_run()) {
    text += " cordon cannot run commands here, so every command is refused until this is fixed: ";
    for (const std::string& m : sandbox.missing) text += m + "; ";
  }
  return text;
}

json InitializeResult(std::string_view version, std::string_view server_version,
                      const Capabilities& sandbox) {
  json capabilities = {
      {"tools", {{"listChanged", false}}},
      {"logging", json::object()},
      {"experimental", {{"cordon/sandbox", report::CapabilitiesToJson(sandbox)}}},
  };
  return json{
      {"protocolVersion", std::string(version)},
      {"capabilities", std::move(capabilities)},
      {"serverInfo",
       {{"name", "cordon"}, {"title", "cordon sandbox"}, {"version", std::string(server_version)}}},
      {"instructions", Instructions(sandbox)}};
}

}  // namespace cordon::mcp
