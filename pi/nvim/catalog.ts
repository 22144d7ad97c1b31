/**
 * Neovim's advertised tools as pi tools: validated, named `nvim_<tool>`
 * without collisions (stable across reconnects, since pi cannot unregister
 * a tool), registered with the shared prompt guide and their row renderers,
 * and made the only active ones of this extension.
 */

import type { ExtensionAPI, ExtensionContext } from "@mariozechner/pi-coding-agent";
import type { TSchema } from "typebox";
import { promptGuide } from "./guide.ts";
import type { McpTool, Progress } from "./mcp-http.ts";
import { type Paint, type RenderedResult, renderCall, renderResult } from "./render.ts";
import { expandKeys } from "./settings.ts";
import { describe, piToolName, snippet, toPiSchema, type PiContent } from "./tools.ts";

/** One remote tool as offered to pi. */
export interface Bridged {
	remote: McpTool;
	piName: string;
	takesProjectPath: boolean;
}

/** Runs one call in Neovim; what the bridge does for every tool. */
export type CallNeovim = (
	entry: Bridged,
	args: Record<string, unknown>,
	signal: AbortSignal | undefined,
	onProgress: (p: Progress) => void,
	ctx: ExtensionContext,
) => Promise<{ content: PiContent[]; details: Record<string, unknown> }>;

export class Catalog {
	/** The tools of the last successful `tools/list`. */
	tools: Bridged[] = [];
	/** Remote tools left out, with why. */
	refused: string[] = [];
	/** Remote name → pi name, kept for the session. */
	private readonly names = new Map<string, string>();
	/** Every pi tool registered here. */
	private readonly registered = new Set<string>();
	/** pi's expand key, read once when a row is first drawn. */
	private keys: string | undefined;

	constructor(
		private readonly pi: ExtensionAPI,
		private readonly call: CallNeovim,
	) {}

	ours(name: string): boolean {
		return this.registered.has(name);
	}

	/** Registers `tools` (new or changed) for `root` and makes exactly them active among this extension's. */
	expose(tools: McpTool[], root: string, instructions: string | undefined): void {
		const accepted: Array<{ remote: McpTool; piName: string; schema: Record<string, unknown>; takesProjectPath: boolean }> = [];
		this.refused = [];
		// Names other extensions (and pi) use are taken too.
		const foreign = this.pi
			.getAllTools()
			.map((t) => t.name)
			.filter((n) => !this.ours(n));
		const taken = new Set<string>(foreign);
		for (const remote of tools) {
			const schema = toPiSchema(remote.inputSchema);
			if ("error" in schema) {
				this.refused.push(`${remote.name}: ${schema.error}`);
				continue;
			}
			const known = this.names.get(remote.name);
			const others = new Set([...taken, ...[...this.names].filter(([r]) => r !== remote.name).map(([, p]) => p)]);
			const piName = known && !others.has(known) ? known : piToolName(remote.name, others);
			if (!piName) {
				this.refused.push(`${remote.name}: not usable as a tool name`);
				continue;
			}
			this.names.set(remote.name, piName);
			taken.add(piName);
			accepted.push({ remote, piName, schema: schema.parameters, takesProjectPath: schema.takesProjectPath });
		}
		const piNames = new Map(accepted.map((a) => [a.remote.name, a.piName]));
		const guide = promptGuide(piNames, root, instructions);
		this.tools = accepted.map(({ remote, piName, schema, takesProjectPath }) => {
			const entry = { remote, piName, takesProjectPath };
			this.register(entry, schema, root, guide);
			return entry;
		});
		this.activate(this.tools.map((t) => t.piName));
	}

	/** Leaves none of this extension's tools active; every other tool stays as it is. */
	deactivate(): void {
		if (this.pi.getActiveTools().some((n) => this.ours(n))) this.activate([]);
	}

	private activate(names: string[]): void {
		const others = this.pi.getActiveTools().filter((n) => !this.ours(n));
		this.pi.setActiveTools([...others, ...names]);
	}

	private register(entry: Bridged, parameters: Record<string, unknown>, root: string, guide: string[]): void {
		this.registered.add(entry.piName);
		const remote = entry.remote.name;
		this.pi.registerTool({
			name: entry.piName,
			label: `Neovim ${remote}`,
			description: describe(entry.remote, root),
			promptSnippet: snippet(entry.remote),
			promptGuidelines: guide,
			// The remote JSON Schema as it is: pi validates plain JSON Schema too.
			parameters: parameters as unknown as TSchema,
			execute: (_id, params, signal, onUpdate, ctx) => {
				const progress = (p: Progress) =>
					onUpdate?.({ content: [{ type: "text", text: progressText(remote, p) }], details: { progress: p } });
				return this.call(entry, { ...(params as Record<string, unknown>) }, signal, progress, ctx);
			},
			renderCall: (args, theme) => renderCall(remote, (args ?? {}) as Record<string, unknown>, theme as Paint),
			renderResult: (result, options, theme, context) =>
				renderResult(
					remote,
					result as RenderedResult,
					{ expanded: options.expanded, isPartial: options.isPartial, isError: context.isError, expandKeys: this.expandKeys() },
					theme as Paint,
				),
		});
	}

	private expandKeys(): string {
		this.keys ??= expandKeys();
		return this.keys;
	}
}

/** A progress notification as the row shows it while the call runs. */
function progressText(remote: string, p: Progress): string {
	if (p.message) return `Neovim ${remote}: ${p.message}`;
	return `Neovim ${remote}: working (${p.progress}${p.total !== undefined ? `/${p.total}` : ""})`;
}
