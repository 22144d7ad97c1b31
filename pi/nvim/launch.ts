/**
 * Opening a Neovim for pi's cwd when none runs: inside tmux, `nvim` in a new
 * pane beside pi's. Executables are found by reading `PATH` (no probe is
 * spawned) and started with fixed arguments, never through a shell.
 */

import { spawn } from "node:child_process";
import { accessSync, constants, statSync } from "node:fs";
import { delimiter, isAbsolute, join } from "node:path";

/** The absolute path of executable `name` on `PATH`, or undefined. Relative `PATH` entries are skipped. */
export function findExecutable(name: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
	for (const dir of (env.PATH ?? "").split(delimiter)) {
		if (!dir || !isAbsolute(dir)) continue;
		const path = join(dir, name);
		try {
			if (!statSync(path).isFile()) continue;
			accessSync(path, constants.X_OK);
			return path;
		} catch {
			// not there, or not executable
		}
	}
	return undefined;
}

/** How to open Neovim from here: a tmux pane, or why not. */
export type Launcher = { tmux: string; nvim: string; pane?: string } | { unavailable: string };

/** Whether pi runs inside tmux with `tmux` and `nvim` on `PATH`. */
export function launcher(env: NodeJS.ProcessEnv = process.env): Launcher {
	if (!env.TMUX) return { unavailable: "pi does not run inside tmux" };
	const tmux = findExecutable("tmux", env);
	if (!tmux) return { unavailable: "tmux is not on PATH" };
	const nvim = findExecutable("nvim", env);
	if (!nvim) return { unavailable: "nvim is not on PATH" };
	// pi's own pane, so the split opens beside it whichever pane has focus.
	const pane = env.TMUX_PANE && /^%\d+$/.test(env.TMUX_PANE) ? env.TMUX_PANE : undefined;
	return pane ? { tmux, nvim, pane } : { tmux, nvim };
}

/**
 * tmux's arguments for a pane running `nvim` in `cwd`. The command is given
 * as two arguments (`nvim --`), which tmux executes directly instead of
 * through `sh -c`. The lock directory pi reads goes to Neovim too: a new
 * pane gets tmux's environment, not pi's.
 */
export function tmuxArguments(how: { nvim: string; pane?: string }, cwd: string, env: NodeJS.ProcessEnv = process.env): string[] {
	const args = ["split-window", "-h", "-c", cwd];
	if (how.pane) args.push("-t", how.pane);
	if (env.PI_IDE_LOCK_DIR) args.push("-e", `PI_IDE_LOCK_DIR=${env.PI_IDE_LOCK_DIR}`);
	args.push(how.nvim, "--");
	return args;
}

/** Runs tmux to open the pane; resolves once tmux has, or with why it could not. */
export function openPane(how: { tmux: string; nvim: string; pane?: string }, cwd: string): Promise<string | undefined> {
	return new Promise((resolve) => {
		let output = "";
		const child = spawn(how.tmux, tmuxArguments(how, cwd), { stdio: ["ignore", "ignore", "pipe"], shell: false });
		child.stderr?.on("data", (d) => {
			if (output.length < 2_000) output += String(d);
		});
		child.once("error", (err) => resolve(`${how.tmux} could not start: ${err.message}`));
		child.once("close", (code) =>
			resolve(code === 0 ? undefined : `${how.tmux} split-window failed (exit ${code})${output ? `: ${output.trim()}` : ""}`),
		);
	});
}

/** What to do by hand when the bridge cannot connect or open Neovim itself. */
export function startByHand(cwd: string): string {
	return (
		`start Neovim in ${cwd} (cd ${JSON.stringify(cwd)} && nvim) and run /nvim connect again, ` +
		"or run /nvim connect <url> with the URL :PiIde mcp shows in the Neovim to use"
	);
}
