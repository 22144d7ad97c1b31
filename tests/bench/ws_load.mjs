// The load of `cargo bench --bench figures -- side_by_side` from Node, as
// pi and Claude Code are: Node's own WebSocket client (`node
// --experimental-websocket` on Node 20), every agent in this one process.
//
//   node ws_load.mjs PORT TOKEN CLIENTS REQUESTS
//
// Connects CLIENTS agents, prints {"ready": true}, then each sends REQUESTS
// requests one after another, alternating `tools/list` and `tools/call
// getDiagnostics`, and it prints {"answered", "p50", "p99", "max"} (ms).
import { randomUUID } from "node:crypto";

const HEADER = "x-pi-ide-authorization";
const REQUESTS = [
  ["tools/list", {}],
  ["tools/call", { name: "getDiagnostics", arguments: {} }],
];

const [port, token, clients, requests] = process.argv.slice(2);

function openAgent() {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}/`, { headers: { [HEADER]: token } });
    const waiting = new Map();
    const call = (method, params) =>
      new Promise((answered) => {
        const id = randomUUID();
        waiting.set(id, answered);
        ws.send(JSON.stringify({ jsonrpc: "2.0", id, method, params }));
      });
    ws.onmessage = (event) => {
      const message = JSON.parse(event.data);
      // Notifications (selection, diagnostics) are skipped.
      const answered = message.method === undefined && waiting.get(message.id);
      if (answered) {
        waiting.delete(message.id);
        answered(message);
      }
    };
    ws.onerror = (event) => reject(new Error(String(event.message || event)));
    ws.onopen = async () => {
      await call("initialize", {
        protocolVersion: "2024-11-05",
        capabilities: {},
        clientInfo: { name: "pi-ide", version: "0.1.0" },
      });
      ws.send(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }));
      resolve({ ws, call });
    };
  });
}

async function flood(agent) {
  const latencies = [];
  for (let n = 0; n < Number(requests); n++) {
    const [method, params] = REQUESTS[n % 2];
    const started = process.hrtime.bigint();
    const reply = await agent.call(method, params);
    latencies.push(Number(process.hrtime.bigint() - started) / 1e6);
    if (reply.result === undefined) {
      throw new Error(`no result: ${JSON.stringify(reply)}`);
    }
  }
  return latencies;
}

const agents = [];
for (let i = 0; i < Number(clients); i++) {
  agents.push(await openAgent());
}
console.log(JSON.stringify({ ready: true }));
const every = (await Promise.all(agents.map(flood))).flat().sort((a, b) => a - b);
const at = (q) => every[Math.round((every.length - 1) * q)];
for (const { ws } of agents) {
  ws.close();
}
console.log(JSON.stringify({ answered: every.length, p50: at(0.5), p99: at(0.99), max: every[every.length - 1] }));
process.exit(0);
