// An IDE companion client that connects as Gemini CLI 0.61 and Qwen Code
// 0.24 do (the official npm MCP SDK, from pi/node_modules), for
// tests/integration/companion.rs:
//
// * Gemini: every `<dir>/gemini-ide-server-<PID>-<PORT>.json` whose
//   workspacePath (split on ":", realpath'd) holds the cwd; with several,
//   the one whose PID is `pid`. Qwen: `<dir>/*.lock` whose workspace holds
//   the cwd, newest first, whose `ppid` is alive.
// * `Authorization: Bearer <authToken>` on every request, `initialize`,
//   `tools/list`, then notifications.
//
// node companion.mjs gemini|qwen <dir> <pid>
// Prints one JSON object per line: {connected: {file, port, tools}}, then
// {notification: {method, params}} as they come and {result, id} for each
// command read from stdin: {"id": n, "call": name, "arguments": {…}}, or
// {"exit": true} (gone without closing the session, like a CLI killed).
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import fs from "node:fs";
import path from "node:path";
import readline from "node:readline";

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.join(here, "..", "..", "pi", "package.json"));
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StreamableHTTPClientTransport } = require("@modelcontextprotocol/sdk/client/streamableHttp.js");

const [cli, dir, pidText] = process.argv.slice(2);
const pid = Number(pidText);
const print = (value) => process.stdout.write(JSON.stringify(value) + "\n");

function holdsCwd(workspacePath) {
  const cwd = fs.realpathSync(process.cwd());
  return (workspacePath || "").split(path.delimiter).some((root) => {
    try {
      const real = fs.realpathSync(root);
      return cwd === real || cwd.startsWith(real + path.sep);
    } catch {
      return false;
    }
  });
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function discover() {
  const names = fs.readdirSync(dir);
  const read = (name) => ({ name, ...JSON.parse(fs.readFileSync(path.join(dir, name), "utf8")) });
  if (cli === "gemini") {
    const files = names
      .filter((name) => /^gemini-ide-server-\d+-\d+\.json$/.test(name))
      .map(read)
      .filter((file) => holdsCwd(file.workspacePath));
    if (files.length === 1) return files[0];
    return files.find((file) => file.name.startsWith(`gemini-ide-server-${pid}-`));
  }
  const locks = names
    .filter((name) => name.endsWith(".lock"))
    .map((name) => ({ ...read(name), mtime: fs.statSync(path.join(dir, name)).mtimeMs }))
    .filter((lock) => holdsCwd(lock.workspacePath) && alive(lock.ppid))
    .sort((a, b) => b.mtime - a.mtime);
  return locks[0];
}

const file = discover();
if (!file) {
  print({ error: `no discovery file for ${process.cwd()} in ${dir}` });
  process.exit(2);
}
if (!(file.ideInfo && file.ideInfo.name && file.ideInfo.displayName)) {
  print({ error: `no ideInfo in ${file.name}` });
  process.exit(2);
}
const transport = new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${file.port}/mcp`), {
  requestInit: { headers: { Authorization: `Bearer ${file.authToken}` } },
});
const client = new Client({ name: "streamable-http-client", version: "0.61.0" });
client.fallbackNotificationHandler = async (notification) => print({ notification });
await client.connect(transport);
const { tools } = await client.listTools();
print({
  connected: {
    file: file.name,
    port: file.port,
    ideInfo: file.ideInfo,
    tools: tools.map((t) => t.name),
    sessionId: transport.sessionId,
  },
});

const lines = readline.createInterface({ input: process.stdin });
for await (const line of lines) {
  const command = JSON.parse(line);
  if (command.exit) {
    process.exit(0);
  }
  try {
    const result = await client.callTool({ name: command.call, arguments: command.arguments });
    print({ id: command.id, result });
  } catch (error) {
    print({ id: command.id, error: String(error) });
  }
}
process.exit(0);
