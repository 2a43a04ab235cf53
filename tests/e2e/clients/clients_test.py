#!/usr/bin/env python3
"""cordon mcp driven by the agents' real clients, installed from npm at the versions
package-lock.json pins (setup.sh): the MCP Inspector CLI, Claude Code, Gemini CLI and Codex
(through its app-server protocol). The three agents talk to a loopback stand-in for their model
API (model_standin.py) that asks for cordon's run_command and records the results it gets back.

Each client registers cordon with its own `mcp add` command, as docs/mcp.md tells users to, and
then must show: connected, run_command listed, a command run in the sandbox (its write in the
workspace lands; its write outside, to a directory this test can write, is refused, checked from
outside), and a policy denial returned as a tool result.

The agents' own shell tools are driven too, behind `cordon hook` (claude-hook, gemini-hook: the
same checks) and without it (claude-bash, gemini-shell, the twins: their write outside lands);
and whether a Claude Code deny rule still matches the model's command through the hook. The
hook's rewritten `cordon run` is checked through a run server too (claude-hook-served: the
server's log shows it ran the commands).

  clients_test.py /path/to/cordon            CORDON_CLIENTS_ONLY=claude runs one client
Exit 77 (ctest's skip) when the clients are not installed.
"""

import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
# tests/e2e/verdicts.py: one directory up.
sys.path[:0] = [HERE, os.path.dirname(HERE)]
from model_standin import StandinModel  # noqa: E402
from verdicts import Failures  # noqa: E402

BIN = os.path.join(HERE, "node_modules", ".bin")
RULE_PROBE = "echo rule-probe-ran"
CLIENTS = ("inspector", "claude", "claude-hook", "claude-hook-served", "claude-bash", "gemini",
           "gemini-hook", "gemini-shell", "codex")
TIMEOUT = int(os.environ.get('CORDON_CLIENTS_TIMEOUT', '180'))


def versions():
    lock = json.load(open(os.path.join(HERE, "package-lock.json")))
    packages = lock.get("packages", {})
    names = {"inspector": "@modelcontextprotocol/inspector", "claude": "@anthropic-ai/claude-code",
             "gemini": "@google/gemini-cli", "codex": "@openai/codex"}
    return {k: packages.get(f"node_modules/{v}", {}).get("version", "?") for k, v in names.items()}


class Scene:
    """One client's private home, workspace and an outside directory it must not write."""

    def __init__(self, root, client, cordon):
        self.client = client
        self.cordon = cordon
        self.dir = os.path.join(root, client)
        self.home = os.path.join(self.dir, "home")
        self.ws = os.path.join(self.dir, "workspace")
        self.outside = os.path.join(self.dir, "outside")
        for d in (self.home, self.ws, self.outside):
            os.makedirs(d)
        self.made = os.path.join(self.ws, "made.txt")
        self.planted = os.path.join(self.outside, "planted.txt")
        self.commands = [
            f"echo made-by-{client} > made.txt && cat made.txt",
            f"touch {self.planted}",
            "sudo id",
        ]
        if client in ("claude-hook", "claude-hook-served", "claude-bash"):
            self.commands.append(RULE_PROBE)

    def env(self, **extra):
        # A minimal environment: the client's own settings come from this home only.
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": self.home,
               "LANG": "C.UTF-8", "TERM": "dumb", "CORDON_RUN_SERVER": "off",
               "XDG_CONFIG_HOME": os.path.join(self.home, ".config")}
        env.update(extra)
        return env

    def run(self, argv, env, **kw):
        return subprocess.run(argv, cwd=self.ws, env=env, capture_output=True, text=True,
                              timeout=TIMEOUT, **kw)

    def judge(self, f, results, offered, tool="run_command", denial="NOT RUN: denied"):
        name = self.client
        f.check(any(n.endswith(tool) for n in offered),
                f"{name}: {tool} is among the tools offered to the model ({sorted(offered)})")
        f.check(len(results) >= 3, f"{name}: three tool results came back (got {len(results)})")
        results = results + [""] * (3 - len(results))
        f.check(f"made-by-{name}" in results[0] and os.path.exists(self.made),
                f"{name}: the command ran in the workspace and its output came back: {results[0][:300]!r}")
        if tool == "run_command":
            f.check("exit code 0" in results[0] and "command_exit_code" not in results[0],
                    f"{name}: the model got cordon's text, not a JSON dump of the result")
        f.check(not os.path.exists(self.planted),
                f"{name}: the write outside the workspace did not land ({self.planted})")
        f.check("refused" in results[1] and self.planted in results[1],
                f"{name}: the result names the refused write: {results[1][:300]!r}")
        f.check(denial in results[2] and "default.privilege" in results[2],
                f"{name}: the policy denial came back as a tool result: {results[2][:300]!r}")


