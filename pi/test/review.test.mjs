// Loads pi/review.ts in the real pi runtime (`pi --mode rpc -e pi/review.ts`)
// and plays both of its peers: the IDE (a Unix-socket NDJSON server at
// <tmp>/.pi/ide/nvim.sock) and the model (an OpenAI-compatible HTTP server on
// 127.0.0.1 that answers every request with a canned reply and records what
// it was asked). pi is driven over its RPC stdin/stdout.
//
// Run: `node --test pi/test/` (after `npm ci --prefix pi`).

import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { createServer as createHttpServer } from "node:http";
import { createServer as createNetServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";

const piDir = dirname(dirname(fileURLToPath(import.meta.url)));
const extension = join(piDir, "review.ts");
// The pi to run in: $PI_CLI (tests/integration/pi_extension.rs runs these
// tests once per pi distribution), else the pinned one.
const piCli = process.env.PI_CLI ?? join(piDir, "node_modules", "@mariozechner", "pi-coding-agent", "dist", "cli.js");
const STEP_MS = 60_000;

/** Resolves with the first value `probe()` returns that is not undefined. */
async function waitFor(what, probe, ms = STEP_MS) {
	const deadline = Date.now() + ms;
	for (;;) {
		const value = probe();
		if (value !== undefined) return value;
		if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}\n${debug()}`);
		await new Promise((r) => setTimeout(r, 20));
	}
}

let root;
let pi;
let piStderr = "";
const rpcEvents = [];
let httpServer;
const modelRequests = [];
let ideServer;
/** Each IDE client: its socket and the lines it sent. */
const ideClients = [];

function debug() {
	const tail = rpcEvents.slice(-15).map((e) => JSON.stringify(e).slice(0, 300));
	return `--- last RPC events ---\n${tail.join("\n")}\n--- pi stderr ---\n${piStderr.slice(-3000)}`;
}

/** Starts the canned OpenAI-compatible chat-completions server. */
function startModelServer() {
	return new Promise((resolve) => {
		httpServer = createHttpServer((req, res) => {
			let body = "";
			req.on("data", (d) => (body += d));
			req.on("end", () => {
				let parsed;
				try {
					parsed = JSON.parse(body);
				} catch {
					parsed = { raw: body };
				}
				modelRequests.push({ url: req.url, body: parsed });
				res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
				const chunk = (delta, finish) => ({
					id: "chatcmpl-stub",
					object: "chat.completion.chunk",
					created: 0,
					model: "stub-model",
					choices: [{ index: 0, delta, finish_reason: finish }],
				});
				res.write(`data: ${JSON.stringify(chunk({ role: "assistant", content: "Noted, fixing." }, null))}\n\n`);
				res.write(
					`data: ${JSON.stringify({
						...chunk({}, "stop"),
						usage: { prompt_tokens: 10, completion_tokens: 3, total_tokens: 13 },
					})}\n\n`,
				);
				res.end("data: [DONE]\n\n");
			});
		});
		httpServer.listen(0, "127.0.0.1", () => resolve(httpServer.address().port));
	});
}

/** The fake IDE: hello + context on connect, records every line it gets. */
function startIde(socketPath) {
	return new Promise((resolve) => {
		ideServer = createNetServer((socket) => {
			const client = { socket, lines: [] };
			ideClients.push(client);
			let buf = "";
			socket.on("data", (d) => {
				buf += d.toString("utf8");
				for (let nl = buf.indexOf("\n"); nl !== -1; nl = buf.indexOf("\n")) {
					client.lines.push(buf.slice(0, nl));
					buf = buf.slice(nl + 1);
				}
			});
			socket.on("error", () => {});
			socket.write(`${JSON.stringify({ type: "hello", ide: "nvim", version: "1.0.0" })}\n`);
			socket.write(`${JSON.stringify({ type: "context", file: "a.txt", startLine: 2, endLine: 4 })}\n`);
		});
		ideServer.listen(socketPath, resolve);
	});
}

function rpc(command) {
	pi.stdin.write(`${JSON.stringify(command)}\n`);
}

/** Index into rpcEvents after which to look for new events. */
const mark = () => rpcEvents.length;

function findEvent(from, pred) {
	for (let i = from; i < rpcEvents.length; i++) if (pred(rpcEvents[i])) return rpcEvents[i];
	return undefined;
}

const uiRequest = (method, pred) => (e) =>
	e.type === "extension_ui_request" && e.method === method && pred(e);

/** Text of the user-role messages in one chat-completions request body. */
function userTexts(body) {
	return (body.messages ?? [])
		.filter((m) => m.role === "user")
		.map((m) => (typeof m.content === "string" ? m.content : m.content.map((p) => p.text ?? "").join("")));
}

before(async () => {
	root = realpathSync(mkdtempSync(join(tmpdir(), "pi-review-test-")));
	const cwd = join(root, "project");
	const agentDir = join(root, "agent");
	mkdirSync(join(cwd, ".pi", "ide"), { recursive: true, mode: 0o700 });
	mkdirSync(agentDir, { recursive: true });
	writeFileSync(join(cwd, "a.txt"), "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\n");

	const port = await startModelServer();
	writeFileSync(
		join(agentDir, "models.json"),
		JSON.stringify({
			providers: {
				stub: {
					baseUrl: `http://127.0.0.1:${port}/v1`,
					api: "openai-completions",
					apiKey: "stub-key",
					compat: { supportsDeveloperRole: false, supportsReasoningEffort: false },
					models: [{ id: "stub-model", name: "Stub", reasoning: false, input: ["text"] }],
				},
			},
		}),
	);
	await startIde(join(cwd, ".pi", "ide", "nvim.sock"));

	pi = spawn(
		process.execPath,
		[piCli, "--mode", "rpc", "--no-session", "--offline", "--provider", "stub", "--model", "stub-model", "-e", extension],
		{
			cwd,
			env: {
				...process.env,
				HOME: root,
				PI_CODING_AGENT_DIR: agentDir,
				PI_OFFLINE: "1",
				PI_SKIP_VERSION_CHECK: "1",
				NO_PROXY: "127.0.0.1,localhost",
				no_proxy: "127.0.0.1,localhost",
			},
			stdio: ["pipe", "pipe", "pipe"],
		},
	);
	pi.stderr.on("data", (d) => (piStderr += d.toString("utf8")));
	let out = "";
	pi.stdout.on("data", (d) => {
		out += d.toString("utf8");
		for (let nl = out.indexOf("\n"); nl !== -1; nl = out.indexOf("\n")) {
			const line = out.slice(0, nl).replace(/\r$/, "");
			out = out.slice(nl + 1);
			if (!line) continue;
			try {
				rpcEvents.push(JSON.parse(line));
			} catch {
				rpcEvents.push({ type: "<non-json>", line });
			}
		}
	});
	rpc({ id: "state", type: "get_state" });
	const state = await waitFor("pi to answer get_state", () =>
		findEvent(0, (e) => e.type === "response" && e.id === "state"),
	);
	assert.equal(state.success, true, `get_state failed: ${JSON.stringify(state)}`);
	assert.equal(state.data.model?.id, "stub-model", "pi did not pick the stub model");
});

