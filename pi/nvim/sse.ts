/**
 * A `text/event-stream` parser (the WHATWG rules: `\n`, `\r\n` or `\r` end a
 * line, `:` starts a comment, a blank line ends an event). Streamable-HTTP
 * MCP servers answer a POST with such a stream when they may send progress
 * or requests before the response.
 */

export interface SseEvent {
	/** `event:` field; "message" when absent. */
	event: string;
	/** The `data:` lines joined with `\n`. */
	data: string;
	/** `id:` field of this event, if it had one. */
	id?: string;
}

/** An event's data larger than this is dropped, not buffered without bound. */
const MAX_EVENT_CHARS = 64 * 1024 * 1024;

export class SseParser {
	private buffer = "";
	private data: string[] = [];
	private dataChars = 0;
	private event = "";
	private id: string | undefined;
	private oversized = false;

	/** Feeds decoded text; returns the events it completed. */
	push(text: string): SseEvent[] {
		this.buffer += text;
		const events: SseEvent[] = [];
		let start = 0;
		for (;;) {
			let end = start;
			while (end < this.buffer.length && this.buffer[end] !== "\n" && this.buffer[end] !== "\r") end++;
			if (end === this.buffer.length) break;
			// A `\r` at the very end may be the first half of `\r\n`: wait.
			if (this.buffer[end] === "\r" && end + 1 === this.buffer.length) break;
			const line = this.buffer.slice(start, end);
			start = end + (this.buffer[end] === "\r" && this.buffer[end + 1] === "\n" ? 2 : 1);
			const done = this.line(line);
			if (done) events.push(done);
		}
		this.buffer = this.buffer.slice(start);
		return events;
	}

	/** The stream ended: an unterminated last line still counts, a half event does not. */
	end(): SseEvent[] {
		const rest = this.buffer.replace(/\r$/, "");
		this.buffer = "";
		if (rest.length > 0) this.line(rest);
		return [];
	}

	private line(line: string): SseEvent | undefined {
		if (line === "") return this.dispatch();
		if (line.startsWith(":")) return undefined;
		const colon = line.indexOf(":");
		const field = colon === -1 ? line : line.slice(0, colon);
		let value = colon === -1 ? "" : line.slice(colon + 1);
		if (value.startsWith(" ")) value = value.slice(1);
		switch (field) {
			case "data":
				this.dataChars += value.length + 1;
				if (this.dataChars > MAX_EVENT_CHARS) {
					this.oversized = true;
					this.data = [];
				} else if (!this.oversized) {
					this.data.push(value);
				}
				break;
			case "event":
				this.event = value;
				break;
			case "id":
				if (!value.includes("\0")) this.id = value;
				break;
			default:
				// `retry` and unknown fields: nothing to do for a one-shot stream.
				break;
		}
		return undefined;
	}

	private dispatch(): SseEvent | undefined {
		const hadData = this.dataChars > 0 && !this.oversized;
		const event: SseEvent = { event: this.event || "message", data: this.data.join("\n") };
		if (this.id !== undefined) event.id = this.id;
		this.data = [];
		this.dataChars = 0;
		this.event = "";
		this.id = undefined;
		this.oversized = false;
		return hadData ? event : undefined;
	}
}
