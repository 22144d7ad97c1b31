// Driving the real pi (`--mode rpc`) for the bridge's tests: a stub
// OpenAI-compatible model whose replies the driver scripts, pi itself
// (whichever install $PI_CLI names, run by $PI_NODE; else the pinned one in
// pi/node_modules), and a recording MCP proxy that can stand between pi and
// Neovim to see every request on the wire and to add tools of its own.
import { spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { createServer, request as httpRequest } from "node:http";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
export const piDir = path.join(here, "..", "..", "pi");
export const piCli = process.env.PI_CLI ?? path.join(piDir, "node_modules", "@mariozechner", "pi-coding-agent", "dist", "cli.js");
export const piNode = process.env.PI_NODE ?? process.execPath;
/** Generous: the machine may be loaded. */
export const STEP_MS = 30_000;

export function fail(message, pi) {
	const tail = (pi?.events ?? []).slice(-25).map((e) => JSON.stringify(e).slice(0, 500));
	process.stderr.write(`${message}\n--- last RPC events ---\n${tail.join("\n")}\n--- pi stderr ---\n${(pi?.stderr ?? "").slice(-4000)}\n`);
	process.exit(1);
}

export async function waitFor(what, probe, ms = STEP_MS, pi) {
	const deadline = Date.now() + ms;
	for (;;) {
		const value = await probe();
		if (value !== undefined) return value;
		if (Date.now() > deadline) fail(`timed out waiting for ${what}`, pi);
		await new Promise((r) => setTimeout(r, 20));
	}
}

export const text = (content) => (typeof content === "string" ? content : (content ?? []).map((p) => p.text ?? "").join(""));

// ---------------------------------------------------------------------------
// The model: `CALL <tool> <json args>` makes it call that tool; a tool
// result is echoed back as `RESULT: <text>`; anything else gets "ok".
// ---------------------------------------------------------------------------

function chunk(delta, finish) {
	const choices = [{ index: 0, delta, finish_reason: finish }];
	return { id: "chatcmpl-stub", object: "chat.completion.chunk", created: 0, model: "stub-model", choices };
}

export async function startModel() {
	const requests = [];
	let calls = 0;
	const server = createServer((req, res) => {
		let body = "";
		req.on("data", (d) => (body += d));
		req.on("end", () => {
			const parsed = JSON.parse(body);
			requests.push(parsed);
			const last = parsed.messages.at(-1);
			res.writeHead(200, { "content-type": "text/event-stream" });
			const send = (c) => res.write(`data: ${JSON.stringify(c)}\n\n`);
			const usage = { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 };
			const asked = last.role === "user" ? text(last.content).match(/^CALL (\S+) (.*)$/s) : null;
			if (asked) {
				const id = `call_${++calls}`;
				const call = { index: 0, id, type: "function", function: { name: asked[1], arguments: asked[2] } };
				send(chunk({ role: "assistant", tool_calls: [call] }, null));
				send({ ...chunk({}, "tool_calls"), usage });
			} else {
				const reply = last.role === "tool" ? `RESULT: ${text(last.content)}` : "ok";
				send(chunk({ role: "assistant", content: reply }, null));
				send({ ...chunk({}, "stop"), usage });
			}
			res.end("data: [DONE]\n\n");
		});
	});
	await new Promise((r) => server.listen(0, "127.0.0.1", r));
	return { requests, url: `http://127.0.0.1:${server.address().port}/v1`, close: () => server.close() };
}

/** pi's agent directory under `home`, with the stub model and `settings`. */
export function agentDir(home, model, settings) {
	const dir = path.join(home, "agent");
	mkdirSync(dir, { recursive: true });
	const provider = {
		baseUrl: model.url,
		api: "openai-completions",
		apiKey: "stub-key",
		compat: { supportsDeveloperRole: false, supportsReasoningEffort: false },
		models: [{ id: "stub-model", name: "Stub", reasoning: false, input: ["text"] }],
	};
	writeFileSync(path.join(dir, "models.json"), JSON.stringify({ providers: { stub: provider } }));
	if (settings !== undefined) writeFileSync(path.join(dir, "settings.json"), JSON.stringify(settings, null, 2));
	return dir;
}

// ---------------------------------------------------------------------------
// pi over RPC
// ---------------------------------------------------------------------------

/**
 * pi in `cwd` with the bridge loaded. `answer(request)` answers dialogs
 * (select, confirm, input); unanswered ones stay open.
 */
export async function startPi({ cwd, lockDir, home, model, env = {}, answer = () => undefined }) {
	const dir = path.join(home, "agent");
	// pi in a terminal collects garbage all the time (its TUI allocates on
	// every frame); here it collects every 100 ms, as often, so the bridge
	// cannot lean on anything a collection may drop.
	const collectOften = "data:text/javascript,setInterval(globalThis.gc, 100).unref()";
	const child = spawn(
		piNode,
		[
			...["--expose-gc", "--import", collectOften],
			...[piCli, "--mode", "rpc", "--no-session", "--offline"],
			...["--provider", "stub", "--model", "stub-model", "-e", path.join(piDir, "nvim.ts")],
		],
		{
			cwd,
			env: {
				...process.env,
				HOME: home,
				PI_CODING_AGENT_DIR: dir,
				PI_IDE_LOCK_DIR: lockDir,
				PI_OFFLINE: "1",
				PI_SKIP_VERSION_CHECK: "1",
				NO_PROXY: "127.0.0.1,localhost",
				no_proxy: "127.0.0.1,localhost",
				...env,
			},
			stdio: ["pipe", "pipe", "pipe"],
		},
	);
	const pi = { events: [], stderr: "", child, model };
	child.stderr.on("data", (d) => (pi.stderr += d));
	let out = "";
	const rpc = (command) => child.stdin.write(`${JSON.stringify(command)}\n`);
	pi.rpc = rpc;
	child.stdout.on("data", (d) => {
		out += d;
		for (let nl = out.indexOf("\n"); nl !== -1; nl = out.indexOf("\n")) {
			const line = out.slice(0, nl).trim();
			out = out.slice(nl + 1);
			if (!line) continue;
			const event = JSON.parse(line);
			pi.events.push(event);
			if (event.type === "extension_ui_request" && ["select", "confirm", "input"].includes(event.method)) {
				const reply = answer(event);
				if (reply !== undefined) rpc({ type: "extension_ui_response", id: event.id, ...reply });
			}
		}
	});
	const find = (from, pred) => pi.events.slice(from).find(pred);
	pi.find = find;
	pi.notifyAfter = (from, re) =>
		find(from, (e) => e.type === "extension_ui_request" && e.method === "notify" && re.test(e.message));
	pi.footer = (from) =>
		pi.events
			.slice(from)
			.filter((e) => e.type === "extension_ui_request" && e.method === "setStatus" && e.statusKey === "nvim")
			.map((e) => e.statusText ?? null);
	pi.dialogs = (from) => pi.events.slice(from).filter((e) => e.type === "extension_ui_request" && e.method !== "notify" && e.method !== "setStatus");
	/** Sends a slash command; the first notification after it matching `re`. */
	pi.command = async (line, re) => {
		const from = pi.events.length;
		rpc({ type: "prompt", message: line });
		return (await waitFor(`a reply to ${line}`, () => pi.notifyAfter(from, re), STEP_MS, pi)).message;
	};
	/** Sends a prompt, waits for the agent to finish; the model requests it made. */
	pi.prompt = async (message) => {
		const from = pi.events.length;
		const seen = model.requests.length;
		rpc({ type: "prompt", message });
		await waitFor(`the agent to finish "${message.slice(0, 80)}"`, () => find(from, (e) => e.type === "agent_end"), STEP_MS, pi);
		return { requests: model.requests.slice(seen), from };
	};
	/** Has the model call `tool` with `args`; what came back. */
	pi.call = async (tool, args) => {
		const { requests, from } = await pi.prompt(`CALL ${tool} ${JSON.stringify(args)}`);
		const end = find(from, (e) => e.type === "tool_execution_end") ?? null;
		const updates = pi.events.slice(from).filter((e) => e.type === "tool_execution_update");
		const result = text(requests[1]?.messages.findLast((m) => m.role === "tool")?.content);
		return { end, result, isError: end?.isError === true, updates, tools: toolNames(requests[0]) };
	};
	/** The tool names the model is offered now. */
	pi.tools = async () => toolNames((await pi.prompt("hello")).requests[0]);
	pi.systemPrompt = async () => {
		const request = (await pi.prompt("hello")).requests[0];
		const system = request?.messages.find((m) => m.role === "system" || m.role === "developer");
		return text(system?.content);
	};
	pi.close = () => child.kill();
	rpc({ id: "state", type: "get_state" });
	await waitFor("pi to start", () => find(0, (e) => e.type === "response" && e.id === "state"), STEP_MS, pi);
	return pi;
}

export const toolNames = (request) => (request?.tools ?? []).map((t) => t.function.name);

// ---------------------------------------------------------------------------
// A recording MCP proxy in front of Neovim's endpoint
// ---------------------------------------------------------------------------

/**
 * Forwards to `target` (Neovim's /mcp) and records every JSON-RPC message
 * pi sends. `tools()` may rewrite `tools/list` answers; `fake[name]`
 * answers calls of tools the proxy adds: `(msg, respond)` where
 * `respond.progress(n, message)`, `respond.result(result)`,
 * `respond.error(code, message)`.
 */
export async function startProxy(target, { rewriteTools = (t) => t, rewriteInit = (r) => r, fake = {} } = {}) {
	const seen = [];
	let lastTools = [];
	const targetUrl = new URL(target);
	const server = createServer((req, res) => {
		const chunks = [];
		req.on("data", (d) => chunks.push(d));
		req.on("end", () => {
			const body = Buffer.concat(chunks);
			let msg;
			try {
				msg = body.length > 0 ? JSON.parse(body) : undefined;
			} catch {
				msg = undefined;
			}
			seen.push({ method: req.method, msg });
			const name = msg?.method === "tools/call" ? msg.params?.name : undefined;
			if (name && fake[name]) {
				res.writeHead(200, { "content-type": "text/event-stream" });
				const send = (m) => res.write(`data: ${JSON.stringify({ jsonrpc: "2.0", ...m })}\n\n`);
				const token = msg.params._meta?.progressToken;
				fake[name](msg, {
					progress: (progress, message) =>
						send({ method: "notifications/progress", params: { progressToken: token, progress, message } }),
					result: (result) => res.end(`data: ${JSON.stringify({ jsonrpc: "2.0", id: msg.id, result })}\n\n`),
					error: (code, message) => res.end(`data: ${JSON.stringify({ jsonrpc: "2.0", id: msg.id, error: { code, message } })}\n\n`),
					closed: new Promise((r) => res.once("close", r)),
				});
				return;
			}
			const headers = { ...req.headers, host: targetUrl.host };
			delete headers["content-length"];
			const upstream = httpRequest(
				{ host: targetUrl.hostname, port: targetUrl.port, path: targetUrl.pathname, method: req.method, headers },
				(answer) => {
					const rewrite = msg?.method === "tools/list" || msg?.method === "initialize";
					if (!rewrite) {
						res.writeHead(answer.statusCode, answer.headers);
						answer.pipe(res);
						return;
					}
					const parts = [];
					answer.on("data", (d) => parts.push(d));
					answer.on("end", () => {
						const raw = Buffer.concat(parts).toString();
						// JSON or one SSE stream: the answer is the message with our id.
						const candidates = raw.trim().startsWith("{") ? [raw] : raw.split(/\r?\n/).filter((l) => l.startsWith("data:")).map((l) => l.slice(5));
						const found = candidates.map((c) => { try { return JSON.parse(c); } catch { return undefined; } }).find((m) => m?.id === msg.id);
						const out = { ...answer.headers, "content-type": "application/json" };
						delete out["content-length"];
						delete out["transfer-encoding"];
						if (found?.result) {
							if (msg.method === "tools/list") {
								lastTools = rewriteTools(found.result.tools);
								found.result = { ...found.result, tools: lastTools };
							} else {
								found.result = rewriteInit(found.result);
							}
						}
						res.writeHead(answer.statusCode, out);
						res.end(found ? JSON.stringify(found) : raw);
					});
				},
			);
			upstream.on("error", () => res.destroy());
			upstream.end(body);
		});
	});
	await new Promise((r) => server.listen(0, "127.0.0.1", r));
	return {
		seen,
		url: `http://127.0.0.1:${server.address().port}/mcp`,
		calls: () => seen.filter((s) => s.msg?.method === "tools/call").map((s) => s.msg.params),
		lastTools: () => lastTools,
		close: () => {
			server.closeAllConnections();
			server.close();
		},
	};
}
