// `cordon hook claude-code`: Claude Code's PreToolUse hook (cli/claude_hook.h; docs/mcp.md,
// "Claude Code's own Bash tool").
// Reads the event from stdin and answers on stdout. Anything it cannot judge — input that is
// not the event, a config or policy that does not load — blocks the call (exit 2, the reason
// on stderr, which Claude Code gives the model): never a command let through unfenced.
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

#include "cli/claude_hook.h"
#include "cli/subcommands.h"
#include "core/paths.h"

namespace cordon::cli {
namespace {

constexpr int kExitBlock = 2;                       // Claude Code: block the call, show stderr
constexpr std::size_t kMaxInput = 4 * 1024 * 1024;  // far above a shell command's size

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

int RunClaudeCodeHook(const GlobalOptions& global) {
  Result<std::string> text = ReadInput();
  if (!text) return Block(text.error().message);
  nlohmann::json input = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (input.is_discarded()) return Block("the hook input is not valid JSON");

  Result<Config> config = LoadConfig(global, SandboxFlags{});
  if (!config)
    return Block(fmt::format("cordon's config did not load: {}", config.error().message));
  Result<Policy> policy = Policy::Create(config->command_policy);
  if (!policy)
    return Block(fmt::format("cordon's policy did not load: {}", policy.error().message));

  // The project: Claude Code names it for hooks; else the directory of the call.
  std::string workspace;
  if (const char* project = std::getenv("CLAUDE_PROJECT_DIR"); project && *project) {
    workspace = project;
  } else if (const auto cwd = input.find("cwd"); cwd != input.end() && cwd->is_string()) {
    workspace = cwd->get<std::string>();
  }

  Result<nlohmann::json> answer =
      AnswerPreToolUse(input, *policy, {CordonExecutable(), global.config_path, workspace});
  if (!answer) return Block(answer.error().message);
  if (!answer->empty()) fmt::print("{}\n", answer->dump());
  return 0;
}

}  // namespace

Subcommand AddHookCommand(CLI::App& root, const GlobalOptions& global) {
  CLI::App* app = root.add_subcommand(
      "hook", "Serve as an agent's hook that fences the agent's own shell tool (docs/mcp.md)");
  app->require_subcommand(1);
  CLI::App* claude = app->add_subcommand(
      "claude-code",
      "Claude Code PreToolUse hook: refuse what the policy denies, run the rest of its Bash "
      "tool's commands through `cordon run`");
  auto chosen = std::make_shared<bool>(false);
  claude->callback([chosen] { *chosen = true; });
  return {app, [&global, chosen] { return *chosen ? RunClaudeCodeHook(global) : 2; }};
}

}  // namespace cordon::cli
