/**
 * pi extension: `/nvim connect` bridges the Streamable-HTTP MCP endpoint of
 * pi-ide.nvim (the Neovim editing this project) into pi as `nvim_<tool>`
 * tools: diagnostics, definitions, references, symbols, unsaved buffer text,
 * search, and edits the person approves in Neovim's diff view.
 *
 * Load with `pi -e <plugin dir>/pi/nvim.ts` or list the file under
 * `extensions` in pi's settings.json. Nothing happens at start-up: no tool
 * exists, no file is read and nothing is spawned until `/nvim connect`,
 * which runs by itself when pi starts with `$PI_IDE_NVIM_URL` set
 * (`:PiIde agent pi` sets it to its Neovim's endpoint).
 *
 * Runtime imports are `node:` builtins and relative files only: pi resolves
 * an extension's bare imports through its own alias table, which differs
 * between pi distributions (`@mariozechner/*` and `@earendil-works/*`).
 * pi's types are `import type` (erased).
 */

import type { ExtensionAPI, ExtensionContext } from "@mariozechner/pi-coding-agent";
import type { AutocompleteItem } from "@mariozechner/pi-tui";
import { Bridge, projectTrusted } from "./nvim/bridge.ts";
import { lockDir, pidAlive, readLockfiles, sameEndpoint } from "./nvim/discovery.ts";
import { configuredUrl } from "./nvim/settings.ts";

const SUBCOMMANDS: ReadonlyArray<readonly [string, string]> = [
	["connect", "Connect to this project's Neovim (or the URL given) and activate its tools"],
	["disconnect", "Deactivate the Neovim tools and end the session"],
	["reconnect", "Connect again to the same Neovim and refresh its tools"],
	["status", "Show the connection (never connects)"],
	["tools", "List the Neovim tools last fetched"],
];

export default function nvimExtension(pi: ExtensionAPI): void {
	const bridge = new Bridge(pi);
	/** The last context pi gave: whose cwd and trust completions use. */
	let last: ExtensionContext | undefined;

	/** `connect <url>` for the saved URL and each live Neovim, saying which project each serves. */
	function urlCompletions(typed: string): AutocompleteItem[] {
		const items: AutocompleteItem[] = [];
		const add = (url: string, description: string) => {
			if (!url.startsWith(typed) || items.some((i) => sameEndpoint(i.label, url))) return;
			items.push({ value: `connect ${url}`, label: url, description });
		};
		const locks = readLockfiles(lockDir()).filter((lock) => pidAlive(lock.pid));
		const serves = (url: string) => {
			const lock = locks.find((l) => sameEndpoint(l.mcpUrl, url));
			return lock ? `serves ${lock.workspaceFolders.join(", ") || "no folder"}` : "no running Neovim announces it";
		};
		const saved = last === undefined ? undefined : configuredUrl(last.cwd, projectTrusted(last));
		if (saved) add(saved.url, `saved; ${serves(saved.url)}`);
		for (const lock of locks.sort((a, b) => b.mtimeMs - a.mtimeMs)) add(lock.mcpUrl, serves(lock.mcpUrl));
		return items;
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
		const items = urlCompletions(rest[0] ?? "");
		return items.length > 0 ? items : null;
	}

	pi.on("session_start", (event, ctx) => {
		bridge.uiCtx = ctx;
		last = ctx;
		// Started by `:PiIde agent pi`: that Neovim's endpoint, as `/nvim connect <url>`.
		const url = process.env.PI_IDE_NVIM_URL;
		if (url && event.reason === "startup") void bridge.connectTo(ctx, url);
	});

	pi.on("session_shutdown", () => bridge.shutdown());

	pi.registerCommand("nvim", {
		description: "Neovim's MCP tools in pi: /nvim connect [url] | disconnect | reconnect | status | tools",
		getArgumentCompletions: completions,
		handler: async (args, ctx) => {
			bridge.uiCtx = ctx;
			last = ctx;
			const [sub = "status", ...rest] = args.trim().split(/\s+/).filter((s) => s.length > 0);
			switch (sub) {
				case "connect":
				case "reconnect":
					if (sub === "connect" && rest.length > 1) {
						ctx.ui.notify("Usage: /nvim connect [http://127.0.0.1:<port>/mcp]", "error");
						return;
					}
					if (bridge.busy) {
						ctx.ui.notify("Already connecting to Neovim (/nvim disconnect stops it).", "warning");
						return;
					}
					return sub === "connect" ? bridge.connect(ctx, rest[0]) : bridge.reconnect(ctx);
				case "disconnect":
					return bridge.disconnect(ctx);
				case "status":
					ctx.ui.notify(bridge.status(ctx), "info");
					return;
				case "tools":
					ctx.ui.notify(bridge.toolList(), "info");
					return;
				default:
					ctx.ui.notify(`Unknown /nvim ${sub}: use connect [url], disconnect, reconnect, status or tools.`, "error");
			}
		},
	});
}
