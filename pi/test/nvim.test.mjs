// Unit tests of the Neovim bridge's parts (pi/nvim.ts, pi/nvim/*.ts), loaded
// through jiti as pi loads them: URL rules, lockfile choice, settings.json
// writes, SSE parsing, schema and result mapping, and the Streamable-HTTP
// client against a small MCP server on 127.0.0.1 that answers as JSON or as
// an event stream. The whole bridge against real Neovim and real pi is
// tests/integration/pi_bridge.rs.

import {
	chmodSync,
	existsSync,
	mkdirSync,
	mkdtempSync,
	readdirSync,
	readFileSync,
	realpathSync,
	rmSync,
	statSync,
	symlinkSync,
	utimesSync,
	writeFileSync,
} from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { createJiti } from "jiti";

const piDir = dirname(dirname(fileURLToPath(import.meta.url)));
const jiti = createJiti(import.meta.url);
const discovery = await jiti.import("../nvim/discovery.ts");
const settings = await jiti.import("../nvim/settings.ts");
const { SseParser } = await jiti.import("../nvim/sse.ts");
const tools = await jiti.import("../nvim/tools.ts");
const { McpHttpClient, McpError } = await jiti.import("../nvim/mcp-http.ts");

const root = realpathSync(mkdtempSync(join(tmpdir(), "pi-nvim-unit-")));
after(() => rmSync(root, { recursive: true, force: true }));
let scratchCount = 0;
const scratch = () => {
	const dir = join(root, `s${scratchCount++}`);
	mkdirSync(dir, { recursive: true });
	return dir;
};

// ---------------------------------------------------------------------------
// Runtime imports
// ---------------------------------------------------------------------------

