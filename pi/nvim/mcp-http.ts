/**
 * A minimal Streamable-HTTP MCP client (JSON-RPC over POST, answers as JSON
 * or as an SSE stream), written on `fetch` because pi has no MCP client and
 * an extension may import nothing but `typebox` and `node:` builtins.
 *
 * One session per client: `initialize` gives an `Mcp-Session-Id` that every
 * later request carries. A 401/403/404 means Neovim restarted (new token) or
 * dropped the session: the client initializes again once and repeats the
 * request, which the server refused before running it.
 */

import { type SseEvent, SseParser } from "./sse.ts";

export const PROTOCOL_VERSION = "2025-11-25";
const KNOWN_VERSIONS = new Set([PROTOCOL_VERSION, "2025-06-18", "2025-03-26"]);

/** Bound on the `initialize` and `tools/list` exchanges. */
export const SETUP_TIMEOUT_MS = 10_000;
/** How much of an HTTP error body goes into the message. */
const ERROR_BODY_CHARS = 500;

export type McpErrorKind = "network" | "http" | "rpc" | "timeout" | "cancelled" | "protocol" | "stale";

export class McpError extends Error {
	constructor(
		message: string,
		readonly kind: McpErrorKind,
		readonly status?: number,
		readonly code?: number,
	) {
		super(message);
		this.name = "McpError";
	}
}

export interface McpTool {
	name: string;
	title?: string;
	description?: string;
	inputSchema: unknown;
}

export interface McpContent {
	type: string;
	[key: string]: unknown;
}

export interface McpCallResult {
	content: McpContent[];
	structuredContent?: unknown;
	isError?: boolean;
}

export interface ServerInfo {
	name: string;
	version: string;
	protocolVersion: string;
	instructions?: string;
}

export interface Progress {
	progress: number;
	total?: number;
	message?: string;
}

export interface CallOptions {
	signal?: AbortSignal;
	/** Fail when neither the answer nor progress arrives for this long; unset: wait for ever. */
	idleTimeoutMs?: number;
	/** Fail when the answer has not arrived this long after the request, progress or not. */
	timeoutMs?: number;
	onProgress?: (progress: Progress) => void;
}

export interface McpHttpOptions {
	url: string;
	/** The bearer token; asked again before each `initialize` (a restarted Neovim has a new one). */
	token: () => string;
	clientInfo: { name: string; version: string };
}

type JsonObject = Record<string, unknown>;

const isObject = (value: unknown): value is JsonObject =>
	typeof value === "object" && value !== null && !Array.isArray(value);

export class McpHttpClient {
	private sessionId: string | undefined;
	private protocolVersion: string | undefined;
	private token = "";
	private nextId = 1;
	/** What `initialize` answered; unset until connected. */
	server: ServerInfo | undefined;

	constructor(private readonly options: McpHttpOptions) {}

	get url(): string {
		return this.options.url;
	}

	/** `initialize` + `notifications/initialized`; a new session each time. */
	async initialize(signal?: AbortSignal): Promise<ServerInfo> {
		this.sessionId = undefined;
		this.protocolVersion = undefined;
		this.server = undefined;
		try {
			this.token = this.options.token();
		} catch (err) {
			throw new McpError((err as Error).message, "stale");
		}
		const params = { protocolVersion: PROTOCOL_VERSION, capabilities: {}, clientInfo: this.options.clientInfo };
		const options = { signal, idleTimeoutMs: SETUP_TIMEOUT_MS };
		let result: unknown;
		try {
			result = await this.send("initialize", params, options);
		} catch (err) {
			// A kept-alive connection to a Neovim that restarted on the same port fails once.
			if (!(err instanceof McpError && err.kind === "network")) throw err;
			result = await this.send("initialize", params, options);
		}
		if (!isObject(result) || typeof result.protocolVersion !== "string") {
			throw new McpError("initialize answered without a protocolVersion", "protocol");
		}
		if (!KNOWN_VERSIONS.has(result.protocolVersion)) {
			throw new McpError(`the server speaks MCP ${result.protocolVersion}, this bridge ${PROTOCOL_VERSION}`, "protocol");
		}
		this.protocolVersion = result.protocolVersion;
		const info = isObject(result.serverInfo) ? result.serverInfo : {};
		this.server = {
			name: typeof info.name === "string" ? info.name : "unknown",
			version: typeof info.version === "string" ? info.version : "",
			protocolVersion: result.protocolVersion,
		};
		if (typeof result.instructions === "string") this.server.instructions = result.instructions;
		await this.notify("notifications/initialized", undefined, signal);
		return this.server;
	}

