//! The pi extensions in `pi/` (`/review`, `/nvim`): typechecked against the
//! published types of both pi distributions, the pinned
//! `@mariozechner/pi-coding-agent` 0.73 of `pi/package-lock.json` and the
//! newest `@earendil-works/pi-coding-agent` of
//! `pi/earendil/package-lock.json` (which needs Node >= 22.19; its
//! optional `node-linux-*` package brings one), and run in the real pi
//! runtime of both by their node tests. The packages are installed here
//! with `npm ci` when missing, so `cargo test` alone runs them; without
//! node or npm these tests fail and say so, rather than skip.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::repo_root;

fn pi_dir() -> &'static Path {
    static DIR: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| repo_root().join("pi"))
}

const NEEDED: [&str; 3] = [
    "node_modules/.bin/tsc",
    "node_modules/@mariozechner/pi-coding-agent/dist/cli.js",
    "node_modules/@modelcontextprotocol/sdk/dist/cjs/client/index.js",
];

/// Whether `npm ci` ran in `dir` since its `package-lock.json` last changed
/// (npm writes `node_modules/.package-lock.json`) and `needed` are there.
pub(crate) fn installed_and_current(dir: &Path, needed: &[&str]) -> bool {
    let modified = |path: &str| {
        std::fs::metadata(dir.join(path))
            .and_then(|meta| meta.modified())
            .ok()
    };
    let current = match (
        modified("node_modules/.package-lock.json"),
        modified("package-lock.json"),
    ) {
        (Some(installed), Some(locked)) => installed >= locked,
        _ => false,
    };
    current && needed.iter().all(|needed| dir.join(needed).exists())
}

/// `npm ci` in `dir` unless its packages are installed and current.
fn npm_ci(dir: &Path, needed: &[&str]) {
    if installed_and_current(dir, needed) {
        return;
    }
    run_in(
        dir,
        "npm",
        &["ci", "--no-audit", "--no-fund", "--ignore-scripts"],
        &[],
    );
    for needed in needed {
        assert!(
            dir.join(needed).exists(),
            "{}/{needed} is missing after `npm ci`",
            dir.display()
        );
    }
}

static INSTALL: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Installs pi/'s pinned dev dependencies once when they are missing or
/// older than the lockfile; panics with the fix when node or npm is not there.
pub fn require_node_deps() {
    let _one_at_a_time = INSTALL.lock().unwrap_or_else(|e| e.into_inner());
    let node = Command::new("node").arg("--version").output();
    assert!(
        node.as_ref().is_ok_and(|o| o.status.success()),
        "node is not installed (needs Node >= 20); the pi extension tests cannot run: {node:?}"
    );
    npm_ci(pi_dir(), &NEEDED);
}

/// One pi distribution the extensions must work in.
pub struct Pi {
    /// For messages: which pi this is.
    pub name: &'static str,
    /// Its `dist/cli.js`.
    pub cli: PathBuf,
    /// The Node that runs it.
    pub node: PathBuf,
    /// Its package directory (`dist/index.js` is the SDK).
    pub package: PathBuf,
}

/// The pinned `@mariozechner/pi-coding-agent` 0.73, on the system's Node.
pub fn older_pi() -> Pi {
    require_node_deps();
    let package = pi_dir().join("node_modules/@mariozechner/pi-coding-agent");
    Pi {
        name: "@mariozechner/pi-coding-agent 0.73",
        cli: package.join("dist/cli.js"),
        node: PathBuf::from("node"),
        package,
    }
}

fn newest_dir() -> PathBuf {
    pi_dir().join("earendil")
}

/// `major.minor` of `node --version` at `node`, if it runs.
fn node_version(node: &Path) -> Option<(u32, u32)> {
    let out = Command::new(node).arg("--version").output().ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    let mut parts = text.trim().trim_start_matches('v').split('.');
    Some((parts.next()?.parse().ok()?, parts.next()?.parse().ok()?))
}

/// The newest pi, `@earendil-works/pi-coding-agent` of
/// `pi/earendil/package-lock.json`, on a Node >= 22.19: the system's when
/// it is new enough, else the one `node-linux-<arch>` installed.
pub fn newest_pi() -> Pi {
    require_node_deps();
    {
        let _one_at_a_time = INSTALL.lock().unwrap_or_else(|e| e.into_inner());
        npm_ci(
            &newest_dir(),
            &["node_modules/@earendil-works/pi-coding-agent/dist/cli.js"],
        );
    }
    let new_enough = |node: &Path| node_version(node).is_some_and(|v| v >= (22, 19));
    let arch = match std::env::consts::ARCH {
        "x86_64" => "x64",
        "aarch64" => "arm64",
        other => other,
    };
    let packaged = newest_dir().join(format!("node_modules/node-linux-{arch}/bin/node"));
    let node = [PathBuf::from("node"), packaged]
        .into_iter()
        .find(|node| new_enough(node))
        .unwrap_or_else(|| {
            panic!(
                "no Node >= 22.19 for the newest pi: the system's is older and pi/earendil has no \
                 node-linux-{arch} (install Node >= 22.19)"
            )
        });
    let package = newest_dir().join("node_modules/@earendil-works/pi-coding-agent");
    Pi {
        name: "@earendil-works/pi-coding-agent 1.6",
        cli: package.join("dist/cli.js"),
        node,
        package,
    }
}

pub(crate) fn run_in(
    dir: &Path,
    program: impl AsRef<std::ffi::OsStr>,
    args: &[&str],
    env: &[(&str, &Path)],
) {
    let program = program.as_ref();
    let mut command = Command::new(program);
    command.args(args).current_dir(dir);
    for (key, value) in env {
        command.env(key, value);
    }
    let out = command
        .output()
        .unwrap_or_else(|e| panic!("could not run {}: {e}", program.display()));
    assert!(
        out.status.success(),
        "`{} {}` in {} failed ({}):\n--- stdout ---\n{}\n--- stderr ---\n{}",
        program.display(),
        args.join(" "),
        dir.display(),
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
}

#[test]
fn pi_extensions_typecheck_against_both_published_pi_types() {
    // The older pi's types and Node 20's; the newest pi's and Node 22's.
    older_pi();
    newest_pi();
    // --no-install: never fetch a `tsc` from the registry instead of ours.
    for project in [".", "earendil"] {
        run_in(
            pi_dir(),
            "npx",
            &["--no-install", "tsc", "--noEmit", "-p", project],
            &[],
        );
    }
}

/// The node tests, in the real runtime of `pi`; files, not a directory or
/// glob: node's --test reads those differently across versions.
fn node_tests(pi: &Pi) {
    let mut files: Vec<String> = std::fs::read_dir(pi_dir().join("test"))
        .expect("pi/test")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.ends_with(".test.mjs"))
        .map(|n| format!("test/{n}"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no pi/test/*.test.mjs");
    let mut args = vec!["--test"];
    args.extend(files.iter().map(String::as_str));
    run_in(
        pi_dir(),
        &pi.node,
        &args,
        &[("PI_CLI", &pi.cli), ("PI_PACKAGE", &pi.package)],
    );
}

#[test]
fn pi_extensions_pass_their_node_tests_in_the_older_pi() {
    node_tests(&older_pi());
}

#[test]
fn pi_extensions_pass_their_node_tests_in_the_newest_pi() {
    node_tests(&newest_pi());
}
