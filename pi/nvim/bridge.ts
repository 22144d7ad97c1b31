/**
 * The connection to one Neovim, never half made: a connect either ends with
 * this project's pi-ide.nvim answering and its tools active, or with every
 * Neovim tool inactive, the footer saying "failed", the reason told and no
 * URL saved. Calls carry pi's cwd as `projectPath`, exactly.
 */

import type { ExtensionAPI, ExtensionCommandContext, ExtensionContext } from "@mariozechner/pi-coding-agent";
import { type Bridged, Catalog } from "./catalog.ts";
import {
	checkUrl,
	chooseLockfile,
	type Lockfile,
	lockDir,
	lockfileForUrl,
	readLockfiles,
	sameEndpoint,
	workspaceRootFor,
} from "./discovery.ts";
import { launcher, openPane, startByHand } from "./launch.ts";
import { McpError, McpHttpClient, type McpTool, type Progress, type ServerInfo } from "./mcp-http.ts";
import { type ConfiguredUrl, configuredUrl, nerdFontIcons, saveUrl, settingsPath } from "./settings.ts";
import { boundFor, errorText, PROJECT_PATH, snippet, toPiContent } from "./tools.ts";

const STATUS_KEY = "nvim";
const CLIENT_INFO = { name: "pi-nvim-bridge", version: "0.2.0" };
/** What pi-ide.nvim's MCP endpoint calls itself in `serverInfo`. */
export const SERVER_NAME = "pi-ide.nvim";
/** A cheap call that tells whether Neovim serves a `projectPath`. */
const PROJECT_PROBE = "get_all_open_file_paths";
const PROBE_TIMEOUT_MS = 10_000;
/** How long to wait for a Neovim opened in a tmux pane to announce itself. */
export const LAUNCH_WAIT_MS = 60_000;
const LAUNCH_POLL_MS = 200;
/** nf-linux-neovim (U+F36F) in Nerd Fonts 3's glyph names. */
const NEOVIM_ICON = "\uf36f";

export type Phase = "disconnected" | "connecting" | "waiting" | "connected" | "failed";

/** The connection as it stands: what `/nvim status` reports. */
interface Link {
	phase: Phase;
	url?: string;
	lockPath?: string;
	server?: string;
	/** pi's cwd at connect: every call's `projectPath`. */
	project?: string;
	error?: string;
}

/** Why a connect attempt gave up, as the person should read it. */
class Refusal extends Error {}
/** A later connect or disconnect took over. */
class Superseded extends Error {}

/** A Neovim that answered, is pi-ide.nvim and serves the cwd. */
interface Opened {
	client: McpHttpClient;
	server: ServerInfo;
	tools: McpTool[];
	lock: Lockfile;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Whether pi trusts the project's own settings (pi without project trust reads them always). */
export function projectTrusted(ctx: ExtensionContext): boolean {
	const check = (ctx as { isProjectTrusted?: () => boolean }).isProjectTrusted;
	return typeof check === "function" ? check.call(ctx) : true;
}

export class Bridge {
	link: Link = { phase: "disconnected" };
	readonly catalog: Catalog;
	private client: McpHttpClient | undefined;
	/** Bumped by each connect/disconnect so a superseded attempt drops its result. */
	private generation = 0;
	/** Where notices about a lost connection go. */
	uiCtx: ExtensionContext | undefined;

	constructor(private readonly pi: ExtensionAPI) {
		this.catalog = new Catalog(pi, (entry, args, signal, onProgress, ctx) => this.call(entry, args, signal, onProgress, ctx));
	}

	get busy(): boolean {
		return this.link.phase === "connecting" || this.link.phase === "waiting";
	}

	// -----------------------------------------------------------------------
	// Footer
	// -----------------------------------------------------------------------

	private footer(ctx: ExtensionContext | undefined): void {
		if (!ctx) return;
		const words: Partial<Record<Phase, string>> = {
			connecting: "connecting…",
			waiting: "waiting for Neovim…",
			connected: "connected",
			failed: "failed",
		};
		const state = words[this.link.phase];
		const icon = state && nerdFontIcons(ctx.cwd, projectTrusted(ctx));
		ctx.ui.setStatus(STATUS_KEY, state === undefined ? undefined : icon ? `${NEOVIM_ICON} ${state}` : `nvim: ${state}`);
	}

