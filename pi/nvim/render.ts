/**
 * How a Neovim tool call looks in pi's transcript. Collapsed: the operation,
 * its target (file:line, symbol, query), the outcome and bounded counts.
 * Expanded: the readable result (paths, diagnostics, matches, lists, JSON,
 * patches, image placeholders). Remote text is untrusted: control
 * characters never reach the terminal.
 *
 * pi's `Component` is structural (`render(width)`, `invalidate()`), so the
 * rows are drawn here without importing pi's TUI.
 */

import type { Component } from "@mariozechner/pi-tui";

/** The part of pi's theme the rows use. */
export interface Paint {
	fg(
		color:
			| "accent"
			| "dim"
			| "error"
			| "muted"
			| "success"
			| "toolDiffAdded"
			| "toolDiffRemoved"
			| "toolOutput"
			| "toolTitle"
			| "warning",
		text: string,
	): string;
	bold(text: string): string;
}

type Color = Parameters<Paint["fg"]>[0];

/** A run of text in one color. */
interface Span {
	text: string;
	color?: Color;
	bold?: boolean;
}

/** The result as pi hands it to renderers. */
export interface RenderedResult {
	content: Array<{ type: string; text?: string; data?: string; mimeType?: string }>;
	details?: unknown;
}

/** Expanded rows show at most this many lines. */
const MAX_EXPANDED_LINES = 400;
/** Arguments shown in a call row are cut at this. */
const MAX_TARGET_CHARS = 160;

// ---------------------------------------------------------------------------
// Width: never more than pi measures, so no row is wider than the terminal
// ---------------------------------------------------------------------------

/**
 * Terminal columns of `text`, at least what pi's TUI counts: ASCII and
 * scripts below U+1100 one column each, everything above two (wide
 * characters, emoji and their joiners all fit in that).
 */
export function columns(text: string): number {
	let n = 0;
	for (const ch of text) n += (ch.codePointAt(0) ?? 0) < 0x1100 ? 1 : 2;
	return n;
}

/** `text` without control characters (tabs as pi draws them), safe to print. */
export function clean(text: string): string {
	return text
		.replace(/\r\n?/g, "\n")
		.replace(/\t/g, "   ")
		.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g, "?");
}

/** The longest prefix of `text` that fits in `width` columns. */
function fit(text: string, width: number): string {
	let used = 0;
	let out = "";
	for (const ch of text) {
		const w = (ch.codePointAt(0) ?? 0) < 0x1100 ? 1 : 2;
		if (used + w > width) break;
		used += w;
		out += ch;
	}
	return out;
}

/** `text` cut into pieces of at most `width` columns. */
function wrap(text: string, width: number): string[] {
	if (text === "") return [""];
	const pieces: string[] = [];
	let rest = text;
	while (rest.length > 0) {
		let piece = fit(rest, width);
		if (piece.length === 0) piece = Array.from(rest)[0] ?? rest; // a wide character in a 1-column row
		pieces.push(piece);
		rest = rest.slice(piece.length);
	}
	return pieces;
}

/**
 * Rows of spans. Body lines (one span) wrap; a head line of several spans
 * is cut with `…` when it does not fit.
 */
class Rows implements Component {
	constructor(
		private readonly lines: Span[][],
		private readonly paint: Paint,
	) {}

	render(width: number): string[] {
		const w = Math.max(1, width);
		const out: string[] = [];
		for (const spans of this.lines) {
			if (spans.length === 1 && spans[0]) {
				for (const piece of wrap(spans[0].text, w)) out.push(this.draw({ ...spans[0], text: piece }));
				continue;
			}
			let room = w;
			let line = "";
			const total = spans.reduce((n, s) => n + columns(s.text), 0);
			for (const span of spans) {
				if (room <= 0) break;
				let text = span.text;
				if (total > w && columns(text) > room) text = `${fit(text, Math.max(0, room - 1))}…`;
				room -= columns(text);
				line += this.draw({ ...span, text });
			}
			out.push(line);
		}
		return out;
	}

	invalidate(): void {}

	private draw(span: Span): string {
		if (span.text === "") return "";
		const text = span.bold ? this.paint.bold(span.text) : span.text;
		return span.color ? this.paint.fg(span.color, text) : text;
	}
}

// ---------------------------------------------------------------------------
// The call row: operation and target
// ---------------------------------------------------------------------------

type Args = Record<string, unknown>;

const str = (v: unknown): string | undefined => (typeof v === "string" && v !== "" ? v : undefined);
const num = (v: unknown): number | undefined => (typeof v === "number" && Number.isFinite(v) ? v : undefined);