test("the bridge imports nothing at runtime but node: builtins, typebox and its own files", () => {
	const files = ["nvim.ts", ...readdirSync(join(piDir, "nvim")).map((f) => `nvim/${f}`)].filter((f) => f.endsWith(".ts"));
	assert.ok(files.length >= 5, `${files}`);
	for (const file of files) {
		const source = readFileSync(join(piDir, file), "utf8");
		for (const m of source.matchAll(/^\s*(import|export)\s+(type\s+)?[^;]*?from\s+"([^"]+)"/gms)) {
			if (m[2]) continue; // import type: erased before pi resolves anything
			const spec = m[3];
			const allowed = spec.startsWith("node:") || spec.startsWith("./") || spec.startsWith("../") || spec === "typebox";
			assert.ok(allowed, `${file} imports ${spec} at runtime; pi may not resolve it`);
		}
		assert.doesNotMatch(source, /\brequire\(|import\(/, `${file} loads modules dynamically`);
	}
});

test("at start-up the extension only registers /nvim; completions name the subcommands and live URLs", async () => {
	const { default: nvimExtension } = await jiti.import("../nvim.ts");
	const calls = [];
	const handlers = {};
	let command;
	// Any other use of pi's API (tools, files through it) at load is a failure.
	const pi = new Proxy(
		{},
		{
			get: (_, name) => {
				if (name === "registerCommand") return (n, options) => (calls.push(`command:${n}`), (command = options));
				if (name === "on") return (event, h) => (calls.push(`on:${event}`), (handlers[event] = h));
				return () => {
					throw new Error(`pi.${String(name)} called at start-up`);
				};
			},
		},
	);
	nvimExtension(pi);
	assert.deepEqual(calls.sort(), ["command:nvim", "on:session_shutdown", "on:session_start"]);
	const ui = new Proxy({}, { get: (_, name) => () => assert.fail(`ui.${String(name)} at session start`) });
	handlers.session_start({ type: "session_start", reason: "startup" }, { ui, hasUI: true, cwd: "/nowhere" });

	const dir = scratch();
	const saved = { PI_CODING_AGENT_DIR: process.env.PI_CODING_AGENT_DIR, PI_IDE_LOCK_DIR: process.env.PI_IDE_LOCK_DIR };
	process.env.PI_CODING_AGENT_DIR = join(dir, "agent");
	process.env.PI_IDE_LOCK_DIR = join(dir, "locks");
	try {
		mkdirSync(join(dir, "agent"));
		mkdirSync(join(dir, "locks"));
		writeFileSync(join(dir, "agent", "settings.json"), JSON.stringify({ nvim: { url: "http://127.0.0.1:7/mcp" } }));
		writeLock(join(dir, "locks"), 8, lock(process.pid, ["/p"], 8));
		writeLock(join(dir, "locks"), 9, lock(DEAD, ["/p"], 9));
		const complete = (prefix) => command.getArgumentCompletions(prefix)?.map((i) => i.value) ?? null;
		assert.deepEqual(complete(""), ["connect", "disconnect", "reconnect", "status", "tools"]);
		assert.deepEqual(complete("re"), ["reconnect"]);
		assert.equal(complete("zz"), null);
		assert.deepEqual(complete("connect "), ["connect http://127.0.0.1:7/mcp", "connect http://127.0.0.1:8/mcp"]);
		assert.deepEqual(complete("connect http://127.0.0.1:8"), ["connect http://127.0.0.1:8/mcp"]);
		assert.equal(complete("status x"), null);
	} finally {
		for (const [k, v] of Object.entries(saved)) {
			if (v === undefined) delete process.env[k];
			else process.env[k] = v;
		}
	}
});

test("started with $PI_IDE_NVIM_URL (by :PiIde agent pi), the extension connects to that Neovim by itself", async () => {
	const server = await mcpServer({ mode: "json", token: "token-auto", handle: echo });
	const dir = scratch();
	const keys = ["PI_CODING_AGENT_DIR", "PI_IDE_LOCK_DIR", "PI_IDE_NVIM_URL"];
	const saved = Object.fromEntries(keys.map((k) => [k, process.env[k]]));
	process.env.PI_CODING_AGENT_DIR = join(dir, "agent");
	process.env.PI_IDE_LOCK_DIR = join(dir, "locks");
	process.env.PI_IDE_NVIM_URL = server.url;
	try {
		mkdirSync(join(dir, "agent"));
		mkdirSync(join(dir, "locks"));
		const port = Number(new URL(server.url).port);
		writeLock(join(dir, "locks"), port, { ...lock(process.pid, ["/p"], port), authToken: "token-auto", mcpUrl: server.url });
		const { default: nvimExtension } = await jiti.import("../nvim.ts");
		const handlers = {};
		const registered = [];
		let active = [];
		const pi = new Proxy(
			{},
			{
				get: (_, name) => {
					if (name === "on") return (event, h) => (handlers[event] = h);
					if (name === "registerTool") return (tool) => registered.push(tool.name);
					if (name === "getActiveTools") return () => active;
					if (name === "setActiveTools") return (names) => (active = names);
					return () => {};
				},
			},
		);
		nvimExtension(pi);
		const told = [];
		const ui = new Proxy({}, { get: (_, name) => (...args) => name === "notify" && told.push(args[0]) });
		handlers.session_start({ type: "session_start", reason: "startup" }, { ui, hasUI: true, cwd: "/p" });
		await waitUntil(() => told.some((m) => m.startsWith("Connected to Neovim")), "the connection");
		assert.ok(server.seen.some((s) => s.msg?.method === "initialize"));
		assert.deepEqual(registered.sort(), ["nvim_a", "nvim_b"]);
		assert.deepEqual(active.sort(), ["nvim_a", "nvim_b"]);
	} finally {
		server.close();
		for (const [k, v] of Object.entries(saved)) {
			if (v === undefined) delete process.env[k];
			else process.env[k] = v;
		}
	}
});

// ---------------------------------------------------------------------------
// URLs
// ---------------------------------------------------------------------------

test("only loopback http URLs with a port are accepted, normalized", () => {
	const ok = (raw, url) => assert.deepEqual(discovery.checkUrl(raw), { ok: true, url }, raw);
	ok("http://127.0.0.1:4000/mcp", "http://127.0.0.1:4000/mcp");
	ok(" http://127.0.0.1:4000/mcp/ ", "http://127.0.0.1:4000/mcp");
	ok("http://localhost:4000", "http://localhost:4000/mcp");
	ok("http://LOCALHOST:4000/mcp", "http://localhost:4000/mcp");
	ok("http://[::1]:4000/mcp", "http://[::1]:4000/mcp");
	ok("http://127.1.2.3:4000/mcp", "http://127.1.2.3:4000/mcp");
	const refused = (raw, re) => {
		const r = discovery.checkUrl(raw);
		assert.equal(r.ok, false, raw);
		assert.match(r.error, re, raw);
	};
	refused("https://127.0.0.1:4000/mcp", /only http:\/\//);
	refused("http://example.com:4000/mcp", /not a loopback/);
	refused("http://127.0.0.1.evil.example:4000/mcp", /not a loopback/);
	refused("http://10.0.0.1:4000/mcp", /not a loopback/);
	refused("http://user:pw@127.0.0.1:4000/mcp", /credentials/);
	refused("http://127.0.0.1:4000/mcp?x=1", /query/);
	refused("http://127.0.0.1/mcp", /port is missing/);
	refused("127.0.0.1:4000", /./);
	refused("not a url", /not a URL/);
	assert.equal(discovery.sameEndpoint("http://localhost:4000/mcp", "http://127.0.0.1:4000/mcp/"), true);
	assert.equal(discovery.sameEndpoint("http://127.0.0.1:4001/mcp", "http://127.0.0.1:4000/mcp"), false);
	assert.equal(discovery.sameEndpoint("http://example.com:4000/mcp", "http://example.com:4000/mcp"), false);
});

// ---------------------------------------------------------------------------
// Lockfiles
// ---------------------------------------------------------------------------

const DEAD = 999_999_999;

function writeLock(dir, port, body, ageSeconds = 0) {
	const path = join(dir, `${port}.lock`);
	writeFileSync(path, typeof body === "string" ? body : JSON.stringify(body));
	const t = Date.now() / 1000 - ageSeconds;
	utimesSync(path, t, t);
	return path;
}

const lock = (pid, folders, port) => ({
	pid,
	workspaceFolders: folders,
	ideName: "Neovim",
	transport: "ws",
	authToken: `token-${port}`,
	mcpUrl: `http://127.0.0.1:${port}/mcp`,
});

test("the lockfile chosen is a live Neovim's whose innermost workspace folder holds pi's cwd", () => {
	const dir = scratch();
	const project = join(dir, "project");
	const sub = join(project, "sub");
	mkdirSync(sub, { recursive: true });
	const link = join(dir, "link");
	symlinkSync(project, link);
	const alive = process.pid;
	writeLock(dir, 1, lock(DEAD, [project], 1)); // dead Neovim
	writeLock(dir, 2, lock(alive, [dir], 2)); // an outer folder
	writeLock(dir, 3, lock(alive, [project], 3), 30); // the project, older
	writeLock(dir, 4, lock(alive, [`${project}/`], 4), 10); // the project, newer
	writeLock(dir, 5, { ...lock(alive, [project], 5), mcpUrl: undefined }); // no MCP endpoint
	writeLock(dir, 6, lock(alive, [join(dir, "other")], 6)); // another project
	writeLock(dir, 7, "{ half written");
	writeLock(dir, 8, { ...lock(alive, [sub], 8), mcpUrl: "http://example.com:8/mcp" }); // not loopback
	writeFileSync(join(dir, "9.txt"), JSON.stringify(lock(alive, [project], 9)));

	const locks = discovery.readLockfiles(dir);
	assert.deepEqual(locks.map((l) => l.mcpUrl.match(/:(\d+)\//)[1]).sort(), ["1", "2", "3", "4", "6", "8"]);
	assert.equal(discovery.chooseLockfile(locks, project)?.authToken, "token-4");
	assert.equal(discovery.chooseLockfile(locks, sub)?.authToken, "token-4", "a subdirectory belongs to the project");
	assert.equal(discovery.chooseLockfile(locks, link)?.authToken, "token-4", "symlinks resolved");
	assert.equal(discovery.chooseLockfile(locks, join(dir, "elsewhere"))?.authToken, "token-2");
	assert.equal(discovery.chooseLockfile(locks, "/"), undefined);
	assert.equal(discovery.chooseLockfile(locks, project, () => false), undefined, "no live Neovim, no choice");
	const four = locks.find((l) => l.authToken === "token-4");
	assert.equal(discovery.workspaceRootFor(four, link), four.workspaceFolders[0], "symlinks resolved");
	assert.equal(discovery.workspaceRootFor(four, sub), four.workspaceFolders[0], "pi below the root answers for the root");
	assert.equal(discovery.workspaceRootFor(four, "/"), undefined);

	// The token for a URL only from a live lockfile announcing it.
	assert.equal(discovery.lockfileForUrl(locks, "http://localhost:3/mcp")?.authToken, "token-3");
	assert.equal(discovery.lockfileForUrl(locks, "http://127.0.0.1:1/mcp"), undefined, "dead pid");
	assert.equal(discovery.lockfileForUrl(locks, "http://127.0.0.1:99/mcp"), undefined);
	assert.deepEqual(discovery.readLockfiles(join(dir, "missing")), []);
});

test("the lock directory is $PI_IDE_LOCK_DIR, else ~/.pi/ide; pi's agent dir is $PI_CODING_AGENT_DIR, else ~/.pi/agent", () => {
	assert.equal(discovery.lockDir({ PI_IDE_LOCK_DIR: "/x/locks" }, "/home/u"), "/x/locks");
	assert.equal(discovery.lockDir({ PI_IDE_LOCK_DIR: "" }, "/home/u"), "/home/u/.pi/ide");
	assert.equal(settings.settingsPath({}, "/home/u"), "/home/u/.pi/agent/settings.json");
	assert.equal(settings.settingsPath({ PI_CODING_AGENT_DIR: "/a" }, "/home/u"), "/a/settings.json");
	assert.equal(settings.settingsPath({ PI_CODING_AGENT_DIR: "~/cfg" }, "/home/u"), "/home/u/cfg/settings.json");
	assert.equal(discovery.pidAlive(process.pid), true);
	assert.equal(discovery.pidAlive(DEAD), false);
	assert.equal(discovery.pidAlive(0), false);
	assert.equal(discovery.pidAlive(-1), false);
});

// ---------------------------------------------------------------------------
// settings.json
// ---------------------------------------------------------------------------

test("saving the URL keeps every other setting, inside nvim too, and leaves no temp file or lock", async () => {
	const dir = scratch();
	const file = join(dir, "agent", "settings.json");
	await settings.saveUrl(file, "http://127.0.0.1:1/mcp");
	assert.deepEqual(JSON.parse(readFileSync(file, "utf8")), { nvim: { url: "http://127.0.0.1:1/mcp" } });

	const before = { theme: "dark", packages: ["a", "b"], nested: { deep: { x: 1 } }, nvim: { url: "old", other: 7 } };
	writeFileSync(file, JSON.stringify(before));
	chmodSync(file, 0o640);
	await settings.saveUrl(file, "http://127.0.0.1:2/mcp");
	const after = JSON.parse(readFileSync(file, "utf8"));
	assert.deepEqual(after, { ...before, nvim: { url: "http://127.0.0.1:2/mcp", other: 7 } });
	assert.equal(statSync(file).mode & 0o777, 0o640, "the file keeps its mode");
	assert.equal(settings.readSavedUrl(file), "http://127.0.0.1:2/mcp");
	assert.deepEqual(readdirSync(join(dir, "agent")), ["settings.json"]);
});

test("a settings.json that is not a JSON object is never overwritten", async () => {
	const dir = scratch();
	const file = join(dir, "settings.json");
	for (const body of ["{ not json", "[1, 2]"]) {
		writeFileSync(file, body);
		await assert.rejects(settings.saveUrl(file, "http://127.0.0.1:1/mcp"), /left untouched/);
		assert.equal(readFileSync(file, "utf8"), body);
		assert.equal(settings.readSavedUrl(file), undefined);
	}
	assert.deepEqual(readdirSync(dir), ["settings.json"]);
	assert.equal(settings.readSavedUrl(join(dir, "missing.json")), undefined);
});

test("the settings lock pi's writer takes is waited for, and a stale one taken over", async () => {
	const dir = scratch();
	const file = join(dir, "settings.json");
	writeFileSync(file, '{"a":1}');
	mkdirSync(`${file}.lock`);
	const saving = settings.saveUrl(file, "http://127.0.0.1:3/mcp");
	await new Promise((r) => setTimeout(r, 100));
	assert.equal(settings.readSavedUrl(file), undefined, "waits while the lock is held");
	rmSync(`${file}.lock`, { recursive: true });
	await saving;
	assert.equal(settings.readSavedUrl(file), "http://127.0.0.1:3/mcp");

	mkdirSync(`${file}.lock`);
	const old = Date.now() / 1000 - 60;
	utimesSync(`${file}.lock`, old, old);
	await settings.saveUrl(file, "http://127.0.0.1:4/mcp");
	assert.equal(settings.readSavedUrl(file), "http://127.0.0.1:4/mcp");
	assert.equal(existsSync(`${file}.lock`), false);
	assert.deepEqual(JSON.parse(readFileSync(file, "utf8")).a, 1);
});

// ---------------------------------------------------------------------------
// SSE
// ---------------------------------------------------------------------------

test("SSE: events split anywhere, any line ending, comments and empty priming events", () => {
	const stream =
		"data: \nid: 0\nretry: 3000\n\n" + // rmcp's priming event
		"id: 5\n\n" + // no data: no event
		": keep-alive\r\n" +
		'event: message\r\ndata: {"a":\r\ndata: 1}\r\nid: 7\r\n\r\n' +
		"data:no-space\r\rdata: x\n\n" +
		"event: other\ndata: y\n\n" +
		"data: unterminated";
	const whole = new SseParser().push(stream);
	const expected = [
		{ event: "message", data: "", id: "0" }, // the client skips it
		{ event: "message", data: '{"a":\n1}', id: "7" },
		{ event: "message", data: "no-space" },
		{ event: "message", data: "x" },
		{ event: "other", data: "y" },
	];
	assert.deepEqual(whole, expected);
	// Every split point, including between \r and \n, gives the same events.
	for (let cut = 0; cut <= stream.length; cut++) {
		const p = new SseParser();
		const got = [...p.push(stream.slice(0, cut)), ...p.push(stream.slice(cut)), ...p.end()];
		assert.deepEqual(got, expected, `cut at ${cut}`);
	}
	const oneByOne = new SseParser();
	const got = [];
	for (const ch of stream) got.push(...oneByOne.push(ch));
	assert.deepEqual(got, expected);
});

// ---------------------------------------------------------------------------
// Schemas, names and results
// ---------------------------------------------------------------------------

test("projectPath is hidden from the model's schema and required fields stay required", () => {
	const remote = {
		type: "object",
		$schema: "https://json-schema.org/draft/2020-12/schema",
		properties: { filePath: { type: "string" }, line: { type: "integer" }, projectPath: { type: "string" } },
		required: ["filePath", "projectPath"],
	};
	const out = tools.toPiSchema(remote);
	assert.equal(out.takesProjectPath, true);
	assert.deepEqual(out.parameters, {
		type: "object",
		properties: { filePath: { type: "string" }, line: { type: "integer" } },
		required: ["filePath"],
	});
	assert.ok(remote.properties.projectPath, "the remote schema itself is untouched");
	assert.deepEqual(tools.toPiSchema({}), { parameters: { type: "object", properties: {} }, takesProjectPath: false });
	assert.match(tools.toPiSchema(null).error, /not an object/);
	assert.match(tools.toPiSchema({ type: "string" }).error, /not "object"/);
	assert.match(tools.toPiSchema({ type: "object", properties: [] }).error, /properties/);
	assert.match(tools.toPiSchema({ type: "object", properties: {}, required: ["ghost"] }).error, /ghost/);
});

test("tool names get the nvim_ prefix, safe characters and deterministic suffixes", () => {
	assert.equal(tools.piToolName("find_references", new Set()), "nvim_find_references");
	assert.equal(tools.piToolName("a.b c", new Set()), "nvim_a_b_c");
	assert.equal(tools.piToolName("a.b", new Set(["nvim_a_b"])), "nvim_a_b_2");
	assert.equal(tools.piToolName("a.b", new Set(["nvim_a_b", "nvim_a_b_2"])), "nvim_a_b_3");
	assert.equal(tools.piToolName("", new Set()), undefined);
	assert.ok(tools.piToolName("x".repeat(200), new Set()).length <= 64);
	for (const t of ["replace_text_in_file", "create_new_file", "reformat_file", "rename_refactoring", "apply_code_action"]) {
		assert.ok(tools.APPROVAL_TOOLS.has(t), `${t} waits for the person without a timeout`);
	}
	assert.equal(tools.APPROVAL_TOOLS.has("find_references"), false);
});

test("results: text and images kept, other content as bounded text, structured content when there is no text", () => {
	const big = "x".repeat(tools.MAX_TEXT_CHARS + 10);
	const out = tools.toPiContent({
		content: [
			{ type: "text", text: "hello" },
			{ type: "image", data: "aGk=", mimeType: "image/png" },
			{ type: "resource", resource: { uri: "file:///a", text: "resource text" } },
			{ type: "audio", data: "y".repeat(10_000), mimeType: "audio/wav" },
			{ type: "text", text: big },
		],
	});
	assert.deepEqual(out.slice(0, 3), [
		{ type: "text", text: "hello" },
		{ type: "image", data: "aGk=", mimeType: "image/png" },
		{ type: "text", text: "resource text" },
	]);
	assert.match(out[3].text, /^\[audio\]/);
	assert.ok(out[3].text.length < 2_100);
	assert.match(out[4].text, /10 more characters cut/);
	assert.deepEqual(tools.toPiContent({ content: [], structuredContent: { a: 1 } }), [{ type: "text", text: '{\n  "a": 1\n}' }]);
	assert.deepEqual(tools.toPiContent({ content: [] }), [{ type: "text", text: "(no output)" }]);
	assert.equal(tools.errorText({ content: [{ type: "text", text: "no such file" }], isError: true }), "no such file");
});

// ---------------------------------------------------------------------------
// The Streamable-HTTP client against a small MCP server
// ---------------------------------------------------------------------------

/**
 * An MCP server on 127.0.0.1: `handle(msg, reply)` decides each request;
 * `reply` writes JSON or SSE per `mode`. Records every message and header.
 */
async function mcpServer({ mode = "sse", token = "t1", handle }) {
	const server = {
		token,
		mode,
		seen: [],
		sessions: new Set(),
		nextSession: 1,
	};
	const http = createServer((req, res) => {
		let body = "";
		req.on("data", (d) => (body += d));
		req.on("end", () => {
			const msg = body ? JSON.parse(body) : undefined;
			server.seen.push({ method: req.method, msg, headers: req.headers });
			if (req.headers.authorization !== `Bearer ${server.token}`) {
				res.writeHead(401).end("Unauthorized");
				return;
			}
			if (req.method === "DELETE") {
				server.sessions.delete(req.headers["mcp-session-id"]);
				res.writeHead(202).end();
				return;
			}
			if (msg.method === "initialize") {
				const id = `s${server.nextSession++}`;
				server.sessions.add(id);
				res.writeHead(200, { "content-type": "application/json", "mcp-session-id": id });
				const result = { protocolVersion: "2025-11-25", capabilities: { tools: {} }, serverInfo: { name: "stub", version: "9" } };
				res.end(JSON.stringify({ jsonrpc: "2.0", id: msg.id, result }));
				return;
			}
			if (!server.sessions.has(req.headers["mcp-session-id"])) {
				res.writeHead(404).end("Session not found");
				return;
			}
			if (msg.id === undefined || msg.method === undefined) {
				// a notification, or the answer to a request of ours
				res.writeHead(202).end();
				return;
			}
			const stream = server.mode === "sse";
			if (stream) {
				res.writeHead(200, { "content-type": "text/event-stream" });
				res.write("data: \nid: 0\nretry: 3000\n\n");
			}
			const send = (m) => (stream ? res.write(`data: ${JSON.stringify(m)}\n\n`) : undefined);
			const reply = (result) => {
				const answer = { jsonrpc: "2.0", id: msg.id, ...result };
				if (stream) res.end(`data: ${JSON.stringify(answer)}\n\n`);
				else {
					res.writeHead(200, { "content-type": "application/json" });
					res.end(JSON.stringify(answer));
				}
			};
			handle(msg, reply, send, res);
		});
	});
	await new Promise((r) => http.listen(0, "127.0.0.1", r));
	server.url = `http://127.0.0.1:${http.address().port}/mcp`;
	server.close = () => {
		http.closeAllConnections();
		http.close();
	};
	return server;
}

const echo = (msg, reply) => {
	if (msg.method === "tools/list") {
		const tool = (name) => ({ name, inputSchema: { type: "object" } });
		const page = msg.params.cursor ? [tool("b")] : [tool("a"), { bad: true }];
		reply({ result: { tools: page, ...(msg.params.cursor ? {} : { nextCursor: "p2" }) } });
	} else if (msg.params.name === "fail") {
		reply({ error: { code: -32602, message: "unknown tool: fail" } });
	} else {
		reply({ result: { content: [{ type: "text", text: JSON.stringify(msg.params.arguments) }], structuredContent: { ok: 1 } } });
	}
};

for (const mode of ["json", "sse"]) {
	test(`client (${mode} answers): initialize, paged tools/list, calls, JSON-RPC errors, session headers`, async () => {
		const server = await mcpServer({ mode, handle: echo });
		try {
			const client = new McpHttpClient({ url: server.url, token: () => "t1", clientInfo: { name: "t", version: "0" } });
			const info = await client.initialize();
			assert.deepEqual(info, { name: "stub", version: "9", protocolVersion: "2025-11-25" });
			assert.deepEqual((await client.listTools()).map((t) => t.name), ["a", "b"]);
			const result = await client.callTool("x", { q: 1 });
			assert.deepEqual(result, { content: [{ type: "text", text: '{"q":1}' }], structuredContent: { ok: 1 } });
			await assert.rejects(client.callTool("fail", {}), (e) => e instanceof McpError && e.kind === "rpc" && e.code === -32602);
			const call = server.seen.find((s) => s.msg?.method === "tools/call");
			assert.equal(call.headers["mcp-session-id"], "s1");
			assert.equal(call.headers["mcp-protocol-version"], "2025-11-25");
			assert.match(call.headers.accept, /application\/json/);
			assert.match(call.headers.accept, /text\/event-stream/);
			assert.ok(call.msg.params._meta.progressToken, "calls ask for progress");
			assert.ok(server.seen.some((s) => s.msg?.method === "notifications/initialized"));
			await client.close();
			assert.equal(server.seen.at(-1).method, "DELETE");
			assert.equal(server.sessions.size, 0);
		} finally {
			server.close();
		}
	});
}

test("client: progress re-arms the idle timeout, server pings are answered, a silent call times out and is cancelled", async () => {
	const server = await mcpServer({
		handle: (msg, reply, send, res) => {
			if (msg.params.name === "slow") {
				const token = msg.params._meta.progressToken;
				send({ jsonrpc: "2.0", id: "srv-1", method: "ping" });
				let n = 0;
				const tick = setInterval(() => {
					n++;
					send({ jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: token, progress: n, message: `waiting ${n}` } });
					send({ jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: "someone-else", progress: 99 } });
					if (n === 6) {
						clearInterval(tick);
						reply({ result: { content: [{ type: "text", text: "approved" }] } });
					}
				}, 100);
			} else if (msg.params?.name === "late") {
				setTimeout(() => reply({ result: { content: [{ type: "text", text: "late" }] } }), 500);
			} else if (msg.params?.name === "cut") {
				setTimeout(() => res.destroy(), 50); // Neovim dies mid-answer
			} else if (msg.params?.name !== "silent") {
				reply({ result: {} });
			} // "silent": never answers
		},
	});
	try {
		const client = new McpHttpClient({ url: server.url, token: () => "t1", clientInfo: { name: "t", version: "0" } });
		await client.initialize();
		const progress = [];
		const result = await client.callTool("slow", {}, { idleTimeoutMs: 300, onProgress: (p) => progress.push(p) });
		assert.deepEqual(result.content, [{ type: "text", text: "approved" }]);
		assert.deepEqual(progress.map((p) => p.message), ["waiting 1", "waiting 2", "waiting 3", "waiting 4", "waiting 5", "waiting 6"]);
		await waitUntil(() => server.seen.some((s) => s.msg?.id === "srv-1" && s.msg.result), "the ping's answer");

		// No bound (the tools that wait for the person): a late answer is fine.
		assert.deepEqual((await client.callTool("late", {})).content, [{ type: "text", text: "late" }]);
		await assert.rejects(client.callTool("cut", {}), (e) => e instanceof McpError && e.kind === "network");

		const started = Date.now();
		await assert.rejects(
			client.callTool("silent", {}, { idleTimeoutMs: 200 }),
			(e) => e.kind === "timeout" && /no answer from Neovim within 200 ms/.test(e.message),
		);
		assert.ok(Date.now() - started < 2_000);
		const silent = server.seen.find((s) => s.msg?.params?.name === "silent").msg.id;
		await waitUntil(
			() => server.seen.some((s) => s.msg?.method === "notifications/cancelled" && s.msg.params.requestId === silent),
			"notifications/cancelled",
		);

		const abort = new AbortController();
		const pending = client.callTool("silent", {}, { signal: abort.signal });
		setTimeout(() => abort.abort(), 50);
		await assert.rejects(pending, (e) => e.kind === "cancelled");
	} finally {
		server.close();
	}
});

test("client: a dropped session or a new token (Neovim restarted) means one fresh initialize, then the call", async () => {
	let token = "t1";
	const server = await mcpServer({ mode: "json", handle: echo });
	try {
		const client = new McpHttpClient({ url: server.url, token: () => token, clientInfo: { name: "t", version: "0" } });
		await client.initialize();
		server.sessions.clear(); // the server forgot the session: 404
		assert.equal((await client.callTool("x", { n: 1 })).content[0].text, '{"n":1}');
		assert.equal(server.seen.filter((s) => s.msg?.method === "initialize").length, 2);

		server.token = token = "t2"; // a restart: new token in the lockfile, 401 with the old one
		server.sessions.clear();
		assert.equal((await client.callTool("x", { n: 2 })).content[0].text, '{"n":2}');
		assert.equal(server.seen.filter((s) => s.msg?.method === "initialize").length, 3);

		server.token = "t3"; // the lockfile does not know it: the call fails, once retried
		await assert.rejects(client.callTool("x", {}), (e) => e.kind === "http" && e.status === 401);
		const initializes = server.seen.filter((s) => s.msg?.method === "initialize").length;
		assert.equal(initializes, 4, "exactly one retry");

		const gone = new McpHttpClient({
			url: server.url,
			token: () => {
				throw new Error("no live lockfile announces it");
			},
			clientInfo: { name: "t", version: "0" },
		});
		await assert.rejects(gone.initialize(), (e) => e.kind === "stale" && /no live lockfile/.test(e.message));
	} finally {
		server.close();
	}
	// Neovim gone: the kept-alive connection is closed and nothing listens.
	const down = new McpHttpClient({ url: server.url, token: () => "t", clientInfo: { name: "t", version: "0" } });
	await assert.rejects(down.initialize(), (e) => e.kind === "network" && /cannot reach .*connection refused/.test(e.message));
});

async function waitUntil(probe, what) {
	const deadline = Date.now() + 5_000;
	while (!probe()) {
		if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
		await new Promise((r) => setTimeout(r, 10));
	}
}