def inspector(scene, f):
    base = [os.path.join(BIN, "mcp-inspector"), "--cli", scene.cordon, "mcp", "--workspace", scene.ws]
    env = scene.env()
    listed = scene.run(base + ["--method", "tools/list"], env)
    f.check(listed.returncode == 0, f"inspector: tools/list exits 0 ({listed.stderr[-300:]!r})")
    names = [t["name"] for t in json.loads(listed.stdout or "{}").get("tools", [])]
    results = []
    for command in scene.commands:
        call = scene.run(base + ["--method", "tools/call", "--tool-name", "run_command",
                                 "--tool-arg", f"command={command}"], env)
        try:
            answer = json.loads(call.stdout)
            results.append("\n".join(c.get("text", "") for c in answer.get("content", [])))
            f.check("structuredContent" not in answer,
                    f"inspector: `{command}` came back as text only (the lean default)")
        except ValueError:
            results.append(call.stdout + call.stderr)
    scene.judge(f, results, names)


def claude(scene, f, model):
    exe = os.path.join(BIN, "claude")
    env = scene.env(ANTHROPIC_BASE_URL=model.base_url, ANTHROPIC_API_KEY="sk-standin",
                    DISABLE_AUTOUPDATER="1", CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
                    # Deferred tool loading would hide MCP tools behind its ToolSearch tool, which
                    # the stand-in does not play.
                    ENABLE_TOOL_SEARCH="false")
    added = scene.run([exe, "mcp", "add", "--scope", "user", "cordon", "--",
                       scene.cordon, "mcp", "--workspace", scene.ws], env)
    f.check(added.returncode == 0, f"claude: `claude mcp add` exits 0 ({added.stderr[-300:]!r})")
    # Claude Code checks a folder's servers only once the folder is trusted: the answer to its
    # trust dialog, which it keeps in ~/.claude.json.
    state_file = os.path.join(scene.home, ".claude.json")
    state = json.load(open(state_file)) if os.path.exists(state_file) else {}
    state.setdefault("projects", {}).setdefault(scene.ws, {})["hasTrustDialogAccepted"] = True
    with open(state_file, "w") as out:
        json.dump(state, out)
    listed = scene.run([exe, "mcp", "list"], env)
    f.check("cordon" in listed.stdout and "Connected" in listed.stdout,
            f"claude: `claude mcp list` shows cordon connected: {listed.stdout.strip()[-300:]!r}")
    ran = scene.run([exe, "-p", "Run the commands.", "--output-format", "json",
                     "--allowedTools", "mcp__cordon__run_command"], env)
    f.check(ran.returncode == 0, f"claude: `claude -p` exits 0 ({ran.stderr[-300:]!r})")
    scene.judge(f, model.recorder.result_texts(), model.recorder.offered)


