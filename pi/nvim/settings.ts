/**
 * The one setting the bridge keeps: `{"nvim": {"url": …}}` in pi's global
 * settings.json (`$PI_CODING_AGENT_DIR`, else `~/.pi/agent`). Written to a
 * temp file and renamed, under the same `settings.json.lock` directory pi's
 * own settings writer takes, keeping every other key.
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

/** The saved `nvim.url`, if there is one (an unreadable file counts as none). */
export function readSavedUrl(path: string): string | undefined {
	try {
		const nvim = readSettings(path).nvim;
		if (typeof nvim !== "object" || nvim === null) return undefined;
		const url = (nvim as Settings).url;
		return typeof url === "string" && url ? url : undefined;
	} catch {
		return undefined;
	}
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