function at(path: string | undefined, line: unknown, column: unknown): string | undefined {
	if (!path) return undefined;
	const l = num(line);
	const c = num(column);
	return l === undefined ? path : c === undefined ? `${path}:${l}` : `${path}:${l}:${c}`;
}

/** The primary target of a call: file:line, symbol, query or pattern. */
export function target(remote: string, args: Args): string {
	const path = str(args.pathInProject) ?? str(args.filePath);
	let shown: string | undefined;
	switch (remote) {
		case "search_in_files_by_text":
		case "search_in_files_by_regex": {
			const what = str(args.searchText) ?? str(args.regexPattern);
			const pattern = what === undefined ? "" : remote.endsWith("regex") ? `/${what}/` : JSON.stringify(what);
			const where = [str(args.directoryToSearch), str(args.fileMask)].filter(Boolean).join(" ");
			shown = where ? `${pattern} in ${where}` : pattern;
			break;
		}
		case "find_files_by_glob":
			shown = [str(args.globPattern), str(args.subDirectoryRelativePath)].filter(Boolean).join(" in ");
			break;
		case "find_files_by_name_keyword":
			shown = str(args.nameKeyword) && JSON.stringify(args.nameKeyword);
			break;
		case "search_symbol":
			shown = str(args.q) && JSON.stringify(args.q);
			break;
		case "list_directory_tree":
			shown = str(args.directoryPath);
			break;
		case "rename_refactoring": {
			const where = at(path, args.line, args.column);
			const to = str(args.newName);
			shown = where && to ? `${where} → ${to}` : where;
			break;
		}
		default:
			shown = at(path, args.line, args.column);
	}
	if (!shown) shown = Object.values(args).find((v): v is string => typeof v === "string" && v !== "") ?? "";
	const flat = clean(shown).replace(/\n/g, "⏎");
	return flat.length > MAX_TARGET_CHARS ? `${flat.slice(0, MAX_TARGET_CHARS - 1)}…` : flat;
}

/** `nvim find references src/a.rs:3:5`. */
export function renderCall(remote: string, args: Args, paint: Paint): Component {
	const spans: Span[] = [{ text: `nvim ${remote.replace(/_/g, " ")}`, color: "toolTitle", bold: true }];
	const shown = target(remote, args);
	if (shown) spans.push({ text: " " }, { text: shown, color: "accent" });
	return new Rows([spans], paint);
}

// ---------------------------------------------------------------------------
// The result row: outcome, then (expanded) the body
// ---------------------------------------------------------------------------

type Json = Record<string, unknown>;

const list = (v: unknown): unknown[] | undefined => (Array.isArray(v) ? v : undefined);
const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

function files(items: unknown[]): number {
	const paths = new Set<string>();
	for (const item of items) {
		const path = (item as Json | null)?.filePath;
		if (typeof path === "string") paths.add(path);
	}
	return paths.size;
}

function limits(s: Json): string {
	const notes = [s.limitReached === true ? "limit reached" : "", s.timedOut === true ? "timed out" : ""].filter(Boolean);
	return notes.length > 0 ? ` (${notes.join(", ")})` : "";
}

/** The outcome of a successful call in a few words, from its structured result. */
export function outcome(remote: string, structured: unknown, text: string): string {
	const s = (typeof structured === "object" && structured !== null ? structured : {}) as Json;
	const locations = list(s.locations);
	if (locations) {
		const what = remote === "find_definition" ? "definition" : remote === "find_references" ? "reference" : "location";
		return locations.length === 0 ? `no ${what}s` : `${plural(locations.length, what)} in ${plural(files(locations), "file")}`;
	}
	const errors = list(s.errors);
	if (errors) return errors.length === 0 ? "no problems" : plural(errors.length, "problem");
	const problems = list(s.problems);
	if (problems) {
		return problems.length === 0 ? "no problems" : `${plural(problems.length, "problem")} in ${plural(files(problems), "file")}`;
	}
	const entries = list(s.entries);
	if (entries && remote.startsWith("search_in_files")) {
		return `${plural(entries.length, "match", "matches")} in ${plural(files(entries), "file")}${limits(s)}`;
	}
	if (entries) return `${plural(entries.length, "entry", "entries")}${limits(s)}`;
	const found = list(s.files);
	if (found) return `${plural(found.length, "file")}${limits(s)}`;
	const symbols = list(s.symbols);
	if (symbols) return `${plural(symbols.length, "symbol")}${limits(s)}`;
	const open = list(s.openFiles);
	if (open) return `${plural(open.length, "open file")}`;
	const actions = list(s.actions);
	if (actions) return plural(actions.length, "code action");
	const applied = list(s.applied);
	if (applied) {
		if (applied.length === 0) return "no changes";
		const where = applied.filter((a): a is string => typeof a === "string").join(", ");
		const edited = (list(s.editedByPerson) ?? []).length > 0 ? ", changed by the person first" : "";
		return `${s.saved === true ? "accepted and saved" : "applied, not saved"}: ${where}${edited}`;
	}
	if (typeof s.lineCount === "number" && typeof s.text === "string") {
		const notes = [s.fromBuffer === true ? "from Neovim's buffer" : "", s.truncated === true ? "truncated" : ""].filter(Boolean);
		return `${plural(s.lineCount, "line")}${notes.length > 0 ? ` (${notes.join(", ")})` : ""}`;
	}
	if (typeof s.documentation === "string") return s.documentation === "" ? "no information" : "documentation";
	if (typeof s.lineCount === "number") return `opened (${plural(s.lineCount, "line")})`;
	const first = text.split("\n").find((l) => l.trim() !== "") ?? "done";
	return first.length > 120 ? `${first.slice(0, 119)}…` : first;
}

