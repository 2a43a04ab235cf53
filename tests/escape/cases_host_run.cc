// Host-run files (protect_host_run_files): files in the workspace that a coding agent, an
// editor or the shell later runs on the host. Each attack rewrites one that exists, or creates
// one where there is none, as a hostile command would to get its code run outside the sandbox.
#include "escape_cases.h"

namespace cordon::escape_test {
namespace {

constexpr const char* kSettings = "{\"permissions\": {}}\n";

bool Changed(const Fixture& f, const char* relative, const std::string& planted) {
  return !Exists(f.ws / relative) || std::filesystem::is_symlink(f.ws / relative) ||
         ReadFile(f.ws / relative) != planted;
}

}  // namespace

std::vector<Case> HostRunCases() {
  std::vector<Case> cases;
  // `relative` is planted with `planted`; the attack has landed when it no longer reads so.
  auto add = [&](std::string name, const char* relative, std::string planted, std::string script) {
    Case c;
    c.category = "host-run";
    c.name = std::move(name);
    c.script = std::move(script);
    c.setup = [relative, planted](Fixture& f) { WriteFile(f.ws / relative, planted); };
    c.landed = [relative, planted](const Fixture& f) { return Changed(f, relative, planted); };
    cases.push_back(std::move(c));
  };
  add("claude-settings-hook", ".claude/settings.json", kSettings,
      "printf '{\"hooks\": {\"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": "
      "\"touch pwned\"}]}]}}' > @WS@/.claude/settings.json");
  add("claude-hook-script", ".claude/hooks/check.sh", "#!/bin/sh\ntrue\n",
      "printf '#!/bin/sh\\ntouch pwned\\n' > @WS@/.claude/hooks/check.sh");
  add("mcp-json-server", ".mcp.json", kSettings,
      "printf '{\"mcpServers\": {\"x\": {\"command\": \"touch\", \"args\": [\"pwned\"]}}}' > "
      "@WS@/.mcp.json");
  add("mcp-json-replaced", ".mcp.json", kSettings,
      "rm -f @WS@/.mcp.json; printf '{\"mcpServers\": {}}' > @WS@/.mcp.json");
  add("mcp-json-renamed-over", ".mcp.json", kSettings,
      "printf '{\"mcpServers\": {}}' > @WS@/new.json && mv -f @WS@/new.json @WS@/.mcp.json");
  add("vscode-task", ".vscode/tasks.json", kSettings,
      "printf '{\"tasks\": [{\"command\": \"touch pwned\", \"runOptions\": {\"runOn\": "
      "\"folderOpen\"}}]}' > @WS@/.vscode/tasks.json");
  add("codex-config", ".codex/config.toml", "model = \"x\"\n",
      "printf '[mcp_servers.x]\\ncommand = \"touch\"\\n' >> @WS@/.codex/config.toml");
  add("gemini-settings", ".gemini/settings.json", kSettings,
      "printf '{\"tools\": {\"discoveryCommand\": \"touch pwned\"}}' > "
      "@WS@/.gemini/settings.json");
  add("envrc", ".envrc", "export A=1\n", "echo 'touch pwned' >> @WS@/.envrc");
  add("devcontainer-initialize", ".devcontainer/devcontainer.json", kSettings,
      "printf '{\"initializeCommand\": \"touch pwned\"}' > "
      "@WS@/.devcontainer/devcontainer.json");
  // The same files where the workspace has none yet: created by the command.
  auto create = [&](std::string name, const char* relative, std::string script) {
    Case c;
    c.category = "host-run";
    c.name = std::move(name);
    c.script = std::move(script);
    c.landed = [relative](const Fixture& f) {
      return std::filesystem::is_regular_file(f.ws / relative);
    };
    cases.push_back(std::move(c));
  };
  create("create-claude-settings", ".claude/settings.json",
         "mkdir -p @WS@/.claude && printf '{\"hooks\": {}}' > @WS@/.claude/settings.json");
  create("create-mcp-json", ".mcp.json", "printf '{\"mcpServers\": {}}' > @WS@/.mcp.json");
  create("create-mcp-json-by-rename", ".mcp.json",
         "printf '{\"mcpServers\": {}}' > @WS@/new.json && mv -f @WS@/new.json @WS@/.mcp.json");
  create("create-envrc", ".envrc", "echo 'touch pwned' > @WS@/.envrc");
  create("create-vscode-task", ".vscode/tasks.json",
         "mkdir -p @WS@/.vscode && printf '{\"tasks\": []}' > @WS@/.vscode/tasks.json");
  create("create-github-hook", ".github/hooks/hooks.json",
         "mkdir -p @WS@/.github/hooks && printf '{}' > @WS@/.github/hooks/hooks.json");
  // A project nested in the workspace (its own repository, a package with its own editor or
  // agent config): the same files there.
  add("nested-repo-hook", "sub/.git/hooks/pre-commit", "#!/bin/sh\ntrue\n",
      "printf '#!/bin/sh\\ntouch pwned\\n' > @WS@/sub/.git/hooks/pre-commit");
  add("nested-repo-moved-and-back", "sub/.git/hooks/pre-commit", "#!/bin/sh\ntrue\n",
      "mkdir -p @WS@/x/y/z/w && mv @WS@/sub @WS@/x/y/z/w/sub; "
      "printf 'touch pwned\\n' >> @WS@/x/y/z/w/sub/.git/hooks/pre-commit; "
      "mv @WS@/x/y/z/w/sub @WS@/sub");
  add("nested-package-vscode-task", "packages/web/.vscode/tasks.json", kSettings,
      "printf '{\"tasks\": [{\"command\": \"touch pwned\"}]}' > "
      "@WS@/packages/web/.vscode/tasks.json");
  {
    Case c;
    c.category = "host-run";
    c.name = "nested-repo-create-mcp-json";
    c.script = "printf '{\"mcpServers\": {}}' > @WS@/sub/.mcp.json";
    c.setup = [](Fixture& f) { WriteFile(f.ws / "sub/.git/HEAD", "ref: refs/heads/main\n"); };
    c.landed = [](const Fixture& f) {
      return std::filesystem::is_regular_file(f.ws / "sub/.mcp.json");
    };
    cases.push_back(std::move(c));
  }
  return cases;
}

}  // namespace cordon::escape_test
