"""A stand-in for an OpenAI-compatible chat API, so the real Qwen Code can be
driven against Neovim without a key or network (OPENAI_BASE_URL).

python3 stub_openai.py <port-file> <log-file>

Listens on a free loopback port (written to <port-file>) and logs every
request body to <log-file>, one JSON object a line. A prompt naming a file
as `edit <path> to <text>` (a relative path is taken from the stub's
working directory) gets a `read_file` tool call for it when it exists
(Qwen Code overwrites only what it has read), then a `write_file` call;
once that tool's answer is back, a short text ends the turn. Every other
request gets a plain answer.
"""

import json
import os
import re
import sys

from loopback import JsonHandler, serve

PORT_FILE, LOG_FILE = sys.argv[1], sys.argv[2]


def texts_of(content):
    if isinstance(content, str):
        return [content]
    if isinstance(content, list):
        return [part.get("text", "") for part in content if isinstance(part, dict)]
    return []


def tool_call(name, **arguments):
    return {"tool": {"name": name, "arguments": json.dumps(arguments)}}


def answer(body):
    """A tool call {name, arguments} or a text."""
    messages = body.get("messages") or []
    users = [i for i, message in enumerate(messages) if message.get("role") == "user"]
    if not users:
        return {"text": "Hello from the stub model."}
    # The prompt ends a text of the newest user message (the CLI puts its
    # reminders and the editor context before it). Requests of its own
    # (suggestions, memory) end with another user message: a text.
    prompt = users[-1]
    wanted = None
    for text in texts_of(messages[prompt].get("content")):
        wanted = re.search(r"(?:^|\n)edit (\S+) to (\S+)\s*$", text) or wanted
    if not wanted:
        return {"text": "Hello from the stub model."}
    path, content = os.path.abspath(wanted.group(1)), wanted.group(2) + "\n"
    called = [
        call.get("function", {}).get("name")
        for message in messages[prompt + 1 :]
        for call in message.get("tool_calls") or []
    ]
    if not called:
        if os.path.exists(path):
            return tool_call("read_file", file_path=path)
        return tool_call("write_file", file_path=path, content=content)
    if called[-1] == "read_file" and messages[-1].get("role") == "tool":
        return tool_call("write_file", file_path=path, content=content)
    return {"text": "Done."}


def chunk(delta, finish=None):
    return {
        "id": "chatcmpl-stub",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "stub",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


USAGE = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}


def streamed(reply):
    if "tool" in reply:
        call = {"index": 0, "id": "call_stub", "type": "function", "function": reply["tool"]}
        events = [chunk({"role": "assistant", "tool_calls": [call]}), chunk({}, "tool_calls")]
    else:
        events = [chunk({"role": "assistant", "content": reply["text"]}), chunk({}, "stop")]
    events[-1]["usage"] = USAGE
    data = "".join(f"data: {json.dumps(event)}\n\n" for event in events) + "data: [DONE]\n\n"
    return data.encode()


def whole(reply):
    message = {"role": "assistant", "content": reply.get("text")}
    finish = "stop"
    if "tool" in reply:
        message["tool_calls"] = [{"id": "call_stub", "type": "function", "function": reply["tool"]}]
        finish = "tool_calls"
    return {
        "id": "chatcmpl-stub",
        "object": "chat.completion",
        "created": 0,
        "model": "stub",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": USAGE,
    }


class Handler(JsonHandler):
    def do_GET(self):
        if self.path.rstrip("/").endswith("/models"):
            return self.send_json({"object": "list", "data": [{"id": "stub", "object": "model"}]})
        self.send_json({})

    def do_POST(self):
        body = self.read_logged(LOG_FILE)
        reply = answer(body)
        if body.get("stream"):
            data = streamed(reply)
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return
        self.send_json(whole(reply))


serve(Handler, PORT_FILE)
