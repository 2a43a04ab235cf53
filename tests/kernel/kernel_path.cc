#include "kernel_path.h"

#include <fmt/format.h>
#include <stdlib.h>

#include <string_view>
#include <type_traits>
#include <vector>

#include "config/to_json.h"
#include "support/host_files.h"
#include "support/mcp_client.h"
#include "support/run_binary.h"
#include "support/run_server.h"

extern char** environ;

namespace cordon::kernel_test {

using nlohmann::json;
using test_support::ReadFile;

namespace {

#ifdef CORDON_COMMAND_PATH
constexpr const char* kBuiltCordon = CORDON_COMMAND_PATH;
#else
constexpr const char* kBuiltCordon = nullptr;
#endif

// The caller's environment as the test process has it (a test may set a variable the
// configuration passes), with the run server's directory when `runtime` is given.
std::vector<std::string> CallerEnvironment(const std::filesystem::path& runtime) {
  std::vector<std::string> env;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    const std::string_view variable(*entry);
    if (variable.starts_with("XDG_RUNTIME_DIR=") || variable.starts_with("HOME=")) continue;
    env.emplace_back(variable);
  }
  // Without HOME (a test may unset it), cordon takes the home from the password database.
  if (const char* home = ::getenv("HOME")) env.push_back(std::string("HOME=") + home);
  if (!runtime.empty()) env.push_back("XDG_RUNTIME_DIR=" + runtime.string());
  return env;
}

RunStatus StatusNamed(const std::string& name) {
  for (RunStatus status : {RunStatus::kExited, RunStatus::kSignaled, RunStatus::kTimedOut,
                           RunStatus::kDenied, RunStatus::kSetupFailed}) {
    if (name == RunStatusName(status)) return status;
  }
  return RunStatus::kSetupFailed;
}

RunLimit LimitNamed(const std::string& name) {
  for (RunLimit limit : {RunLimit::kTimeout, RunLimit::kOutput, RunLimit::kMemory,
                         RunLimit::kProcesses, RunLimit::kCpu}) {
    if (name == RunLimitName(limit)) return limit;
  }
  return RunLimit::kNone;
}

// `object[key]` when it has that type, else `otherwise` (a field may be null or missing).
template <typename T>
T Field(const json& object, const std::string& key, T otherwise) {
  const auto found = object.find(key);
  if (found == object.end()) return otherwise;
  if constexpr (std::is_same_v<T, bool>) {
    return found->is_boolean() ? found->get<bool>() : otherwise;
  } else if constexpr (std::is_arithmetic_v<T>) {
    return found->is_number() ? found->get<T>() : otherwise;
  } else if constexpr (std::is_same_v<T, json>) {
    return found->type() == otherwise.type() ? *found : otherwise;
  } else {
    return found->is_string() ? found->get<std::string>() : otherwise;
  }
}

CapturedOutput Output(const json& object, const std::string& stream) {
  CapturedOutput out;
  out.data = Field(object, stream, std::string());
  out.total_bytes = Field(object, stream + "_bytes", std::uint64_t{0});
  out.truncated_bytes = Field(object, stream + "_truncated_bytes", std::uint64_t{0});
  return out;
}

RunResult SetupFailure(std::string why) {
  RunResult result;
  result.status = RunStatus::kSetupFailed;
  result.error = std::move(why);
  return result;
}

std::optional<double> Seconds(std::optional<std::chrono::milliseconds> timeout) {
  if (!timeout) return std::nullopt;
  return static_cast<double>(timeout->count()) / 1000.0;
}

}  // namespace

KernelPath TestKernelPath() {
  const char* value = ::getenv("CORDON_KERNEL_PATH");
  const std::string name = value != nullptr ? value : "";
  if (name == "server") return KernelPath::kServer;
  if (name == "mcp") return KernelPath::kMcp;
  return KernelPath::kLibrary;
}

const char* KernelPathName(KernelPath path) {
  switch (path) {
    case KernelPath::kServer:
      return "server";
    case KernelPath::kMcp:
      return "mcp";
    case KernelPath::kLibrary:
      break;
  }
  return "library";
}

