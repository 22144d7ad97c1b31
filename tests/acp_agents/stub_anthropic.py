"""A stand-in for the Anthropic Messages API, so Claude Code (through
claude-agent-acp) runs in the chat's tests without a key or network
(ANTHROPIC_BASE_URL).

python3 stub_anthropic.py <port-file> <log-file>

Every request body is logged to <log-file>, one JSON object a line. The
newest user message decides the answer, streamed as the API streams it:
`edit <path> to <word>` calls the Read tool, then the Write tool the
request offers (the ACP adapter's own when it has one), `run command:
<line>` the Bash tool; once those are called, "Done."; anything else
"Hello from the stub model.".
"""

import json
import re
import sys

sys.path.insert(0, __import__("os").path.join(__import__("os").path.dirname(__file__), "..", "gemini_cli"))
from loopback import JsonHandler, serve  # noqa: E402

PORT_FILE, LOG_FILE = sys.argv[1], sys.argv[2]


def texts(message):
    content = message.get("content")
    if isinstance(content, str):
        return [content]
    return [part.get("text", "") for part in content or [] if part.get("type") == "text"]


def tool_named(body, suffix):
    names = [tool.get("name", "") for tool in body.get("tools") or []]
    wanted = [name for name in names if name == suffix or name.endswith("__" + suffix)]
    # The ACP adapter's tool (mcp__acp__Write) goes through the editor.
    wanted.sort(key=lambda name: not name.startswith("mcp__acp__"))
    return wanted[0] if wanted else None


def answer(body):
    messages = body.get("messages") or []
    # Claude Code may send a prompt in the message that carries the last
    # tool results, and repeat it there: what the assistant called last
    # decides the next step.
    before = messages[-2].get("content") if len(messages) > 1 and messages[-2].get("role") == "assistant" else []
    calls = [part for part in before or [] if isinstance(part, dict) and part.get("type") == "tool_use"]
    prompts = [t for m in messages if m.get("role") == "user" for t in texts(m) if not t.startswith("<system-reminder>")]
    newest = prompts[-1] if prompts else ""
    command = re.search(r"run command: (.+)$", newest, re.M)
    edit = re.search(r"edit (\S+) to (\S+)", newest)
    if calls:
        name, given = calls[-1].get("name", ""), calls[-1].get("input") or {}
        if name.endswith("Read") and edit and given.get("file_path") == edit.group(1):
            return {"tool": tool_named(body, "Write"), "input": {"file_path": edit.group(1), "content": edit.group(2) + "\n"}}
        answered = (name.endswith("Write") and edit and given.get("file_path") == edit.group(1)) or (
            name.endswith("Bash") and command and given.get("command") == command.group(1))
        if answered or not (command or edit):
            return {"text": "Done."}
    if command and tool_named(body, "Bash"):
        return {"tool": tool_named(body, "Bash"), "input": {"command": command.group(1), "description": "run it"}}
    if edit and tool_named(body, "Read"):
        # Claude Code writes only files it has read.
        return {"tool": tool_named(body, "Read"), "input": {"file_path": edit.group(1)}}
    return {"text": "Hello from the stub model."}


def events(reply, model):
    usage = {"input_tokens": 10, "output_tokens": 5}
    yield "message_start", {"type": "message_start", "message": {
        "id": "msg_stub", "type": "message", "role": "assistant", "model": model,
        "content": [], "stop_reason": None, "stop_sequence": None, "usage": usage}}
    if "tool" in reply:
        yield "content_block_start", {"type": "content_block_start", "index": 0, "content_block": {
            "type": "tool_use", "id": reply["id"], "name": reply["tool"], "input": {}}}
        yield "content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {
            "type": "input_json_delta", "partial_json": json.dumps(reply["input"])}}
        stop = "tool_use"
    else:
        yield "content_block_start", {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}
        yield "content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": reply["text"]}}
        stop = "end_turn"
    yield "content_block_stop", {"type": "content_block_stop", "index": 0}
    yield "message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None}, "usage": usage}
    yield "message_stop", {"type": "message_stop"}


class Handler(JsonHandler):
    def do_POST(self):
        body = self.read_logged(LOG_FILE)
        if "count_tokens" in self.path:
            return self.send_json({"input_tokens": 10})
        if not self.path.startswith("/v1/messages"):
            return self.send_json({})
        reply = answer(body)
        reply["id"] = "toolu_%d" % (sum(1 for _ in open(LOG_FILE)))
        model = body.get("model", "stub")
        if not body.get("stream"):
            content = [{"type": "text", "text": reply.get("text", "")}] if "text" in reply else [
                {"type": "tool_use", "id": reply["id"], "name": reply["tool"], "input": reply["input"]}]
            return self.send_json({"id": "msg_stub", "type": "message", "role": "assistant", "model": model,
                                   "content": content, "stop_reason": "end_turn" if "text" in reply else "tool_use",
                                   "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 5}})
        data = b"".join(f"event: {name}\ndata: {json.dumps(event)}\n\n".encode() for name, event in events(reply, model))
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        self.read_logged(LOG_FILE)
        self.send_json({})


serve(Handler, PORT_FILE)
