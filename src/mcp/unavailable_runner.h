// The runner of a `cordon mcp` that could not start (a bad config, a workspace it refuses, a
// sandbox the machine cannot give): the server still speaks MCP, so that the client connects
// and the reason reaches the person and the model — in the initialize instructions, in the
// capabilities' `missing`, and as the error of every run_command call — instead of a process
// that exits before `initialize`, which every client reports only as "failed to connect".
#pragma once

#include <filesystem>
#include <string>

#include "mcp/command_runner.h"

namespace cordon::mcp {

class UnavailableRunner : public CommandRunner {
 public:
  // `reason`: what stopped cordon and how to fix it, as cordon said it on stderr. `directory`:
  // where relative cwd arguments resolve (nothing runs there).
  UnavailableRunner(std::string reason, std::filesystem::path directory);

  RunResult Run(const CommandRequest& request, bool outside_sandbox, const CancelToken& cancel,
                const OutputCallback& on_output) override;
  Capabilities GetCapabilities() const override { return capabilities_; }
  const std::filesystem::path& Workspace() const override { return directory_; }
  std::chrono::milliseconds MaxTimeout() const override { return LimitsConfig{}.timeout; }
  bool AllowsOutsideSandbox() const override { return false; }

 private:
  std::string reason_;
  std::filesystem::path directory_;
  Capabilities capabilities_;
};

}  // namespace cordon::mcp
