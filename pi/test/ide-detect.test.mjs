// With pi's `ide` extension loaded, the review extension leaves the IDE's
// context to it and shows only its own review status; `--review-ide-status
// always` brings the context back.

import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { test } from "node:test";
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";

const piDir = dirname(dirname(fileURLToPath(import.meta.url)));
// The pi to run in: $PI_CLI (tests/integration/pi_extension.rs runs these
// tests once per pi distribution), else the pinned one.
const piCli = process.env.PI_CLI ?? join(piDir, "node_modules", "@mariozechner", "pi-coding-agent", "dist", "cli.js");

/** Runs `/review a.txt` in pi with the given extra args; returns the setStatus requests seen. */
async function statusesWith(extraArgs) {
	const root = realpathSync(mkdtempSync(join(tmpdir(), "pi-review-detect-")));
	const cwd = join(root, "project");
	mkdirSync(join(cwd, ".pi", "ide"), { recursive: true });
	mkdirSync(join(root, "agent"));
	let requested;
	const gotRequest = new Promise((r) => (requested = r));
	const server = createServer((s) => {
		s.on("error", () => {});
		s.write(`${JSON.stringify({ type: "context", file: "a.txt", startLine: 1, endLine: 2 })}\n`);
		s.on("data", () => setTimeout(requested, 300));
	});
	await new Promise((r) => server.listen(join(cwd, ".pi", "ide", "nvim.sock"), r));
	const pi = spawn(
		process.execPath,
		[piCli, "--mode", "rpc", "--no-session", "--offline", "-e", join(piDir, "review.ts"), ...extraArgs],
		{ cwd, env: { ...process.env, HOME: root, PI_CODING_AGENT_DIR: join(root, "agent"), PI_OFFLINE: "1" } },
	);
	let out = "";
	let err = "";
	pi.stdout.on("data", (d) => (out += d));
	pi.stderr.on("data", (d) => (err += d));
	pi.stdin.write(`${JSON.stringify({ type: "prompt", message: "/review a.txt" })}\n`);
	const timeout = new Promise((_, reject) =>
		setTimeout(() => reject(new Error(`no review request within 60 s\n${out}\n${err}`)), 60_000).unref(),
	);
	try {
		await Promise.race([gotRequest, timeout]);
	} finally {
		pi.kill();
		server.close();
		rmSync(root, { recursive: true, force: true });
	}
	return out
		.split("\n")
		.filter(Boolean)
		.map((l) => JSON.parse(l))
		.filter((e) => e.type === "extension_ui_request" && e.method === "setStatus");
}

test("the footer context is left to a loaded `ide` extension", async () => {
	const statuses = await statusesWith(["-e", join(piDir, "test", "fixtures", "ide-command.ts")]);
	assert.ok(statuses.some((e) => e.statusText === "reviewing a.txt in nvim…"), JSON.stringify(statuses));
	assert.ok(!statuses.some((e) => /\| a\.txt/.test(e.statusText ?? "")), JSON.stringify(statuses));
});

test("--review-ide-status always shows it anyway", async () => {
	const statuses = await statusesWith([
		"-e",
		join(piDir, "test", "fixtures", "ide-command.ts"),
		"--review-ide-status",
		"always",
	]);
	assert.ok(statuses.some((e) => e.statusText === "nvim | a.txt:1-2"), JSON.stringify(statuses));
});
