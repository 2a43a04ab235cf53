#include "mcp/background_tools.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>

#include "config/validate.h"
#include "mcp/lifecycle.h"
#include "mcp/run_command_tool.h"
#include "mcp/tool_schema.h"

namespace cordon::mcp {

using nlohmann::json;

namespace {

// A background command's own deadline when it names none: the longest a configuration may set.
constexpr std::chrono::milliseconds kBackgroundTimeout{
    static_cast<std::int64_t>(config::kMaxTimeoutSeconds * 1000)};
// How long start_background waits for the command to end, so that a refusal, a failed set-up
// or an immediate exit (a port in use, a typo) is the answer itself.
constexpr std::chrono::milliseconds kSettle{300};
constexpr double kMaxWaitSeconds = 60;

json OutputSchema() {
  return json{
      {"type", "object"},
      {"properties",
       {{"id", {{"type", "string"}}},
        {"command", {{"type", "string"}}},
        {"running", {{"type", "boolean"}}},
        {"status",
         {{"type", "string"},
          {"description",
           "running, stopping, stopped, exited, signaled, timed_out, denied or setup_failed"}}},
        {"exit_code", {{"type", {"integer", "null"}}, {"description", "Once it exited"}}},
        {"stdout", {{"type", "string"}, {"description", "Output since the last read"}}},
        {"stderr", {{"type", "string"}, {"description", "Output since the last read"}}},
        {"dropped_bytes",
         {{"type", "integer"},
          {"description", "Unread output dropped (the oldest first) since the last read"}}},
        {"reason",
         {{"type", "string"}, {"description", "Why it was refused or failed; empty otherwise"}}}}},
      {"required", json::array({"id", "running", "status", "stdout", "stderr"})}};
}

json IdSchema() {
  return {{"type", "string"},
          {"description", "The id start_background returned (bg-1, bg-2, ...)."}};
}

json Entry(std::string_view name, std::string_view title, std::string description,
           json input_schema, bool read_only, std::string_view protocol_version) {
  json tool = {{"name", std::string(name)},
               {"description", std::move(description)},
               {"inputSchema", std::move(input_schema)}};
  if (VersionAtLeast(protocol_version, "2025-03-26")) {
    tool["annotations"] = {{"title", std::string(title)},
                           {"readOnlyHint", read_only},
                           {"destructiveHint", !read_only},
                           {"idempotentHint", false},
                           {"openWorldHint", false}};
  }
  if (VersionAtLeast(protocol_version, "2025-06-18")) {
    tool["title"] = std::string(title);
    tool["outputSchema"] = OutputSchema();
  }
  return tool;
}

std::string StatusName(const BackgroundJobs::Report& report) {
  if (report.running) return report.stopped ? "stopping" : "running";
  if (report.stopped) return "stopped";
  return RunStatusName(report.result->status);
}

bool Failed(const BackgroundJobs::Report& report) {
  if (report.running) return report.stopped;  // a stop that did not end it in time
  if (report.stopped) return false;
  return report.result->status != RunStatus::kExited || report.result->exit_code != 0;
}

void AppendOutput(std::string& text, const char* name, const std::string& data) {
  if (data.empty()) return;
  text += fmt::format("--- {} (new) ---\n{}", name, data);
  if (data.back() != '\n') text += '\n';
}

json ReportResult(const BackgroundJobs::Report& report, std::string headline) {
  std::string reason;
  std::string text = fmt::format("{} `{}`: ", report.id, report.command);
  if (report.running && report.stopped) {
    text += "stop requested, but it has not ended yet; read it again";
  } else if (report.running) {
    text += "running";
  } else if (report.stopped) {
    text += "stopped: cordon killed every process of the command";
  } else {
    auto [line, why] = RunOutcome(*report.result, report.timeout);
    text += line;
    reason = std::move(why);
  }
  text += '\n';
  if (!headline.empty()) text += headline + '\n';
  AppendOutput(text, "stdout", report.stdout_text);
  AppendOutput(text, "stderr", report.stderr_text);
  if (report.dropped_bytes > 0) {
    text += fmt::format("[{} bytes of unread output were dropped, the oldest first]\n",
                        report.dropped_bytes);
  }
  json structured = {{"id", report.id},
                     {"command", report.command},
                     {"running", report.running},
                     {"status", StatusName(report)},
                     {"exit_code", nullptr},
                     {"stdout", report.stdout_text},
                     {"stderr", report.stderr_text},
                     {"dropped_bytes", report.dropped_bytes},
                     {"reason", reason}};
  if (!report.running && !report.stopped && report.result->status == RunStatus::kExited) {
    structured["exit_code"] = report.result->exit_code;
  }
  return json{{"content", json::array({{{"type", "text"}, {"text", std::move(text)}}})},
              {"structuredContent", std::move(structured)},
              {"isError", Failed(report)}};
}

Result<std::string> IdArgument(const json& arguments) {
  const auto id = arguments.find("id");
  if (id == arguments.end() || !id->is_string() || id->get_ref<const std::string&>().empty()) {
    return Fail(ErrorCode::kInvalidArgument,
                "'id' (a string: the id start_background returned) is required");
  }
  return id->get<std::string>();
}

json StartCall(const json& arguments, BackgroundJobs& jobs, const CommandRunner& runner) {
  Result<RunCommandArgs> args = ParseRunCommandArgs(arguments);
  if (!args) {
    return ToolErrorResult(
        fmt::format("Invalid start_background arguments: {}", args.error().message));
  }
  if (args->outside_sandbox) {
    return ToolErrorResult(
        "Not run: a background command always runs in the sandbox (outside_sandbox is only for "
        "run_command)");
  }
  Result<CommandRequest> request =
      BuildCommandRequest(*args, runner.Workspace(), kBackgroundTimeout);
  if (!request) return ToolErrorResult(fmt::format("Not run: {}", request.error().message));
  Result<BackgroundJobs::Report> started = jobs.Start(*std::move(request), args->command, kSettle);
  if (!started) return ToolErrorResult(fmt::format("Not run: {}", started.error().message));
  std::string headline;
  if (started->running) {
    headline = fmt::format(
        "Started in the background. Read its output with read_background (id {0}), stop it "
        "with stop_background (id {0}); it runs until then, its timeout or the session's end.",
        started->id);
  }
  return ReportResult(*started, std::move(headline));
}

json ReadCall(const json& arguments, BackgroundJobs& jobs, const CancelToken& cancel) {
  Result<std::string> id = IdArgument(arguments);
  if (!id) {
    return ToolErrorResult(
        fmt::format("Invalid read_background arguments: {}", id.error().message));
  }
  double wait_seconds = 0;
  if (const auto w = arguments.find("wait_seconds"); w != arguments.end() && !w->is_null()) {
    if (!w->is_number() || !std::isfinite(w->get<double>()) || w->get<double>() < 0) {
      return ToolErrorResult(fmt::format(
          "Invalid read_background arguments: 'wait_seconds' must be a number >= 0, found {}",
          w->dump()));
    }
    wait_seconds = std::min(w->get<double>(), kMaxWaitSeconds);
  }
  const auto wait = std::chrono::milliseconds(std::llround(wait_seconds * 1000.0));
  Result<BackgroundJobs::Report> report = jobs.Read(*id, wait, cancel);
  if (!report) return ToolErrorResult(report.error().message);
  return ReportResult(*report, "");
}

json StopCall(const json& arguments, BackgroundJobs& jobs) {
  Result<std::string> id = IdArgument(arguments);
  if (!id) {
    return ToolErrorResult(
        fmt::format("Invalid stop_background arguments: {}", id.error().message));
  }
  Result<BackgroundJobs::Report> report = jobs.Stop(*id);
  if (!report) return ToolErrorResult(report.error().message);
  return ReportResult(*report, "");
}

}  // namespace

bool IsBackgroundTool(std::string_view name) {
  return name == kStartBackgroundTool || name == kReadBackgroundTool || name == kStopBackgroundTool;
}

std::string LoopbackNote(const Capabilities& sandbox) {
  if (sandbox.network == NetworkPolicy::kAllow) {
    return "Commands use the host's network: a server started here listens on the host, "
           "reachable from later commands and from outside.";
  }
  // A process limit held by RLIMIT_NPROC (no pids cgroup) runs each command in a user
  // namespace, and so a network namespace, of its own (zygote_slot.cc).
  const bool own_namespaces =
      std::any_of(sandbox.limits.begin(), sandbox.limits.end(), [](const LimitEnforcement& l) {
        return l.name == "processes" && l.value > 0 && l.mechanism.starts_with("RLIMIT");
      });
  if (sandbox.backend == "native" && sandbox.enforcement.net_namespace && !own_namespaces) {
    return "This session's commands share one private network namespace: a server started "
           "here is reachable from later commands (127.0.0.1), never from the host or another "
           "session.";
  }
  return "Each command has its own private loopback here: a server started in one command is "
         "not reachable from the next; run the server and its client in one command.";
}

json BackgroundTools(const Capabilities& sandbox, std::string_view protocol_version) {
  json start_schema = RunCommandInputSchema();
  start_schema["properties"].erase("outside_sandbox");
  start_schema["properties"].erase("justification");
  start_schema["properties"]["timeout_seconds"]["description"] =
      "Optional wall-clock limit; without it the command runs until stop_background or the "
      "session's end.";
  json read_schema = {
      {"type", "object"},
      {"properties",
       {{"id", IdSchema()},
        {"wait_seconds",
         {{"type", "number"},
          {"minimum", 0},
          {"maximum", kMaxWaitSeconds},
          {"description",
           "Wait up to this long for new output or the command's end (default 0: answer at "
           "once)."}}}}},
      {"required", json::array({"id"})}};
  json stop_schema = {
      {"type", "object"}, {"properties", {{"id", IdSchema()}}}, {"required", json::array({"id"})}};
  return json::array(
      {Entry(kStartBackgroundTool, "Start a command in the background (sandboxed)",
             "Start a shell command (/bin/sh -c) in the background, in the same sandbox and "
             "under the same command policy as run_command, and return its id at once: for dev "
             "servers, watchers and other commands that keep running. " +
                 LoopbackNote(sandbox) + " Up to 8 run at once; all end with the session.",
             std::move(start_schema), false, protocol_version),
       Entry(kReadBackgroundTool, "Read a background command's output",
             "Return what a background command wrote since the last read, and whether it still "
             "runs (its exit code once it ended).",
             std::move(read_schema), true, protocol_version),
       Entry(kStopBackgroundTool, "Stop a background command",
             "Stop a background command: kill every process it started, and return its last "
             "output.",
             std::move(stop_schema), false, protocol_version)});
}

json BackgroundCall(std::string_view name, const json& arguments, BackgroundJobs& jobs,
                    const CommandRunner& runner, const CancelToken& cancel) {
  if (name == kStartBackgroundTool) return StartCall(arguments, jobs, runner);
  if (name == kReadBackgroundTool) return ReadCall(arguments, jobs, cancel);
  return StopCall(arguments, jobs);
}

}  // namespace cordon::mcp
