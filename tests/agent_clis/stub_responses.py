"""A stand-in for the OpenAI Responses API, so the real Codex CLI can be
driven against Neovim without a key or network (a model provider with
`base_url` = this server, `wire_api = "responses"`).

python3 stub_responses.py <port-file> <log-file>

Listens on a free loopback port (written to <port-file>) and logs every
request body to <log-file>, one JSON object a line. In a turn (a request
offering Codex's tools), a prompt ending in `edit <path> to <word>` (the
path relative to the stub's working directory) gets an `apply_patch` call
that replaces the file's lines with <word> (or adds the file); once the
call's output is back, `Done.` ends the turn. Anything else gets a plain
answer.
"""

import json
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "gemini_cli"))
from loopback import JsonHandler, serve  # noqa: E402

PORT_FILE, LOG_FILE = sys.argv[1], sys.argv[2]
COUNT = [0]


def texts(item):
    content = item.get("content")
    if isinstance(content, str):
        return [content]
    return [part.get("text", "") for part in content or [] if isinstance(part, dict)]


def patch_for(path, word):
    if os.path.exists(path):
        with open(path) as f:
            old = f.read().splitlines()
        body = "".join(f"-{line}\n" for line in old)
        return f"*** Begin Patch\n*** Update File: {path}\n@@\n{body}+{word}\n*** End Patch"
    return f"*** Begin Patch\n*** Add File: {path}\n+{word}\n*** End Patch"


def answer(body):
    """{"patch": text} or {"text": text}."""
    tools = [tool.get("name") for tool in body.get("tools") or []]
    items = body.get("input") or []
    users = [
        i
        for i, item in enumerate(items)
        if item.get("type") == "message" and item.get("role") == "user"
    ]
    # A request of Codex's own (a title) offers no shell: never a turn.
    if "exec_command" not in tools or not users:
        return {"text": "Hello from the stub model."}
    last = users[-1]
    wanted = None
    for text in texts(items[last]):
        wanted = re.search(r"(?:^|\n)edit (\S+) to (\S+)\s*$", text) or wanted
    if not wanted:
        return {"text": "Hello from the stub model."}
    if any(item.get("type") == "custom_tool_call_output" for item in items[last + 1 :]):
        return {"text": "Done."}
    return {"patch": patch_for(wanted.group(1), wanted.group(2))}


def events(reply, n):
    if "patch" in reply:
        item = {
            "type": "custom_tool_call",
            "name": "apply_patch",
            "input": reply["patch"],
            "call_id": f"call_{n}",
        }
    else:
        item = {
            "type": "message",
            "role": "assistant",
            "id": f"msg_{n}",
            "content": [{"type": "output_text", "text": reply["text"]}],
        }
    usage = {
        "input_tokens": 1,
        "input_tokens_details": None,
        "output_tokens": 1,
        "output_tokens_details": None,
        "total_tokens": 2,
    }
    return [
        {"type": "response.created", "response": {"id": f"resp_{n}"}},
        {"type": "response.output_item.done", "item": item},
        {"type": "response.completed", "response": {"id": f"resp_{n}", "usage": usage}},
    ]


class Handler(JsonHandler):
    def do_GET(self):
        self.send_json({"models": []})

    def do_POST(self):
        body = self.read_logged(LOG_FILE)
        COUNT[0] += 1
        stream = "".join(
            f"event: {event['type']}\ndata: {json.dumps(event)}\n\n"
            for event in events(answer(body), COUNT[0])
        ).encode()
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("content-length", str(len(stream)))
        self.end_headers()
        self.wfile.write(stream)


serve(Handler, PORT_FILE)
