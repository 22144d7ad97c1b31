"""What the loopback stand-ins here share: a quiet JSON handler, and a server
on a free port written to a file for the test to read."""

import json
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class JsonHandler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def read_json(self):
        """The request body as JSON ({} when empty or not JSON)."""
        length = int(self.headers.get("content-length") or 0)
        try:
            return json.loads(self.rfile.read(length) or b"{}")
        except ValueError:
            return {}

    def read_logged(self, log_file):
        """The request body as JSON, logged to `log_file` with its path, one
        JSON object a line."""
        body = self.read_json()
        with open(log_file, "a") as log:
            log.write(json.dumps({"path": self.path, "body": body}) + "\n")
        return body

    def send_json(self, value, headers=()):
        data = json.dumps(value).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        for name, text in headers:
            self.send_header(name, text)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def serve(handler, port_file):
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    with open(port_file, "w") as f:
        f.write(str(server.server_address[1]))
    server.serve_forever()
