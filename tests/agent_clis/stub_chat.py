"""A stand-in for an OpenAI-compatible chat API, so the real opencode can
be driven against Neovim without a key or network (a provider with
`npm: "@ai-sdk/openai-compatible"` and `baseURL` = this server + /v1).

python3 stub_chat.py <port-file> <log-file>

Listens on a free loopback port (written to <port-file>) and logs every
request body to <log-file>, one JSON object a line. In a turn (a request
offering tools), a prompt ending in `edit <path> to <word>` (relative to
the stub's working directory) gets a `read` call when the file exists
(opencode writes only what it has read), then a `write` call with <word>;
once that tool's answer is back, `Done.` ends the turn. Anything else (a
title, a plain prompt) gets a plain answer.
"""

import json
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "gemini_cli"))
from loopback import JsonHandler, serve  # noqa: E402

PORT_FILE, LOG_FILE = sys.argv[1], sys.argv[2]
COUNT = [0]


def texts_of(content):
    if isinstance(content, str):
        return [content]
    if isinstance(content, list):
        return [part.get("text", "") for part in content if isinstance(part, dict)]
    return []


def call(name, **arguments):
    return {"tool": {"name": name, "arguments": json.dumps(arguments)}}


def answer(body):
    messages = body.get("messages") or []
    users = [i for i, message in enumerate(messages) if message.get("role") == "user"]
    if not users or not body.get("tools"):
        return {"text": "Hello from the stub model."}
    prompt = users[-1]
    wanted = None
    for text in texts_of(messages[prompt].get("content")):
        wanted = re.search(r"(?:^|\n)edit (\S+) to (\S+)\s*$", text) or wanted
    if not wanted:
        return {"text": "Hello from the stub model."}
    path, content = os.path.abspath(wanted.group(1)), wanted.group(2) + "\n"
    called = [
        tool.get("function", {}).get("name")
        for message in messages[prompt + 1 :]
        for tool in message.get("tool_calls") or []
    ]
    if not called:
        if os.path.exists(path):
            return call("read", filePath=path)
        return call("write", filePath=path, content=content)
    if called[-1] == "read":
        return call("write", filePath=path, content=content)
    return {"text": "Done."}


def chunk(delta, finish=None):
    return {
        "id": "chatcmpl-stub",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "stub",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


class Handler(JsonHandler):
    def do_GET(self):
        self.send_json({"object": "list", "data": [{"id": "stub", "object": "model"}]})

    def do_POST(self):
        body = self.read_logged(LOG_FILE)
        COUNT[0] += 1
        reply = answer(body)
        if "tool" in reply:
            tool = {"index": 0, "id": f"call_{COUNT[0]}", "type": "function", "function": reply["tool"]}
            events = [chunk({"role": "assistant", "tool_calls": [tool]}), chunk({}, "tool_calls")]
        else:
            events = [chunk({"role": "assistant", "content": reply["text"]}), chunk({}, "stop")]
        events[-1]["usage"] = {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
        data = "".join(f"data: {json.dumps(event)}\n\n" for event in events) + "data: [DONE]\n\n"
        data = data.encode()
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


serve(Handler, PORT_FILE)