std::string SuiteCordonBinary() {
  if (const char* staged = ::getenv("CORDON_BIN"); staged != nullptr && staged[0] != '\0') {
    return staged;
  }
  return kBuiltCordon != nullptr ? kBuiltCordon : "";
}

RunResult RunResultFromJson(const json& object) {
  RunResult result;
  result.status = StatusNamed(Field(object, "status", std::string()));
  if (result.status == RunStatus::kExited) {
    result.exit_code = Field(object, "command_exit_code", Field(object, "exit_code", 0));
  }
  result.signal = Field(object, "signal", 0);
  result.error = Field(object, "error", std::string());
  result.stdout_data = Output(object, "stdout");
  result.stderr_data = Output(object, "stderr");
  result.duration = std::chrono::microseconds(
      static_cast<std::int64_t>(Field(object, "duration_ms", 0.0) * 1000.0));
  const json decision = Field(object, "decision", json::object());
  result.decision.verdict =
      Field(decision, "verdict", std::string("allow")) == "deny" ? Verdict::kDeny : Verdict::kAllow;
  result.decision.rule_id = Field(decision, "rule_id", std::string());
  result.decision.reason = Field(decision, "reason", std::string());
  result.decision.pattern = Field(decision, "pattern", std::string());
  result.decision.matched_command = Field(decision, "matched_command", std::string());
  result.decision.unparsed = Field(decision, "unparsed", false);
  const json enforcement = Field(object, "enforcement", json::object());
  const json layers = Field(enforcement, "layers", json::object());
  Enforcement& e = result.enforcement;
  e.backend = Field(enforcement, "backend", std::string());
  e.filesystem = Field(enforcement, "filesystem", false);
  e.network = Field(enforcement, "network", false);
  e.user_namespace = Field(layers, "user_namespace", false);
  e.mount_namespace = Field(layers, "mount_namespace", false);
  e.pid_namespace = Field(layers, "pid_namespace", false);
  e.net_namespace = Field(layers, "net_namespace", false);
  e.ipc_namespace = Field(layers, "ipc_namespace", false);
  e.landlock_abi = Field(layers, "landlock_abi", 0);
  e.seccomp = Field(layers, "seccomp", false);
  e.capabilities_dropped = Field(layers, "capabilities_dropped", false);
  e.no_new_privs = Field(layers, "no_new_privs", false);
  if (const auto limit = object.find("limit"); limit != object.end() && limit->is_string()) {
    result.limit = LimitNamed(limit->get<std::string>());
  }
  for (const json& reached : Field(object, "limits_reached", json::array())) {
    if (reached.is_string())
      result.limits_reached.push_back(LimitNamed(reached.get<std::string>()));
  }
  for (const json& d : Field(object, "denials", json::array())) {
    if (!d.is_object()) continue;
    result.denials.push_back({Field(d, "kind", std::string()), Field(d, "target", std::string()),
                              Field(d, "layer", std::string()), Field(d, "rule", std::string()),
                              Field(d, "fix", std::string())});
  }
  return result;
}

PathRunner::PathRunner(KernelPath path) : path_(path) {
  // Under /tmp like the tests' trees (any user can make it); the front and the MCP server read
  // the configuration on the host, where /tmp is not private.
  std::string templ = "/tmp/cordon-kernel-path-XXXXXX";
  if (::mkdtemp(templ.data()) != nullptr) dir_ = templ;
}

PathRunner::~PathRunner() {
  mcp_.clear();  // each ends its server
  server_.reset();
  std::error_code ec;
  if (!dir_.empty()) std::filesystem::remove_all(dir_, ec);
}

RunResult PathRunner::Run(const Session& session, const std::string& text,
                          std::optional<std::chrono::milliseconds> timeout) {
  if (dir_.empty()) return SetupFailure("kernel path: mkdtemp under /tmp failed");
  if (SuiteCordonBinary().empty()) {
    return SetupFailure("kernel path: no cordon binary (build the CLI or set CORDON_BIN)");
  }
  return path_ == KernelPath::kMcp ? ThroughMcp(session, text, timeout)
                                   : Served(session, text, timeout);
}

