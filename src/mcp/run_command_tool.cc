#include "mcp/run_command_tool.h"

#include <fmt/format.h>

#include <cmath>
#include <utility>

#include "core/paths.h"
#include "report/json_report.h"
#include "report/run_outcome.h"

namespace cordon::mcp {

using nlohmann::json;

namespace {

Result<std::string> StringField(const json& args, const char* name, bool required) {
  const auto it = args.find(name);
  if (it == args.end() || it->is_null()) {
    if (required) return Fail(ErrorCode::kInvalidArgument, fmt::format("'{}' is required", name));
    return std::string();
  }
  if (!it->is_string()) {
    return Fail(ErrorCode::kInvalidArgument,
                fmt::format("'{}' must be a string, found {}", name, it->type_name()));
  }
  return it->get<std::string>();
}

std::string Seconds(std::chrono::milliseconds ms) {
  return fmt::format("{:g} s", static_cast<double>(ms.count()) / 1000.0);
}

void AppendStream(std::string& text, const char* name, const CapturedOutput& out) {
  if (out.total_bytes == 0) return;
  text += fmt::format("\n--- {} ---\n", name);
  text += out.data;
  if (!out.data.empty() && out.data.back() != '\n') text += '\n';
  if (out.truncated_bytes > 0) {
    text += fmt::format("[{} of {} bytes of {} were dropped from the middle]\n",
                        out.truncated_bytes, out.total_bytes, name);
  }
}

// What the sandbox refused during the run (the policy's and the limits' refusals are the
// headline already), so the model adapts instead of retrying.
void AppendDenials(std::string& text, const RunResult& result) {
  bool header = false;
  for (const Denial& d : result.denials) {
    if (d.layer == "policy" || d.layer == "limits") continue;
    if (!header) text += "--- refused or discarded by cordon's sandbox ---\n";
    header = true;
    text += report::DescribeDenial(d);
    text += '\n';
  }
}

}  // namespace

Result<RunCommandArgs> ParseRunCommandArgs(const json& arguments) {
  if (!arguments.is_object()) {
    return Fail(ErrorCode::kInvalidArgument, "arguments must be an object with a 'command'");
  }
  RunCommandArgs args;
  CORDON_TRY(args.command, StringField(arguments, "command", true));
  if (args.command.find_first_not_of(" \t\r\n") == std::string::npos) {
    return Fail(ErrorCode::kInvalidArgument, "'command' is empty");
  }
  if (args.command.find('\0') != std::string::npos) {
    return Fail(ErrorCode::kInvalidArgument, "'command' contains a NUL byte");
  }
  CORDON_TRY(args.cwd, StringField(arguments, "cwd", false));
  CORDON_TRY(args.justification, StringField(arguments, "justification", false));
  if (const auto t = arguments.find("timeout_seconds"); t != arguments.end() && !t->is_null()) {
    if (!t->is_number() || !std::isfinite(t->get<double>()) || !(t->get<double>() > 0)) {
      return Fail(ErrorCode::kInvalidArgument,
                  fmt::format("'timeout_seconds' must be a number > 0, found {}", t->dump()));
    }
    args.timeout_seconds = t->get<double>();
  }
  if (const auto o = arguments.find("outside_sandbox"); o != arguments.end() && !o->is_null()) {
    if (!o->is_boolean()) {
      return Fail(ErrorCode::kInvalidArgument,
                  fmt::format("'outside_sandbox' must be a boolean, found {}", o->type_name()));
    }
    args.outside_sandbox = o->get<bool>();
  }
  if (args.outside_sandbox &&
      args.justification.find_first_not_of(" \t\r\n") == std::string::npos) {
    return Fail(ErrorCode::kInvalidArgument,
                "'justification' is required with outside_sandbox: say why the command cannot "
                "run inside the sandbox");
  }
  return args;
}

Result<CommandRequest> BuildCommandRequest(const RunCommandArgs& args,
                                           const std::filesystem::path& workspace,
                                           std::chrono::milliseconds max_timeout) {
  CommandRequest request;
  request.shell_text = args.command;
  request.cwd = workspace;
  if (!args.cwd.empty()) {
    std::filesystem::path wanted(args.cwd);
    if (wanted.is_relative()) wanted = workspace / wanted;
    Result<std::filesystem::path> canonical = core::Canonical(wanted);
    if (!canonical) {
      return Fail(ErrorCode::kInvalidArgument,
                  fmt::format("cwd '{}' does not exist inside the workspace {}", args.cwd,
                              workspace.string()));
    }
    // Checked after resolving symlinks: a link inside the workspace pointing out is outside.
    if (!core::IsWithin(*canonical, workspace)) {
      return Fail(ErrorCode::kInvalidArgument,
                  fmt::format("cwd '{}' resolves to {}, outside the workspace {}", args.cwd,
                              canonical->string(), workspace.string()));
    }
    request.cwd = *canonical;
  }
  request.timeout = max_timeout;
  if (args.timeout_seconds) {
    const double wanted_ms = *args.timeout_seconds * 1000.0;
    if (wanted_ms < static_cast<double>(max_timeout.count())) {
      request.timeout = std::chrono::milliseconds(
          std::max<std::int64_t>(1, static_cast<std::int64_t>(std::llround(wanted_ms))));
    }
  }
  return request;
}

std::pair<std::string, std::string> RunOutcome(const RunResult& r,
                                               std::chrono::milliseconds timeout) {
  switch (r.status) {
    case RunStatus::kExited:
      if (!r.error.empty()) return {fmt::format("exit code {}: {}", r.exit_code, r.error), r.error};
      return {fmt::format("exit code {}", r.exit_code), r.error};
    case RunStatus::kSignaled:
      return {fmt::format("killed by signal {}", r.signal),
              fmt::format("the command was killed by signal {}", r.signal)};
    case RunStatus::kTimedOut: {
      std::string reason = fmt::format(
          "timed out after {}: cordon killed every process of the command", Seconds(timeout));
      return {reason, reason};
    }
    case RunStatus::kDenied: {
      std::string reason = r.decision.reason.empty() ? std::string("refused") : r.decision.reason;
      return {fmt::format("NOT RUN: denied [{}]: {}", r.decision.rule_id, reason), reason};
    }
    case RunStatus::kSetupFailed:
      return {fmt::format("NOT RUN: cordon could not set up the sandbox: {}", r.error), r.error};
  }
  return {"unknown status", ""};
}

json ToolResultFromRun(const RunResult& result, std::string_view command, bool outside_sandbox,
                       std::chrono::milliseconds timeout) {
  auto [headline, reason] = RunOutcome(result, timeout);
  std::string text = fmt::format("$ {}\n{}{} ({:.0f} ms)\n", command, headline,
                                 outside_sandbox ? ", run OUTSIDE the sandbox" : "",
                                 static_cast<double>(result.duration.count()) / 1000.0);
  AppendStream(text, "stdout", result.stdout_data);
  AppendStream(text, "stderr", result.stderr_data);
  AppendDenials(text, result);

  json structured = report::RunResultToJson(result);
  structured["truncated"] = result.stdout_data.truncated_bytes + result.stderr_data.truncated_bytes;
  structured["reason"] = reason;
  structured["outside_sandbox"] = outside_sandbox;
  const bool ok = result.status == RunStatus::kExited && result.exit_code == 0;
  return json{{"content", json::array({{{"type", "text"}, {"text", std::move(text)}}})},
              {"structuredContent", std::move(structured)},
              {"isError", !ok}};
}

json ToolErrorResult(std::string_view text) {
  return json{{"content", json::array({{{"type", "text"}, {"text", std::string(text)}}})},
              {"isError", true}};
}

RunResult RefusedEscape(std::string_view why, std::string reason) {
  RunResult result;
  result.status = RunStatus::kDenied;
  result.decision.verdict = Verdict::kDeny;
  result.decision.rule_id = fmt::format("outside_sandbox.{}", why);
  result.decision.reason = std::move(reason);
  return result;
}

}  // namespace cordon::mcp