	/** Every tool, following `nextCursor`. */
	async listTools(signal?: AbortSignal): Promise<McpTool[]> {
		const tools: McpTool[] = [];
		let cursor: string | undefined;
		for (let page = 0; page < 100; page++) {
			const result = await this.request("tools/list", cursor ? { cursor } : {}, {
				signal,
				idleTimeoutMs: SETUP_TIMEOUT_MS,
			});
			if (!isObject(result) || !Array.isArray(result.tools)) {
				throw new McpError("tools/list answered without a tools array", "protocol");
			}
			for (const tool of result.tools) {
				if (isObject(tool) && typeof tool.name === "string") tools.push(tool as unknown as McpTool);
			}
			cursor = typeof result.nextCursor === "string" && result.nextCursor ? result.nextCursor : undefined;
			if (!cursor) break;
		}
		return tools;
	}

	async callTool(name: string, args: JsonObject, options: CallOptions = {}): Promise<McpCallResult> {
		const result = await this.request("tools/call", { name, arguments: args }, options);
		if (!isObject(result)) throw new McpError(`${name} answered without content`, "protocol");
		let content: unknown[];
		if (Array.isArray(result.content)) {
			content = result.content;
		} else if ("toolResult" in result) {
			// The 2024-10-07 protocol's shape: one value instead of content.
			const legacy = result.toolResult;
			content = [{ type: "text", text: typeof legacy === "string" ? legacy : JSON.stringify(legacy, null, 2) }];
		} else {
			throw new McpError(`${name} answered without content`, "protocol");
		}
		const out: McpCallResult = {
			content: content.filter(isObject).map((c) => ({ ...c, type: String(c.type) })),
		};
		if (result.structuredContent !== undefined) out.structuredContent = result.structuredContent;
		if (result.isError === true) out.isError = true;
		return out;
	}

	/** Ends the session on the server (best effort, bounded). */
	async close(): Promise<void> {
		const sessionId = this.sessionId;
		this.sessionId = undefined;
		this.server = undefined;
		if (!sessionId) return;
		try {
			await fetch(this.options.url, {
				method: "DELETE",
				headers: { ...this.headers(), "Mcp-Session-Id": sessionId },
				redirect: "error",
				signal: AbortSignal.timeout(2_000),
			});
		} catch {
			// Neovim may be gone already; the session dies with it.
		}
	}

	/** A request, repeated once on a fresh session when the server refused it as unauthorized or unknown. */
	private async request(method: string, params: JsonObject, options: CallOptions): Promise<unknown> {
		try {
			return await this.send(method, params, options);
		} catch (err) {
			const refused = err instanceof McpError && err.kind === "http" && [401, 403, 404].includes(err.status ?? 0);
			if (!refused) throw err;
			await this.initialize(options.signal);
			return await this.send(method, params, options);
		}
	}

	private headers(): Record<string, string> {
		const headers: Record<string, string> = {
			"Content-Type": "application/json",
			Accept: "application/json, text/event-stream",
			Authorization: `Bearer ${this.token}`,
		};
		if (this.sessionId) headers["Mcp-Session-Id"] = this.sessionId;
		if (this.protocolVersion) headers["MCP-Protocol-Version"] = this.protocolVersion;
		return headers;
	}

	private async post(message: JsonObject, signal: AbortSignal): Promise<Response> {
		try {
			return await fetch(this.options.url, {
				method: "POST",
				headers: this.headers(),
				body: JSON.stringify(message),
				redirect: "error",
				signal,
			});
		} catch (err) {
			if (signal.aborted) throw err;
			throw networkError(this.options.url, err);
		}
	}

