#include "mcp/server.h"

#include <fmt/format.h>

#include <array>
#include <cstdio>
#include <exception>
#include <utility>

#include "mcp/background_tools.h"
#include "mcp/git_commit_tool.h"
#include "mcp/run_command_tool.h"
#include "mcp/tool_schema.h"

namespace cordon::mcp {

using nlohmann::json;

namespace {

// RFC 5424 severities, as MCP's logging uses them, least severe first.
constexpr std::array<std::string_view, 8> kLogLevels = {"debug", "info",     "notice", "warning",
                                                        "error", "critical", "alert",  "emergency"};

int LogLevelIndex(std::string_view level) {
  for (std::size_t i = 0; i < kLogLevels.size(); ++i) {
    if (kLogLevels[i] == level) return static_cast<int>(i);
  }
  return -1;
}

// A progress token is a string or an integer, like an id.
json ProgressToken(const json& params) {
  const auto meta = params.find("_meta");
  if (meta == params.end() || !meta->is_object()) return nullptr;
  const auto token = meta->find("progressToken");
  if (token == meta->end() || !IsValidId(*token)) return nullptr;
  return *token;
}

// Without structured output a tool entry loses its outputSchema (the spec requires
// structuredContent from a tool that declares one) and a result its structuredContent.
void DropStructured(json& value, std::string_view key) {
  if (value.is_object()) value.erase(std::string(key));
}

}  // namespace

Server::Server(ServerOptions options, CommandRunner& runner, MessageSink& sink)
    : options_(std::move(options)),
      runner_(runner),
      sink_(sink),
      sandbox_(runner.GetCapabilities()),
      background_(runner, options_.commit_root ? &worktree_lock_ : nullptr),
      calls_(options_.max_calls_in_flight) {}

Server::~Server() { Shutdown(); }

void Server::HandleOversizedLine(std::size_t max_line_bytes) {
  sink_.Send(MakeError(
      nullptr, rpc_error::kInvalidRequest,
      fmt::format("Invalid Request: message longer than {} bytes; discarded", max_line_bytes)));
}

void Server::HandleLine(std::string_view line) {
  // Library code does not throw, but nlohmann and the allocator can: a failure while handling
  // one message must cost that message, never the server.
  json id = nullptr;
  try {
    Message message = ParseMessage(line);
    if (auto* request = std::get_if<Request>(&message)) {
      id = request->id;
      Dispatch(*request);
    } else if (auto* notification = std::get_if<Notification>(&message)) {
      OnNotification(*notification);
    } else if (auto* response = std::get_if<Response>(&message)) {
      // Replies to our elicitation requests; a late or unknown one is dropped.
      if (!response->id.is_null()) pending_.Deliver(std::move(*response));
    } else {
      const auto& error = std::get<ErrorReply>(message);
      sink_.Send(MakeError(error.id, error.code, error.message));
    }
  } catch (const std::exception& e) {
    sink_.Send(
        MakeError(id, rpc_error::kInternalError, fmt::format("Internal error: {}", e.what())));
  }
}

void Server::Dispatch(const Request& request) {
  const std::string& method = request.method;
  const json params = request.params.is_null() ? json::object() : request.params;
  if (method == "ping") {
    sink_.Send(MakeResult(request.id, json::object()));
    return;
  }
  if (method == "initialize") {
    if (initialized_.load()) {
      sink_.Send(MakeError(request.id, rpc_error::kInvalidRequest,
                           "Invalid Request: initialize was already done"));
      return;
    }
    sink_.Send(MakeResult(request.id, Initialize(params)));
    return;
  }
  if (!initialized_.load()) {
    sink_.Send(MakeError(request.id, rpc_error::kInvalidRequest,
                         fmt::format("Invalid Request: '{}' before initialize", method)));
    return;
  }
  if (method == "tools/list") {
    json tools = json::array({RunCommandTool(sandbox_, protocol_version_)});
    for (json& tool : BackgroundTools(sandbox_, protocol_version_))
      tools.push_back(std::move(tool));
    if (options_.commit_root) tools.push_back(GitCommitTool(protocol_version_));
    if (!options_.structured_output) {
      for (json& tool : tools) DropStructured(tool, "outputSchema");
    }
    sink_.Send(MakeResult(request.id, {{"tools", std::move(tools)}}));
  } else if (method == "tools/call") {
    CallTool(request);
  } else if (method == "logging/setLevel") {
    const auto level = params.find("level");
    const int index =
        level != params.end() && level->is_string() ? LogLevelIndex(level->get<std::string>()) : -1;
    if (index < 0) {
      sink_.Send(MakeError(request.id, rpc_error::kInvalidParams,
                           "Invalid params: level must be one of debug, info, notice, warning, "
                           "error, critical, alert, emergency"));
      return;
    }
    log_level_.store(index);
    sink_.Send(MakeResult(request.id, json::object()));
  } else if (method == "resources/list" || method == "prompts/list" ||
             method == "resources/templates/list") {
    // Not advertised in capabilities; some clients ask anyway. Method-not-found is the
    // documented answer for an unsupported capability.
    sink_.Send(MakeError(request.id, rpc_error::kMethodNotFound,
                         fmt::format("Method not found: {} (cordon offers tools only)", method)));
  } else {
    sink_.Send(MakeError(request.id, rpc_error::kMethodNotFound,
                         fmt::format("Method not found: {}", method)));
  }
}

json Server::Initialize(const json& params) {
  const auto requested = params.find("protocolVersion");
  protocol_version_ = NegotiateVersion(requested != params.end() ? *requested : json());
  client_ = ReadClientFeatures(params, protocol_version_);
  initialized_.store(true);
  fmt::print(stderr, "cordon mcp: client '{}' connected, protocol {}, elicitation {}\n",
             client_.name, protocol_version_, client_.elicitation_form ? "yes" : "no");
  return InitializeResult(protocol_version_, options_.server_version, sandbox_);
}

void Server::OnNotification(const Notification& notification) {
  if (notification.method == "notifications/cancelled") {
    const json& params = notification.params;
    if (!params.is_object()) return;
    const auto id = params.find("requestId");
    if (id != params.end() && IsValidId(*id)) calls_.Cancel(IdKey(*id));
  }
  // notifications/initialized, notifications/progress, notifications/roots/list_changed and
  // unknown notifications need nothing from cordon; notifications are never answered.
}

void Server::LogToClient(std::string_view level, std::string_view text) {
  fmt::print(stderr, "cordon mcp: {}\n", text);
  const int threshold = log_level_.load();
  if (threshold < 0 || LogLevelIndex(level) < threshold) return;
  sink_.Send(MakeNotification(
      "notifications/message",
      {{"level", std::string(level)}, {"logger", "cordon"}, {"data", std::string(text)}}));
}

void Server::CallTool(const Request& request) {
  const json& params = request.params;
  if (!params.is_object() || !params.contains("name") || !params["name"].is_string()) {
    sink_.Send(MakeError(request.id, rpc_error::kInvalidParams,
                         "Invalid params: tools/call needs a string 'name'"));
    return;
  }
  const std::string name = params["name"].get<std::string>();
  const bool git_commit = name == kGitCommitTool && options_.commit_root.has_value();
  const bool background = IsBackgroundTool(name);
  if (name != kRunCommandTool && !git_commit && !background) {
    sink_.Send(
        MakeError(request.id, rpc_error::kInvalidParams, fmt::format("Unknown tool: {}", name)));
    return;
  }
  json arguments = params.contains("arguments") ? params["arguments"] : json::object();
  if (!arguments.is_object()) {
    sink_.Send(MakeError(request.id, rpc_error::kInvalidParams,
                         "Invalid params: tools/call 'arguments' must be an object"));
    return;
  }
  json token = ProgressToken(params);
  const json id = request.id;
  const auto status = calls_.Start(
      IdKey(id),
      [this, id, name, git_commit, background, arguments = std::move(arguments),
       token =
           std::move(token)](const std::shared_ptr<CancelToken>& cancel) -> CallsInFlight::Answer {
        json result;
        try {
          if (git_commit) {
            result = CommitCall(arguments, *cancel);
          } else if (background) {
            result = BackgroundCall(name, arguments, background_, runner_, *cancel);
          } else {
            result = RunCommandCall(arguments, token, *cancel);
          }
        } catch (const std::exception& e) {
          result = ToolErrorResult(fmt::format("cordon failed internally: {}", e.what()));
        }
        // A cancelled request gets no response: the client has already given up on it.
        if (cancel->cancelled()) return {};
        if (!options_.structured_output) DropStructured(result, "structuredContent");
        return [this, id, result = std::move(result)]() mutable {
          sink_.Send(MakeResult(id, std::move(result)));
        };
      });
  switch (status) {
    case CallsInFlight::StartStatus::kStarted:
      break;
    case CallsInFlight::StartStatus::kDuplicateId:
      sink_.Send(MakeError(id, rpc_error::kInvalidRequest,
                           "Invalid Request: a request with this id is still in progress"));
      break;
    case CallsInFlight::StartStatus::kTooMany:
      sink_.Send(MakeResult(
          id, ToolErrorResult(fmt::format("Not run: {} commands are already running; wait for "
                                          "one to finish and call again",
                                          options_.max_calls_in_flight))));
      break;
  }
}

json Server::CommitCall(const json& arguments, const CancelToken& cancel) {
  std::unique_lock lock(worktree_lock_, std::try_to_lock);
  if (lock.owns_lock()) return GitCommitCall(arguments, *options_.commit_root, cancel);
  const std::string background = background_.RunningList();
  if (!background.empty()) {
    return ToolErrorResult(fmt::format(
        "Not committed: background commands are running in the workspace ({}) and could change "
        "it while git reads it; stop them with stop_background, commit, then start them again",
        background));
  }
  return ToolErrorResult(
      "Not committed: a command is still running in the workspace; call git_commit again once "
      "it has finished");
}

bool Server::Shutdown() {
  calls_.CancelAll();
  pending_.Close();
  background_.StopAll();
  return calls_.WaitAll(options_.shutdown_grace);
}

}  // namespace cordon::mcp
