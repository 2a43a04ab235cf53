// The way the kernel suite's commands reach the sandbox (CORDON_KERNEL_PATH), so that the same
// cases and expectations judge every path a command can take (decision 0033):
//   unset, "library"  Session::Run in the test process (one-shot; the session's own zygote)
//   "server"          `cordon --config F run --json --workspace W -c TEXT`, handed by the front to
//   a
//                     `cordon serve` the test starts (its sessions, zygotes and prepared commands)
//   "mcp"             a `tools/call run_command` to a `cordon mcp --config F --workspace W` the
//   test
//                     starts for each session (the session an agent keeps)
// F is the session's configuration written as JSON (config::ToJson). A run the server did not
// answer itself, or an MCP reply without a result, is a setup failure naming why: a path that
// silently ran the command elsewhere would prove nothing.
//
// Only KernelTest::Shell (and ProbeTest::Probe) take the path; a test that calls Session::Run
// with its own CommandRequest (cancellation, environment, descriptors) stays in the library.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "cordon/run.h"
#include "cordon/session.h"
#include "support/mcp_client.h"
#include "support/run_server.h"

namespace cordon::kernel_test {

enum class KernelPath { kLibrary, kServer, kMcp };

KernelPath TestKernelPath();
const char* KernelPathName(KernelPath path);

// The cordon binary the server and MCP paths run: $CORDON_BIN, else the one built with the
// suite; "" when neither exists.
std::string SuiteCordonBinary();

// A RunResult from `cordon run --json`'s object or run_command's structuredContent
// (report::RunResultToJson).
RunResult RunResultFromJson(const nlohmann::json& object);

// The run server or the MCP servers of one test: started at the first command, stopped (and
// their directory removed) when the object dies. Run may be called from several threads at
// once (their calls to one MCP server are answered by id, in any order).
class PathRunner {
 public:
  explicit PathRunner(KernelPath path);
  ~PathRunner();
  PathRunner(const PathRunner&) = delete;
  PathRunner& operator=(const PathRunner&) = delete;

  RunResult Run(const Session& session, const std::string& text,
                std::optional<std::chrono::milliseconds> timeout);

 private:
  RunResult Served(const Session& session, const std::string& text,
                   std::optional<std::chrono::milliseconds> timeout);
  RunResult ThroughMcp(const Session& session, const std::string& text,
                       std::optional<std::chrono::milliseconds> timeout);
  std::string StartServer();  // "" when it listens, else why not; under mutex_
  test_support::McpClient* McpFor(const Session& session, std::string* why_not);
  std::filesystem::path ConfigFile(const Session& session);
  std::filesystem::path ConfigFileLocked(const Session& session);  // under mutex_

  KernelPath path_;
  std::filesystem::path dir_;  // outside every sandbox's writable roots
  std::unique_ptr<test_support::RunServer> server_;
  std::mutex mutex_;  // guards the server's start, the configuration files and mcp_
  // The MCP servers, by session address, configuration and workspace.
  std::map<std::string, std::unique_ptr<test_support::McpClient>> mcp_;
  std::map<std::string, std::filesystem::path> configs_;  // by their text
};

}  // namespace cordon::kernel_test
