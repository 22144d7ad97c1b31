"""A stand-in for the Gemini API, so the real Gemini CLI can be driven by
hand against Neovim without a key or network (GOOGLE_GEMINI_BASE_URL).

python3 stub_model.py <port-file> <log-file>

Listens on a free loopback port (written to <port-file>) and logs every
request body to <log-file>, one JSON object a line, so what the CLI sent
(the IDE context included) can be read back. A prompt naming a file as
`edit <path> to <text>` gets a `write_file` call for it (a relative path
is taken from the stub's working directory), `run command: <line>` a
`run_shell_command` call (in the newest message only); once the tool's answer is
back, a short text ends the turn. Every other request
(generateContent: next-speaker checks, routing) gets a plain answer.
"""

import json
import os
import re
import sys

from loopback import JsonHandler, serve

PORT_FILE, LOG_FILE = sys.argv[1], sys.argv[2]


def answer(body):
    contents = body.get("contents") or []
    last = contents[-1].get("parts", []) if contents else []
    if any("functionResponse" in part for part in last):
        return [{"text": "Done."}]
    # The newest prompt of the request: the CLI may send the editor context
    # after it.
    texts = [part.get("text", "") for content in contents for part in content.get("parts", [])]
    command = None
    for part in last:
        command = re.search(r"run command: (.+)$", part.get("text", ""), re.M) or command
    if command:
        return [{"functionCall": {"name": "run_shell_command", "args": {"command": command.group(1)}}}]
    wanted = None
    for text in texts:
        wanted = re.search(r"edit (\S+) to (\S+)", text) or wanted
    if wanted:
        path, content = os.path.abspath(wanted.group(1)), wanted.group(2)
        return [{"functionCall": {"name": "write_file", "args": {"file_path": path, "content": content + "\n"}}}]
    return [{"text": "Hello from the stub model."}]


def filled(schema):
    """A value of JSON schema `schema` (routing and next-speaker checks)."""
    kind = str(schema.get("type", "")).lower()
    if "enum" in schema:
        return "user" if "user" in schema["enum"] else schema["enum"][0]
    if kind == "object":
        return {name: ("user" if name == "next_speaker" else filled(sub))
                for name, sub in (schema.get("properties") or {}).items()}
    if kind == "array":
        return []
    if kind in ("integer", "number"):
        return 10
    if kind == "boolean":
        return False
    return "stub"


def response(parts):
    return {
        "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
    }


class Handler(JsonHandler):
    def do_POST(self):
        body = self.read_logged(LOG_FILE)
        if ":countTokens" in self.path:
            return self.send_json({"totalTokens": 10})
        if ":streamGenerateContent" in self.path:
            payload = json.dumps(response(answer(body)))
            data = f"data: {payload}\r\n\r\n".encode()
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return
        schema = (body.get("generationConfig") or {}).get("responseJsonSchema")
        text = json.dumps(filled(schema)) if schema else "ok"
        self.send_json(response([{"text": text}]))


serve(Handler, PORT_FILE)
