// Drives the real pi (`--mode rpc -e pi/nvim.ts`) through one scenario of
// tests/integration/pi_bridge.rs against real Neovims started by the test,
// and prints one JSON report of what pi, the model and the person saw.
//
// node pi_bridge.mjs <scenario> <config json>
//
// The config names pi's cwd, the lock directory pi reads, a scratch home,
// and what the scenario needs besides (URLs, files the test watches).
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import path from "node:path";
import { agentDir, fail, startModel, startPi, startProxy, STEP_MS, text, waitFor } from "./pi_harness.mjs";

const [scenario, rawConfig] = process.argv.slice(2);
const config = JSON.parse(rawConfig);
const report = {};
const model = await startModel();

const readJson = (file) => JSON.parse(readFileSync(file, "utf8"));
const nvimTools = (names) => names.filter((n) => n.startsWith("nvim_"));
const extensionErrors = (pi) => pi.events.filter((e) => e.type === "extension_error");

/** Resolves once nothing listens on `port` any more. */
async function portClosed(port) {
	await waitFor("the port to close", () =>
		new Promise((r) => {
			const socket = connect(port, "127.0.0.1");
			socket.once("connect", () => {
				socket.destroy();
				setTimeout(() => r(undefined), 20);
			});
			socket.once("error", () => r(true));
		}),
	);
}

