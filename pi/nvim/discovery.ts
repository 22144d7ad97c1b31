/**
 * Finding Neovim's MCP endpoint: the loopback URL rules, and pi-ide.nvim's
 * lockfiles (`$PI_IDE_LOCK_DIR`, else `~/.pi/ide/<port>.lock`), which carry
 * `mcpUrl`, the bearer token (`authToken`), Neovim's `pid` and its
 * `workspaceFolders`. The token is only ever taken from a live lockfile.
 */

import { readdirSync, readFileSync, realpathSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve, sep } from "node:path";

export interface Lockfile {
	/** The file, for messages. */
	path: string;
	pid: number;
	workspaceFolders: string[];
	ideName: string;
	mcpUrl: string;
	authToken: string;
	/** Newest wins when two Neovims claim the same folder. */
	mtimeMs: number;
}

export type UrlCheck = { ok: true; url: string } | { ok: false; error: string };

const LOOPBACK_NAMES = new Set(["localhost", "127.0.0.1", "[::1]"]);

function isLoopbackHost(hostname: string): boolean {
	return LOOPBACK_NAMES.has(hostname) || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname);
}

/**
 * `raw` as a loopback `http://host:port/path` URL without credentials, query
 * or fragment (`/` becomes `/mcp`), or why it is refused: the bearer token
 * must never leave this machine.
 */
export function checkUrl(raw: string): UrlCheck {
	const text = raw.trim();
	let url: URL;
	try {
		url = new URL(text);
	} catch {
		return { ok: false, error: `${JSON.stringify(text)} is not a URL; expected http://127.0.0.1:<port>/mcp` };
	}
	if (url.protocol !== "http:") {
		return { ok: false, error: `${text}: only http:// on loopback is accepted (Neovim serves plain HTTP on 127.0.0.1)` };
	}
	if (!isLoopbackHost(url.hostname)) {
		return {
			ok: false,
			error:
				`${text}: ${url.hostname} is not a loopback address; ` +
				"the bridge only talks to a Neovim on this machine (127.0.0.1, localhost, [::1])",
		};
	}
	if (url.username || url.password) return { ok: false, error: `${text}: credentials do not belong in the URL` };
	if (url.search || url.hash) return { ok: false, error: `${text}: a query or fragment is not part of an MCP endpoint` };
	if (!url.port) return { ok: false, error: `${text}: the port is missing (see :PiIde mcp in Neovim)` };
	let path = url.pathname.replace(/\/+$/, "");
	if (path === "") path = "/mcp";
	return { ok: true, url: `http://${url.hostname}:${url.port}${path}` };
}

/** Port and path: `localhost` and `127.0.0.1` name the same endpoint. */
function endpointKey(url: string): string | undefined {
	const checked = checkUrl(url);
	if (!checked.ok) return undefined;
	const parsed = new URL(checked.url);
	return `${parsed.port}${parsed.pathname}`;
}

export function sameEndpoint(a: string, b: string): boolean {
	const key = endpointKey(a);
	return key !== undefined && key === endpointKey(b);
}

/** Where pi-ide.nvim writes its lockfiles. */
export function lockDir(env: NodeJS.ProcessEnv = process.env, home: string = homedir()): string {
	const dir = env.PI_IDE_LOCK_DIR;
	return dir ? dir : join(home, ".pi", "ide");
}

/** The lockfiles in `dir` that announce an MCP endpoint; others and junk are skipped. */
export function readLockfiles(dir: string): Lockfile[] {
	let names: string[];
	try {
		names = readdirSync(dir);
	} catch {
		return [];
	}
	const out: Lockfile[] = [];
	for (const name of names) {
		if (!name.endsWith(".lock")) continue;
		const path = join(dir, name);
		try {
			const json: unknown = JSON.parse(readFileSync(path, "utf8"));
			if (typeof json !== "object" || json === null) continue;
			const l = json as Record<string, unknown>;
			if (typeof l.mcpUrl !== "string" || typeof l.authToken !== "string" || typeof l.pid !== "number") continue;
			const folders = Array.isArray(l.workspaceFolders)
				? l.workspaceFolders.filter((f): f is string => typeof f === "string")
				: [];
			out.push({
				path,
				pid: l.pid,
				workspaceFolders: folders,
				ideName: typeof l.ideName === "string" ? l.ideName : "IDE",
				mcpUrl: l.mcpUrl,
				authToken: l.authToken,
				mtimeMs: statSync(path).mtimeMs,
			});
		} catch {
			// unreadable, half-written or not ours
		}
	}
	return out;
}

/** `kill(pid, 0)`: alive unless the kernel says there is no such process. */
export function pidAlive(pid: number): boolean {
	if (!Number.isInteger(pid) || pid <= 0) return false;
	try {
		process.kill(pid, 0);
		return true;
	} catch (err) {
		return (err as NodeJS.ErrnoException).code === "EPERM";
	}
}

function real(path: string): string {
	try {
		return realpathSync(path);
	} catch {
		return resolve(path);
	}
}

/** Length of the longest workspace folder that contains `cwd`, or -1. */
function containment(folders: string[], cwd: string): number {
	let best = -1;
	for (const folder of folders) {
		const f = real(folder).replace(/\/+$/, "") || "/";
		const inside = cwd === f || cwd.startsWith(f === "/" ? "/" : f + sep);
		if (inside && f.length > best) best = f.length;
	}
	return best;
}

/**
 * The live Neovim whose workspace contains `cwd` (the innermost folder
 * wins, then the newest lockfile).
 */
export function chooseLockfile(locks: Lockfile[], cwd: string, alive: (pid: number) => boolean = pidAlive): Lockfile | undefined {
	const here = real(cwd);
	let best: { lock: Lockfile; depth: number } | undefined;
	for (const lock of locks) {
		if (!checkUrl(lock.mcpUrl).ok || !alive(lock.pid)) continue;
		const depth = containment(lock.workspaceFolders, here);
		if (depth < 0) continue;
		if (!best || depth > best.depth || (depth === best.depth && lock.mtimeMs > best.lock.mtimeMs)) {
			best = { lock, depth };
		}
	}
	return best?.lock;
}

/** The live lockfile announcing `url`, the only place its token comes from. */
export function lockfileForUrl(locks: Lockfile[], url: string, alive: (pid: number) => boolean = pidAlive): Lockfile | undefined {
	return locks
		.filter((lock) => sameEndpoint(lock.mcpUrl, url) && alive(lock.pid))
		.sort((a, b) => b.mtimeMs - a.mtimeMs)[0];
}

/**
 * The innermost of the lockfile's workspace folders that holds `cwd`, as the
 * lockfile spells it: the project root Neovim answers for when pi runs in
 * it or below it. `undefined` when `cwd` is outside them all.
 */
export function workspaceRootFor(lock: Lockfile, cwd: string): string | undefined {
	const here = real(cwd);
	let best: string | undefined;
	let depth = -1;
	for (const folder of lock.workspaceFolders) {
		const length = containment([folder], here);
		if (length > depth) {
			best = folder;
			depth = length;
		}
	}
	return best;
}