def gemini(scene, f, model):
    exe = os.path.join(BIN, "gemini")
    settings_dir = os.path.join(scene.home, ".gemini")
    os.makedirs(settings_dir)
    # Gemini CLI starts a folder's MCP servers only when the folder is trusted.
    with open(os.path.join(settings_dir, "trustedFolders.json"), "w") as out:
        json.dump({scene.ws: "TRUST_FOLDER"}, out)
    with open(os.path.join(settings_dir, "settings.json"), "w") as out:
        json.dump({"security": {"auth": {"selectedType": "gemini-api-key"}},
                   "privacy": {"usageStatisticsEnabled": False},
                   "general": {"disableAutoUpdate": True}}, out)
    env = scene.env(GOOGLE_GEMINI_BASE_URL=model.base_url, GEMINI_API_KEY="standin")
    # `--` keeps cordon's own flags from Gemini's option parser (issue 27: `--timeout 60` there
    # became Gemini's 60 ms connection timeout).
    added = scene.run([exe, "mcp", "add", "--scope", "user", "--trust", "cordon", scene.cordon,
                       "--", "mcp", "--workspace", scene.ws], env)
    f.check(added.returncode == 0, f"gemini: `gemini mcp add` exits 0 ({added.stderr[-300:]!r})")
    stored = json.load(open(os.path.join(settings_dir, "settings.json")))["mcpServers"]["cordon"]
    f.check(stored.get("args") == ["mcp", "--workspace", scene.ws] and "timeout" not in stored,
            f"gemini: the stored entry keeps cordon's arguments: {stored}")
    listed = scene.run([exe, "mcp", "list"], env)
    shown = listed.stdout + listed.stderr  # this version prints the list on stderr
    f.check("cordon" in shown and "Connected" in shown,
            f"gemini: `gemini mcp list` shows cordon connected: {shown.strip()[-300:]!r}")
    # An explicit model skips Gemini CLI's routing classifier, whose JSON the stand-in does not
    # play.
    ran = scene.run([exe, "-p", "Run the commands.", "--output-format", "json",
                     "-m", "gemini-2.5-flash"], env)
    f.check(ran.returncode == 0, f"gemini: `gemini -p` exits 0 ({ran.stderr[-300:]!r})")
    scene.judge(f, model.recorder.result_texts(), model.recorder.offered)


def claude_hook(scene, f, model, served=False):
    """Claude Code's own Bash tool behind `cordon hook claude-code` (docs/mcp.md)."""
    exe = os.path.join(BIN, "claude")
    settings_dir = os.path.join(scene.home, ".claude")
    os.makedirs(settings_dir)
    # `|| exit 2`, as docs/mcp.md registers it: a hook that cannot run blocks the call.
    hook = {"type": "command", "command": f"{scene.cordon} hook claude-code || exit 2"}
    settings = {"hooks": {"PreToolUse": [{"matcher": "Bash|Monitor", "hooks": [hook]}]},
                # Which command Claude Code's own rules see: the model's or the rewritten one.
                "permissions": {"deny": [f"Bash({RULE_PROBE})"]}}
    with open(os.path.join(settings_dir, "settings.json"), "w") as out:
        json.dump(settings, out)
    env = scene.env(ANTHROPIC_BASE_URL=model.base_url, ANTHROPIC_API_KEY="sk-standin",
                    DISABLE_AUTOUPDATER="1", CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1")
    server = None
    if served:
        # The user's run server, started as a user would (`cordon serve`), its log kept. A
        # `cordon run` that finds none runs its command itself, silently: the server's log is
        # what proves the rewritten commands were served.
        runtime = os.path.join(scene.dir, "runtime")
        os.makedirs(runtime, mode=0o700)
        env.update(XDG_RUNTIME_DIR=runtime, CORDON_RUN_SERVER="use")
        log = open(os.path.join(scene.dir, "server.log"), "w")
        server = subprocess.Popen([scene.cordon, "serve", "--idle-timeout", "120"], cwd="/",
                                  env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                  stderr=log)
        for _ in range(100):
            if subprocess.run([scene.cordon, "serve", "--status"], env=env,
                              capture_output=True).returncode == 0:
                break
            time.sleep(0.05)
    # No --allowedTools: the hook's own "allow" is what lets the sandboxed commands run.
    try:
        ran = scene.run([exe, "-p", "Run the commands.", "--output-format", "json"], env)
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=10)
            log.close()
    if served:
        with open(os.path.join(scene.dir, "server.log")) as out:
            count = out.read().count("ran a command")
        f.check(count >= 2, f"claude-hook-served: the run server ran the rewritten commands ({count})")
    f.check(ran.returncode == 0, f"claude-hook: `claude -p` exits 0 ({ran.stderr[-300:]!r})")
    results = model.recorder.result_texts()
    scene.judge(f, results, model.recorder.offered, tool="Bash",
                denial="cordon's command policy refused this command")
    # Claude Code matches its permission rules against the command it runs, `cordon run ...`
    # after the rewrite: the hook applies them to the model's command first, so the deny rule
    # still holds. Its twin, without the hook, is Claude Code's own denial.
    probe = results[3] if len(results) > 3 else ""
    f.check("denies this command" in probe,
            f"claude-hook: Claude Code's own deny rule still holds through the hook: {probe[:300]!r}")