const scenarios = {
	/** Start-up: no tool, no file read, nothing spawned, no dialog. */
	async startup() {
		const lockDir = path.join(config.home, "locks");
		mkdirSync(lockDir, { recursive: true });
		// Reading this lockfile would block pi for good: it is a FIFO.
		const fifo = path.join(lockDir, "4242.lock");
		spawnSync("mkfifo", [fifo]);
		agentDir(config.home, model, { nvim: { url: "http://127.0.0.1:4242/mcp" } });
		const pi = await startPi({ cwd: config.cwd, lockDir, home: config.home, model, env: config.env });
		report.toolsAtStart = await pi.tools();
		report.status = await pi.command("/nvim status", /Neovim bridge/);
		report.footer = pi.footer(0);
		report.dialogs = pi.dialogs(0);
		report.extensionErrors = extensionErrors(pi);
		pi.close();
		rmSync(fifo);
	},

	/** The main path against this project's Neovim, found through the saved URL. */
	async main() {
		const settingsFile = path.join(agentDir(config.home, model, {
			unrelatedKey: { kept: true },
			nvim: { note: "kept", url: config.url },
		}), "settings.json");
		// Declines the offer to open Neovim (asked once Neovim is gone).
		const pi = await startPi({
			cwd: config.cwd,
			lockDir: config.lockDir,
			home: config.home,
			model,
			env: config.env,
			answer: (r) => (r.method === "confirm" ? { confirmed: false } : undefined),
		});
		report.statusBefore = await pi.command("/nvim status", /Neovim bridge/);
		let from = pi.events.length;
		report.connect = await pi.command("/nvim connect", /Connected to Neovim|tools stay off/);
		report.footer = pi.footer(from);
		report.settings = readJson(settingsFile);

		const read = await pi.call("nvim_get_file_text_by_path", { pathInProject: "a.txt" });
		report.toolsAfterConnect = read.tools;
		report.read = read;
		const request = pi.model.requests.at(-2);
		report.readSchema = (request.tools ?? []).find((t) => t.function.name === "nvim_get_file_text_by_path")?.function ?? null;
		report.systemPrompt = text(request.messages.find((m) => m.role === "system" || m.role === "developer")?.content);

		// An edit waits in Neovim's diff until the person accepts it there
		// (the test does, after a while); the bridge sets no timeout on it.
		report.edit = await pi.call("nvim_replace_text_in_file", { pathInProject: "a.txt", oldText: "UNSAVED", newText: "EDITED" });

		// The person gives up in pi (Escape, here RPC `abort`) while Neovim
		// shows the edit's diff: the call ends in pi at once, and in Neovim too.
		from = pi.events.length;
		const args = { pathInProject: "a.txt", oldText: "saved one", newText: "ABORTED" };
		pi.rpc({ type: "prompt", message: `CALL nvim_replace_text_in_file ${JSON.stringify(args)}` });
		await waitFor("the test to see the diff", () => (existsSync(path.join(config.home, "diff-shown")) ? true : undefined), STEP_MS, pi);
		const abortedAt = Date.now();
		pi.rpc({ id: "abort", type: "abort" });
		report.abortEnd = await waitFor("the call to end after pi's abort", () => pi.find(from, (e) => e.type === "tool_execution_end"), 5_000, pi);
		report.abortEndMs = Date.now() - abortedAt;
		await waitFor("the aborted agent to stop", () => pi.find(from, (e) => e.type === "agent_end"), STEP_MS, pi);

		report.statusConnected = await pi.command("/nvim status", /Neovim bridge/);
		report.tools = await pi.command("/nvim tools", /Neovim tools|No Neovim tools/);
		report.disconnect = await pi.command("/nvim disconnect", /Disconnected|Not connected/);
		report.toolsAfterDisconnect = await pi.tools();
		report.statusAfter = await pi.command("/nvim status", /Neovim bridge/);

		// Errors: a refused path, then Neovim gone.
		report.reconnect = await pi.command("/nvim reconnect", /Connected to Neovim|tools stay off/);
		report.outside = await pi.call("nvim_get_file_text_by_path", { pathInProject: "../outside.txt" });
		const lockName = readdirSync(config.lockDir).find((f) => f.endsWith(".lock"));
		const neovim = readJson(path.join(config.lockDir, lockName));
		process.kill(neovim.pid, "SIGKILL");
		// (Neovim stays a zombie until the test reaps it.) Its host follows:
		// the lockfile goes and the port closes.
		await waitFor("the host to remove its lockfile", () => (readdirSync(config.lockDir).includes(lockName) ? undefined : true), STEP_MS, pi);
		await portClosed(Number(new URL(neovim.mcpUrl).port));
		from = pi.events.length;
		report.gone = await pi.call("nvim_get_file_text_by_path", { pathInProject: "a.txt" });
		report.lostNotice = pi.notifyAfter(from, /Lost Neovim/)?.message ?? null;
		report.footerAfterLoss = pi.footer(from);
		report.toolsAfterLoss = await pi.tools();
		from = pi.events.length;
		report.connectStale = await pi.command("/nvim connect", /Connected to Neovim|tools stay off/);
		report.dialogsWhenStale = pi.dialogs(from);
		report.footerWhenStale = pi.footer(from);
		report.settingsAtEnd = readJson(settingsFile);
		report.connectRemote = await pi.command("/nvim connect http://example.com:8080/mcp", /loopback|Connected/);
		report.extensionErrors = extensionErrors(pi);
		pi.close();
	},

	/**
	 * Through a recording proxy that adds tools of its own: the catalog
	 * exposed, the guide, every kind of result, progress, cancellation,
	 * timeouts, collisions, malformed schemas, projectPath on the wire,
	 * reconnect with a changed catalog, disconnect, a server that is not
	 * pi-ide.nvim.
	 */
	async proxy() {
		const real = readJson(config.neovimLock);
		const state = { drop: new Set(), add: [], serverName: undefined, hung: undefined };
		const schema = (properties = {}, required = []) => ({
			type: "object",
			properties: { ...properties, projectPath: { type: "string" } },
			required,
		});
		const extra = [
			{ name: "show_image", description: "An image.", inputSchema: schema() },
			{ name: "slow_progress", description: "Reports progress.", inputSchema: schema() },
			{ name: "fails", description: "Fails.", inputSchema: schema() },
			{ name: "rpc_error", description: "A JSON-RPC error.", inputSchema: schema() },
			{ name: "hangs", description: "Never answers.", inputSchema: schema() },
			{ name: "legacy_result", description: "The 2024 result shape.", inputSchema: schema() },
			// Sanitized, it collides with the real get_file_text_by_path.
			{ name: "get.file.text_by_path", description: "A collision.", inputSchema: schema() },
			{ name: "bad_schema", description: "Not an object schema.", inputSchema: { type: "string" } },
			{ name: "bad_required", description: "Requires what it does not describe.", inputSchema: { type: "object", properties: {}, required: ["ghost"] } },
		];
		const proxy = await startProxy(real.mcpUrl, {
			rewriteTools: (tools) => [...tools.filter((t) => !state.drop.has(t.name)), ...extra, ...state.add],
			rewriteInit: (result) => (state.serverName ? { ...result, serverInfo: { ...result.serverInfo, name: state.serverName } } : result),
			fake: {
				show_image: (_m, r) => r.result({ content: [{ type: "text", text: "a red dot" }, { type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" }] }),
				slow_progress: (_m, r) => {
					let n = 0;
					const tick = setInterval(() => {
						r.progress(++n, `step ${n}`);
						if (n === 3) {
							clearInterval(tick);
							r.result({ content: [{ type: "text", text: "done after progress" }] });
						}
					}, 100);
				},
				fails: (_m, r) => r.result({ content: [{ type: "text", text: "the file is gone" }], isError: true }),
				rpc_error: (_m, r) => r.error(-32602, "bad arguments: line must be positive"),
				hangs: (m, r) => {
					state.hung = m.id;
					r.closed.then(() => (state.hungClosed = true));
				},
				search_in_files_by_text: () => {},
				legacy_result: (_m, r) => r.result({ toolResult: { answer: 42 } }),
				extra_tool: (_m, r) => r.result({ content: [{ type: "text", text: "extra" }] }),
				"get.file.text_by_path": (_m, r) => r.result({ content: [{ type: "text", text: "the colliding one" }] }),
			},
		});
		// pi finds the proxy through a lockfile of its own, with Neovim's token.
		const lockDir = path.join(config.home, "locks");
		mkdirSync(lockDir, { recursive: true });
		writeFileSync(
			path.join(lockDir, `${new URL(proxy.url).port}.lock`),
			JSON.stringify({ ...real, mcpUrl: proxy.url }),
			{ mode: 0o600 },
		);
		// The URL from the project's own (trusted) settings; Nerd Font icons from pi's.
		const dir = agentDir(config.home, model, { nvim: { icons: "nerd" } });
		writeFileSync(path.join(dir, "trust.json"), JSON.stringify({ [config.cwd]: true }));
		mkdirSync(path.join(config.cwd, ".pi"), { recursive: true });
		writeFileSync(path.join(config.cwd, ".pi", "settings.json"), JSON.stringify({ nvim: { url: proxy.url } }));
		const pi = await startPi({ cwd: config.cwd, lockDir, home: config.home, model, env: config.env });
		let from = pi.events.length;
		report.connect = await pi.command("/nvim connect", /Connected to Neovim|tools stay off/);
		report.footer = pi.footer(from);
		report.status = await pi.command("/nvim status", /Neovim bridge/);
		report.globalSettings = readJson(path.join(dir, "settings.json"));
		report.proxyUrl = proxy.url;
		report.advertised = proxy.lastTools().map((t) => t.name);
		report.offered = nvimTools(await pi.tools());
		report.systemPrompt = await pi.systemPrompt();
		report.text = await pi.call("nvim_get_file_text_by_path", { pathInProject: "a.txt" });
		report.collision = await pi.call("nvim_get_file_text_by_path_2", {});
		report.image = await pi.call("nvim_show_image", {});
		report.progress = await pi.call("nvim_slow_progress", {});
		report.fails = await pi.call("nvim_fails", {});
		report.rpcError = await pi.call("nvim_rpc_error", {});
		report.legacy = await pi.call("nvim_legacy_result", {});
		// Cancellation: Escape in pi (RPC abort) while the call hangs.
		from = pi.events.length;
		pi.rpc({ type: "prompt", message: "CALL nvim_hangs {}" });
		await waitFor("the hanging call to reach the proxy", () => state.hung, STEP_MS, pi);
		pi.rpc({ id: "abort", type: "abort" });
		report.cancelled = await waitFor("the call to end", () => pi.find(from, (e) => e.type === "tool_execution_end"), 5_000, pi);
		await waitFor("the agent to stop", () => pi.find(from, (e) => e.type === "agent_end"), STEP_MS, pi);
		report.cancelSent = await waitFor(
			"notifications/cancelled",
			() => proxy.seen.find((s) => s.msg?.method === "notifications/cancelled" && s.msg.params?.requestId === state.hung)?.msg.params ?? undefined,
			STEP_MS,
			pi,
		);
		// A search that never answers ends at its own timeout plus grace.
		const started = Date.now();
		report.timeout = await pi.call("nvim_search_in_files_by_text", { searchText: "x", timeout: 1 });
		report.timeoutMs = Date.now() - started;
		report.projectPaths = proxy.calls().map((c) => [c.name, c.arguments?.projectPath ?? null]);

		// A changed catalog: one tool gone, one new, after an explicit reconnect.
		state.drop.add("find_definition");
		state.add.push({ name: "extra_tool", description: "New.", inputSchema: schema() });
		report.reconnect = await pi.command("/nvim reconnect", /Connected to Neovim|tools stay off/);
		report.advertisedAfterReconnect = proxy.lastTools().map((t) => t.name);
		report.offeredAfterReconnect = nvimTools(await pi.tools());
		report.toolList = await pi.command("/nvim tools", /Neovim tools/);
		report.extra = await pi.call("nvim_extra_tool", {});

		from = proxy.seen.length;
		report.disconnect = await pi.command("/nvim disconnect", /Disconnected/);
		report.deletes = proxy.seen.slice(from).filter((s) => s.method === "DELETE").length;
		report.toolsAfterDisconnect = await pi.tools();

		// Something else on the port: refused, nothing active.
		state.serverName = "some-other-server";
		from = pi.events.length;
		report.notOurs = await pi.command("/nvim connect", /Connected to Neovim|tools stay off/);
		report.footerNotOurs = pi.footer(from);
		report.toolsNotOurs = nvimTools(await pi.tools());
		report.extensionErrors = extensionErrors(pi);
		pi.close();
		proxy.close();
	},

	/** A connect that cannot be made leaves nothing active and saves nothing. */
	async failed() {
		const settingsFile = path.join(agentDir(config.home, model, {}), "settings.json");
		const pi = await startPi({ cwd: config.cwd, lockDir: config.lockDir, home: config.home, model, env: config.env });
		report.connect = await pi.command("/nvim connect", /Connected to Neovim|tools stay off/);
		report.toolsConnected = nvimTools(await pi.tools());
		report.settingsConnected = readJson(settingsFile);
		let from = pi.events.length;
		report.otherProject = await pi.command(`/nvim connect ${config.otherUrl}`, /Connected to Neovim|tools stay off/);
		report.footerOtherProject = pi.footer(from);
		report.toolsOtherProject = nvimTools(await pi.tools());
		report.callWhileFailed = await pi.call("nvim_get_file_text_by_path", { pathInProject: "a.txt" });
		report.settingsOtherProject = readJson(settingsFile);
		report.statusOtherProject = await pi.command("/nvim status", /Neovim bridge/);
		// Connected again, then a URL nothing announces.
		await pi.command("/nvim connect", /Connected to Neovim|tools stay off/);
		from = pi.events.length;
		report.unknownUrl = await pi.command("/nvim connect http://127.0.0.1:1/mcp", /Connected to Neovim|tools stay off/);
		report.footerUnknownUrl = pi.footer(from);
		report.toolsUnknownUrl = nvimTools(await pi.tools());
		report.settingsAtEnd = readJson(settingsFile);
		report.extensionErrors = extensionErrors(pi);
		pi.close();
	},

	/**
	 * No Neovim runs: inside tmux the bridge offers to open one in a pane,
	 * waits for it and connects; the saved URL (a fixed port) is kept.
	 * Then a Neovim that never comes: the person stops waiting.
	 */
	async launch() {
		const settingsFile = path.join(agentDir(config.home, model, { nvim: { url: config.url } }), "settings.json");
		const pi = await startPi({
			cwd: config.cwd,
			lockDir: config.lockDir,
			home: config.home,
			model,
			env: config.env,
			answer: (r) => (r.method === "confirm" ? { confirmed: true } : r.method === "select" && config.stopWaiting && existsSync(config.noNvim) ? { cancelled: true } : undefined),
		});
		let from = pi.events.length;
		report.connect = await pi.command("/nvim connect", /Connected to Neovim|tools stay off/);
		report.footer = pi.footer(from);
		report.dialogs = pi.dialogs(from).map((d) => ({ method: d.method, title: d.title, message: d.message ?? null }));
		report.settings = readJson(settingsFile);
		report.tmuxCalls = readdirSync(config.recordDir).filter((f) => f.startsWith("tmux.")).length;
		report.read = await pi.call("nvim_get_file_text_by_path", { pathInProject: "a.txt" });
		report.disconnect = await pi.command("/nvim disconnect", /Disconnected/);
		// The opened Neovim quits; the next one never announces itself.
		const lockName = readdirSync(config.lockDir).find((f) => f.endsWith(".lock"));
		const neovim = readJson(path.join(config.lockDir, lockName));
		process.kill(neovim.pid, "SIGTERM");
		await waitFor("the opened Neovim's lockfile to go", () => (readdirSync(config.lockDir).includes(lockName) ? undefined : true), STEP_MS, pi);
		writeFileSync(config.noNvim, "");
		config.stopWaiting = true;
		from = pi.events.length;
		report.stopped = await pi.command("/nvim connect", /Connected to Neovim|tools stay off/);
		report.footerStopped = pi.footer(from);
		report.toolsStopped = nvimTools(await pi.tools());
		report.extensionErrors = extensionErrors(pi);
		pi.close();
	},

	/** Two pi sessions on two worktrees against one Neovim: each sees its own files only. */
	async worktrees() {
		const sessions = [];
		for (const [i, cwd] of config.worktrees.entries()) {
			const home = path.join(config.home, `pi${i}`);
			agentDir(home, model, {});
			sessions.push({ cwd, pi: await startPi({ cwd, lockDir: config.lockDir, home, model, env: config.env }) });
		}
		report.sessions = [];
		for (const { cwd, pi } of sessions) {
			const one = { cwd };
			one.connect = await pi.command("/nvim connect", /Connected to Neovim|tools stay off/);
			one.read = await pi.call("nvim_get_file_text_by_path", { pathInProject: "a.txt" });
			one.search = await pi.call("nvim_search_in_files_by_text", { searchText: "MARKER" });
			one.glob = await pi.call("nvim_find_files_by_glob", { globPattern: "*.txt" });
			one.escape = await pi.call("nvim_get_file_text_by_path", { pathInProject: config.escapeFrom[cwd] });
			one.extensionErrors = extensionErrors(pi);
			report.sessions.push(one);
		}
		for (const { pi } of sessions) pi.close();
	},
};

const run = scenarios[scenario];
if (!run) fail(`no scenario ${scenario}`);
await run();
model.close();
process.stdout.write(JSON.stringify(report));
process.exit(0);
