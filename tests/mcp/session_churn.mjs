// Two real MCP clients hold sessions with the host while a test opens and
// abandons hundreds more (tests/integration/mcp_sessions.rs): the official
// npm SDK's client (it keeps a GET event stream open) and pi's bridge
// client (pi/nvim/mcp-http.ts, loaded through jiti as pi loads it; it
// keeps no stream, and initializes again when its session is gone).
//
// node session_churn.mjs <url> <token>
// Lists the tools with each, prints `connected` on stderr, waits for a
// line on stdin, lists them again with each (and calls a tool), and prints
// {sdk: {before, after, error?}, bridge: {before, after, error?}}.
import { createRequire } from "node:module";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import path from "node:path";

const here = path.dirname(fileURLToPath(import.meta.url));
const piDir = path.join(here, "..", "..", "pi");
const require = createRequire(path.join(piDir, "package.json"));
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StreamableHTTPClientTransport } = require("@modelcontextprotocol/sdk/client/streamableHttp.js");
const { createJiti } = require("jiti");
const { McpHttpClient } = await createJiti(import.meta.url).import(path.join(piDir, "nvim", "mcp-http.ts"));

const [url, token] = process.argv.slice(2);
const sdk = new Client({ name: "pi-ide-churn", version: "0.0.0" });
await sdk.connect(
  new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  }),
);
const bridge = new McpHttpClient({ url, token: () => token, clientInfo: { name: "pi-bridge-churn", version: "0" } });
await bridge.initialize();

const count = async (list) => {
  try {
    return { tools: (await list()).length };
  } catch (error) {
    return { error: String(error?.message ?? error) };
  }
};
const sdkTools = async () => (await sdk.listTools()).tools;
const bridgeTools = () => bridge.listTools();
const report = { sdk: { before: await count(sdkTools) }, bridge: { before: await count(bridgeTools) } };
process.stderr.write("connected\n");
await new Promise((resolve) => createInterface({ input: process.stdin }).once("line", resolve));
report.sdk.after = await count(sdkTools);
report.bridge.after = await count(bridgeTools);
process.stdout.write(`${JSON.stringify(report)}\n`);
await sdk.close();
await bridge.close();
process.exit(0);
