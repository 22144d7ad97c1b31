//! The pi extension in `pi/` (`/review`): typechecked against the published
//! pi types and run in the real pi runtime by its node tests. Both need the
//! pinned packages of `pi/package-lock.json`: installed here with `npm ci`
//! when missing, so `cargo test` alone runs them; without node or npm these
//! tests fail and say so, rather than skip.

use std::path::Path;
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

/// Whether `npm ci` ran since `package-lock.json` last changed (npm writes
/// `node_modules/.package-lock.json`) and the packages the tests use are there.
fn installed_and_current() -> bool {
    let modified = |path: &str| {
        std::fs::metadata(pi_dir().join(path))
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
    current && NEEDED.iter().all(|needed| pi_dir().join(needed).exists())
}

/// Installs pi/'s pinned dev dependencies once when they are missing or
/// older than the lockfile; panics with the fix when node or npm is not there.
pub fn require_node_deps() {
    static INSTALL: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one_at_a_time = INSTALL.lock().unwrap_or_else(|e| e.into_inner());
    let node = Command::new("node").arg("--version").output();
    assert!(
        node.as_ref().is_ok_and(|o| o.status.success()),
        "node is not installed (needs Node >= 20); the pi extension tests cannot run: {node:?}"
    );
    if installed_and_current() {
        return;
    }
    run(
        "npm",
        &["ci", "--no-audit", "--no-fund", "--ignore-scripts"],
    );
    for needed in NEEDED {
        assert!(
            pi_dir().join(needed).exists(),
            "pi/{needed} is missing after `npm ci` in pi/"
        );
    }
}

fn run(program: &str, args: &[&str]) {
    let out = Command::new(program)
        .args(args)
        .current_dir(pi_dir())
        .output()
        .unwrap_or_else(|e| panic!("could not run {program}: {e}"));
    assert!(
        out.status.success(),
        "`{program} {}` in pi/ failed ({}):\n--- stdout ---\n{}\n--- stderr ---\n{}",
        args.join(" "),
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
}

#[test]
fn pi_extensions_typecheck_against_published_pi_types() {
    require_node_deps();
    // --no-install: never fetch a `tsc` from the registry instead of ours.
    run("npx", &["--no-install", "tsc", "--noEmit", "-p", "."]);
}

#[test]
fn pi_extensions_pass_their_node_tests() {
    require_node_deps();
    // Files, not a directory or glob: node's --test reads those differently
    // across versions.
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
    run("node", &args);
}
