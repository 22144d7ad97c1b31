// The Neovim tools' rows as pi draws them: the tool definitions the bridge
// registers, rendered by pi's own ToolExecutionComponent with pi's theme
// (of the pi in $PI_PACKAGE, else the pinned one), collapsed and expanded,
// at a narrow and a wide terminal. Rows never exceed the width (pi's TUI
// stops on a wider line) and never print a remote control character.

import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { fileURLToPath, pathToFileURL } from "node:url";
import { createJiti } from "jiti";

const piDir = dirname(dirname(fileURLToPath(import.meta.url)));
const pkg = process.env.PI_PACKAGE ?? join(piDir, "node_modules", "@mariozechner", "pi-coding-agent");
const sdk = await import(pathToFileURL(join(pkg, "dist", "index.js")).href);
const tuiName = pkg.includes("@earendil-works") ? "@earendil-works/pi-tui" : "@mariozechner/pi-tui";
const tuiEntry = createRequire(join(pkg, "package.json")).resolve(tuiName);
const { visibleWidth } = await import(pathToFileURL(tuiEntry).href);
sdk.initTheme("dark", false);

// pi's expand key as the person configured it.
const home = realpathSync(mkdtempSync(join(tmpdir(), "pi-nvim-render-")));
after(() => rmSync(home, { recursive: true, force: true }));
mkdirSync(join(home, "agent"));
writeFileSync(join(home, "agent", "keybindings.json"), JSON.stringify({ "app.tools.expand": "ctrl+e" }));
process.env.PI_CODING_AGENT_DIR = join(home, "agent");

const jiti = createJiti(import.meta.url);
const { Catalog } = await jiti.import("../nvim/catalog.ts");

/** The pi tool definitions the bridge registers for `tools`. */
function definitions(tools) {
	const registered = new Map();
	const pi = {
		getAllTools: () => [],
		getActiveTools: () => [],
		setActiveTools: () => {},
		registerTool: (definition) => registered.set(definition.name, definition),
	};
	new Catalog(pi, async () => ({ content: [], details: {} })).expose(tools, "/p", undefined);
	return registered;
}

const schema = (properties) => ({ type: "object", properties: { ...properties, projectPath: { type: "string" } } });
const defs = definitions(
	["find_references", "get_file_text_by_path", "replace_text_in_file", "get_file_problems", "search_in_files_by_text", "show_image", "structured_only"].map(
		(name) => ({ name, description: `${name}.`, inputSchema: schema({ filePath: { type: "string" } }) }),
	),
);

