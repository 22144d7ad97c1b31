/**
 * pi extension: `/nvim connect` bridges the Streamable-HTTP MCP endpoint of
 * pi-ide.nvim (the Neovim editing this project) into pi as `nvim_<tool>`
 * tools: diagnostics, definitions, references, symbols, unsaved buffer text,
 * search, and edits the person approves in Neovim's diff view.
 *
 * Load with `pi -e <plugin dir>/pi/nvim.ts` or list the file under
 * `extensions` in pi's settings.json. Nothing happens at start-up: no tool
 * exists until `/nvim connect`, which runs by itself when pi starts with
 * `$PI_IDE_NVIM_URL` set (`:PiIde agent pi` sets it to its Neovim's endpoint).
 *
 * Runtime imports are `node:` builtins and relative files only: pi resolves
 * an extension's bare imports through its own alias table, which differs
 * between pi distributions. pi's types are `import type` (erased).
 */

import type { ExtensionAPI, ExtensionCommandContext, ExtensionContext } from "@mariozechner/pi-coding-agent";
import type { AutocompleteItem } from "@mariozechner/pi-tui";
import type { TSchema } from "typebox";
import {
	checkUrl,
	chooseLockfile,
	workspaceRootFor,
	type Lockfile,
	lockDir,
	lockfileForUrl,
	pidAlive,
	readLockfiles,
} from "./nvim/discovery.ts";
import { McpError, McpHttpClient, type McpTool, type Progress } from "./nvim/mcp-http.ts";
import { readSavedUrl, saveUrl, settingsPath } from "./nvim/settings.ts";
import {
	APPROVAL_TOOLS,
	CALL_TIMEOUT_MS,
	describe,
	errorText,
	piToolName,
	snippet,
	toPiContent,
	toPiSchema,
} from "./nvim/tools.ts";

const STATUS_KEY = "nvim";
const CLIENT_INFO = { name: "pi-nvim-bridge", version: "0.1.0" };
const SUBCOMMANDS: ReadonlyArray<readonly [string, string]> = [
	["connect", "Connect to this project's Neovim (or the URL given) and activate its tools"],
	["disconnect", "Deactivate the Neovim tools and end the session"],
	["reconnect", "Connect again to the same Neovim and refresh its tools"],
	["status", "Show the connection (never connects)"],
	["tools", "List the Neovim tools last fetched"],
];
const GUIDE =
	"Use the nvim_* tools (answered by the Neovim the user edits this project in) for what an editor knows best: " +
	"diagnostics after an edit, definitions, references, symbols, and the unsaved text of open files.";

type Phase = "disconnected" | "connecting" | "connected" | "failed";

/** One remote tool as offered to pi. */
interface Bridged {
	remote: McpTool;
	piName: string;
	takesProjectPath: boolean;
}

/** The connection as it stands: what `/nvim status` reports. */
interface Link {
	phase: Phase;
	url?: string;
	lockPath?: string;
	server?: string;
	project?: string;
	error?: string;
	warning?: string;
}

