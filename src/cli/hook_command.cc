// `cordon hook claude-code|gemini-cli`: an agent's hook before its own shell tool runs
// (cli/shell_hook.h; docs/mcp.md, "The agent's own shell tool"). Reads the event from stdin and
// answers on stdout. Anything it cannot judge — input that is not the event, a config or policy
// that does not load, a failure of its own — blocks the call (exit 2, the reason on stderr,
// which both agents give the model): never a command let through unfenced. (Any other exit
// status lets the agent run the original command: nothing here may end with one.)
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cli/shell_hook.h"
#include "cli/subcommands.h"
#include "core/paths.h"

namespace cordon::cli {
namespace {

constexpr int kExitBlock = 2;                       // both agents: block the call, show stderr
constexpr std::size_t kMaxInput = 4 * 1024 * 1024;  // far above a shell command's size
constexpr std::size_t kMaxDepth = 64;               // the events nest three or four deep

int Block(std::string_view why) {
  fmt::print(stderr, "cordon hook: {}; the command was not run\n", why);
  return kExitBlock;
}

Result<std::string> ReadInput() {
  std::string input;
  char buffer[65536];
  for (;;) {
    const ssize_t n = ::read(STDIN_FILENO, buffer, sizeof buffer);
    if (n == 0) return input;
    if (n < 0) {
      if (errno == EINTR) continue;
      return Fail(ErrorCode::kSystem, fmt::format("read(stdin): {}", std::strerror(errno)), errno);
    }
    input.append(buffer, static_cast<std::size_t>(n));
    if (input.size() > kMaxInput) {
      return Fail(ErrorCode::kInvalidArgument,
                  fmt::format("the hook input is larger than {} bytes", kMaxInput));
    }
  }
}

// The `cordon` a user runs: the front beside this full cordon when there is one (installed:
// bin/cordon for libexec/cordon/cordon; the build tree: front/cordon for cli/cordon), so that
// the rewritten command takes the run server's fast path; else this executable.
std::string CordonExecutable() {
  Result<std::filesystem::path> self = core::Canonical("/proc/self/exe");
  if (!self) return "cordon";
  const std::filesystem::path dir = self->parent_path();
  for (const std::filesystem::path& front : {dir / "../../bin/cordon", dir / "../front/cordon"}) {
    std::error_code ec;
    if (front.filename() == self->filename() && std::filesystem::is_regular_file(front, ec)) {
      if (Result<std::filesystem::path> canonical = core::Canonical(front)) {
        if (*canonical != *self) return canonical->string();
      }
    }
  }
  return self->string();
}

// Claude Code's Bash permission rules from the settings files it reads: managed, the user's
// (~/.claude, or $CLAUDE_CONFIG_DIR), the project's shared and local ones. A file that is
// missing or not JSON adds nothing (Claude Code skips it as well).
ClaudeRules LoadClaudeRules(const std::string& project) {
  std::vector<std::filesystem::path> files = {"/etc/claude-code/managed-settings.json"};
  if (const char* dir = std::getenv("CLAUDE_CONFIG_DIR"); dir != nullptr && dir[0] == '/') {
    files.push_back(std::filesystem::path(dir) / "settings.json");
  } else if (const char* home = std::getenv("HOME"); home != nullptr && home[0] == '/') {
    files.push_back(std::filesystem::path(home) / ".claude/settings.json");
  }
  if (!project.empty()) {
    files.push_back(std::filesystem::path(project) / ".claude/settings.json");
    files.push_back(std::filesystem::path(project) / ".claude/settings.local.json");
  }
  ClaudeRules rules;
  for (const std::filesystem::path& file : files) {
    std::ifstream in(file);
    if (!in) continue;
    std::stringstream text;
    text << in.rdbuf();
    if (JsonNestingDepth(text.str()) > kMaxDepth) continue;
    AddClaudeRules(nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false), rules);
  }
  return rules;
}

int Answer(HookAgent agent, const GlobalOptions& global) {
  Result<std::string> text = ReadInput();
  if (!text) return Block(text.error().message);
  if (JsonNestingDepth(*text) > kMaxDepth) {
    return Block(fmt::format("the hook input nests deeper than {} levels", kMaxDepth));
  }
  nlohmann::json input = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (input.is_discarded()) return Block("the hook input is not valid JSON");

  Result<Config> config = LoadConfig(global, SandboxFlags{});
  if (!config)
    return Block(fmt::format("cordon's config did not load: {}", config.error().message));
  Result<Policy> policy = Policy::Create(config->command_policy);
  if (!policy)
    return Block(fmt::format("cordon's policy did not load: {}", policy.error().message));

  HookRewrite rewrite{CordonExecutable(), "", "", config->sandbox.mode != SandboxMode::kOff};
  // Both absolute: the rewritten command runs in the agent's shell, whose directory is not ours.
  if (!global.config_path.empty()) {
    rewrite.config_path = std::filesystem::absolute(global.config_path).string();
  }
  // The project: the agent names it for hooks; else the directory of the call.
  if (const char* project = std::getenv(ProjectDirVariable(agent)); project && *project) {
    rewrite.workspace = project;
  } else if (const auto cwd = input.find("cwd"); cwd != input.end() && cwd->is_string()) {
    rewrite.workspace = cwd->get<std::string>();
  }

  const ClaudeRules claude_rules =
      agent == HookAgent::kClaudeCode ? LoadClaudeRules(rewrite.workspace) : ClaudeRules{};
  Result<nlohmann::json> answer = AnswerShellHook(agent, input, *policy, rewrite, claude_rules);
  if (!answer) return Block(answer.error().message);
  // Command text is bytes; JSON is UTF-8: a byte that is not (from $'\xff' in a reason) is
  // replaced rather than thrown on.
  if (!answer->empty()) {
    fmt::print("{}\n", answer->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  }
  return 0;
}

int RunHook(HookAgent agent, const GlobalOptions& global) {
  try {
    return Answer(agent, global);
  } catch (const std::exception& e) {
    return Block(fmt::format("cordon failed: {}", e.what()));
  } catch (...) {
    return Block("cordon failed");
  }
}

}  // namespace

Subcommand AddHookCommand(CLI::App& root, const GlobalOptions& global) {
  CLI::App* app = root.add_subcommand(
      "hook", "Serve as an agent's hook that fences the agent's own shell tool (docs/mcp.md)");
  app->require_subcommand(1);
  auto chosen = std::make_shared<std::optional<HookAgent>>();
  app->add_subcommand("claude-code",
                      "Claude Code PreToolUse hook: refuse what the policy denies, run the rest "
                      "of its Bash and Monitor commands through `cordon run`")
      ->callback([chosen] { *chosen = HookAgent::kClaudeCode; });
  app->add_subcommand("gemini-cli",
                      "Gemini CLI BeforeTool hook: refuse what the policy denies, run the rest "
                      "of its run_shell_command commands through `cordon run`")
      ->callback([chosen] { *chosen = HookAgent::kGeminiCli; });
  return {app, [&global, chosen] { return *chosen ? RunHook(**chosen, global) : kExitBlock; }};
}

}  // namespace cordon::cli