const plain = (line) => line.replace(/\x1b\[[0-9;]*m/g, "");

/** The row for a call of `tool` with `args` and `result`, at `width`: plain lines without padding rows. */
function row(tool, args, result, { width = 80, expanded = false, partial = false } = {}) {
	const component = new sdk.ToolExecutionComponent(`nvim_${tool}`, "id-1", args, {}, defs.get(`nvim_${tool}`), { requestRender() {} }, "/p");
	if (result) component.updateResult(result, partial);
	component.setExpanded(expanded);
	const lines = component.render(width);
	for (const line of lines) assert.ok(visibleWidth(line) <= width, `wider than ${width}: ${JSON.stringify(line)}`);
	for (const line of lines) assert.doesNotMatch(plain(line), /[\u0000-\u0008\u000b-\u001f]/, "a control character reached the terminal");
	return lines.map((l) => plain(l).trim()).filter((l) => l !== "");
}

const ok = (text, structuredContent) => ({ content: [{ type: "text", text }], details: { tool: "x", structuredContent }, isError: false });

test("references: operation, file:line:column and counts collapsed; the locations expanded", () => {
	const locations = [
		{ filePath: "src/a.rs", line: 3, column: 5, lineText: "fn a()" },
		{ filePath: "src/a.rs", line: 9, column: 1, lineText: "a()" },
		{ filePath: "src/b.rs", line: 2, column: 7, lineText: "a()" },
	];
	const text = locations.map((l) => `${l.filePath}:${l.line}:${l.column}: ${l.lineText}`).join("\n");
	const args = { filePath: "src/a.rs", line: 3, column: 5 };
	assert.deepEqual(row("find_references", args, ok(text, { locations })), [
		"nvim find references src/a.rs:3:5",
		"3 references in 2 files (ctrl+e to expand)",
	]);
	assert.deepEqual(row("find_references", args, ok(text, { locations }), { expanded: true }), [
		"nvim find references src/a.rs:3:5",
		"3 references in 2 files",
		"src/a.rs:3:5: fn a()",
		"src/a.rs:9:1: a()",
		"src/b.rs:2:7: a()",
	]);
	// Before the answer: the call alone.
	assert.deepEqual(row("find_references", args), ["nvim find references src/a.rs:3:5"]);
});

test("a 1000-line file is one line collapsed and bounded expanded", () => {
	const body = Array.from({ length: 1000 }, (_, i) => `line ${i + 1}`).join("\n");
	const result = ok(body, { pathInProject: "big.txt", text: body, lineCount: 1000, truncated: false, fromBuffer: true });
	const args = { pathInProject: "big.txt" };
	assert.deepEqual(row("get_file_text_by_path", args, result), [
		"nvim get file text by path big.txt",
		"1000 lines (from Neovim's buffer) (ctrl+e to expand)",
	]);
	const open = row("get_file_text_by_path", args, result, { expanded: true });
	assert.equal(open[2], "line 1");
	assert.equal(open.at(-2), "line 400");
	assert.equal(open.at(-1), "… 600 more lines (the model sees them all)");
});

test("edits: waiting for the person, declined, accepted", () => {
	const args = { pathInProject: "a.txt", oldText: "x", newText: "y" };
	const waiting = { content: [{ type: "text", text: "Neovim replace_text_in_file: waiting 5 s for the person" }], details: {}, isError: false };
	assert.deepEqual(row("replace_text_in_file", args, waiting, { partial: true }), [
		"nvim replace text in file a.txt",
		"Neovim replace_text_in_file: waiting 5 s for the person",
	]);
	const declined = {
		content: [{ type: "text", text: "Neovim's replace_text_in_file failed: The person declined the edit of a.txt; it was not changed." }],
		details: {},
		isError: true,
	};
	assert.deepEqual(row("replace_text_in_file", args, declined), ["nvim replace text in file a.txt", "declined by the person (ctrl+e to expand)"]);
	const accepted = ok("Accepted by the person, applied and saved: a.txt", { applied: ["a.txt"], editedByPerson: ["a.txt"], saved: true });
	assert.deepEqual(row("replace_text_in_file", args, accepted), [
		"nvim replace text in file a.txt",
		"accepted and saved: a.txt, changed by the person first (ctrl+e to expand)",
	]);
});

test("problems, matches, images and structured-only results", () => {
	const errors = [{ severity: "ERROR" }, { severity: "WARNING" }];
	const text = "a.py:1:5: ERROR boom [pyright]\na.py:2:1: WARNING unused";
	const problems = row("get_file_problems", { filePath: "a.py" }, ok(text, { filePath: "a.py", errors }), { expanded: true });
	assert.deepEqual(problems, ["nvim get file problems a.py", "2 problems", "a.py:1:5: ERROR boom [pyright]", "a.py:2:1: WARNING unused"]);
	assert.deepEqual(row("get_file_problems", { filePath: "a.py" }, ok("no problems", { filePath: "a.py", errors: [] })), [
		"nvim get file problems a.py",
		"no problems",
	]);

	const entries = [{ filePath: "a", line: 1, lineText: "x" }];
	const search = ok("a:1: x", { entries, limitReached: true, timedOut: false });
	assert.deepEqual(row("search_in_files_by_text", { searchText: "x", fileMask: "*.rs" }, search), [
		'nvim search in files by text "x" in *.rs',
		"1 match in 1 file (limit reached) (ctrl+e to expand)",
	]);

	const image = { content: [{ type: "text", text: "a red dot" }, { type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" }], details: {}, isError: false };
	assert.deepEqual(row("show_image", {}, image, { expanded: true }).slice(1, 4), ["a red dot · 1 image", "a red dot", "[image image/png, 8 B]"]);

	const structured = { content: [], details: { structuredContent: { answer: 42 } }, isError: false };
	assert.deepEqual(row("structured_only", {}, structured, { expanded: true }).slice(1), ["done", "{", '"answer": 42', "}"]);
});

test("narrow terminals, wide characters and hostile text never overflow or reach the terminal raw", () => {
	const path = `src/${"深い/".repeat(20)}ファイル.rs`;
	const hostile = `line\x1b[2J\x07 with escapes\tand a tab ${"長".repeat(50)}`;
	for (const width of [12, 30, 57]) {
		const lines = row("find_references", { filePath: path, line: 1, column: 1 }, ok(hostile, { locations: [] }), { width, expanded: true });
		assert.ok(lines[0].startsWith("nvim"), lines[0]);
		assert.ok(lines.some((l) => l.includes("?[2J?")), JSON.stringify(lines));
	}
});
