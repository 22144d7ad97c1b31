//! git, run by the host for the VCS tools: asynchronously (never on
//! Neovim's thread), each run bounded in time and in what it may print.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use tokio::io::AsyncReadExt;
use tokio::process::Command;

use super::Failure;

/// A git that takes longer (a lock, a huge repository) is killed.
const TIMEOUT: Duration = Duration::from_secs(10);

/// What one run printed.
#[derive(Debug)]
pub struct Output {
    pub stdout: Vec<u8>,
    /// Past `max_bytes`, the rest of stdout was not read.
    pub cut: bool,
    /// 0 for success; git's own code otherwise.
    pub code: i32,
    /// The start of stderr, for messages.
    pub stderr: String,
}

impl Output {
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.stdout).into_owned()
    }
}

/// `git -C dir args…`, reading at most `max_bytes` of its output.
pub async fn run(dir: &Path, args: &[&str], max_bytes: usize) -> Result<Output, Failure> {
    let mut child = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        // Never a pager, a prompt or a colour code.
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_PAGER", "cat")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| Failure(format!("cannot run git: {e}")))?;
    let (Some(stdout), Some(stderr)) = (child.stdout.take(), child.stderr.take()) else {
        return Err(Failure("git's output is not readable".into()));
    };
    let work = async {
        let mut out = Vec::new();
        let mut limited = stdout.take(max_bytes as u64 + 1);
        let mut errors = Vec::new();
        let mut error_head = stderr.take(4096);
        let (read, _) = tokio::join!(
            limited.read_to_end(&mut out),
            error_head.read_to_end(&mut errors)
        );
        read.map_err(|e| Failure(format!("cannot read git's output: {e}")))?;
        let cut = out.len() > max_bytes;
        out.truncate(max_bytes);
        // Past the bound git may still be writing: stop it.
        if cut {
            let _ = child.start_kill();
        }
        let status = child
            .wait()
            .await
            .map_err(|e| Failure(format!("git did not finish: {e}")))?;
        Ok(Output {
            stdout: out,
            cut,
            code: status.code().unwrap_or(-1),
            stderr: String::from_utf8_lossy(&errors).trim().to_owned(),
        })
    };
    match tokio::time::timeout(TIMEOUT, work).await {
        Ok(output) => output,
        // The child is dropped with the future, and so killed.
        Err(_) => Err(Failure(format!(
            "git {} took more than {} s and was stopped",
            args.first().copied().unwrap_or_default(),
            TIMEOUT.as_secs()
        ))),
    }
}

/// The top of the work tree holding `dir`, or why there is none.
pub async fn top(dir: &Path) -> Result<String, Failure> {
    let out = run(dir, &["rev-parse", "--show-toplevel"], 4096).await?;
    if out.code != 0 {
        return Err(Failure(format!(
            "{} is not in a git repository ({})",
            dir.display(),
            out.stderr
        )));
    }
    Ok(out.text().trim_end_matches('\n').to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn output_is_cut_at_its_bound_and_failures_keep_their_code() {
        let dir = crate::scratch::Scratch::new("git-run");
        let version = run(&dir, &["--version"], 4).await.unwrap();
        assert_eq!(version.stdout, b"git ");
        assert!(version.cut);
        let outside = top(&dir).await.unwrap_err().0;
        assert!(outside.contains("not in a git repository"), "{outside}");
        let bad = run(&dir, &["no-such-command"], 100).await.unwrap();
        assert_ne!(bad.code, 0);
        assert!(!bad.stderr.is_empty());
    }
}