	private async notify(method: string, params: JsonObject | undefined, signal?: AbortSignal): Promise<void> {
		const message: JsonObject = { jsonrpc: "2.0", method };
		if (params) message.params = params;
		const response = await this.post(message, signal ?? AbortSignal.timeout(SETUP_TIMEOUT_MS));
		if (!response.ok) throw await httpError(response);
		await response.body?.cancel().catch(() => {});
	}

	/** Posts one request and waits for its answer, handling what the server sends before it. */
	private async send(method: string, params: JsonObject, options: CallOptions): Promise<unknown> {
		const id = this.nextId++;
		const progressToken = `pi-nvim-${id}`;
		const message = {
			jsonrpc: "2.0",
			id,
			method,
			params: method === "tools/call" ? { ...params, _meta: { progressToken } } : params,
		};
		const controller = new AbortController();
		/** The bound that ran out, once one has. */
		let timedOut: number | undefined;
		let timer: ReturnType<typeof setTimeout> | undefined;
		const arm = () => {
			const ms = options.idleTimeoutMs;
			if (ms === undefined) return;
			clearTimeout(timer);
			timer = setTimeout(() => {
				timedOut = ms;
				controller.abort();
			}, ms);
		};
		const total = options.timeoutMs;
		const deadline =
			total === undefined
				? undefined
				: setTimeout(() => {
						timedOut = total;
						controller.abort();
					}, total);
		const onAbort = () => controller.abort();
		if (options.signal?.aborted) throw new McpError(`${method} cancelled`, "cancelled");
		options.signal?.addEventListener("abort", onAbort, { once: true });
		arm();
		try {
			const response = await this.post(message, controller.signal);
			if (method === "initialize") this.sessionId = response.headers.get("mcp-session-id") ?? undefined;
			if (!response.ok) throw await httpError(response);
			const type = response.headers.get("content-type") ?? "";
			if (type.includes("text/event-stream")) {
				return await this.readStream(response, id, progressToken, arm, controller.signal, options);
			}
			const body = await readText(response, controller.signal);
			let parsed: unknown;
			try {
				parsed = JSON.parse(body);
			} catch {
				throw new McpError(`${method}: the server answered ${response.status} with no JSON`, "protocol");
			}
			const answer = (Array.isArray(parsed) ? parsed : [parsed]).find((m) => isObject(m) && m.id === id);
			if (!isObject(answer)) throw new McpError(`${method}: no answer to request ${id} in the reply`, "protocol");
			return settle(method, answer);
		} catch (err) {
			if (timedOut !== undefined || options.signal?.aborted) {
				this.cancelRemote(id, timedOut !== undefined ? "timeout" : "cancelled by the user");
				if (timedOut !== undefined) {
					const bound = timedOut >= 1000 ? `${Math.round(timedOut / 1000)} s` : `${timedOut} ms`;
					throw new McpError(`${method}: no answer from Neovim within ${bound}`, "timeout");
				}
				throw new McpError(`${method} cancelled`, "cancelled");
			}
			// A stream cut mid-answer (Neovim quit) surfaces from the body reader.
			throw err instanceof McpError ? err : networkError(this.options.url, err);
		} finally {
			clearTimeout(timer);
			clearTimeout(deadline);
			options.signal?.removeEventListener("abort", onAbort);
			controller.abort();
		}
	}

	private async readStream(
		response: Response,
		id: number,
		progressToken: string,
		arm: () => void,
		signal: AbortSignal,
		options: CallOptions,
	): Promise<unknown> {
		if (!response.body) throw new McpError("an event stream without a body", "protocol");
		const decoder = new TextDecoder();
		const parser = new SseParser();
		/** The answer to request `id` among `events`, handling the rest; undefined if absent. */
		const answerIn = (events: SseEvent[]): { answer: unknown } | undefined => {
			for (const event of events) {
				if (event.event !== "message" || event.data.trim() === "") continue;
				let msg: unknown;
				try {
					msg = JSON.parse(event.data);
				} catch {
					continue;
				}
				for (const one of Array.isArray(msg) ? msg : [msg]) {
					if (!isObject(one)) continue;
					if (one.id === id && one.method === undefined) return { answer: settle(String(id), one) };
					this.onServerMessage(one, progressToken, arm, options);
				}
			}
			return undefined;
		};
		for await (const chunk of chunks(response.body, signal)) {
			const found = answerIn(parser.push(decoder.decode(chunk, { stream: true })));
			if (found) return found.answer;
		}
		const found = answerIn([...parser.push(decoder.decode()), ...parser.end()]);
		if (found) return found.answer;
		throw new McpError("Neovim closed the stream before answering", "protocol");
	}