std::filesystem::path PathRunner::ConfigFile(const Session& session) {
  std::lock_guard lock(mutex_);
  return ConfigFileLocked(session);
}

std::filesystem::path PathRunner::ConfigFileLocked(const Session& session) {
  // One file per configuration: the server keeps a session per configuration file, and a
  // session's state (what it pinned at its first command) is what the tests judge.
  const std::string text = config::ToJson(session.config());
  auto [at, added] = configs_.emplace(text, dir_ / fmt::format("config-{}.json", configs_.size()));
  if (added) test_support::WriteFile(at->second, text);
  return at->second;
}

std::string PathRunner::StartServer() {
  if (server_) return "";
  std::string why;
  server_ = test_support::RunServer::Start(SuiteCordonBinary(), dir_, CallerEnvironment({}), &why);
  return why;
}

RunResult PathRunner::Served(const Session& session, const std::string& text,
                             std::optional<std::chrono::milliseconds> timeout) {
  {
    std::lock_guard lock(mutex_);
    if (std::string why = StartServer(); !why.empty()) return SetupFailure("kernel path: " + why);
  }
  const int before = server_->Served();
  test_support::Invocation run;
  run.argv = {SuiteCordonBinary(),
              "--config",
              ConfigFile(session).string(),
              "run",
              "--json",
              "--workspace",
              session.workspace().string()};
  if (const std::optional<double> seconds = Seconds(timeout)) {
    run.argv.insert(run.argv.end(), {"--timeout", fmt::format("{}", *seconds)});
  }
  run.argv.insert(run.argv.end(), {"-c", text});
  run.env = CallerEnvironment(server_->runtime());
  run.cwd = session.workspace();
  const test_support::Outcome outcome = test_support::RunBinary(run);
  // Mode off has no sandbox to serve: the front runs it itself, as for a user.
  const bool served_only = session.config().sandbox.mode != SandboxMode::kOff;
  if (served_only && server_->Served() <= before) {
    return SetupFailure(fmt::format("kernel path: the run server did not run it (exit {}): {}",
                                    outcome.exit_code, outcome.err));
  }
  const json object = json::parse(outcome.out, nullptr, false);
  if (!object.is_object()) {
    return SetupFailure(
        fmt::format("kernel path: `cordon run --json` printed no object (exit {}): "
                    "{}{}",
                    outcome.exit_code, outcome.out, outcome.err));
  }
  return RunResultFromJson(object);
}

test_support::McpClient* PathRunner::McpFor(const Session& session, std::string* why_not) {
  const std::string config = config::ToJson(session.config());
  const std::string key = fmt::format("{}\n{}\n{}", static_cast<const void*>(&session),
                                      session.workspace().string(), config);
  std::lock_guard lock(mutex_);
  if (auto found = mcp_.find(key); found != mcp_.end()) return found->second.get();
  test_support::McpClient::Options options;
  options.argv = {SuiteCordonBinary(),   "--config",    ConfigFileLocked(session).string(), "mcp",
                  "--structured-output", "--workspace", session.workspace().string()};
  options.env = CallerEnvironment({});
  options.cwd = session.workspace();
  options.log = dir_ / fmt::format("mcp-{}.log", mcp_.size());
  std::unique_ptr<test_support::McpClient> client =
      test_support::McpClient::Start(options, why_not);
  if (!client) return nullptr;
  return (mcp_[key] = std::move(client)).get();
}

RunResult PathRunner::ThroughMcp(const Session& session, const std::string& text,
                                 std::optional<std::chrono::milliseconds> timeout) {
  std::string why;
  test_support::McpClient* client = McpFor(session, &why);
  if (client == nullptr) return SetupFailure("kernel path: " + why);
  json arguments = {{"command", text}};
  if (const std::optional<double> seconds = Seconds(timeout)) {
    arguments["timeout_seconds"] = *seconds;
  }
  const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(
      timeout.value_or(session.config().limits.timeout) + std::chrono::seconds(30));
  const std::optional<json> structured = client->RunCommand(arguments, wait, &why);
  if (!structured) return SetupFailure("kernel path: " + why);
  return RunResultFromJson(*structured);
}

}  // namespace cordon::kernel_test
