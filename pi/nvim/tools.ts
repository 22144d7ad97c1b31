/**
 * Turning Neovim's MCP tools into pi tools: names (`nvim_<tool>`), schemas
 * (`projectPath` hidden: the bridge fills it with pi's cwd), how long each
 * call may take, and results (MCP content to pi content, untrusted and
 * bounded).
 */

import type { McpCallResult, McpTool } from "./mcp-http.ts";

export const PREFIX = "nvim_";
/** The argument the bridge owns: every call is pinned to pi's cwd. */
export const PROJECT_PATH = "projectPath";
/** pi's providers accept tool names of this shape. */
const NAME_RE = /^[a-zA-Z0-9_-]{1,64}$/;
/** Text beyond this in one result item is cut (the host bounds its own output well below). */
export const MAX_TEXT_CHARS = 256 * 1024;
/** Non-text content shown as JSON is cut at this. */
const MAX_OTHER_CHARS = 2_000;

/**
 * Tools that wait for the person to approve an edit in Neovim's diff view:
 * no client-side timeout, however long they take.
 */
export const APPROVAL_TOOLS: ReadonlySet<string> = new Set([
	"replace_text_in_file",
	"create_new_file",
	"reformat_file",
	"rename_refactoring",
	"apply_code_action",
]);

/** Time the transport may add to the time a remote operation itself is allowed. */
export const TRANSPORT_GRACE_MS = 5_000;
/** The search tools' own `timeout` argument: its default and its maximum (milliseconds). */
const SEARCH_TIMEOUT_MS = { default: 5_000, max: 30_000 };
const SEARCH_TOOLS: ReadonlySet<string> = new Set([
	"find_files_by_glob",
	"find_files_by_name_keyword",
	"search_in_files_by_text",
	"search_in_files_by_regex",
	"list_directory_tree",
]);
/** How long Neovim lets its language servers answer each of these (milliseconds). */
const LANGUAGE_TOOLS: ReadonlyMap<string, number> = new Map([
	["get_symbol_info", 10_000],
	["find_definition", 10_000],
	["find_references", 10_000],
	["get_document_symbols", 10_000],
	["search_symbol", 10_000],
	["get_file_problems", 10_000],
	["get_code_actions", 20_000],
]);
/** Reads of Neovim's own state, and any tool this bridge does not know. */
const OTHER_CALL_MS = 20_000;

/** How long a call may take before the bridge gives up, and what to suggest then. */
export interface Bound {
	ms: number;
	hint: string;
}

/**
 * The bound on one call of `remote` with `args`: the operation's own time
 * (a search's `timeout`, a language server's) plus transport grace; none
 * for the tools that wait for the person, however long they take.
 */
export function boundFor(remote: string, args: Record<string, unknown>): Bound | undefined {
	if (APPROVAL_TOOLS.has(remote)) return undefined;
	if (SEARCH_TOOLS.has(remote)) {
		const asked = typeof args.timeout === "number" && args.timeout > 0 ? args.timeout : SEARCH_TIMEOUT_MS.default;
		return {
			ms: Math.min(asked, SEARCH_TIMEOUT_MS.max) + TRANSPORT_GRACE_MS,
			hint: "narrow it (a directory, a file mask, a more specific pattern) or pass a larger timeout (at most 30000 ms)",
		};
	}
	const language = LANGUAGE_TOOLS.get(remote);
	if (language !== undefined) {
		return {
			ms: language + TRANSPORT_GRACE_MS,
			hint: "the language server may still be starting or indexing; try again in a moment",
		};
	}
	return { ms: OTHER_CALL_MS, hint: "Neovim may be busy (a blocking dialog or a long command?); try again" };
}

/** The pi tool name for `remote`, unique among `taken`; undefined when it cannot be one. */
export function piToolName(remote: string, taken: ReadonlySet<string>): string | undefined {
	const base = `${PREFIX}${remote.replace(/[^a-zA-Z0-9_-]/g, "_")}`.slice(0, 60);
	if (!NAME_RE.test(base) || remote.length === 0) return undefined;
	if (!taken.has(base)) return base;
	for (let n = 2; n < 100; n++) {
		const candidate = `${base}_${n}`;
		if (!taken.has(candidate)) return candidate;
	}
	return undefined;
}

type Schema = Record<string, unknown>;