def gemini_settings(scene, hooks=None):
    settings_dir = os.path.join(scene.home, ".gemini")
    os.makedirs(settings_dir)
    with open(os.path.join(settings_dir, "trustedFolders.json"), "w") as out:
        json.dump({scene.ws: "TRUST_FOLDER"}, out)
    settings = {"security": {"auth": {"selectedType": "gemini-api-key"}},
                "privacy": {"usageStatisticsEnabled": False},
                "general": {"disableAutoUpdate": True}}
    if hooks:
        settings["hooks"] = hooks
    with open(os.path.join(settings_dir, "settings.json"), "w") as out:
        json.dump(settings, out)


def gemini_shell(scene, f, model):
    """The twin of gemini_hook: without the hook the shell tool writes outside the workspace."""
    gemini_settings(scene)
    env = scene.env(GOOGLE_GEMINI_BASE_URL=model.base_url, GEMINI_API_KEY="standin")
    # --yolo: this version asks before a shell command with a redirection even when the tool is
    # allowed, and cannot ask in print mode.
    ran = scene.run([os.path.join(BIN, "gemini"), "-p", "Run the commands.", "--output-format",
                     "json", "-m", "gemini-2.5-flash", "--yolo"], env)
    f.check(ran.returncode == 0, f"gemini-shell: `gemini -p` exits 0 ({ran.stderr[-300:]!r})")
    f.check(len(model.recorder.result_texts()) >= 3 and os.path.exists(scene.made),
            "gemini-shell: Gemini CLI's shell tool ran the commands itself")
    f.check(os.path.exists(scene.planted),
            f"gemini-shell: without the hook the write outside the workspace lands ({scene.planted})")


def gemini_hook(scene, f, model):
    """Gemini CLI's own run_shell_command behind `cordon hook gemini-cli` (docs/mcp.md)."""
    exe = os.path.join(BIN, "gemini")
    hook = {"type": "command", "name": "cordon",
            "command": f"{scene.cordon} hook gemini-cli || exit 2"}
    gemini_settings(scene, {"BeforeTool": [{"matcher": "run_shell_command", "hooks": [hook]}]})
    env = scene.env(GOOGLE_GEMINI_BASE_URL=model.base_url, GEMINI_API_KEY="standin")
    # Non-interactive Gemini CLI offers its shell tool only when allowed.
    ran = scene.run([exe, "-p", "Run the commands.", "--output-format", "json",
                     "-m", "gemini-2.5-flash", "--allowed-tools", "run_shell_command"], env)
    f.check(ran.returncode == 0, f"gemini-hook: `gemini -p` exits 0 ({ran.stderr[-300:]!r})")
    scene.judge(f, model.recorder.result_texts(), model.recorder.offered, tool="run_shell_command",
                denial="cordon's command policy refused this command")


