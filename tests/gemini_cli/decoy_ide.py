"""Another editor's IDE companion server, to check that a CLI started in
Neovim's terminal connects to that Neovim and not to this editor, which has
the same workspace open.

python3 decoy_ide.py <port-file> <log-file>

Serves just enough MCP over Streamable HTTP for Gemini CLI and Qwen Code to
connect (`initialize`, `tools/list`, notifications), writes its port to
<port-file> and one line per request to <log-file>. The discovery files
naming this process and port are written by whoever starts it.
"""

import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

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


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

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
        length = int(self.headers.get("content-length") or 0)
        try:
            message = json.loads(self.rfile.read(length) or b"{}")
        except ValueError:
            message = {}
        self.log(message.get("method", ""))
        if "id" not in message:
            self.send_response(202)
            self.send_header("content-length", "0")
            self.end_headers()
            return
        data = json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result_of(message)}).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("mcp-session-id", "decoy")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
with open(PORT_FILE, "w") as f:
    f.write(str(server.server_address[1]))
server.serve_forever()
