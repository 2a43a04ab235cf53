"""One `run_command` through `cordon mcp` over stdio, as an agent's MCP client sends it; shared
by the end-to-end suites that run each case one-shot, served and through MCP."""
import json
import subprocess


def run_command(argv, text, env=None, cwd=None, client="e2e"):
    """`argv` starts the MCP server (`cordon mcp ...`, possibly behind a prefix such as `ip
    netns exec`); returns the tool result's structuredContent for running `text`."""
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                    "clientInfo": {"name": client, "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
         "params": {"name": "run_command", "arguments": {"command": text}}},
    ]
    proc = subprocess.Popen(argv, env=env, cwd=cwd, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    for m in messages:
        proc.stdin.write(json.dumps(m) + "\n")
    proc.stdin.flush()
    result = None
    for line in proc.stdout:  # stdin stays open until the answer: EOF would cancel
        reply = json.loads(line)
        if reply.get("id") == 2:
            result = reply["result"]["structuredContent"]
            break
    proc.stdin.close()
    proc.wait(timeout=30)
    return result