	// -----------------------------------------------------------------------
	// Calls
	// -----------------------------------------------------------------------

	private async call(
		entry: Bridged,
		args: Record<string, unknown>,
		signal: AbortSignal | undefined,
		onProgress: (p: Progress) => void,
		ctx: ExtensionContext,
	) {
		const remote = entry.remote.name;
		const c = this.client;
		if (this.link.phase !== "connected" || !c) {
			const last = this.link.error ? ` Last error: ${this.link.error}` : "";
			throw new Error(`Neovim is not connected (${this.link.phase}); ask the user to run /nvim connect.${last}`);
		}
		if (ctx.cwd !== this.link.project) {
			throw new Error(
				`This Neovim connection is for ${this.link.project}, but pi now works in ${ctx.cwd}; ask the user to run /nvim reconnect.`,
			);
		}
		delete args[PROJECT_PATH];
		if (entry.takesProjectPath) args[PROJECT_PATH] = ctx.cwd;
		const bound = boundFor(remote, args);
		let result;
		try {
			result = await c.callTool(remote, args, bound ? { signal, onProgress, timeoutMs: bound.ms } : { signal, onProgress });
		} catch (err) {
			if (!(err instanceof McpError)) throw err;
			if (err.kind === "network" || err.kind === "stale") this.lost(err.message);
			if (err.kind === "timeout" && bound) {
				throw new Error(`Neovim did not answer ${remote} within ${Math.round(bound.ms / 1000)} s: ${bound.hint}.`);
			}
			throw new Error(explain(remote, c.url, err));
		}
		if (result.isError) throw new Error(`Neovim's ${remote} failed: ${errorText(result)}`);
		const details: Record<string, unknown> = { tool: remote };
		if (result.structuredContent !== undefined) details.structuredContent = result.structuredContent;
		return { content: toPiContent(result), details };
	}

	/** A connection that stopped working: tools off, footer and person told. */
	private lost(why: string): void {
		if (this.link.phase !== "connected") return;
		this.link = { ...this.link, phase: "failed", error: why };
		this.catalog.deactivate();
		this.footer(this.uiCtx);
		this.uiCtx?.ui.notify(
			`Lost Neovim at ${this.link.url}: ${why}. Its tools are off; run /nvim connect when it is back.`,
			"warning",
		);
	}

	// -----------------------------------------------------------------------
	// Connecting
	// -----------------------------------------------------------------------

	private async teardown(): Promise<void> {
		const c = this.client;
		this.client = undefined;
		this.catalog.deactivate();
		await c?.close();
	}

	private check(mine: number): void {
		if (mine !== this.generation) throw new Superseded();
	}

	/** `/nvim connect [url]`: the URL given, else the saved one, else this project's Neovim, else one opened for it. */
	async connect(ctx: ExtensionCommandContext, explicit: string | undefined): Promise<void> {
		await this.attempt(ctx, (mine) => (explicit ? this.openUrl(ctx, explicit, "The URL") : this.find(ctx, mine)));
	}

	/** The Neovim announcing `url`, as `/nvim connect <url>` would (pi started by `:PiIde agent pi`). */
	async connectTo(ctx: ExtensionContext, url: string): Promise<void> {
		await this.attempt(ctx, () => this.openUrl(ctx, url, "The URL"));
	}

	/** `/nvim reconnect`: the same Neovim again, catalog refreshed; nothing is discovered or opened. */
	async reconnect(ctx: ExtensionCommandContext): Promise<void> {
		const url = this.link.url ?? configuredUrl(ctx.cwd, projectTrusted(ctx))?.url;
		if (!url) {
			await this.attempt(ctx, () => {
				throw new Refusal("There is no Neovim to reconnect to.");
			});
			return;
		}
		await this.attempt(ctx, () => this.openUrl(ctx, url, "The URL"));
	}