export interface PiSchema {
	/** The schema the model sees. */
	parameters: Schema;
	/** Whether the remote tool takes `projectPath` (then the bridge sends pi's cwd). */
	takesProjectPath: boolean;
}

/**
 * The remote input schema without `projectPath`, or why it cannot be
 * offered. Required fields stay required.
 */
export function toPiSchema(input: unknown): PiSchema | { error: string } {
	if (typeof input !== "object" || input === null || Array.isArray(input)) {
		return { error: "inputSchema is not an object" };
	}
	const schema = structuredClone(input) as Schema;
	if (schema.type !== undefined && schema.type !== "object") {
		return { error: `inputSchema has type ${JSON.stringify(schema.type)}, not "object"` };
	}
	schema.type = "object";
	delete schema.$schema;
	const props = schema.properties;
	if (props !== undefined && (typeof props !== "object" || props === null || Array.isArray(props))) {
		return { error: "inputSchema.properties is not an object" };
	}
	const properties = (props ?? {}) as Schema;
	const takesProjectPath = Object.hasOwn(properties, PROJECT_PATH);
	delete properties[PROJECT_PATH];
	schema.properties = properties;
	if (schema.required !== undefined) {
		if (!Array.isArray(schema.required) || schema.required.some((r) => typeof r !== "string")) {
			return { error: "inputSchema.required is not a list of names" };
		}
		const required = (schema.required as string[]).filter((r) => r !== PROJECT_PATH);
		for (const name of required) {
			if (!Object.hasOwn(properties, name)) return { error: `required property ${name} is not described` };
		}
		schema.required = required;
	}
	return { parameters: schema, takesProjectPath };
}

/** The model-facing description: the remote one plus where the call runs. */
export function describe(tool: McpTool, root: string): string {
	const own = (tool.description ?? tool.title ?? tool.name).trim();
	return `${own}\n\nAnswered by the Neovim editing ${root} (pi-ide.nvim); paths are relative to ${root}.`;
}

/** First sentence of the description, for pi's "Available tools" list. */
export function snippet(tool: McpTool): string {
	const text = (tool.description ?? tool.title ?? tool.name).trim().split("\n")[0] ?? tool.name;
	const sentence = text.match(/^.*?[.!?](\s|$)/)?.[0]?.trim() ?? text;
	return sentence.length > 200 ? `${sentence.slice(0, 197)}...` : sentence;
}

export type PiContent = { type: "text"; text: string } | { type: "image"; data: string; mimeType: string };

function bounded(text: string, max: number): string {
	return text.length > max ? `${text.slice(0, max)}\n[... ${text.length - max} more characters cut by the Neovim bridge]` : text;
}

/** MCP result content as pi content: text and images kept, the rest as bounded JSON text. */
export function toPiContent(result: McpCallResult): PiContent[] {
	const out: PiContent[] = [];
	for (const item of result.content) {
		if (item.type === "text" && typeof item.text === "string") {
			out.push({ type: "text", text: bounded(item.text, MAX_TEXT_CHARS) });
		} else if (item.type === "image" && typeof item.data === "string" && typeof item.mimeType === "string") {
			out.push({ type: "image", data: item.data, mimeType: item.mimeType });
		} else if (item.type === "resource" && typeof item.resource === "object" && item.resource !== null) {
			const r = item.resource as Record<string, unknown>;
			const text = typeof r.text === "string" ? r.text : `[binary resource ${String(r.uri ?? "")}]`;
			out.push({ type: "text", text: bounded(text, MAX_TEXT_CHARS) });
		} else {
			out.push({ type: "text", text: bounded(`[${item.type}] ${JSON.stringify(item)}`, MAX_OTHER_CHARS) });
		}
	}
	if (out.length === 0 && result.structuredContent !== undefined) {
		out.push({ type: "text", text: bounded(JSON.stringify(result.structuredContent, null, 2), MAX_TEXT_CHARS) });
	}
	if (out.length === 0) out.push({ type: "text", text: "(no output)" });
	return out;
}

/** The text of an `isError` result, for the error pi shows the model. */
export function errorText(result: McpCallResult): string {
	const text = result.content
		.map((c) => (c.type === "text" && typeof c.text === "string" ? c.text : ""))
		.filter((t) => t.length > 0)
		.join("\n");
	return bounded(text || "the tool failed without saying why", MAX_OTHER_CHARS * 4);
}
