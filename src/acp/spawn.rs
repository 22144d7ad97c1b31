//! Starting an agent: its argv as given (no shell), its environment on
//! top of Neovim's, the project root as its cwd. Its stdout and stdin are
//! the protocol; its stderr goes to the host's log, and its last lines
//! say why it stopped when it stops unasked.

use std::collections::{BTreeMap, VecDeque};
use std::process::Stdio;
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command};

/// What Neovim exports so CLIs started in it find its IDE companion and
/// WebSocket. An agent in the chat reaches Neovim through ACP instead: in
/// IDE mode as well it would show each edit twice (its permission, then
/// its `openDiff`), or fail the edit when that diff is refused.
const IDE_VARIABLES: &[&str] = &[
    "GEMINI_CLI_IDE_PID",
    "GEMINI_CLI_IDE_SERVER_PORT",
    "QWEN_CODE_IDE_SERVER_PORT",
    "CLAUDE_CODE_SSE_PORT",
    "ENABLE_IDE_INTEGRATION",
];

/// How many of the agent's last stderr lines are kept for its epitaph.
const KEPT_STDERR_LINES: usize = 5;
/// A longer stderr line is left out.
const MAX_STDERR_LINE: usize = 2000;

pub struct Spawned {
    pub child: Child,
    pub stdin: ChildStdin,
    pub stdout: ChildStdout,
    pub stderr: Tail,
}

/// The agent's last stderr lines.
#[derive(Clone, Default)]
pub struct Tail(Arc<Mutex<VecDeque<String>>>);

impl Tail {
    pub fn lines(&self) -> Vec<String> {
        crate::mutex::lock(&self.0).iter().cloned().collect()
    }

    fn push(&self, line: String) {
        let mut lines = crate::mutex::lock(&self.0);
        if lines.len() == KEPT_STDERR_LINES {
            lines.pop_front();
        }
        lines.push_back(line);
    }
}

/// Starts `cmd` in `cwd` with `env` added; says why not in words.
pub fn agent(
    name: &str,
    cmd: &[String],
    env: &BTreeMap<String, String>,
    cwd: &str,
) -> Result<Spawned, String> {
    let Some((program, args)) = cmd.split_first() else {
        return Err(format!("agent {name} has no command"));
    };
    let mut command = Command::new(program);
    for name in IDE_VARIABLES {
        command.env_remove(name);
    }
    // Gemini CLI finds IDE companions in `<tmpdir>/gemini/ide` whatever its
    // environment says; a temp directory of the chat's own has none.
    if let Some(tmp) = private_tmp() {
        command.env("TMPDIR", tmp);
    }
    let mut child = command
        .args(args)
        .envs(env)
        .current_dir(cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|error| match error.kind() {
            std::io::ErrorKind::NotFound => format!("{program} is not installed (not on PATH)"),
            _ => format!("cannot start {program}: {error}"),
        })?;
    let (Some(stdin), Some(stdout), Some(stderr)) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        return Err(format!("{program} started without its pipes"));
    };
    let tail = Tail::default();
    crate::task::spawn(log_stderr(name.to_owned(), stderr, tail.clone()));
    Ok(Spawned {
        child,
        stdin,
        stdout,
        stderr: tail,
    })
}

/// `<tmp>/pi-ide-acp-<uid>`, 0700: the chat's agents' temp directory.
fn private_tmp() -> Option<std::path::PathBuf> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
    // SAFETY: getuid cannot fail and has no preconditions.
    let uid = unsafe { libc::getuid() };
    let dir = std::env::temp_dir().join(format!("pi-ide-acp-{uid}"));
    let _ = std::fs::DirBuilder::new().mode(0o700).create(&dir);
    let meta = std::fs::symlink_metadata(&dir).ok()?;
    // Ours, a directory, and closed to others, or not used.
    let ours = meta.is_dir() && meta.uid() == uid && meta.permissions().mode() & 0o077 == 0;
    ours.then_some(dir)
}

/// Copies the agent's stderr into the log, line by line, keeping the last
/// few. A line longer than [`MAX_STDERR_LINE`] is skipped, and reading
/// goes on: a stalled reader would block the agent on its next write.
async fn log_stderr(name: String, stderr: ChildStderr, tail: Tail) {
    let mut reader = BufReader::new(stderr);
    let mut line: Vec<u8> = Vec::new();
    let mut skipping = false;
    loop {
        let buf = match reader.fill_buf().await {
            Ok([]) | Err(_) => return,
            Ok(buf) => buf,
        };
        let end = buf.iter().position(|&b| b == b'\n');
        let chunk = &buf[..end.unwrap_or(buf.len())];
        if !skipping && line.len() + chunk.len() > MAX_STDERR_LINE {
            skipping = true;
            line.clear();
        }
        if !skipping {
            line.extend_from_slice(chunk);
        }
        let used = end.map_or(buf.len(), |at| at + 1);
        reader.consume(used);
        if end.is_some() {
            let text = String::from_utf8_lossy(&line);
            let text = text.trim_end();
            if !skipping && !text.is_empty() {
                tracing::info!("acp {name} stderr: {text}");
                tail.push(text.to_owned());
            }
            line.clear();
            skipping = false;
        }
    }
}