	private async attempt(ctx: ExtensionContext, open: (mine: number) => Promise<Opened>): Promise<void> {
		const mine = ++this.generation;
		await this.teardown();
		this.link = { phase: "connecting", project: ctx.cwd };
		this.footer(ctx);
		let opened: Opened;
		try {
			opened = await open(mine);
			this.check(mine);
		} catch (err) {
			if (err instanceof Superseded || mine !== this.generation) return;
			const why = err instanceof Refusal ? err.message : `Could not connect to Neovim: ${(err as Error).message}`;
			this.link = { phase: "failed", project: ctx.cwd, error: why, ...(this.link.url ? { url: this.link.url } : {}) };
			this.footer(ctx);
			ctx.ui.notify(`${why} Neovim's tools stay off. To connect: ${startByHand(ctx.cwd)}.`, "error");
			return;
		}
		const { client, server, tools, lock } = opened;
		this.client = client;
		this.catalog.expose(tools, ctx.cwd, server.instructions);
		this.link = {
			phase: "connected",
			url: lock.mcpUrl,
			lockPath: lock.path,
			server: `${server.name} ${server.version}`.trim(),
			project: ctx.cwd,
		};
		this.footer(ctx);
		const saved = await this.remember(ctx, lock.mcpUrl);
		const skipped = this.catalog.refused.length > 0 ? ` Skipped: ${this.catalog.refused.join("; ")}.` : "";
		ctx.ui.notify(
			`Connected to Neovim (${this.link.server}) at ${lock.mcpUrl} for ${ctx.cwd}: ${this.catalog.tools.length} tools active; paths are relative to it.${saved}${skipped}`,
			"info",
		);
	}

	/** Saves a URL that connected, unless it is already the one configured; says what changed. */
	private async remember(ctx: ExtensionContext, url: string): Promise<string> {
		const configured = configuredUrl(ctx.cwd, projectTrusted(ctx));
		if (configured && sameEndpoint(configured.url, url)) return "";
		const file = settingsPath();
		try {
			await saveUrl(file, url);
		} catch (err) {
			return ` The URL was not saved: ${(err as Error).message}.`;
		}
		return configured ? ` Saved URL updated (was ${configured.url}, from ${configured.file}).` : ` URL saved in ${file}.`;
	}

	/** The Neovim announcing `raw`, opened. */
	private async openUrl(ctx: ExtensionContext, raw: string, what: string): Promise<Opened> {
		const checked = checkUrl(raw);
		if (!checked.ok) throw new Refusal(checked.error);
		const dir = lockDir();
		const lock = lockfileForUrl(readLockfiles(dir), checked.url);
		if (!lock) {
			throw new Refusal(
				`${what} ${checked.url} is stale: no running Neovim announces it (no live lockfile in ${dir} has that mcpUrl).`,
			);
		}
		return this.open(ctx, lock);
	}

	/** The configured URL's Neovim first, then this project's; else one opened in tmux. */
	private async find(ctx: ExtensionCommandContext, mine: number): Promise<Opened> {
		const configured = configuredUrl(ctx.cwd, projectTrusted(ctx));
		const refusals: string[] = [];
		for (const lock of this.candidates(ctx.cwd, configured)) {
			try {
				return await this.open(ctx, lock);
			} catch (err) {
				if (!(err instanceof Refusal)) throw err;
				refusals.push(err.message);
			}
			this.check(mine);
		}
		const dir = lockDir();
		const stale =
			configured && !lockfileForUrl(readLockfiles(dir), configured.url)
				? `The saved URL ${configured.url} (${configured.file}) is stale: no running Neovim announces it.`
				: undefined;
		const summary = [
			stale,
			...refusals,
			refusals.length === 0 ? `No Neovim with pi-ide.nvim serves ${ctx.cwd} (no live lockfile in ${dir} holds it).` : undefined,
		]
			.filter(Boolean)
			.join(" ");
		const lock = await this.launch(ctx, mine, summary);
		return this.open(ctx, lock);
	}

