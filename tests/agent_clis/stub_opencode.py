"""A stand-in for opencode's server as `:PiIde agent opencode` starts it,
for the edge cases of its reviewed edits (the real opencode is driven in
real_opencode.rs).

python3 stub_opencode.py <asked-file> <log-file> --port <port>

Listens on 127.0.0.1:<port> (what Neovim chose), answering only to the
basic-auth password in $OPENCODE_SERVER_PASSWORD. `GET /permission` lists
the permission requests in <asked-file> (a JSON list) not answered yet;
`GET /global/event` is an event stream with a heartbeat each second;
`POST /permission/<id>/reply` answers one. Every request is logged to
<log-file>, one JSON object a line: {method, path, authorized, body}.
"""

import base64
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "gemini_cli"))
from http.server import ThreadingHTTPServer  # noqa: E402

from loopback import JsonHandler  # noqa: E402

ASKED_FILE, LOG_FILE = sys.argv[1], sys.argv[2]
PORT = int(sys.argv[sys.argv.index("--port") + 1])
PASSWORD = os.environ.get("OPENCODE_SERVER_PASSWORD", "")
EXPECTED = "Basic " + base64.b64encode(f"opencode:{PASSWORD}".encode()).decode()
ANSWERED = set()


class Handler(JsonHandler):
    def authorized(self, body=None):
        authorized = bool(PASSWORD) and self.headers.get("authorization") == EXPECTED
        with open(LOG_FILE, "a") as log:
            entry = {"method": self.command, "path": self.path, "authorized": authorized, "body": body}
            log.write(json.dumps(entry) + "\n")
        if not authorized:
            self.send_response(401)
            self.send_header("content-length", "0")
            self.end_headers()
        return authorized

    def do_GET(self):
        if not self.authorized():
            return
        if self.path.startswith("/permission"):
            with open(ASKED_FILE) as f:
                asked = json.load(f)
            self.send_json([a for a in asked if a["id"] not in ANSWERED])
        elif self.path.startswith("/global/event"):
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.end_headers()
            try:
                while True:
                    event = {"directory": os.getcwd(), "payload": {"type": "server.heartbeat", "properties": {}}}
                    self.wfile.write(f"data: {json.dumps(event)}\n\n".encode())
                    self.wfile.flush()
                    time.sleep(1)
            except OSError:
                pass
        else:
            self.send_json(None)

    def do_POST(self):
        body = self.read_json()
        if not self.authorized(body):
            return
        parts = self.path.split("?")[0].split("/")
        if len(parts) == 4 and parts[1] == "permission" and parts[3] == "reply":
            ANSWERED.add(parts[2])
        self.send_json(True)


ThreadingHTTPServer(("127.0.0.1", PORT), Handler).serve_forever()
