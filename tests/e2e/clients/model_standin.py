"""A loopback stand-in for the model APIs that agent clients call, so that the real clients can
be driven end to end without keys or a network.

It plays one scripted conversation per client session: while fewer of its tool calls have been
answered than the script has commands, it answers with a call of cordon's run_command tool (found
by name in the tools the client offers) for the next command; then with a final text. It records
what the clients sent: the tool names offered and the text of every tool result, which the test
judges.

Three wire formats, as their public API references describe them:
  Anthropic Messages   POST /v1/messages              (Claude Code)
  Gemini               POST /v1beta/models/M:{stream}generateContent (Gemini CLI)
  OpenAI Responses     POST /v1/responses             (Codex)
Streaming answers are server-sent events; every answer is complete in one response.
"""

import http.server
import json
import re
import threading

FINAL_TEXT = "All commands ran; done."
CALL_PREFIX = "cordon_call_"


def is_cordon_tool(name):
    """cordon's run_command as each client names it: plain, or behind the server's name."""
    return name == "run_command" or ("cordon" in name and name.endswith("run_command"))


class Recorder:
    def __init__(self, commands, tool=None):
        self.commands = list(commands)
        # The tool the script calls: cordon's run_command (default) or one named exactly, such
        # as Claude Code's own Bash.
        self.wanted = (lambda name: name == tool) if tool else is_cordon_tool
        self.lock = threading.Lock()
        self.offered = set()  # every tool name a client offered
        self.results = {}  # call id -> result text, in call order of the ids
        self.requests = []  # (path, had cordon's tool)

    def note(self, path, tools, results):
        with self.lock:
            self.offered.update(tools)
            self.requests.append((path, any(self.wanted(t) for t in tools)))
            for call_id, text in results:
                self.results.setdefault(call_id, text)

    def result_texts(self):
        with self.lock:
            return [self.results[k] for k in sorted(self.results, key=call_index)]

    def next_step(self, tools, answered):
        """(tool name, command, call id) of the next call, or None for the final text."""
        tool = next((t for t in tools if self.wanted(t)), None)
        if tool is None or answered >= len(self.commands):
            return None
        return tool, self.commands[answered], f"{CALL_PREFIX}{answered}"


def call_index(call_id):
    match = re.search(r"(\d+)$", call_id)
    return int(match.group(1)) if match else 1 << 30


