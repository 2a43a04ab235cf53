// `fault_mcp_run CORDON --config F run [--timeout N] --workspace WS -- /bin/sh -c TEXT MARKER`:
// the fault suite's `cordon run` command line carried out the way an agent runs a command —
// through `cordon mcp` (started here as a child, CORDON_FAULT_PATH=mcp). The output comes as
// it is produced (progress), then the result's; the exit code is the one `cordon run` would
// use. The suite kills the `cordon mcp` child, not this process, to kill "cordon".
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "support/mcp_client.h"

extern char** environ;

namespace {

using nlohmann::json;

std::string Quoted(const std::string& text) {
  std::string out = "'";
  for (const char c : text) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

std::string Text(const json& output) {
  if (output.is_string()) return output.get<std::string>();
  if (output.is_object() && output.contains("data") && output["data"].is_string()) {
    return output["data"].get<std::string>();
  }
  return {};
}

}  // namespace

int main(int argc, char** argv) {
  // The command line: in CORDON_FAULT_MCP_ARGV (a JSON array, so that this process's own
  // command line does not carry the suite's marker), else the arguments.
  std::vector<std::string> args(argv + 1, argv + argc);
  if (const char* given = std::getenv("CORDON_FAULT_MCP_ARGV"); given != nullptr) {
    const json parsed = json::parse(given, nullptr, false);
    if (!parsed.is_array()) {
      std::fprintf(stderr, "fault_mcp_run: CORDON_FAULT_MCP_ARGV is not a JSON array\n");
      return 2;
    }
    args = parsed.get<std::vector<std::string>>();
    ::unsetenv("CORDON_FAULT_MCP_ARGV");
  }
  std::string config, workspace, shell_text, marker;
  std::vector<std::string> writable_roots;
  std::optional<double> timeout;
  std::size_t i = 1;  // after the cordon binary
  for (; i < args.size() && args[i] != "--"; ++i) {
    const std::string& a = args[i];
    const bool has_value = i + 1 < args.size();
    if (a == "run") continue;
    if (a == "--config" && has_value) {
      config = args[++i];
    } else if (a == "--workspace" && has_value) {
      workspace = args[++i];
    } else if (a == "--timeout" && has_value) {
      timeout = std::stod(args[++i]);
    } else if (a == "--writable-root" && has_value) {
      writable_roots.push_back(args[++i]);
    } else if (a.starts_with("--writable-root=")) {
      writable_roots.push_back(a.substr(16));
    } else {
      // Never dropped silently: a flag the MCP path cannot carry fails the test loudly.
      std::fprintf(stderr, "fault_mcp_run: cannot carry %s through cordon mcp\n", a.c_str());
      return 2;
    }
  }
  // `cordon mcp` takes no sandbox flags: the writable roots go into a copy of the config.
  if (!writable_roots.empty()) {
    std::ifstream in(config);
    json parsed = json::parse(in, nullptr, false);
    if (parsed.is_discarded() || !parsed.is_object()) {
      std::fprintf(stderr, "fault_mcp_run: cannot read the config %s\n", config.c_str());
      return 2;
    }
    for (const std::string& root : writable_roots) {
      parsed["sandbox"]["writable_roots"].push_back(root);
    }
    config += ".mcp.json";
    std::ofstream(config) << parsed.dump() << "\n";
  }
  // After "--": /bin/sh -c TEXT [MARKER].
  if (args.empty() || i + 3 >= args.size() || args[i + 1] != "/bin/sh" || args[i + 2] != "-c") {
    std::fprintf(stderr, "fault_mcp_run: expected CORDON ... -- /bin/sh -c TEXT [MARKER]\n");
    return 2;
  }
  shell_text = args[i + 3];
  if (i + 4 < args.size()) marker = args[i + 4];

  cordon::test_support::McpClient::Options options;
  options.argv = {args[0]};
  if (!config.empty()) options.argv.insert(options.argv.end(), {"--config", config});
  options.argv.insert(options.argv.end(), {"mcp", "--structured-output"});
  if (!workspace.empty()) options.argv.insert(options.argv.end(), {"--workspace", workspace});
  for (char** e = environ; *e != nullptr; ++e) options.env.emplace_back(*e);
  char cwd[4096];
  options.cwd = ::getcwd(cwd, sizeof cwd) != nullptr ? cwd : "/";
  // Its stderr goes to a file beside the config (a log the client reads back: not a pipe).
  options.log = (config.empty() ? std::filesystem::path(options.cwd)
                                : std::filesystem::path(config).parent_path()) /
                "mcp.log";
  options.on_notification = [](const json& message) {
    const json params = message.value("params", json::object());
    if (message.value("method", "") == "notifications/progress" && params.contains("message")) {
      const std::string text =
          params["message"].is_string() ? params["message"].get<std::string>() : std::string();
      std::fwrite(text.data(), 1, text.size(), stderr);
      std::fflush(stderr);
    }
  };
  std::string why;
  std::unique_ptr<cordon::test_support::McpClient> client =
      cordon::test_support::McpClient::Start(options, &why);
  if (!client) {
    std::fprintf(stderr, "fault_mcp_run: cordon mcp did not start: %s\n", why.c_str());
    return 125;
  }
  // The marker stays the shell's $0, as in the one-shot command line.
  json arguments = {
      {"command", marker.empty() ? shell_text
                                 : "exec /bin/sh -c " + Quoted(shell_text) + " " + Quoted(marker)}};
  if (timeout) arguments["timeout_seconds"] = *timeout;
  const std::optional<json> result =
      client->RunCommand(arguments, std::chrono::hours(1), &why, /*progress=*/true);
  if (!result) {
    std::fprintf(stderr, "fault_mcp_run: no result: %s\n", why.c_str());
    return 125;
  }
  const std::string out = Text(result->value("stdout", json()));
  const std::string err = Text(result->value("stderr", json()));
  std::fwrite(out.data(), 1, out.size(), stdout);
  std::fwrite(err.data(), 1, err.size(), stderr);
  if (result->contains("error") && (*result)["error"].is_string()) {
    std::fprintf(stderr, "cordon: %s\n", (*result)["error"].get<std::string>().c_str());
  }
  std::fflush(stdout);
  return result->value("exit_code", 125);
}