/** The outcome of a failed call: a declined edit says so, else the error's first line. */
export function failure(text: string): string {
	if (/\bdeclined\b/.test(text)) return "declined by the person";
	if (/\bcancelled\b/.test(text)) return "cancelled";
	const first = text.split("\n").find((l) => l.trim() !== "") ?? "failed";
	return first.length > 160 ? `${first.slice(0, 159)}…` : first;
}

function lineColor(line: string): Color {
	if (/\bERROR\b|\[Error\]/.test(line)) return "error";
	if (/\bWARNING\b|\[Warning\]/.test(line)) return "warning";
	if (/^\+(?!\+\+)/.test(line)) return "toolDiffAdded";
	if (/^-(?!--)/.test(line)) return "toolDiffRemoved";
	if (/^@@/.test(line)) return "accent";
	return "toolOutput";
}

function imageNote(item: { mimeType?: string; data?: string }): string {
	const data = item.data ?? "";
	const bytes = Math.floor((data.length * 3) / 4) - (data.endsWith("==") ? 2 : data.endsWith("=") ? 1 : 0);
	const size = bytes >= 1024 ? `${Math.round(bytes / 1024)} KB` : `${bytes} B`;
	return `[image ${clean(item.mimeType ?? "of unknown type")}, ${size}]`;
}

/** The body of an expanded row: the text, image placeholders, JSON when there is no text. */
function body(result: RenderedResult): string[] {
	const lines: string[] = [];
	for (const item of result.content) {
		if (item.type === "text" && typeof item.text === "string") lines.push(...clean(item.text).split("\n"));
		else if (item.type === "image") lines.push(imageNote(item));
	}
	const structured = (result.details as Json | undefined)?.structuredContent;
	if (lines.every((l) => l.trim() === "") && structured !== undefined) {
		lines.push(...clean(JSON.stringify(structured, null, 2)).split("\n"));
	}
	while (lines.length > 0 && lines[lines.length - 1]?.trim() === "") lines.pop();
	return lines;
}

export interface ResultView {
	expanded: boolean;
	isPartial: boolean;
	isError: boolean;
	/** How pi's expand key is shown (`ctrl+o`). */
	expandKeys: string;
}

/** The result row of a call of `remote` made with `args`. */
export function renderResult(remote: string, result: RenderedResult, view: ResultView, paint: Paint): Component {
	const text = result.content
		.filter((c) => c.type === "text" && typeof c.text === "string")
		.map((c) => c.text)
		.join("\n");
	if (view.isPartial) {
		const progress = clean(text.split("\n")[0] ?? "") || "working…";
		return new Rows([[{ text: progress, color: "muted" }]], paint);
	}
	const images = result.content.filter((c) => c.type === "image").length;
	const structured = (result.details as Json | undefined)?.structuredContent;
	const said = view.isError ? failure(clean(text)) : outcome(remote, structured, clean(text));
	const head: Span[] = [{ text: said.replace(/\n/g, " "), color: view.isError ? "error" : "success" }];
	if (images > 0) head.push({ text: ` · ${plural(images, "image")}`, color: "muted" });
	const lines = body(result);
	const more = lines.length > 1 || (lines.length === 1 && lines[0] !== said);
	if (!view.expanded) {
		if (more) head.push({ text: ` (${view.expandKeys} to expand)`, color: "dim" });
		return new Rows([head], paint);
	}
	const rows: Span[][] = [head];
	for (const line of lines.slice(0, MAX_EXPANDED_LINES)) rows.push([{ text: line, color: lineColor(line) }]);
	if (lines.length > MAX_EXPANDED_LINES) {
		rows.push([{ text: `… ${lines.length - MAX_EXPANDED_LINES} more lines (the model sees them all)`, color: "muted" }]);
	}
	return new Rows(rows, paint);
}