def claude_bash(scene, f, model):
    """The twin of claude_hook: the same Bash calls without the hook write outside the workspace,
    so the refusal there is the hook's doing."""
    exe = os.path.join(BIN, "claude")
    settings_dir = os.path.join(scene.home, ".claude")
    os.makedirs(settings_dir)
    with open(os.path.join(settings_dir, "settings.json"), "w") as out:
        json.dump({"permissions": {"deny": [f"Bash({RULE_PROBE})"]}}, out)
    env = scene.env(ANTHROPIC_BASE_URL=model.base_url, ANTHROPIC_API_KEY="sk-standin",
                    DISABLE_AUTOUPDATER="1", CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1")
    ran = scene.run([exe, "-p", "Run the commands.", "--output-format", "json",
                     "--allowedTools", "Bash"], env)
    f.check(ran.returncode == 0, f"claude-bash: `claude -p` exits 0 ({ran.stderr[-300:]!r})")
    results = model.recorder.result_texts()
    f.check(len(results) >= 3 and os.path.exists(scene.made),
            f"claude-bash: Claude Code's Bash ran the commands itself ({len(results)} results)")
    f.check(os.path.exists(scene.planted),
            f"claude-bash: without the hook the write outside the workspace lands ({scene.planted})")
    probe = results[3] if len(results) > 3 else ""
    f.check("has been denied" in probe,
            f"claude-bash: without the hook Claude Code's deny rule refuses the command: {probe[:300]!r}")


class AppServer:
    """codex app-server: JSON-RPC messages, one per line, on its stdin and stdout."""

    def __init__(self, argv, cwd, env, log):
        self.proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=log, bufsize=0)
        self.next_id = 0
        self.approvals = 0
        self.notes = []
        self.pending = b""  # read past the last whole line: select() cannot see it

    def send(self, method, params=None, notify=False):
        message = {"method": method}
        if params is not None:
            message["params"] = params
        if not notify:
            self.next_id += 1
            message["id"] = self.next_id
        self.proc.stdin.write((json.dumps(message) + "\n").encode())
        return self.next_id

    def line(self, deadline):
        while b"\n" not in self.pending:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.proc.stdout], [], [], left)[0]:
                return None
            chunk = os.read(self.proc.stdout.fileno(), 65536)
            if not chunk:
                return None
            self.pending += chunk
        line, self.pending = self.pending.split(b"\n", 1)
        return line

    def until(self, done, seconds=TIMEOUT):
        deadline = time.monotonic() + seconds
        while True:
            line = self.line(deadline)
            if line is None:
                return None
            message = json.loads(line)
            if "method" in message and "id" in message:
                self.answer(message)
            else:
                self.notes.append(message)
            if done(message):
                return message
        return None

    def request(self, method, params):
        sent = self.send(method, params)
        return self.until(lambda m: m.get("id") == sent and "method" not in m)

    def answer(self, request):
        # The person at the client approves each call of cordon's tool, as a user clicking
        # "allow" would; anything else is declined.
        meta = (request.get("params") or {}).get("_meta") or {}
        if request["method"] == "mcpServer/elicitation/request" and meta.get("tool_name") == "run_command":
            self.approvals += 1
            result = {"action": "accept", "content": None}
        else:
            result = {"action": "decline", "content": None}
        self.proc.stdin.write((json.dumps({"id": request["id"], "result": result}) + "\n").encode())

    def close(self):
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def codex(scene, f, model):
    exe = os.path.join(BIN, "codex")
    env = scene.env(CODEX_HOME=scene.home, STANDIN_KEY="standin")
    with open(os.path.join(scene.home, "config.toml"), "w") as out:
        out.write(
            'model = "standin-model"\n'
            'model_provider = "standin"\n'
            'approval_policy = "on-request"\n'
            "[model_providers.standin]\n"
            'name = "standin"\n'
            f'base_url = "{model.base_url}/v1"\n'
            'wire_api = "responses"\n'
            'env_key = "STANDIN_KEY"\n')
    added = scene.run([exe, "mcp", "add", "cordon", "--", scene.cordon, "mcp", "--workspace",
                       scene.ws], env)
    f.check(added.returncode == 0, f"codex: `codex mcp add` exits 0 ({added.stderr[-300:]!r})")
    with open(os.path.join(scene.dir, "app-server.log"), "w") as log:
        server = AppServer([exe, "app-server"], scene.ws, env, log)
        try:
            init = server.request("initialize", {"clientInfo": {"name": "cordon-e2e", "version": "1"}})
            f.check(init is not None and "result" in init, "codex: app-server answers initialize")
            server.send("initialized", notify=True)
            started = server.request("thread/start", {"cwd": scene.ws})
            thread = ((started or {}).get("result") or {}).get("thread", {}).get("id")
            f.check(thread is not None, f"codex: thread/start gives a thread ({started})")
            status = server.request("mcpServerStatus/list", {}) or {}
            entries = (status.get("result") or {}).get("data", [])
            cordon = next((e for e in entries if e.get("name") == "cordon"), {})
            f.check(bool(cordon) and "run_command" in json.dumps(cordon.get("tools", {})),
                    f"codex: mcpServerStatus/list shows cordon with run_command ({json.dumps(cordon)[:300]})")
            if thread:
                server.request("turn/start", {"threadId": thread,
                                              "input": [{"type": "text", "text": "Run the commands."}]})
                done = server.until(lambda m: m.get("method") == "turn/completed")
                last = [json.dumps(n)[:400] for n in server.notes[-6:]]
                f.check(done is not None, "codex: the turn completed; last messages:\n" + "\n".join(last))
            f.check(server.approvals == 3, f"codex: each call was put to the person ({server.approvals})")
        finally:
            server.close()
    scene.judge(f, model.recorder.result_texts(), model.recorder.offered)


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    cordon = os.path.abspath(sys.argv[1])
    if not os.path.isdir(BIN):
        print("SKIP: the clients are not installed; run tests/e2e/clients/setup.sh")
        return 77
    only = os.environ.get("CORDON_CLIENTS_ONLY")
    chosen = [c for c in CLIENTS if not only or c == only]
    print(f"clients: {versions()}", flush=True)
    # Outside /tmp and /var/tmp (where the build tree may lie), which the sandbox replaces: a
    # planted file there would be invisible, not refused.
    root = tempfile.mkdtemp(prefix="cordon-clients-",
                            dir=os.environ.get("CORDON_ESCAPE_BASE", "/var/lib"))
    os.chmod(root, 0o755)
    f = Failures()
    try:
        for client in chosen:
            scene = Scene(root, client, cordon)
            started = time.monotonic()
            try:
                if client == "inspector":
                    inspector(scene, f)
                else:
                    tool = {"claude-hook": "Bash", "claude-hook-served": "Bash", "claude-bash": "Bash",
                            "gemini-hook": "run_shell_command",
                            "gemini-shell": "run_shell_command"}.get(client)
                    with StandinModel(scene.commands, tool) as model:
                        {"claude": claude, "claude-hook": claude_hook,
                         "claude-hook-served": lambda s, f, m: claude_hook(s, f, m, served=True),
                         "claude-bash": claude_bash,
                         "gemini": gemini, "gemini-hook": gemini_hook, "gemini-shell": gemini_shell,
                         "codex": codex}[client](scene, f, model)
            except (subprocess.TimeoutExpired, OSError, ValueError, KeyError) as e:
                f.check(False, f"{client}: {type(e).__name__}: {e}")
            print(f"     {client}: {time.monotonic() - started:.1f} s", flush=True)
    finally:
        if not f.items:
            shutil.rmtree(root, ignore_errors=True)
    if f.items:
        print(f"\n{len(f.items)} failed (scratch kept in {root}):", *f.items, sep="\n  ")
        return 1
    print(f"\nall {len(chosen)} clients passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
