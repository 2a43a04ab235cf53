// A Session runs model-requested commands under one pinned configuration.
//
//   auto config = cordon::config::LoadUserConfig({});            // or build a Config by hand
//   auto session = cordon::Session::Create(*config, "/path/to/workspace");
//   if (!session) { /* config or workspace invalid */ }
//   cordon::CommandRequest request;
//   request.shell_text = "make -j2 && make test";
//   cordon::RunResult result = session->Run(request);
//
// Create canonicalises the workspace, compiles the policy and probes the kernel once; nothing a
// command does or prints changes those later (the configuration is pinned: edits to the config
// file apply to new sessions only). Run never throws and always returns a RunResult; a request
// that the machine cannot sandbox as configured ends as kSetupFailed without running.
//
// Threading: a Session is immutable after Create; Run may be called from several threads at
// once, each call supervising its own command.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <string_view>

#include "cordon/capabilities.h"
#include "cordon/config.h"
#include "cordon/error.h"
#include "cordon/policy.h"
#include "cordon/run.h"

namespace cordon {

enum class OutputStream { kStdout, kStderr };
// Called from the thread inside Run as output arrives (for streaming to a terminal or as MCP
// progress). Must not block for long: the command's pipe fills while it runs.
using OutputCallback = std::function<void(OutputStream stream, std::string_view data)>;

// How a session runs its commands. A long-lived session (a server's: `cordon serve`,
// `cordon mcp`) starts its commands in namespaces it builds once (a zygote) and in sandboxes it
// prepares ahead, and keeps its plans' host scans watched between commands; a process that
// runs one command needs none of that. Each session has its own; nothing is process-wide.
struct SessionOptions {
  bool long_lived = false;
  int prepared_commands = 2;  // long-lived: sandboxes kept ready ahead (0: none)
  // The user's runtime directory ($XDG_RUNTIME_DIR; cordon's CLI, server and `cordon mcp` pass
  // it): the session records there the empty `.git` placeholders it holds on the host, and
  // its creation removes those a killed session left. Empty: nothing recorded (a placeholder
  // left behind is then removed by the next run in its root). The library reads no
  // environment variable itself.
  std::filesystem::path runtime_dir;
};

class Session {
 public:
  [[nodiscard]] static Result<Session> Create(Config config, std::filesystem::path workspace,
                                              SessionOptions options = {});

  Decision Check(std::string_view command_text) const;
  Capabilities GetCapabilities() const;
  RunResult Run(const CommandRequest& request, const OutputCallback& on_output = {}) const;

  const Config& config() const;
  const std::filesystem::path& workspace() const;

  struct State;  // defined in src/session

 private:
  friend struct SessionInternals;  // src/session/session_internals.h
  explicit Session(std::shared_ptr<const State> state) : state_(std::move(state)) {}
  std::shared_ptr<const State> state_;
};

}  // namespace cordon