after(() => {
	pi?.kill();
	httpServer?.close();
	ideServer?.close();
	if (root) rmSync(root, { recursive: true, force: true });
});

test("the extension loads without errors and registers /review", async () => {
	rpc({ id: "cmds", type: "get_commands" });
	const res = await waitFor("get_commands", () => findEvent(0, (e) => e.type === "response" && e.id === "cmds"));
	assert.ok(
		res.data.commands.some((c) => c.name === "review" && c.source === "extension"),
		`no /review in ${JSON.stringify(res.data.commands)}`,
	);
	assert.equal(findEvent(0, (e) => e.type === "extension_error"), undefined, debug());
});

test("/review a.txt sends {files}, shows context and waiting status, and a submitted review becomes the next user message", async () => {
	const m = mark();
	rpc({ id: "r1", type: "prompt", message: "/review a.txt" });
	const client = await waitFor("the extension to connect to the IDE socket", () => ideClients[0]);
	const request = await waitFor("the review request on the socket", () => client.lines[0]);
	assert.deepEqual(JSON.parse(request), { files: ["a.txt"] });
	assert.equal(request, JSON.stringify({ files: ["a.txt"] }), "one compact NDJSON line");

	await waitFor("the waiting status", () =>
		findEvent(m, uiRequest("setStatus", (e) => /review/.test(e.statusText ?? "") && /nvim/.test(e.statusText))),
	);
	// The `ide` extension is not loaded, so the IDE's context shows in the footer.
	await waitFor("the context status `nvim | a.txt:2-4`", () =>
		findEvent(m, uiRequest("setStatus", (e) => e.statusText === "nvim | a.txt:2-4")),
	);
	assert.equal(modelRequests.length, 0, "nothing reaches the model before the review is submitted");

	// Noise the extension must ignore, then the result.
	client.socket.write("this is not json\n");
	client.socket.write(`${JSON.stringify({ type: "somethingNew", x: 1 })}\n`);
	client.socket.write(`${JSON.stringify({ type: "context", file: "a.txt", startLine: 5, endLine: 7 })}\n`);
	const result = {
		type: "reviewResult",
		status: "submitted",
		comments: [
			{
				file: "a.txt",
				line: 3,
				text: "Spell it THREE, shouting.",
				context: ["1: one", "2: two", "> 3: three", "4: four", "5: five", "6: six"],
			},
			{
				file: "a.txt",
				line: 5,
				endLine: 7,
				text: "These three lines\nshould be one.",
				context: ["2: two", "3: three", "4: four", "> 5: five", "> 6: six", "> 7: seven", "8: eight"],
			},
		],
	};
	client.socket.write(`${JSON.stringify(result)}\n`);

	const req = await waitFor("the model request carrying the review", () => modelRequests[0]);
	const texts = userTexts(req.body);
	const msg = texts.find((t) => t.includes("a.txt:3"));
	assert.ok(msg, `no user message with the review in ${JSON.stringify(req.body.messages)}`);
	assert.match(msg, /^a\.txt:3$/m);
	assert.match(msg, /^a\.txt:5-7$/m);
	for (const line of [...result.comments[0].context, ...result.comments[1].context]) {
		assert.ok(msg.includes(`\n${line}\n`), `context line ${JSON.stringify(line)} missing from:\n${msg}`);
	}
	assert.ok(msg.includes("Spell it THREE, shouting."));
	assert.ok(msg.includes("These three lines\nshould be one."));
	assert.ok(msg.indexOf("a.txt:3") < msg.indexOf("a.txt:5-7"), "comments keep their order");
	assert.match(msg, /```\n1: one\n2: two\n> 3: three\n4: four\n5: five\n6: six\n```\nSpell it THREE/);
	assert.equal(texts.filter((t) => t.includes("a.txt:5-7")).length, 1, "exactly one user message");

	// The same message as pi's RPC stream shows it.
	const userMsg = await waitFor("the user message_end event", () =>
		findEvent(m, (e) => e.type === "message_end" && e.message?.role === "user"),
	);
	const content = userMsg.message.content;
	const eventText = typeof content === "string" ? content : content.map((p) => p.text ?? "").join("");
	assert.equal(eventText, msg);
	await waitFor("the agent to finish", () => findEvent(m, (e) => e.type === "agent_end"));
	// Waiting status cleared, the latest context shown.
	assert.ok(findEvent(m, uiRequest("setStatus", (e) => e.statusKey === "pi-ide-review" && e.statusText === undefined)));
	assert.ok(findEvent(m, uiRequest("setStatus", (e) => e.statusText === "nvim | a.txt:5-7")));
	assert.equal(ideClients.length, 1, "one connection, kept open");
});

