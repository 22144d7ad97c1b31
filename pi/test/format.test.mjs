// Unit tests of review.ts's pure parts, loaded through jiti as pi loads it.

import { test } from "node:test";
import assert from "node:assert/strict";
import { createJiti } from "jiti";

const jiti = createJiti(import.meta.url);
const ext = await jiti.import("../review.ts");

test("parseIdeLine keeps context and reviewResult, ignores everything else", () => {
	assert.equal(ext.parseIdeLine("not json"), undefined);
	assert.equal(ext.parseIdeLine("[1,2]"), undefined);
	assert.equal(ext.parseIdeLine('{"type":"hello","ide":"nvim","version":"1.0.0"}'), undefined);
	assert.equal(ext.parseIdeLine('{"type":"somethingNew"}'), undefined);
	assert.equal(ext.parseIdeLine('{"type":"reviewResult","status":"maybe","comments":[]}'), undefined);
	assert.deepEqual(ext.parseIdeLine('{"type":"context","file":null}'), { type: "context", file: null });
	assert.deepEqual(ext.parseIdeLine('{"type":"context","file":"a","startLine":1,"endLine":2}'), {
		type: "context",
		file: "a",
		startLine: 1,
		endLine: 2,
	});
	// No comments field at all (a cancelled result may omit it), and junk comments dropped.
	assert.deepEqual(ext.parseIdeLine('{"type":"reviewResult","status":"cancelled"}'), {
		type: "reviewResult",
		status: "cancelled",
		comments: [],
	});
	const r = ext.parseIdeLine(
		JSON.stringify({
			type: "reviewResult",
			status: "submitted",
			comments: [null, { file: "a", text: "no line" }, { file: "a", line: 2, endLine: 2, text: "t", context: ["> 2: x"] }],
		}),
	);
	assert.deepEqual(r.comments, [{ file: "a", line: 2, text: "t", context: ["> 2: x"] }]);
});

test("LineSplitter joins chunks, keeps split UTF-8 intact and drops an oversized line", () => {
	const s = new ext.LineSplitter();
	const bytes = Buffer.from('{"a":"é"}\n{"b":1}\n{"c"', "utf8");
	const cut = bytes.indexOf(0xa9); // inside "é"
	assert.deepEqual(s.push(bytes.subarray(0, cut)), []);
	assert.deepEqual(s.push(bytes.subarray(cut)), ['{"a":"é"}', '{"b":1}']);
	assert.deepEqual(s.push(Buffer.from(":2}\n")), ['{"c":2}']);
	const big = Buffer.alloc(17 * 1024 * 1024, 0x61);
	assert.deepEqual(s.push(big), []);
	assert.deepEqual(s.push(Buffer.from('tail\n{"ok":1}\n')), ['{"ok":1}'], "the rest of the long line is dropped");
});

test("formatReviewMessage: header, path:line(-end), fenced context, text", () => {
	const msg = ext.formatReviewMessage("nvim", [
		{ file: "src/a.rs", line: 3, text: "why?", context: ["2: x", "> 3: y"] },
		{ file: "b.md", line: 5, endLine: 7, text: "two\nlines", context: ["> 5: ```rust", "> 6: fn", "> 7: ```"] },
		{ file: "c", line: 1, text: "no context", context: [] },
	]);
	assert.equal(
		msg,
		[
			"I reviewed your changes in nvim and left 3 comments. Address each one; lines marked `>` are the ones commented on.",
			"src/a.rs:3\n```\n2: x\n> 3: y\n```\nwhy?",
			"b.md:5-7\n````\n> 5: ```rust\n> 6: fn\n> 7: ```\n````\ntwo\nlines",
			"c:1\nno context",
		].join("\n\n"),
	);
});

test("formatContextStatus and parseArgs", () => {
	assert.equal(ext.formatContextStatus("nvim", undefined), "nvim");
	assert.equal(ext.formatContextStatus("nvim", { type: "context", file: null }), "nvim");
	assert.equal(ext.formatContextStatus("nvim", { type: "context", file: "a.txt" }), "nvim | a.txt");
	assert.equal(ext.formatContextStatus("nvim", { type: "context", file: "a", startLine: 4, endLine: 4 }), "nvim | a:4");
	assert.equal(ext.formatContextStatus("nvim", { type: "context", file: "a", startLine: 2, endLine: 9 }), "nvim | a:2-9");
	assert.deepEqual(ext.parseArgs("  a.txt  \"b c.txt\" 'd e' f "), ["a.txt", "b c.txt", "d e", "f"]);
	assert.deepEqual(ext.parseArgs(""), []);
});

test("review.ts imports only node: builtins and typebox at runtime", async () => {
	const { readFileSync } = await import("node:fs");
	const src = readFileSync(new URL("../review.ts", import.meta.url), "utf8");
	const specifiers = [];
	for (const m of src.matchAll(/^\s*(import|export)\s+(?!type\b)([^;]*?)\s+from\s+["']([^"']+)["']/gms)) {
		specifiers.push(m[3]);
	}
	for (const m of src.matchAll(/^\s*import\s+["']([^"']+)["']/gm)) specifiers.push(m[1]);
	for (const m of src.matchAll(/\b(?:require|import)\s*\(\s*["']([^"']+)["']/g)) specifiers.push(m[1]);
	assert.ok(specifiers.includes("node:net"), `the scan found nothing: ${specifiers}`);
	const bad = specifiers.filter((s) => !s.startsWith("node:") && s !== "typebox" && s !== "@sinclair/typebox");
	assert.deepEqual(bad, [], "pi resolves bare imports through its own alias table; these may not load on another pi");
});
