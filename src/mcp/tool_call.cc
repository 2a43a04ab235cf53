// Server::RunCommandCall: one run_command call on its worker thread, from arguments to the
// CallToolResult: validate, ask the person when the model wants to leave the sandbox, run with
// progress, format.
#include <fmt/format.h>

#include <mutex>
#include <shared_mutex>

#include "mcp/elicitation.h"
#include "mcp/progress.h"
#include "mcp/run_command_tool.h"
#include "mcp/server.h"

namespace cordon::mcp {

using nlohmann::json;

json Server::RunCommandCall(const json& arguments, const json& progress_token,
                            const CancelToken& cancel) {
  Result<RunCommandArgs> args = ParseRunCommandArgs(arguments);
  if (!args)
    return ToolErrorResult(fmt::format("Invalid run_command arguments: {}", args.error().message));
  Result<CommandRequest> request =
      BuildCommandRequest(*args, runner_.Workspace(), runner_.MaxTimeout());
  if (!request) return ToolErrorResult(fmt::format("Not run: {}", request.error().message));
  const std::chrono::milliseconds timeout = request->timeout.value_or(runner_.MaxTimeout());

  bool outside = false;
  if (args->outside_sandbox && sandbox_.mode != SandboxMode::kOff) {
    EscapeApproval approval;
    if (!runner_.AllowsOutsideSandbox()) {
      approval = {false, "disabled",
                  "running commands outside the sandbox is turned off in cordon's configuration "
                  "(sandbox.allow_outside_sandbox)"};
    } else if (!client_.elicitation_form) {
      approval = {false, "unsupported",
                  "this MCP client cannot ask a person for approval (no elicitation capability)"};
    } else {
      ElicitationContext context{sink_, pending_, protocol_version_, options_.elicitation_timeout};
      approval = AskEscapeApproval(context, args->command, args->justification,
                                   request->cwd.string(), cancel);
    }
    if (!approval.approved) {
      LogToClient("notice",
                  fmt::format("outside_sandbox refused ({}): {}", approval.why, args->command));
      return ToolResultFromRun(
          RefusedEscape(approval.why,
                        fmt::format("Not run outside the sandbox: {}. Nothing ran. Run it inside "
                                    "the sandbox (without outside_sandbox) or change approach.",
                                    approval.reason)),
          args->command, false, timeout);
    }
    LogToClient("warning",
                fmt::format("a person approved running outside the sandbox: {}", args->command));
    outside = true;
  }

  std::shared_lock<std::shared_mutex> worktree_guard;
  if (options_.commit_root) worktree_guard = std::shared_lock(worktree_lock_);
  RunResult result;
  if (progress_token.is_null()) {
    result = runner_.Run(*request, outside, cancel, {});
  } else {
    ProgressReporter progress(sink_, progress_token, options_.progress_interval);
    result = runner_.Run(*request, outside, cancel, progress.Callback());
    progress.Finish();
  }
  return ToolResultFromRun(result, args->command, outside, timeout);
}

}  // namespace cordon::mcp
