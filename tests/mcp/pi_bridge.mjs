// Drives the real pi (`--mode rpc -e pi/nvim.ts`) for
// tests/integration/pi_bridge.rs, against the Neovim whose lockfiles are in
// <lockDir> and whose project is <cwd>. pi's model is a stub
// OpenAI-compatible server here that asks for `nvim_get_file_text_by_path`
// on a.txt when the prompt says READ_A (on ../outside.txt for OUTSIDE),
// or `nvim_replace_text_in_file` on a.txt for EDIT_A and EDIT_ABORT, then
// answers with the tool's text. EDIT_ABORT is aborted (pi's RPC `abort`, as
// Escape) once the test signals, through <scratchDir>/diff-shown, that
// Neovim shows its diff. Late on, it kills that Neovim to see
// the bridge report the loss. Prints one JSON report of what pi, the model
// and the person saw.
//
// node pi_bridge.mjs <cwd> <lockDir> <scratchDir>
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { connect } from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const piDir = path.join(here, "..", "..", "pi");
const piCli = path.join(piDir, "node_modules", "@mariozechner", "pi-coding-agent", "dist", "cli.js");
const [cwd, lockDir, scratch] = process.argv.slice(2);
// Long enough for the person (the test) to accept the edit.
const STEP_MS = 30_000;

const events = [];
const modelRequests = [];
let piStderr = "";

function fail(message) {
	const tail = events.slice(-20).map((e) => JSON.stringify(e).slice(0, 400));
	process.stderr.write(`${message}\n--- last RPC events ---\n${tail.join("\n")}\n--- pi stderr ---\n${piStderr.slice(-4000)}\n`);
	process.exit(1);
}

async function waitFor(what, probe, ms = STEP_MS) {
	const deadline = Date.now() + ms;
	for (;;) {
		const value = probe();
		if (value !== undefined) return value;
		if (Date.now() > deadline) fail(`timed out waiting for ${what}`);
		await new Promise((r) => setTimeout(r, 20));
	}
}

const find = (from, pred) => events.slice(from).find(pred);
const notifyAfter = (from, re) =>
	find(from, (e) => e.type === "extension_ui_request" && e.method === "notify" && re.test(e.message));

function chunk(delta, finish) {
	const choices = [{ index: 0, delta, finish_reason: finish }];
	return { id: "chatcmpl-stub", object: "chat.completion.chunk", created: 0, model: "stub-model", choices };
}

function text(content) {
	return typeof content === "string" ? content : (content ?? []).map((p) => p.text ?? "").join("");
}

const model = createServer((req, res) => {
	let body = "";
	req.on("data", (d) => (body += d));
	req.on("end", () => {
		const parsed = JSON.parse(body);
		modelRequests.push(parsed);
		const last = parsed.messages.at(-1);
		res.writeHead(200, { "content-type": "text/event-stream" });
		const send = (c) => res.write(`data: ${JSON.stringify(c)}\n\n`);
		const wanted = last.role === "user" && text(last.content).match(/READ_A|OUTSIDE|EDIT_ABORT|EDIT_A/)?.[0];
		if (wanted) {
			const [name, args] =
				wanted === "EDIT_A"
					? ["nvim_replace_text_in_file", { pathInProject: "a.txt", oldText: "UNSAVED", newText: "EDITED" }]
					: wanted === "EDIT_ABORT"
						? ["nvim_replace_text_in_file", { pathInProject: "a.txt", oldText: "saved one", newText: "ABORTED" }]
						: ["nvim_get_file_text_by_path", { pathInProject: wanted === "READ_A" ? "a.txt" : "../outside.txt" }];
			send(
				chunk(
					{
						role: "assistant",
						tool_calls: [
							{
								index: 0,
								id: `call_${wanted.toLowerCase()}`,
								type: "function",
								function: { name, arguments: JSON.stringify(args) },
							},
						],
					},
					null,
				),
			);
			send({ ...chunk({}, "tool_calls"), usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } });
		} else {
			const reply = last.role === "tool" ? `Neovim says: ${text(last.content)}` : "ok";
			send(chunk({ role: "assistant", content: reply }, null));
			send({ ...chunk({}, "stop"), usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } });
		}
		res.end("data: [DONE]\n\n");
	});
});
await new Promise((r) => model.listen(0, "127.0.0.1", r));

