"""Another editor's IDE companion server, to check that a CLI started in
Neovim's terminal connects to that Neovim and not to this editor, which has
the same workspace open.

python3 decoy_ide.py <port-file> <log-file>

Serves just enough MCP over Streamable HTTP for Gemini CLI and Qwen Code to
connect (`initialize`, `tools/list`, notifications), writes its port to
<port-file> and one line per request to <log-file>. The discovery files
naming this process and port are written by whoever starts it.
"""

import sys

from loopback import JsonHandler, serve

PORT_FILE, LOG_FILE = sys.argv[1], sys.argv[2]


def result_of(message):
    method = message.get("method")
    if method == "initialize":
        version = (message.get("params") or {}).get("protocolVersion", "2025-06-18")
        return {
            "protocolVersion": version,
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "decoy-ide", "version": "1.0.0"},
        }
    if method == "tools/list":
        return {"tools": []}
    return {}


class Handler(JsonHandler):

    def log(self, what):
        with open(LOG_FILE, "a") as log:
            log.write(f"{self.command} {self.path} {what}\n")

    def do_GET(self):
        # No server-to-client event stream.
        self.log("")
        self.send_response(405)
        self.send_header("content-length", "0")
        self.end_headers()

    def do_DELETE(self):
        self.log("")
        self.send_response(200)
        self.send_header("content-length", "0")
        self.end_headers()

    def do_POST(self):
        message = self.read_json()
        self.log(message.get("method", ""))
        if "id" not in message:
            self.send_response(202)
            self.send_header("content-length", "0")
            self.end_headers()
            return
        self.send_json(
            {"jsonrpc": "2.0", "id": message["id"], "result": result_of(message)},
            headers=[("mcp-session-id", "decoy")],
        )


serve(Handler, PORT_FILE)
