// A real MCP client (the official npm SDK, from pi/node_modules) for
// tests/integration/mcp_http.rs: connects over Streamable HTTP with the
// bearer token, lists the tools, makes the calls it is given and prints
// one JSON object: {protocolVersion, sessionId, tools, calls: [result | {error}],
// progress: [[notification params, …] per call]}.
//
// node client.mjs <url> <token> '<[{"name": …, "arguments": {…}}]>' ['{"progress": true}']
// With "progress", each call carries a progress token (the SDK's
// onprogress) and its timeout restarts on every notification; with
// "timeout" (ms), the SDK gives up on a call then and cancels it. With
// "waitForToolListChanged", it prints `listening` to stderr once connected,
// waits (20 s at most) for notifications/tools/list_changed before its
// calls and reports the tools listed again then as `toolsAfterChange`.
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import path from "node:path";

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.join(here, "..", "..", "pi", "package.json"));
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StreamableHTTPClientTransport } = require("@modelcontextprotocol/sdk/client/streamableHttp.js");
const { ToolListChangedNotificationSchema } = require("@modelcontextprotocol/sdk/types.js");

const [url, token, callsJson, optionsJson] = process.argv.slice(2);
const options = JSON.parse(optionsJson || "{}");
const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { Authorization: `Bearer ${token}` } },
});
const client = new Client({ name: "pi-ide-test", version: "0.0.0" });
let listChanged = null;
const changed = new Promise((resolve) => {
  listChanged = resolve;
});
client.setNotificationHandler(ToolListChangedNotificationSchema, () => listChanged());
await client.connect(transport);
const { tools } = await client.listTools();
let toolsAfterChange = null;
if (options.waitForToolListChanged) {
  process.stderr.write("listening\n");
  const heard = await Promise.race([
    changed.then(() => true),
    new Promise((resolve) => setTimeout(() => resolve(false), 20000)),
  ]);
  toolsAfterChange = heard ? (await client.listTools()).tools : null;
}
const calls = [];
const progress = [];
for (const call of JSON.parse(callsJson || "[]")) {
  const heard = [];
  progress.push(heard);
  const requestOptions = options.progress
    ? {
        onprogress: (params) => {
          heard.push(params);
          // As it happens, so a test can act while the call still waits.
          process.stderr.write(`progress ${JSON.stringify(params)}\n`);
        },
        resetTimeoutOnProgress: true,
        timeout: 20000,
      }
    : options.timeout
      ? { timeout: options.timeout }
      : undefined;
  try {
    calls.push(await client.callTool(call, undefined, requestOptions));
  } catch (error) {
    calls.push({ error: String(error && error.message ? error.message : error) });
    // The SDK sends notifications/cancelled without waiting; a round trip
    // lets it reach the server before the client closes.
    await client.ping().catch(() => {});
  }
}
const out = {
  protocolVersion: transport.protocolVersion ?? null,
  sessionId: transport.sessionId ?? null,
  tools,
  toolsAfterChange,
  calls,
  progress,
};
await client.close();
process.stdout.write(JSON.stringify(out));
