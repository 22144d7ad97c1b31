"""Another program holding Codex's IDE socket (as Codex's desktop app or
another editor may): answers every request with a context of its own and
logs each request, one JSON object a line.

python3 decoy_ipc.py <socket-path> <log-file>

Creates the socket's directory (0700) and the socket (0600), and writes
<log-file> (empty) once it listens.
"""

import json
import os
import socket
import struct
import sys
import threading

PATH, LOG = sys.argv[1], sys.argv[2]
os.makedirs(os.path.dirname(PATH), mode=0o700, exist_ok=True)
server = socket.socket(socket.AF_UNIX)
server.bind(PATH)
os.chmod(PATH, 0o600)
server.listen()
LOCK = threading.Lock()
with open(LOG, "w"):
    pass


def read_exact(conn, n):
    data = b""
    while len(data) < n:
        more = conn.recv(n - len(data))
        if not more:
            return None
        data += more
    return data


def serve(conn):
    while True:
        header = read_exact(conn, 4)
        if header is None:
            return
        message = json.loads(read_exact(conn, struct.unpack("<I", header)[0]))
        with LOCK, open(LOG, "a") as log:
            log.write(json.dumps(message) + "\n")
        context = {
            "activeFile": {
                "label": "decoy.txt",
                "path": "decoy.txt",
                "fsPath": "/decoy/decoy.txt",
                "selection": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 5}},
                "activeSelectionContent": "decoy",
                "selections": [],
            },
            "openTabs": [],
        }
        answer = {
            "type": "response",
            "requestId": message.get("requestId"),
            "resultType": "success",
            "result": {"ideContext": context, "clientId": "decoy"},
        }
        data = json.dumps(answer).encode()
        conn.sendall(struct.pack("<I", len(data)) + data)


while True:
    conn, _ = server.accept()
    threading.Thread(target=serve, args=(conn,), daemon=True).start()
