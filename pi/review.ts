/**
 * pi extension: `/review [files…]` opens a review session in the IDE listening
 * on `<cwd>/.pi/ide/<name>.sock` (pi-ide.nvim's context socket) and turns the
 * comments the person writes there into the agent's next user message.
 *
 * Load with `pi -e <plugin dir>/pi/review.ts` or list the file under
 * `extensions` in pi's settings.json.
 *
 * Runtime imports are `node:` builtins only: pi resolves an extension's bare
 * imports through its own alias table, which differs between pi
 * distributions, so anything else could fail to load on someone's pi.
 * pi's own types are `import type` (erased before pi loads the file).
 */

import { execFile } from "node:child_process";
import { readdirSync, statSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { join } from "node:path";
import type { ExtensionAPI, ExtensionContext } from "@mariozechner/pi-coding-agent";

// ---------------------------------------------------------------------------
// Protocol (newline-delimited JSON over a Unix socket)
// ---------------------------------------------------------------------------

export interface IdeContext {
	type: "context";
	file?: string | null;
	startLine?: number;
	endLine?: number;
}

export interface ReviewComment {
	file: string;
	line: number;
	endLine?: number;
	text: string;
	context: string[];
}

export interface IdeReviewResult {
	type: "reviewResult";
	status: "submitted" | "cancelled";
	comments: ReviewComment[];
	/** Why the IDE refused the request (a cancelled result only). */
	error?: string;
}

export type IdeMessage = IdeContext | IdeReviewResult;

/** Directory (under pi's cwd) that holds the IDEs' sockets. */
export const SOCKET_DIR = join(".pi", "ide");

/** A line longer than this is dropped rather than buffered without bound. */
const MAX_LINE_BYTES = 16 * 1024 * 1024;

const STATUS_REVIEW = "pi-ide-review";
const STATUS_CONTEXT = "pi-ide-review-context";

/**
 * Parses one NDJSON line. Returns the messages this extension acts on and
 * `undefined` for everything else: malformed JSON, `hello`, unknown types,
 * or known types with the wrong shape.
 */
export function parseIdeLine(line: string): IdeMessage | undefined {
	let value: unknown;
	try {
		value = JSON.parse(line);
	} catch {
		return undefined;
	}
	if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
	const msg = value as Record<string, unknown>;
	if (msg.type === "context") {
		const file = typeof msg.file === "string" ? msg.file : null;
		const ctx: IdeContext = { type: "context", file };
		if (typeof msg.startLine === "number") ctx.startLine = msg.startLine;
		if (typeof msg.endLine === "number") ctx.endLine = msg.endLine;
		return ctx;
	}
	if (msg.type === "reviewResult") {
		if (msg.status !== "submitted" && msg.status !== "cancelled") return undefined;
		const comments: ReviewComment[] = [];
		if (Array.isArray(msg.comments)) {
			for (const raw of msg.comments) {
				if (typeof raw !== "object" || raw === null) continue;
				const c = raw as Record<string, unknown>;
				if (typeof c.file !== "string" || typeof c.line !== "number") continue;
				const comment: ReviewComment = {
					file: c.file,
					line: c.line,
					text: typeof c.text === "string" ? c.text : "",
					context: Array.isArray(c.context) ? c.context.map((l) => String(l)) : [],
				};
				if (typeof c.endLine === "number" && c.endLine !== c.line) comment.endLine = c.endLine;
				comments.push(comment);
			}
		}
		const result: IdeReviewResult = { type: "reviewResult", status: msg.status, comments };
		if (typeof msg.error === "string" && msg.error !== "") result.error = msg.error;
		return result;
	}
	return undefined;
}

/** Splits a byte stream into lines; bytes after the last `\n` wait for more. */
export class LineSplitter {
	private chunks: Buffer[] = [];
	private size = 0;
	private dropping = false;

	push(data: Buffer): string[] {
		const lines: string[] = [];
		let start = 0;
		for (;;) {
			const nl = data.indexOf(0x0a, start);
			if (nl === -1) break;
			const piece = data.subarray(start, nl);
			if (!this.dropping) {
				this.chunks.push(piece);
				lines.push(Buffer.concat(this.chunks).toString("utf8"));
			}
			this.chunks = [];
			this.size = 0;
			this.dropping = false;
			start = nl + 1;
		}
		const rest = data.subarray(start);
		if (rest.length > 0 && !this.dropping) {
			this.size += rest.length;
			if (this.size > MAX_LINE_BYTES) {
				this.chunks = [];
				this.size = 0;
				this.dropping = true;
			} else {
				this.chunks.push(Buffer.from(rest));
			}
		}
		return lines;
	}
}

// ---------------------------------------------------------------------------
// Formatting
// ---------------------------------------------------------------------------

/** `path:line` or `path:line-endLine`. */
export function commentLocation(c: ReviewComment): string {
	return c.endLine !== undefined && c.endLine !== c.line ? `${c.file}:${c.line}-${c.endLine}` : `${c.file}:${c.line}`;
}

/** A code fence longer than any run of backticks inside the lines it wraps. */
function fenceFor(lines: string[]): string {
	let longest = 0;
	for (const line of lines) {
		for (const run of line.match(/`+/g) ?? []) longest = Math.max(longest, run.length);
	}
	return "`".repeat(Math.max(3, longest + 1));
}

/** The user message the agent gets for a submitted review with comments. */
export function formatReviewMessage(ideName: string, comments: ReviewComment[]): string {
	const n = comments.length;
	const parts = [
		`I reviewed your changes in ${ideName} and left ${n} comment${n === 1 ? "" : "s"}. ` +
			`Address ${n === 1 ? "it" : "each one"}; lines marked \`>\` are the ones commented on.`,
	];
	for (const c of comments) {
		const block = [commentLocation(c)];
		if (c.context.length > 0) {
			const fence = fenceFor(c.context);
			block.push(fence, ...c.context, fence);
		}
		block.push(c.text);
		parts.push(block.join("\n"));
	}
	return parts.join("\n\n");
}

/** Footer text for the IDE's latest context: `<name> | file:a-b`. */
export function formatContextStatus(ideName: string, ctx: IdeContext | undefined): string {
	if (!ctx || !ctx.file) return ideName;
	let where = ctx.file;
	if (ctx.startLine !== undefined) {
		const end = ctx.endLine ?? ctx.startLine;
		where += end === ctx.startLine ? `:${ctx.startLine}` : `:${ctx.startLine}-${end}`;
	}
	return `${ideName} | ${where}`;
}

/** Splits `/review` arguments on whitespace; "…" and '…' keep spaces. */
export function parseArgs(args: string): string[] {
	const out: string[] = [];
	const re = /"([^"]*)"|'([^']*)'|(\S+)/g;
	for (let m = re.exec(args); m !== null; m = re.exec(args)) out.push(m[1] ?? m[2] ?? m[3] ?? "");
	return out.filter((s) => s.length > 0);
}

// ---------------------------------------------------------------------------
// Discovery and files
// ---------------------------------------------------------------------------

/** IDE names (socket file names without `.sock`) in `<cwd>/.pi/ide/`, sorted. */
export function listIdeSockets(cwd: string): string[] {
	let names: string[];
	try {
		names = readdirSync(join(cwd, SOCKET_DIR));
	} catch {
		return [];
	}
	return names
		.filter((n) => n.endsWith(".sock") && n.length > ".sock".length)
		.map((n) => n.slice(0, -".sock".length))
		.sort();
}

function git(cwd: string, args: string[]): Promise<string> {
	return new Promise((resolve, reject) => {
		execFile("git", args, { cwd, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
			if (err) reject(new Error((stderr || err.message).trim()));
			else resolve(stdout);
		});
	});
}

/**
 * Files to review when none are named: tracked files that differ from HEAD
 * (staged or not; deleted ones left out, there is nothing to show) plus
 * untracked files that are not ignored. Paths are relative to `cwd`, limited
 * to regular files under it.
 */
export async function changedFiles(cwd: string): Promise<string[]> {
	const [changed, untracked] = await Promise.all([
		git(cwd, ["diff", "--name-only", "--relative", "--diff-filter=d", "-z", "HEAD", "--"]),
		git(cwd, ["ls-files", "--others", "--exclude-standard", "-z", "--", "."]),
	]);
	const files = new Set<string>();
	for (const f of [...changed.split("\0"), ...untracked.split("\0")]) {
		if (f.length === 0) continue;
		try {
			if (statSync(join(cwd, f)).isFile()) files.add(f);
		} catch {
			// gone since git listed it
		}
	}
	return [...files].sort();
}

// ---------------------------------------------------------------------------
// Connection
// ---------------------------------------------------------------------------

interface Connection {
	name: string;
	socket: Socket;
	context: IdeContext | undefined;
}

function openConnection(path: string): Promise<Socket> {
	return new Promise((resolve, reject) => {
		const socket = connect(path);
		const onError = (err: Error) => {
			socket.destroy();
			reject(err);
		};
		socket.once("error", onError);
		socket.once("connect", () => {
			socket.off("error", onError);
			resolve(socket);
		});
	});
}

// ---------------------------------------------------------------------------
// The extension
// ---------------------------------------------------------------------------

export default function reviewExtension(pi: ExtensionAPI): void {
	let conn: Connection | undefined;
	let connecting: Promise<Connection | undefined> | undefined;
	/** Files of the review the IDE has open for us, until its result arrives. */
	let pending: string[] | undefined;
	/** The latest context pi handed us; UI calls go through it. */
	let uiCtx: ExtensionContext | undefined;
	let showContext = false;

	pi.registerFlag("review-ide-status", {
		description:
			"Show the IDE's file and selection in the footer (`auto`: only when the `ide` extension is not loaded; `always`; `never`)",
		type: "string",
		default: "auto",
	});

	const ui = () => (uiCtx?.hasUI ? uiCtx.ui : undefined);

	function ideExtensionLoaded(): boolean {
		return pi
			.getCommands()
			.some((c) => c.source === "extension" && (c.name === "ide" || c.name.startsWith("ide:")));
	}

	function updateContextStatus(): void {
		if (!showContext) return;
		ui()?.setStatus(STATUS_CONTEXT, conn ? formatContextStatus(conn.name, conn.context) : undefined);
	}

	function onMessage(c: Connection, msg: IdeMessage): void {
		if (msg.type === "context") {
			c.context = msg;
			updateContextStatus();
			return;
		}
		if (pending === undefined) return; // a result nobody here asked for
		pending = undefined;
		const u = ui();
		u?.setStatus(STATUS_REVIEW, undefined);
		if (msg.status === "cancelled") {
			if (msg.error) u?.notify(`${c.name} did not open the review: ${msg.error}`, "warning");
			else u?.notify(`Review cancelled in ${c.name}; nothing was sent to the agent.`, "info");
			return;
		}
		if (msg.comments.length === 0) {
			u?.notify(`Review approved in ${c.name} with no comments; nothing was sent to the agent.`, "info");
			return;
		}
		u?.notify(
			`Review submitted in ${c.name}: ${msg.comments.length} comment${msg.comments.length === 1 ? "" : "s"} sent to the agent.`,
			"info",
		);
		pi.sendUserMessage(formatReviewMessage(c.name, msg.comments), { deliverAs: "followUp" });
	}

	function attach(name: string, socket: Socket): Connection {
		const c: Connection = { name, socket, context: undefined };
		const lines = new LineSplitter();
		socket.on("data", (data: Buffer) => {
			for (const line of lines.push(data)) {
				const msg = parseIdeLine(line);
				if (msg && conn === c) onMessage(c, msg);
			}
		});
		socket.on("error", () => {
			// "close" follows and reports it
		});
		socket.on("close", () => {
			if (conn !== c) return;
			conn = undefined;
			const u = ui();
			if (showContext) u?.setStatus(STATUS_CONTEXT, undefined);
			if (pending !== undefined) {
				pending = undefined;
				u?.setStatus(STATUS_REVIEW, undefined);
				u?.notify(`${name} closed the connection: the open review ended without a result.`, "warning");
			} else {
				u?.notify(`Disconnected from ${name}.`, "info");
			}
		});
		return c;
	}

	async function pickIde(ctx: ExtensionContext): Promise<string | undefined> {
		const names = listIdeSockets(ctx.cwd);
		if (names.length === 0) {
			if (ctx.hasUI) {
				ctx.ui.notify(
					`No IDE socket in ${join(ctx.cwd, SOCKET_DIR)}. Start pi in the project root Neovim uses (see :checkhealth pi-ide).`,
					"error",
				);
			}
			return undefined;
		}
		if (names.length === 1 || !ctx.hasUI) return names[0];
		return ctx.ui.select("Review in which IDE?", names);
	}

	async function ensureConnected(ctx: ExtensionContext): Promise<Connection | undefined> {
		if (conn) return conn;
		if (connecting) return connecting;
		connecting = (async () => {
			const name = await pickIde(ctx);
			if (name === undefined) return undefined;
			const path = join(ctx.cwd, SOCKET_DIR, `${name}.sock`);
			try {
				const socket = await openConnection(path);
				conn = attach(name, socket);
				updateContextStatus();
				return conn;
			} catch (err) {
				if (ctx.hasUI) ctx.ui.notify(`Could not connect to ${name} (${path}): ${(err as Error).message}`, "error");
				return undefined;
			}
		})();
		try {
			return await connecting;
		} finally {
			connecting = undefined;
		}
	}

	pi.on("session_start", (_event, ctx) => {
		uiCtx = ctx;
		const mode = pi.getFlag("review-ide-status");
		showContext = mode === "always" || (mode !== "never" && !ideExtensionLoaded());
	});

	pi.on("session_shutdown", () => {
		const c = conn;
		conn = undefined;
		pending = undefined;
		c?.socket.end();
		c?.socket.destroy();
	});

	pi.registerCommand("review", {
		description: "Review files in the IDE (default: files changed vs git HEAD, untracked included); comments go to the agent",
		handler: async (args, ctx) => {
			uiCtx = ctx;
			if (pending !== undefined) {
				ctx.ui.notify(
					`A review of ${pending.join(", ")} is already open in ${conn?.name ?? "the IDE"}: submit or cancel it there first.`,
					"warning",
				);
				return;
			}
			let files = parseArgs(args);
			if (files.length === 0) {
				try {
					files = await changedFiles(ctx.cwd);
				} catch (err) {
					ctx.ui.notify(
						`No files named and git could not list changes (${(err as Error).message}). Use /review FILE…`,
						"error",
					);
					return;
				}
				if (files.length === 0) {
					ctx.ui.notify("Nothing changed since git HEAD. Use /review FILE… to review other files.", "info");
					return;
				}
			}
			const c = await ensureConnected(ctx);
			if (!c) return;
			pending = files;
			c.socket.write(`${JSON.stringify({ files })}\n`);
			const what = files.length === 1 ? files[0] : `${files.length} files`;
			ctx.ui.setStatus(STATUS_REVIEW, `reviewing ${what} in ${c.name}…`);
			ctx.ui.notify(`Review of ${files.join(", ")} opened in ${c.name}; submit or cancel it there.`, "info");
		},
	});
}