export default function nvimExtension(pi: ExtensionAPI): void {
	let link: Link = { phase: "disconnected" };
	let client: McpHttpClient | undefined;
	/** The tools of the last successful `tools/list`. */
	let catalog: Bridged[] = [];
	/** Remote tools left out, with why. */
	let refused: string[] = [];
	/** Remote name → pi name, stable for the session so a reconnect reuses registrations. */
	const names = new Map<string, string>();
	/** Every pi tool this extension registered (pi cannot unregister them). */
	const registered = new Set<string>();
	/** Bumped by each connect/disconnect so a superseded attempt drops its result. */
	let generation = 0;
	let uiCtx: ExtensionContext | undefined;

	const ours = (name: string) => registered.has(name);

	function footer(ctx: ExtensionContext | undefined): void {
		const text =
			link.phase === "connecting"
				? "nvim: connecting…"
				: link.phase === "connected"
					? "nvim: connected"
					: link.phase === "failed"
						? "nvim: failed"
						: undefined;
		ctx?.ui.setStatus(STATUS_KEY, text);
	}

	function setActive(names: string[]): void {
		const others = pi.getActiveTools().filter((n) => !ours(n));
		pi.setActiveTools([...others, ...names]);
	}

	function tokenFor(url: string): string {
		const dir = lockDir();
		const lock = lockfileForUrl(readLockfiles(dir), url);
		if (!lock) throw new Error(`no live lockfile in ${dir} announces ${url} (Neovim quit or restarted elsewhere)`);
		return lock.authToken;
	}

	function register(entry: Bridged, parameters: Record<string, unknown>): void {
		registered.add(entry.piName);
		pi.registerTool({
			name: entry.piName,
			label: `Neovim ${entry.remote.name}`,
			description: describe(entry.remote),
			promptSnippet: snippet(entry.remote),
			promptGuidelines: [GUIDE],
			// The remote JSON Schema as it is: pi validates plain JSON Schema too.
			parameters: parameters as unknown as TSchema,
			execute: (_id, params, signal, onUpdate, ctx) => {
				const args = { ...(params as Record<string, unknown>) };
				delete args.projectPath;
				if (entry.takesProjectPath) args.projectPath = link.project ?? ctx.cwd;
				return call(entry.remote.name, args, signal, (p) =>
					onUpdate?.({ content: [{ type: "text", text: progressText(entry.remote.name, p) }], details: { progress: p } }),
				);
			},
		});
	}

	/** Registers the catalog's tools (new or changed) and makes exactly them active among ours. */
	function expose(tools: McpTool[]): void {
		const bridged: Bridged[] = [];
		refused = [];
		const taken = new Set<string>();
		for (const remote of tools) {
			const schema = toPiSchema(remote.inputSchema);
			if ("error" in schema) {
				refused.push(`${remote.name}: ${schema.error}`);
				continue;
			}
			const known = names.get(remote.name);
			const piName = known && !taken.has(known) ? known : piToolName(remote.name, new Set([...taken, ...names.values()]));
			if (!piName) {
				refused.push(`${remote.name}: not usable as a tool name`);
				continue;
			}
			names.set(remote.name, piName);
			taken.add(piName);
			const entry = { remote, piName, takesProjectPath: schema.takesProjectPath };
			register(entry, schema.parameters);
			bridged.push(entry);
		}
		catalog = bridged;
		setActive(bridged.map((b) => b.piName));
	}

	function deactivate(): void {
		if (pi.getActiveTools().some(ours)) setActive([]);
	}

	/** A connection that stopped working: tools off, footer and person told. */
	function lost(why: string): void {
		if (link.phase !== "connected") return;
		link = { ...link, phase: "failed", error: why };
		deactivate();
		footer(uiCtx);
		uiCtx?.ui.notify(`Lost Neovim at ${link.url}: ${why}. Its tools are off; run /nvim connect when it is back.`, "warning");
	}

	async function call(
		remote: string,
		args: Record<string, unknown>,
		signal: AbortSignal | undefined,
		onProgress: (p: Progress) => void,
	) {
		const c = client;
		if (link.phase !== "connected" || !c) {
			throw new Error(`Neovim is not connected (${link.phase}); ask the user to run /nvim connect.`);
		}
		const options = APPROVAL_TOOLS.has(remote)
			? { signal, onProgress }
			: { signal, onProgress, idleTimeoutMs: CALL_TIMEOUT_MS };
		let result;
		try {
			result = await c.callTool(remote, args, options);
		} catch (err) {
			if (!(err instanceof McpError)) throw err;
			if (err.kind === "network" || err.kind === "stale") lost(err.message);
			throw new Error(explain(remote, c.url, err));
		}
		if (result.isError) throw new Error(`Neovim's ${remote} failed: ${errorText(result)}`);
		const details: Record<string, unknown> = { tool: remote };
		if (result.structuredContent !== undefined) details.structuredContent = result.structuredContent;
		return { content: toPiContent(result), details };
	}

	/** Where to connect: an explicit URL, this project's Neovim, else the saved URL. */
	function target(ctx: ExtensionContext, explicit: string | undefined, rediscover: boolean): Lockfile | string {
		const dir = lockDir();
		const locks = readLockfiles(dir);
		const forUrl = (url: string, what: string): Lockfile | string => {
			const checked = checkUrl(url);
			if (!checked.ok) return checked.error;
			return (
				lockfileForUrl(locks, checked.url) ??
				`${what} ${checked.url} is stale: no running Neovim announces it (no live lockfile in ${dir} has that mcpUrl). ` +
					`Start Neovim with pi-ide.nvim in ${ctx.cwd} and run /nvim connect, or give the URL :PiIde mcp shows.`
			);
		};
		if (explicit) return forUrl(explicit, "The URL");
		if (!rediscover && link.url) return forUrl(link.url, "The URL");
		if (rediscover) {
			const found = chooseLockfile(locks, ctx.cwd);
			if (found) return found;
		}
		const saved = readSavedUrl(settingsPath());
		if (saved) return forUrl(saved, "The saved URL");
		return (
			`No Neovim with pi-ide.nvim has ${ctx.cwd} in its workspace (lockfiles in ${dir}), and no URL is saved. ` +
			"Open Neovim in this project (the MCP endpoint is on by default), or run /nvim connect <url> with the URL :PiIde mcp shows."
		);
	}

	async function teardown(): Promise<void> {
		const c = client;
		client = undefined;
		deactivate();
		await c?.close();
	}

	async function connect(ctx: ExtensionContext, explicit: string | undefined, rediscover: boolean): Promise<void> {
		const chosen = target(ctx, explicit, rediscover);
		if (typeof chosen === "string") {
			ctx.ui.notify(chosen, "error");
			return;
		}
		const mine = ++generation;
		await teardown();
		const url = chosen.mcpUrl;
		link = { phase: "connecting", url, lockPath: chosen.path, project: ctx.cwd };
		footer(ctx);
		const c = new McpHttpClient({ url, token: () => tokenFor(url), clientInfo: CLIENT_INFO });
		try {
			const server = await c.initialize();
			const tools = await c.listTools();
			if (mine !== generation) {
				await c.close();
				return;
			}
			client = c;
			expose(tools);
			link = { ...link, phase: "connected", server: `${server.name} ${server.version}`.trim() };
			const root = workspaceRootFor(chosen, ctx.cwd);
			if (root) {
				link.project = root;
			} else {
				const roots = chosen.workspaceFolders.join(", ");
				link.warning = `pi's cwd ${ctx.cwd} is not inside this Neovim's workspace (${roots}): it will refuse calls for it.`;
			}
		} catch (err) {
			if (mine !== generation) return;
			const why = err instanceof McpError ? explain("initialize", url, err) : (err as Error).message;
			link = { ...link, phase: "failed", error: why };
			footer(ctx);
			await c.close();
			ctx.ui.notify(`Could not connect to Neovim at ${url}: ${why}`, "error");
			return;
		}
		footer(ctx);
		let saved = "";
		try {
			const file = settingsPath();
			const before = readSavedUrl(file);
			if (before !== url) {
				await saveUrl(file, url);
				saved = before ? ` Saved URL updated (was ${before}).` : ` URL saved in ${file}.`;
			}
		} catch (err) {
			saved = ` The URL was not saved: ${(err as Error).message}.`;
		}
		const skipped = refused.length > 0 ? ` Skipped: ${refused.join("; ")}.` : "";
		ctx.ui.notify(
			`Connected to Neovim (${link.server}) at ${url} for ${link.project}: ${catalog.length} tools active; paths are relative to it.${saved}${skipped}`,
			"info",
		);
		if (link.warning) ctx.ui.notify(link.warning, "warning");
	}

	async function disconnect(ctx: ExtensionCommandContext): Promise<void> {
		generation++;
		const was = link;
		await teardown();
		link = { phase: "disconnected", ...(was.url ? { url: was.url } : {}) };
		footer(ctx);
		ctx.ui.notify(
			was.phase === "disconnected"
				? "Not connected to Neovim."
				: `Disconnected from Neovim at ${was.url}; its tools are inactive (the saved URL is kept).`,
			"info",
		);
	}

	function status(ctx: ExtensionContext): string {
		const lines = [`Neovim bridge: ${link.phase}`];
		if (link.url) lines.push(`Endpoint: ${link.url}${link.lockPath ? ` (lockfile ${link.lockPath})` : ""}`);
		if (link.server) lines.push(`Server: ${link.server}`);
		lines.push(`Project: ${link.project ?? ctx.cwd}`);
		const active = pi.getActiveTools().filter(ours);
		if (catalog.length > 0 || link.phase === "connected") {
			lines.push(`Tools: ${active.length} active of ${catalog.length} (/nvim tools lists them)`);
		}
		if (link.error) lines.push(`Last error: ${link.error}`);
		if (link.warning) lines.push(`Warning: ${link.warning}`);
		const file = settingsPath();
		lines.push(`Saved URL: ${readSavedUrl(file) ?? "none"} (${file})`);
		if (link.phase === "disconnected") lines.push("Run /nvim connect to use Neovim's tools.");
		return lines.join("\n");
	}

	function toolList(): string {
		if (catalog.length === 0) return "No Neovim tools fetched yet: run /nvim connect.";
		const active = new Set(pi.getActiveTools());
		const lines = [`Neovim tools (${link.phase}, ${link.url}):`];
		for (const b of catalog) {
			lines.push(`${b.piName} ${active.has(b.piName) ? "[active]" : "[inactive]"} ${snippet(b.remote)}`);
		}
		if (refused.length > 0) lines.push(`Skipped: ${refused.join("; ")}`);
		return lines.join("\n");
	}

	function completions(prefix: string): AutocompleteItem[] | null {
		const [sub = "", ...rest] = prefix.trimStart().split(/\s+/);
		if (rest.length === 0) {
			const items = SUBCOMMANDS.filter(([name]) => name.startsWith(sub)).map(([name, description]) => ({
				value: name,
				label: name,
				description,
			}));
			return items.length > 0 ? items : null;
		}
		if (sub !== "connect" || rest.length > 1) return null;
		const urls = new Set<string>();
		const saved = readSavedUrl(settingsPath());
		if (saved) urls.add(saved);
		for (const lock of readLockfiles(lockDir())) if (pidAlive(lock.pid)) urls.add(lock.mcpUrl);
		const items = [...urls]
			.filter((u) => u.startsWith(rest[0] ?? ""))
			.map((u) => ({ value: `connect ${u}`, label: u }));
		return items.length > 0 ? items : null;
	}

	pi.on("session_start", (event, ctx) => {
		uiCtx = ctx;
		// Started by `:PiIde agent pi`: that Neovim's endpoint, as `/nvim connect <url>`.
		const url = process.env.PI_IDE_NVIM_URL;
		if (url && event.reason === "startup") void connect(ctx, url, false);
	});

	pi.on("session_shutdown", () => {
		generation++;
		const c = client;
		client = undefined;
		void c?.close();
	});

	pi.registerCommand("nvim", {
		description: "Neovim's MCP tools in pi: /nvim connect [url] | disconnect | reconnect | status | tools",
		getArgumentCompletions: completions,
		handler: async (args, ctx) => {
			uiCtx = ctx;
			const [sub = "status", ...rest] = args.trim().split(/\s+/).filter((s) => s.length > 0);
			switch (sub) {
				case "connect":
					if (rest.length > 1) {
						ctx.ui.notify("Usage: /nvim connect [http://127.0.0.1:<port>/mcp]", "error");
						return;
					}
					if (link.phase === "connecting") {
						ctx.ui.notify("Already connecting to Neovim.", "warning");
						return;
					}
					return connect(ctx, rest[0], true);
				case "reconnect":
					if (link.phase === "connecting") {
						ctx.ui.notify("Already connecting to Neovim.", "warning");
						return;
					}
					return connect(ctx, undefined, false);
				case "disconnect":
					return disconnect(ctx);
				case "status":
					ctx.ui.notify(status(ctx), "info");
					return;
				case "tools":
					ctx.ui.notify(toolList(), "info");
					return;
				default:
					ctx.ui.notify(`Unknown /nvim ${sub}: use connect [url], disconnect, reconnect, status or tools.`, "error");
			}
		},
	});
}

