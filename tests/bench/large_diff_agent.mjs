// An agent for the large-diff figures, outside the host's crate as pi and
// Claude Code are: Node's own WebSocket client (`node --experimental-websocket`
// on Node 20). Arguments: port, auth header, token, subprotocol ("" for none).
// Reads commands from stdin, one JSON object a line, and writes what
// happened to stdout, one JSON object a line; times are process.hrtime
// (CLOCK_MONOTONIC, the clock of Neovim's vim.uv.hrtime()).
//
//   {"open": {"id", "path", "proposal_file", "tab"}} → {"sent_ns", "id"}
//   {"call": {"id", "method"}}                       → (the reply)
//   every reply                                      → {"reply": id, "text", "at_ns"}
import { readFileSync } from "node:fs";
import { createInterface } from "node:readline";

const [port, header, token, subprotocol] = process.argv.slice(2);
const now = () => process.hrtime.bigint().toString();
const say = (object) => process.stdout.write(JSON.stringify(object) + "\n");

const ws = new WebSocket(`ws://127.0.0.1:${port}/`, {
  protocols: subprotocol ? [subprotocol] : [],
  headers: { [header]: token },
});

ws.onerror = (event) => {
  say({ error: String(event.message || event) });
  process.exit(1);
};
ws.onclose = () => process.exit(0);

ws.onmessage = (event) => {
  const message = JSON.parse(event.data);
  if (message.id === undefined || message.method !== undefined) {
    return;
  }
  const content = message.result && message.result.content;
  say({
    reply: message.id,
    at_ns: now(),
    text: content ? content[0].text : JSON.stringify(message.error || message.result),
  });
};

ws.onopen = () => {
  ws.send(
    JSON.stringify({
      jsonrpc: "2.0",
      id: "init",
      method: "initialize",
      params: {
        protocolVersion: "2025-06-18",
        capabilities: {},
        clientInfo: { name: "pi-ide", version: "bench" },
      },
    }),
  );
  createInterface({ input: process.stdin }).on("line", (line) => {
    const command = JSON.parse(line);
    if (command.open) {
      const { id, path, proposal_file, tab } = command.open;
      const frame = JSON.stringify({
        jsonrpc: "2.0",
        id,
        method: "tools/call",
        params: {
          name: "openDiff",
          arguments: {
            old_file_path: path,
            new_file_path: path,
            new_file_contents: readFileSync(proposal_file, "utf8"),
            tab_name: tab,
          },
        },
      });
      const sent = now();
      ws.send(frame);
      say({ sent_ns: sent, id });
    } else if (command.call) {
      const { id, method } = command.call;
      ws.send(JSON.stringify({ jsonrpc: "2.0", id, method, params: {} }));
    }
  });
};