test("a cancelled review is reported and nothing is sent to the agent; the connection is reused", async () => {
	const m = mark();
	const before = modelRequests.length;
	const client = ideClients[0];
	const seen = client.lines.length;
	rpc({ id: "r2", type: "prompt", message: "/review a.txt 'b c.txt'" });
	const request = await waitFor("the second review request", () => client.lines[seen]);
	assert.deepEqual(JSON.parse(request), { files: ["a.txt", "b c.txt"] });
	client.socket.write(`${JSON.stringify({ type: "reviewResult", status: "cancelled", comments: [] })}\n`);
	await waitFor("the cancelled notice", () => findEvent(m, uiRequest("notify", (e) => /cancelled/i.test(e.message))));
	await new Promise((r) => setTimeout(r, 300));
	assert.equal(modelRequests.length, before, "a cancelled review reaches no model");
	assert.equal(ideClients.length, 1);
});

test("a refused review shows Neovim's reason", async () => {
	const m = mark();
	const before = modelRequests.length;
	const client = ideClients[0];
	const seen = client.lines.length;
	rpc({ id: "r2b", type: "prompt", message: "/review a.txt" });
	await waitFor("the refused review request", () => client.lines[seen]);
	const error = "101 files asked for, and a review takes at most 100: ask for fewer at a time";
	client.socket.write(`${JSON.stringify({ type: "reviewResult", status: "cancelled", comments: [], error })}\n`);
	await waitFor("the reason", () =>
		findEvent(m, uiRequest("notify", (e) => e.message.includes("at most 100") && e.notifyType === "warning")),
	);
	assert.equal(modelRequests.length, before, "a refused review reaches no model");
});