	/** Progress for our call re-arms its timer; requests from the server get a short answer. */
	private onServerMessage(msg: JsonObject, progressToken: string, arm: () => void, options: CallOptions): void {
		if (msg.method === "notifications/progress" && isObject(msg.params) && msg.params.progressToken === progressToken) {
			arm();
			const p = msg.params;
			const progress: Progress = { progress: typeof p.progress === "number" ? p.progress : 0 };
			if (typeof p.total === "number") progress.total = p.total;
			if (typeof p.message === "string") progress.message = p.message;
			options.onProgress?.(progress);
			return;
		}
		if (typeof msg.method === "string" && msg.id !== undefined) {
			const reply =
				msg.method === "ping"
					? { jsonrpc: "2.0", id: msg.id, result: {} }
					: { jsonrpc: "2.0", id: msg.id, error: { code: -32601, message: `pi's Neovim bridge does not support ${msg.method}` } };
			this.post(reply, AbortSignal.timeout(SETUP_TIMEOUT_MS))
				.then((r) => r.body?.cancel())
				.catch(() => {});
		}
	}

	private cancelRemote(requestId: number, reason: string): void {
		this.notify("notifications/cancelled", { requestId, reason }, AbortSignal.timeout(2_000)).catch(() => {});
	}
}

/**
 * A response body's chunks until it ends or `signal` aborts. Node's fetch
 * follows the signal it was given only while its Request object lives (a
 * WeakRef): a garbage collection after the headers arrived cuts the link, and
 * an abort would no longer reach the body. The reader is cancelled here
 * instead, which also closes the connection.
 */
async function* chunks(body: ReadableStream<Uint8Array>, signal: AbortSignal): AsyncGenerator<Uint8Array> {
	const reader = body.getReader();
	const stop = () => {
		reader.cancel(signal.reason).catch(() => {});
	};
	signal.addEventListener("abort", stop, { once: true });
	try {
		for (;;) {
			if (signal.aborted) throw signal.reason;
			const { done, value } = await reader.read();
			// A cancel ends a pending read as if the body had ended.
			if (signal.aborted) throw signal.reason;
			if (done) return;
			yield value;
		}
	} finally {
		signal.removeEventListener("abort", stop);
		reader.cancel().catch(() => {});
	}
}

async function readText(response: Response, signal: AbortSignal): Promise<string> {
	if (!response.body) return "";
	const decoder = new TextDecoder();
	let text = "";
	for await (const chunk of chunks(response.body, signal)) text += decoder.decode(chunk, { stream: true });
	return text + decoder.decode();
}

function settle(what: string, answer: JsonObject): unknown {
	if (isObject(answer.error)) {
		const code = typeof answer.error.code === "number" ? answer.error.code : undefined;
		const text = typeof answer.error.message === "string" ? answer.error.message : JSON.stringify(answer.error);
		throw new McpError(text, "rpc", undefined, code);
	}
	if (!("result" in answer)) throw new McpError(`${what}: an answer with neither result nor error`, "protocol");
	return answer.result;
}

function networkError(url: string, err: unknown): McpError {
	const cause = (err as { cause?: { code?: string; message?: string } }).cause;
	if (cause?.code === "UND_ERR_HEADERS_TIMEOUT" || cause?.code === "UND_ERR_BODY_TIMEOUT") {
		return new McpError(`${url} stopped sending (${cause.code})`, "timeout");
	}
	const why = cause?.code === "ECONNREFUSED" ? "connection refused" : (cause?.message ?? (err as Error).message);
	return new McpError(`cannot reach ${url} (${why})`, "network");
}

async function httpError(response: Response): Promise<McpError> {
	let body = "";
	try {
		body = (await response.text()).trim().slice(0, ERROR_BODY_CHARS);
	} catch {
		// the status says enough
	}
	const text = `HTTP ${response.status}${body ? `: ${body}` : ""}`;
	return new McpError(text, "http", response.status);
}
