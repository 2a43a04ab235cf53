#include "escape_mcp.h"

#include <stdlib.h>

#include <chrono>

#include "support/mcp_client.h"

namespace cordon::escape_test {

bool McpRuns() {
  const char* value = ::getenv("CORDON_ESCAPE_MCP");
  return value != nullptr && std::string(value) == "1";
}

void RunThroughMcp(const std::string& cordon, const std::vector<std::string>& flags,
                   const std::vector<std::string>& env, const std::string& command, Fixture& f) {
  test_support::McpClient::Options options;
  options.argv = {cordon, "--config", (f.root / "config.json").string(), "mcp",
                  "--structured-output"};
  options.argv.insert(options.argv.end(), flags.begin(), flags.end());
  options.env = env;
  options.cwd = f.ws;
  options.log = f.root / "mcp.log";
  options.inherited_fd = f.inherited_fd;
  std::string why;
  std::unique_ptr<test_support::McpClient> client = test_support::McpClient::Start(options, &why);
  if (!client) {
    f.output += "[escape harness: cordon mcp did not start: " + why + "]\n";
    return;
  }
  WriteFile(f.root / "cordon.pid", std::to_string(client->pid()));
  const std::optional<nlohmann::json> result =
      client->RunCommand({{"command", command}}, std::chrono::seconds(60), &why);
  if (!result) {
    f.output += "[escape harness: run_command: " + why + "]\n";
    return;
  }
  f.output += result->value("stdout", "") + result->value("stderr", "");
  if (const std::string reason = result->value("reason", ""); !reason.empty()) {
    f.output += "[cordon mcp: " + reason + "]\n";
  }
  f.exit_status = result->value("exit_code", -1);
}

}  // namespace cordon::escape_test
