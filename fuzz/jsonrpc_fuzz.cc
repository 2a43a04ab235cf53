// libFuzzer target for the MCP server's input side: arbitrary bytes through the line framer
// (with a small cap, so oversized lines are exercised), JSON-RPC validation and the dispatcher,
// with a runner that returns at once. Checks beyond "no crash, no sanitizer report": every
// message the server sends is one line of valid JSON-RPC 2.0, and every error code it uses is
// one of the five JSON-RPC codes.
//
// The first byte chooses whether the session is initialized before the input (odd) or the
// input must do it itself, so both the lifecycle checks and tools/call are reached.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string_view>

#include "mcp/line_framer.h"
#include "mcp/server.h"
#include "report/json_report.h"

namespace {

using nlohmann::json;

class InstantRunner : public cordon::mcp::CommandRunner {
 public:
  cordon::RunResult Run(const cordon::CommandRequest& request, bool,
                        const cordon::mcp::CancelToken&,
                        const cordon::OutputCallback& on_output) override {
    cordon::RunResult result;
    result.status = cordon::RunStatus::kExited;
    const std::string text = request.shell_text.value_or("");
    if (on_output) on_output(cordon::OutputStream::kStdout, text);
    result.stdout_data.data = text;
    result.stdout_data.total_bytes = text.size();
    return result;
  }
  cordon::Capabilities GetCapabilities() const override { return {}; }
  const std::filesystem::path& Workspace() const override { return workspace_; }
  std::chrono::milliseconds MaxTimeout() const override { return std::chrono::seconds(1); }
  bool AllowsOutsideSandbox() const override { return true; }

 private:
  std::filesystem::path workspace_ = "/tmp";
};

void Check(bool ok, const char* what, const json& message) {
  if (ok) return;
  std::fprintf(stderr, "invalid outgoing message (%s): %s\n", what,
               cordon::report::Dump(message).c_str());
  std::abort();
}

class CheckingSink : public cordon::mcp::MessageSink {
 public:
  void Send(const json& message) override {
    const std::string line = cordon::report::Dump(message);
    Check(line.find('\n') == std::string::npos, "raw newline", message);
    const json back = json::parse(line, nullptr, false);
    Check(!back.is_discarded() && back.is_object(), "not an object", message);
    Check(back.value("jsonrpc", "") == "2.0", "jsonrpc", message);
    if (back.contains("error")) {
      static const std::set<int> kCodes = {-32700, -32600, -32601, -32602, -32603};
      Check(back["error"].contains("code") && back["error"]["code"].is_number_integer() &&
                kCodes.contains(back["error"]["code"].get<int>()),
            "error code", message);
      Check(back.contains("id"), "error without id", message);
    } else if (back.contains("result")) {
      Check(cordon::mcp::IsValidId(back["id"]), "result id", message);
    } else {
      Check(back.contains("method") && back["method"].is_string(), "method", message);
    }
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  InstantRunner runner;
  CheckingSink sink;
  cordon::mcp::ServerOptions options;
  options.elicitation_timeout = std::chrono::milliseconds(1);
  options.progress_interval = std::chrono::milliseconds(1);
  cordon::mcp::Server server(options, runner, sink);
  if (data[0] & 1) {
    server.HandleLine(
        R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"elicitation":{}}}})");
  }
  constexpr std::size_t kCap = 4096;
  cordon::mcp::LineFramer framer(
      kCap, {.on_line = [&](std::string_view line) { server.HandleLine(line); },
             .on_oversized = [&] { server.HandleOversizedLine(kCap); }});
  framer.Feed(std::string_view(reinterpret_cast<const char*>(data) + 1, size - 1));
  framer.Finish();
  if (!server.Shutdown()) std::abort();  // the instant runner never outlives the grace
  return 0;
}