const agentDir = path.join(scratch, "agent");
mkdirSync(agentDir, { recursive: true });
writeFileSync(
	path.join(agentDir, "models.json"),
	JSON.stringify({
		providers: {
			stub: {
				baseUrl: `http://127.0.0.1:${model.address().port}/v1`,
				api: "openai-completions",
				apiKey: "stub-key",
				compat: { supportsDeveloperRole: false, supportsReasoningEffort: false },
				models: [{ id: "stub-model", name: "Stub", reasoning: false, input: ["text"] }],
			},
		},
	}),
);
// A key of someone else's that the bridge must keep, inside "nvim" too.
const settingsFile = path.join(agentDir, "settings.json");
writeFileSync(settingsFile, JSON.stringify({ unrelatedKey: { kept: true }, nvim: { note: "kept" } }, null, 2));

// pi in a terminal collects garbage all the time (its TUI allocates on
// every frame); here pi collects every 100 ms, as often, so the bridge
// cannot lean on anything a collection may drop (Node's fetch loses the
// link from a caller's AbortSignal to a response body that way).
const collectOften = "data:text/javascript,setInterval(globalThis.gc, 100).unref()";
const pi = spawn(
	process.execPath,
	[
		...["--expose-gc", "--import", collectOften],
		...[piCli, "--mode", "rpc", "--no-session", "--offline"],
		...["--provider", "stub", "--model", "stub-model", "-e", path.join(piDir, "nvim.ts")],
	],
	{
		cwd,
		env: {
			...process.env,
			HOME: scratch,
			PI_CODING_AGENT_DIR: agentDir,
			PI_IDE_LOCK_DIR: lockDir,
			PI_OFFLINE: "1",
			PI_SKIP_VERSION_CHECK: "1",
			NO_PROXY: "127.0.0.1,localhost",
			no_proxy: "127.0.0.1,localhost",
		},
		stdio: ["pipe", "pipe", "pipe"],
	},
);
pi.stderr.on("data", (d) => (piStderr += d));
let out = "";
pi.stdout.on("data", (d) => {
	out += d;
	for (let nl = out.indexOf("\n"); nl !== -1; nl = out.indexOf("\n")) {
		const line = out.slice(0, nl).trim();
		out = out.slice(nl + 1);
		if (line) events.push(JSON.parse(line));
	}
});
const rpc = (command) => pi.stdin.write(`${JSON.stringify(command)}\n`);
const toolNames = (request) => (request.tools ?? []).map((t) => t.function.name);

/** Sends a slash command; returns the first notification matching `re`. */
async function command(line, re) {
	const from = events.length;
	rpc({ type: "prompt", message: line });
	return (await waitFor(`a reply to ${line}`, () => notifyAfter(from, re))).message;
}

/** Sends a prompt and waits for the agent to finish; returns the model requests it made. */
async function prompt(message) {
	const from = events.length;
	const seen = modelRequests.length;
	rpc({ type: "prompt", message });
	await waitFor(`the agent to finish "${message}"`, () => find(from, (e) => e.type === "agent_end"));
	return modelRequests.slice(seen);
}

rpc({ id: "state", type: "get_state" });
await waitFor("pi to start", () => find(0, (e) => e.type === "response" && e.id === "state"));

const report = {};
report.statusBefore = await command("/nvim status", /Neovim bridge/);
report.toolsBeforeConnect = toolNames((await prompt("hello"))[0]);

let from = events.length;
report.connect = await command("/nvim connect", /Connected to Neovim|Could not connect|No Neovim|stale/);
report.footer = events
	.slice(from)
	.filter((e) => e.type === "extension_ui_request" && e.method === "setStatus" && e.statusKey === "nvim")
	.map((e) => e.statusText ?? null);
report.settings = JSON.parse(readFileSync(settingsFile, "utf8"));