	/** The live lockfiles to try, in order: the configured URL's, then the innermost one holding `cwd`. */
	private candidates(cwd: string, configured: ConfiguredUrl | undefined): Lockfile[] {
		const locks = readLockfiles(lockDir());
		const out: Lockfile[] = [];
		const saved = configured && lockfileForUrl(locks, configured.url);
		if (saved) out.push(saved);
		const here = chooseLockfile(locks, cwd);
		if (here && !out.some((l) => sameEndpoint(l.mcpUrl, here.mcpUrl))) out.push(here);
		return out;
	}

	/** Opens Neovim in a tmux pane beside pi when the person agrees, then waits for it; else says what to run. */
	private async launch(ctx: ExtensionCommandContext, mine: number, summary: string): Promise<Lockfile> {
		const how = launcher();
		if ("unavailable" in how || !ctx.hasUI) {
			const why = "unavailable" in how ? how.unavailable : "pi has no interactive UI";
			throw new Refusal(
				`${summary} (The bridge opens Neovim itself only inside tmux: ${why}.)`,
			);
		}
		const yes = await ctx.ui.confirm(
			"Open Neovim for this project?",
			`${summary}\n\nOpen nvim in ${ctx.cwd} in a tmux pane beside pi and connect to it?`,
		);
		this.check(mine);
		if (!yes) throw new Refusal(`${summary} Neovim was not opened.`);
		const problem = await openPane(how, ctx.cwd);
		this.check(mine);
		if (problem) throw new Refusal(`Could not open Neovim in tmux: ${problem}.`);
		this.link = { ...this.link, phase: "waiting" };
		this.footer(ctx);
		return this.waitForNeovim(ctx, mine);
	}

	/** The lockfile of a Neovim for `ctx.cwd`, once one appears; Esc or the bound ends the wait. */
	private async waitForNeovim(ctx: ExtensionCommandContext, mine: number): Promise<Lockfile> {
		const stop = new AbortController();
		let dismissed = false;
		const started = Date.now();
		const dialog = ctx.ui
			.select(`Waiting for Neovim to start in ${ctx.cwd} (Esc stops waiting)`, ["Stop waiting"], {
				signal: stop.signal,
				timeout: LAUNCH_WAIT_MS,
			})
			.then(() => {
				dismissed = true;
			});
		try {
			for (;;) {
				const found = chooseLockfile(readLockfiles(lockDir()), ctx.cwd);
				if (found) return found;
				this.check(mine);
				if (dismissed || Date.now() - started >= LAUNCH_WAIT_MS) {
					const why =
						Date.now() - started >= LAUNCH_WAIT_MS
							? `No Neovim for ${ctx.cwd} announced itself within ${LAUNCH_WAIT_MS / 1000} s`
							: "Stopped waiting for Neovim";
					throw new Refusal(
						`${why}. If it started, :checkhealth pi-ide there tells whether pi-ide.nvim runs.`,
					);
				}
				await Promise.race([sleep(LAUNCH_POLL_MS), dialog]);
			}
		} finally {
			stop.abort();
		}
	}

	/** Initializes, checks it is pi-ide.nvim serving `ctx.cwd`, lists its tools; closes it on any refusal. */
	private async open(ctx: ExtensionContext, lock: Lockfile): Promise<Opened> {
		const url = lock.mcpUrl;
		const client = new McpHttpClient({ url, token: () => tokenFor(url), clientInfo: CLIENT_INFO });
		this.link = { ...this.link, url, lockPath: lock.path };
		try {
			const server = await client.initialize();
			if (server.name !== SERVER_NAME) {
				throw new Refusal(
					`${url} is not pi-ide.nvim's MCP endpoint (its serverInfo names ${JSON.stringify(server.name)}); refused.`,
				);
			}
			const tools = await client.listTools();
			await servesProject(client, tools, lock, ctx.cwd);
			return { client, server, tools, lock };
		} catch (err) {
			await client.close();
			if (err instanceof McpError) throw new Refusal(`Could not connect to Neovim at ${url}: ${explain("initialize", url, err)}`);
			throw err;
		}
	}

	async disconnect(ctx: ExtensionCommandContext): Promise<void> {
		this.generation++;
		const was = this.link;
		await this.teardown();
		this.link = { phase: "disconnected", ...(was.url ? { url: was.url } : {}) };
		this.footer(ctx);
		ctx.ui.notify(
			was.phase === "disconnected"
				? "Not connected to Neovim."
				: `Disconnected from Neovim${was.url ? ` at ${was.url}` : ""}; its tools are inactive (the saved URL is kept).`,
			"info",
		);
	}