function progressText(tool: string, p: Progress): string {
	const of = p.total !== undefined ? `${p.progress}/${p.total}` : `${p.progress}`;
	return p.message ? `Neovim ${tool}: ${p.message}` : `Neovim ${tool}: working (${of})`;
}

/** An MCP failure as a message that says what to do next. */
export function explain(tool: string, url: string, err: McpError): string {
	switch (err.kind) {
		case "network":
			return `Neovim is not reachable: ${err.message}. It may have quit; ask the user to start it and run /nvim connect.`;
		case "stale":
			return `Neovim at ${url} is gone: ${err.message}. Ask the user to run /nvim connect.`;
		case "timeout":
			return `${err.message} for ${tool}. Neovim may be busy (a language server still starting?); try again, or narrow the request.`;
		case "cancelled":
			return `${tool} was cancelled.`;
		case "rpc": {
			const hint = err.code === -32602 ? " Check the arguments against the tool's parameters." : "";
			return `Neovim refused ${tool}: ${err.message}${err.code !== undefined ? ` (JSON-RPC ${err.code})` : ""}.${hint}`;
		}
		case "http":
			return `Neovim's MCP endpoint ${url} answered ${err.message}${
				err.status === 401 || err.status === 403 ? " even with the lockfile's current token; run /nvim reconnect." : "."
			}`;
		case "protocol":
			return `Neovim sent an answer the bridge cannot read (${err.message}).`;
	}
}