const read = await prompt("READ_A please");
report.toolsAfterConnect = toolNames(read[0]);
report.readSchema = (read[0].tools ?? []).find((t) => t.function.name === "nvim_get_file_text_by_path")?.function ?? null;
report.toolResult = text(read[1]?.messages.findLast((m) => m.role === "tool")?.content);
from = events.length;
report.toolEnd = find(0, (e) => e.type === "tool_execution_end") ?? null;

// An edit waits in Neovim's diff until the person accepts it there (the
// test does, after a while); the bridge sets no timeout on it.
from = events.length;
const edit = await prompt("EDIT_A please");
report.editResult = text(edit[1]?.messages.findLast((m) => m.role === "tool")?.content);
report.editEnd = find(from, (e) => e.type === "tool_execution_end") ?? null;

// The person gives up in pi (Escape, here RPC `abort`) while Neovim shows
// the edit's diff: the call ends in pi at once, and in Neovim too.
from = events.length;
rpc({ type: "prompt", message: "EDIT_ABORT please" });
await waitFor("the test to see the diff", () => (existsSync(path.join(scratch, "diff-shown")) ? true : undefined));
const abortedAt = Date.now();
rpc({ id: "abort", type: "abort" });
report.abortEnd = await waitFor(
	"the tool call to end after pi's abort",
	() => find(from, (e) => e.type === "tool_execution_end"),
	5_000,
);
report.abortEndMs = Date.now() - abortedAt;
await waitFor("the aborted agent to stop", () => find(from, (e) => e.type === "agent_end"));

report.statusConnected = await command("/nvim status", /Neovim bridge/);
report.tools = await command("/nvim tools", /Neovim tools|No Neovim tools/);
report.disconnect = await command("/nvim disconnect", /Disconnected|Not connected/);
report.toolsAfterDisconnect = toolNames((await prompt("hello again"))[0]);
report.statusAfter = await command("/nvim status", /Neovim bridge/);

// Errors: a refused path, then Neovim gone.
report.reconnect = await command("/nvim reconnect", /Connected to Neovim|Could not connect|stale/);
let turn = await prompt("OUTSIDE please");
report.outsideResult = text(turn[1]?.messages.findLast((m) => m.role === "tool")?.content);
const neovim = JSON.parse(readFileSync(path.join(lockDir, readdirSync(lockDir).find((f) => f.endsWith(".lock"))), "utf8"));
process.kill(neovim.pid, "SIGKILL");
// (Neovim stays a zombie until the test reaps it.) Its host follows: the
// lockfile goes and the port closes.
const lockName = readdirSync(lockDir).find((f) => f.endsWith(".lock"));
await waitFor("the host to remove its lockfile", () => (readdirSync(lockDir).includes(lockName) ? undefined : true));
const port = Number(new URL(neovim.mcpUrl).port);
const portDeadline = Date.now() + STEP_MS;
for (let refused = false; !refused; ) {
	if (Date.now() > portDeadline) fail("Neovim's MCP port stayed open after it died");
	refused = await new Promise((r) => {
		const socket = connect(port, "127.0.0.1");
		socket.once("connect", () => {
			socket.destroy();
			setTimeout(() => r(false), 20);
		});
		socket.once("error", () => r(true));
	});
}
from = events.length;
turn = await prompt("READ_A again");
report.goneResult = text(turn[1]?.messages.findLast((m) => m.role === "tool")?.content);
report.lostNotice = notifyAfter(from, /Lost Neovim/)?.message ?? null;
report.footerAfterLoss = events
	.slice(from)
	.filter((e) => e.type === "extension_ui_request" && e.method === "setStatus" && e.statusKey === "nvim")
	.map((e) => e.statusText ?? null);
report.toolsAfterLoss = toolNames((await prompt("hello once more"))[0]);
report.connectStale = await command("/nvim connect", /Connected to Neovim|Could not connect|No Neovim|stale/);
report.connectRemote = await command("/nvim connect http://example.com:8080/mcp", /loopback|Connected/);
report.extensionErrors = events.filter((e) => e.type === "extension_error");

pi.kill();
model.close();
process.stdout.write(JSON.stringify(report));
process.exit(0);