test("approval without comments is reported and nothing is sent to the agent", async () => {
	const m = mark();
	const before = modelRequests.length;
	const client = ideClients[0];
	const seen = client.lines.length;
	rpc({ id: "r3", type: "prompt", message: "/review a.txt" });
	await waitFor("the third review request", () => client.lines[seen]);
	client.socket.write(`${JSON.stringify({ type: "reviewResult", status: "submitted", comments: [] })}\n`);
	await waitFor("the approved notice", () =>
		findEvent(m, uiRequest("notify", (e) => /approved/i.test(e.message) && /no comments/.test(e.message))),
	);
	await new Promise((r) => setTimeout(r, 300));
	assert.equal(modelRequests.length, before);
});

test("the IDE closing the socket mid-review is reported, and the next /review connects again", async () => {
	let m = mark();
	const client = ideClients[0];
	const seen = client.lines.length;
	rpc({ id: "r4", type: "prompt", message: "/review a.txt" });
	await waitFor("the fourth review request", () => client.lines[seen]);
	client.socket.destroy();
	await waitFor("the closed-connection warning", () =>
		findEvent(m, uiRequest("notify", (e) => e.notifyType === "warning" && /closed the connection/.test(e.message))),
	);
	assert.ok(findEvent(m, uiRequest("setStatus", (e) => e.statusKey === "pi-ide-review" && e.statusText === undefined)));

	m = mark();
	rpc({ id: "r5", type: "prompt", message: "/review a.txt" });
	const second = await waitFor("a new connection", () => ideClients[1]);
	assert.deepEqual(JSON.parse(await waitFor("the request on it", () => second.lines[0])), { files: ["a.txt"] });
	second.socket.write(`${JSON.stringify({ type: "reviewResult", status: "cancelled", comments: [] })}\n`);
	await waitFor("the cancelled notice", () => findEvent(m, uiRequest("notify", (e) => /cancelled/i.test(e.message))));
	assert.equal(findEvent(0, (e) => e.type === "extension_error"), undefined, debug());
});

test("/review with no files asks for the files changed vs git HEAD, untracked included", async () => {
	const cwd = join(root, "project");
	const git = (...args) => {
		const r = spawnSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false", ...args], {
			cwd,
			encoding: "utf8",
		});
		assert.equal(r.status, 0, `git ${args.join(" ")}: ${r.stderr}`);
	};
	writeFileSync(join(cwd, "gone.txt"), "x\n");
	writeFileSync(join(cwd, "same.txt"), "x\n");
	mkdirSync(join(cwd, "sub"), { recursive: true });
	writeFileSync(join(cwd, "sub", "s.txt"), "x\n");
	git("init", "-q");
	git("add", "a.txt", "gone.txt", "same.txt", "sub/s.txt");
	git("commit", "-q", "-m", "base");
	writeFileSync(join(cwd, "a.txt"), "changed\n");
	writeFileSync(join(cwd, "sub", "s.txt"), "staged\n");
	git("add", "sub/s.txt");
	rmSync(join(cwd, "gone.txt"));
	writeFileSync(join(cwd, "new.txt"), "new\n");

	const m = mark();
	const client = ideClients[1];
	const seen = client.lines.length;
	rpc({ id: "r6", type: "prompt", message: "/review" });
	const request = JSON.parse(await waitFor("the review request", () => client.lines[seen]));
	// Deleted files and the socket under .pi/ide are left out.
	assert.deepEqual(request, { files: ["a.txt", "new.txt", "sub/s.txt"] });
	client.socket.write(`${JSON.stringify({ type: "reviewResult", status: "cancelled", comments: [] })}\n`);
	await waitFor("the cancelled notice", () => findEvent(m, uiRequest("notify", (e) => /cancelled/i.test(e.message))));
});