def text_of(value):
    """The text of a tool result in any of the shapes the clients send."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(text_of(v) for v in value)
    if isinstance(value, dict):
        if value.get("type") == "text" and "text" in value:
            return value["text"]
        return json.dumps(value, sort_keys=True)
    return str(value)


# ---- Anthropic Messages -------------------------------------------------------------------


def anthropic(recorder, body):
    tools = [t.get("name", "") for t in body.get("tools", []) if isinstance(t, dict)]
    results = []
    for message in body.get("messages", []):
        content = message.get("content")
        if not isinstance(content, list):
            continue
        for block in content:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                call_id = block.get("tool_use_id", "")
                if call_id.startswith(CALL_PREFIX):
                    results.append((call_id, text_of(block.get("content", ""))))
    recorder.note("/v1/messages", tools, results)
    step = recorder.next_step(tools, len(results))
    if step is None:
        block = {"type": "text", "text": FINAL_TEXT}
        stop = "end_turn"
    else:
        tool, command, call_id = step
        block = {"type": "tool_use", "id": call_id, "name": tool, "input": {"command": command}}
        stop = "tool_use"
    message = {
        "id": f"msg_standin_{len(recorder.requests)}",
        "type": "message",
        "role": "assistant",
        "model": body.get("model", "standin"),
        "content": [block],
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 10},
    }
    if not body.get("stream"):
        return "application/json", json.dumps(message).encode()
    start = dict(message, content=[], stop_reason=None)
    if block["type"] == "text":
        first = {"type": "text", "text": ""}
        delta = {"type": "text_delta", "text": block["text"]}
    else:
        first = dict(block, input={})
        delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
    events = [
        ("message_start", {"type": "message_start", "message": start}),
        ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": first}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                           "usage": {"output_tokens": 10}}),
        ("message_stop", {"type": "message_stop"}),
    ]
    return "text/event-stream", sse(events)


# ---- Gemini -------------------------------------------------------------------------------


def gemini(recorder, body, stream):
    tools = []
    for entry in body.get("tools", []) or []:
        for declaration in entry.get("functionDeclarations", []) or []:
            tools.append(declaration.get("name", ""))
    results = []
    for content in body.get("contents", []) or []:
        for part in content.get("parts", []) or []:
            response = part.get("functionResponse") if isinstance(part, dict) else None
            if response and recorder.wanted(response.get("name", "")):
                call_id = response.get("id") or f"{CALL_PREFIX}{len(results)}"
                results.append((call_id, text_of(response.get("response", ""))))
    recorder.note("generateContent", tools, results)
    step = recorder.next_step(tools, len(results))
    if step is None:
        part = {"text": FINAL_TEXT}
    else:
        tool, command, call_id = step
        part = {"functionCall": {"id": call_id, "name": tool, "args": {"command": command}}}
    answer = {
        "candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 10, "totalTokenCount": 20},
        "modelVersion": "standin",
    }
    if not stream:
        return "application/json", json.dumps(answer).encode()
    return "text/event-stream", sse([(None, answer)])


# ---- OpenAI Responses ---------------------------------------------------------------------


def responses(recorder, body):
    # Codex offers an MCP server's tools inside a namespace ({type: namespace, name, tools}); a
    # call of one names both.
    where = {}
    for tool in body.get("tools", []) or []:
        if not isinstance(tool, dict):
            continue
        if tool.get("type") == "namespace":
            for inner in tool.get("tools", []) or []:
                where[f"{tool.get('name', '')}__{inner.get('name', '')}"] = (tool.get("name"), inner.get("name"))
        else:
            name = tool.get("name") or (tool.get("function") or {}).get("name", "")
            where[name] = (None, name)
    tools = list(where)
    results = []
    for item in body.get("input", []) or []:
        if isinstance(item, dict) and item.get("type") == "function_call_output":
            call_id = item.get("call_id", "")
            if call_id.startswith(CALL_PREFIX):
                results.append((call_id, text_of(item.get("output", ""))))
    recorder.note("/v1/responses", tools, results)
    step = recorder.next_step(tools, len(results))
    response_id = f"resp_standin_{len(recorder.requests)}"
    if step is None:
        item = {"type": "message", "id": f"msg_{response_id}", "role": "assistant", "status": "completed",
                "content": [{"type": "output_text", "text": FINAL_TEXT, "annotations": []}]}
    else:
        tool, command, call_id = step
        namespace, name = where[tool]
        item = {"type": "function_call", "id": f"fc_{response_id}", "call_id": call_id, "name": name,
                "arguments": json.dumps({"command": command}), "status": "completed"}
        if namespace:
            item["namespace"] = namespace
    usage = {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 10,
             "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 20}
    base = {"id": response_id, "object": "response", "model": body.get("model", "standin")}
    events = [
        ("response.created", {"type": "response.created", "response": dict(base, status="in_progress", output=[])}),
        ("response.output_item.added", {"type": "response.output_item.added", "output_index": 0, "item": item}),
        ("response.output_item.done", {"type": "response.output_item.done", "output_index": 0, "item": item}),
        ("response.completed", {"type": "response.completed",
                                "response": dict(base, status="completed", output=[item], usage=usage)}),
    ]
    if not body.get("stream"):
        return "application/json", json.dumps(events[-1][1]["response"]).encode()
    return "text/event-stream", sse(events)


def sse(events):
    out = []
    for name, data in events:
        if name:
            out.append(f"event: {name}\n")
        out.append(f"data: {json.dumps(data)}\n\n")
    return "".join(out).encode()


class StandinModel:
    """The server on 127.0.0.1 with an ephemeral port; base_url for the clients' settings."""

    def __init__(self, commands, tool=None):
        self.recorder = Recorder(commands, tool)
        recorder = self.recorder

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def reply(self, status, kind, data):
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                self.reply(404, "application/json", b'{"error":"the stand-in serves POST only"}')

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    self.reply(400, "application/json", b'{"error":"not JSON"}')
                    return
                path = self.path.split("?", 1)[0]
                if path.endswith("/messages/count_tokens"):
                    answer = ("application/json", b'{"input_tokens": 10}')
                elif path.endswith("/messages"):
                    answer = anthropic(recorder, body)
                elif path.endswith(":countTokens"):
                    answer = ("application/json", b'{"totalTokens": 10}')
                elif path.endswith(":streamGenerateContent"):
                    answer = gemini(recorder, body, stream=True)
                elif path.endswith(":generateContent"):
                    answer = gemini(recorder, body, stream=False)
                elif path.endswith("/responses"):
                    answer = responses(recorder, body)
                else:
                    self.reply(404, "application/json", b'{"error":"unknown path"}')
                    return
                self.reply(200, *answer)

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()
