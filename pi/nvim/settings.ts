/**
 * What the bridge reads from pi's settings and keeps there: `nvim.url` in
 * pi's global settings.json (`$PI_CODING_AGENT_DIR`, else `~/.pi/agent`),
 * written to a temp file and renamed under the same `settings.json.lock`
 * directory pi's own settings writer takes, keeping every other key. A
 * trusted project's `.pi/settings.json` may name the URL too, and either
 * file `nvim.icons` ("nerd" or "plain"). Also the key pi expands tool rows
 * with, from pi's keybindings.json.
 */

import { mkdirSync, readFileSync, renameSync, rmdirSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";

/** A lock directory older than this is left over from a crash. */
const STALE_LOCK_MS = 10_000;
const LOCK_ATTEMPTS = 50;
const LOCK_RETRY_MS = 20;

/** pi's agent directory, as pi computes it. */
export function agentDir(env: NodeJS.ProcessEnv = process.env, home: string = homedir()): string {
	const dir = env.PI_CODING_AGENT_DIR;
	if (dir) {
		if (dir === "~") return home;
		if (dir.startsWith("~/")) return join(home, dir.slice(2));
		return dir;
	}
	return join(home, ".pi", "agent");
}

export function settingsPath(env: NodeJS.ProcessEnv = process.env, home: string = homedir()): string {
	return join(agentDir(env, home), "settings.json");
}

type Settings = Record<string, unknown>;

/** The file's JSON object; `{}` when missing; throws when it is not a JSON object. */
function readSettings(path: string): Settings {
	let text: string;
	try {
		text = readFileSync(path, "utf8");
	} catch (err) {
		if ((err as NodeJS.ErrnoException).code === "ENOENT") return {};
		throw err;
	}
	if (text.trim() === "") return {};
	let value: unknown;
	try {
		value = JSON.parse(text);
	} catch (err) {
		throw new Error(`${path} is not valid JSON (${(err as Error).message}); left untouched`);
	}
	if (typeof value !== "object" || value === null || Array.isArray(value)) {
		throw new Error(`${path} does not hold a JSON object; left untouched`);
	}
	return value as Settings;
}

/** The file's `nvim` object; `{}` when missing or unreadable. */
function nvimSettings(path: string): Settings {
	try {
		const nvim = readSettings(path).nvim;
		return typeof nvim === "object" && nvim !== null && !Array.isArray(nvim) ? (nvim as Settings) : {};
	} catch {
		return {};
	}
}

/** The saved `nvim.url`, if there is one (an unreadable file counts as none). */
export function readSavedUrl(path: string): string | undefined {
	const url = nvimSettings(path).url;
	return typeof url === "string" && url ? url : undefined;
}

/** A project's own pi settings, as pi finds them. */
export function projectSettingsPath(cwd: string): string {
	return join(cwd, ".pi", "settings.json");
}

/** A URL and the settings file that names it. */
export interface ConfiguredUrl {
	url: string;
	file: string;
}

/**
 * The URL to try first: a trusted project's `nvim.url`, else the global
 * one. An untrusted project's settings are not read.
 */
export function configuredUrl(cwd: string, projectTrusted: boolean, global: string = settingsPath()): ConfiguredUrl | undefined {
	const files = projectTrusted ? [projectSettingsPath(cwd), global] : [global];
	for (const file of files) {
		const url = readSavedUrl(file);
		if (url) return { url, file };
	}
	return undefined;
}

/** Whether the footer may use a Nerd Font glyph: `nvim.icons = "nerd"` (project first, when trusted). */
export function nerdFontIcons(cwd: string, projectTrusted: boolean, global: string = settingsPath()): boolean {
	const files = projectTrusted ? [projectSettingsPath(cwd), global] : [global];
	for (const file of files) {
		const icons = nvimSettings(file).icons;
		if (icons === "nerd" || icons === "plain") return icons === "nerd";
	}
	return false;
}

/** The keys of pi's "expand tool output" binding, as pi shows them (`ctrl+o`). */
export function expandKeys(env: NodeJS.ProcessEnv = process.env, home: string = homedir()): string {
	try {
		const bindings: unknown = JSON.parse(readFileSync(join(agentDir(env, home), "keybindings.json"), "utf8"));
		if (typeof bindings === "object" && bindings !== null) {
			const b = bindings as Settings;
			// The current name, then the name older pis used.
			const keys = b["app.tools.expand"] ?? b.expandTools;
			if (typeof keys === "string" && keys) return keys;
			if (Array.isArray(keys) && keys.length > 0 && keys.every((k) => typeof k === "string")) return keys.join("/");
		}
	} catch {
		// no keybindings.json, or not JSON: pi uses its default too
	}
	return "ctrl+o";
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function lock(path: string): Promise<() => void> {
	const lockPath = `${path}.lock`;
	for (let attempt = 0; ; attempt++) {
		try {
			mkdirSync(lockPath);
			return () => {
				try {
					rmdirSync(lockPath);
				} catch {
					// already gone
				}
			};
		} catch (err) {
			if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
		}
		try {
			if (Date.now() - statSync(lockPath).mtimeMs > STALE_LOCK_MS) {
				rmdirSync(lockPath);
				continue;
			}
		} catch {
			continue; // released meanwhile
		}
		if (attempt >= LOCK_ATTEMPTS) throw new Error(`${lockPath} is held by another writer; try again`);
		await sleep(LOCK_RETRY_MS);
	}
}

/** Sets `nvim.url`, keeping every other key (inside `nvim` too). */
export async function saveUrl(path: string, url: string): Promise<void> {
	mkdirSync(dirname(path), { recursive: true });
	const release = await lock(path);
	const tmp = `${path}.nvim-${process.pid}.tmp`;
	try {
		const settings = readSettings(path);
		const nvim = settings.nvim;
		const kept = typeof nvim === "object" && nvim !== null && !Array.isArray(nvim) ? (nvim as Settings) : {};
		settings.nvim = { ...kept, url };
		let mode = 0o600;
		try {
			mode = statSync(path).mode & 0o777;
		} catch {
			// a new file
		}
		writeFileSync(tmp, `${JSON.stringify(settings, null, 2)}\n`, { mode });
		renameSync(tmp, path);
	} catch (err) {
		try {
			unlinkSync(tmp);
		} catch {
			// never written
		}
		throw err;
	} finally {
		release();
	}
}