	shutdown(): void {
		this.generation++;
		const c = this.client;
		this.client = undefined;
		void c?.close();
	}

	// -----------------------------------------------------------------------
	// Reports (they never connect)
	// -----------------------------------------------------------------------

	status(ctx: ExtensionContext): string {
		const link = this.link;
		const lines = [`Neovim bridge: ${link.phase}`];
		if (link.url) lines.push(`Endpoint: ${link.url}${link.lockPath ? ` (lockfile ${link.lockPath})` : ""}`);
		if (link.server) lines.push(`Server: ${link.server}`);
		lines.push(`Project: ${link.project ?? ctx.cwd}`);
		const active = this.pi.getActiveTools().filter((n) => this.catalog.ours(n));
		if (this.catalog.tools.length > 0 || link.phase === "connected") {
			lines.push(`Tools: ${active.length} active of ${this.catalog.tools.length} (/nvim tools lists them)`);
		}
		if (link.error) lines.push(`Last error: ${link.error}`);
		const configured = configuredUrl(ctx.cwd, projectTrusted(ctx));
		lines.push(`Saved URL: ${configured ? `${configured.url} (${configured.file})` : `none (${settingsPath()})`}`);
		if (link.phase === "disconnected" || link.phase === "failed") lines.push("Run /nvim connect to use Neovim's tools.");
		return lines.join("\n");
	}

	toolList(): string {
		const tools = this.catalog.tools;
		if (tools.length === 0) return "No Neovim tools fetched yet: run /nvim connect.";
		const active = new Set(this.pi.getActiveTools());
		const lines = [`Neovim tools (${this.link.phase}, ${this.link.url}):`];
		for (const b of tools) lines.push(`${b.piName} ${active.has(b.piName) ? "[active]" : "[inactive]"} ${snippet(b.remote)}`);
		if (this.catalog.refused.length > 0) lines.push(`Skipped: ${this.catalog.refused.join("; ")}`);
		return lines.join("\n");
	}
}

/** The bearer token for `url`, only ever from a live lockfile announcing it. */
function tokenFor(url: string): string {
	const dir = lockDir();
	const lock = lockfileForUrl(readLockfiles(dir), url);
	if (!lock) throw new Error(`no live lockfile in ${dir} announces ${url} (Neovim quit or restarted elsewhere)`);
	return lock.authToken;
}

/** Refuses a Neovim that does not answer for `cwd`: its own answer when it can say, else its lockfile's folders. */
async function servesProject(client: McpHttpClient, tools: McpTool[], lock: Lockfile, cwd: string): Promise<void> {
	const probe = tools.find((t) => t.name === PROJECT_PROBE);
	const properties = (probe?.inputSchema as { properties?: Record<string, unknown> } | undefined)?.properties;
	if (probe && properties && PROJECT_PATH in properties) {
		const answer = await client.callTool(PROJECT_PROBE, { [PROJECT_PATH]: cwd }, { timeoutMs: PROBE_TIMEOUT_MS });
		if (!answer.isError) return;
		throw new Refusal(
			`Neovim at ${lock.mcpUrl} is not for this project: it answers "${errorText(answer)}".`,
		);
	}
	if (!workspaceRootFor(lock, cwd)) {
		throw new Refusal(
			`Neovim at ${lock.mcpUrl} is not for this project: its workspace (${lock.workspaceFolders.join(", ") || "none"}) does not hold ${cwd}.`,
		);
	}
}

/** An MCP failure as a message that says what to do next. */
export function explain(tool: string, url: string, err: McpError): string {
	switch (err.kind) {
		case "network":
			return `Neovim is not reachable: ${err.message}. It may have quit; ask the user to start it and run /nvim connect.`;
		case "stale":
			return `Neovim at ${url} is gone: ${err.message}. Ask the user to run /nvim connect.`;
		case "timeout":
			return `${err.message} for ${tool}. Neovim may be busy; try again.`;
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
