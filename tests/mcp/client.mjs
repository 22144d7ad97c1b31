// A real MCP client (the official npm SDK, from pi/node_modules) for
// tests/integration/mcp_http.rs: connects over Streamable HTTP with the
// bearer token, lists the tools, makes the calls it is given and prints
// one JSON object: {protocolVersion, sessionId, tools, calls: [result | {error}]}.
//
// node client.mjs <url> <token> '<[{"name": …, "arguments": {…}}]>'
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import path from "node:path";

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.join(here, "..", "..", "pi", "package.json"));
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StreamableHTTPClientTransport } = require("@modelcontextprotocol/sdk/client/streamableHttp.js");

const [url, token, callsJson] = process.argv.slice(2);
const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { Authorization: `Bearer ${token}` } },
});
const client = new Client({ name: "pi-ide-test", version: "0.0.0" });
await client.connect(transport);
const { tools } = await client.listTools();
const calls = [];
for (const call of JSON.parse(callsJson || "[]")) {
  try {
    calls.push(await client.callTool(call));
  } catch (error) {
    calls.push({ error: String(error && error.message ? error.message : error) });
  }
}
const out = {
  protocolVersion: transport.protocolVersion ?? null,
  sessionId: transport.sessionId ?? null,
  tools,
  calls,
};
await client.close();
process.stdout.write(JSON.stringify(out));
