//! git, run by the host (the VCS tools, a review's HEAD side): never on
//! Neovim's thread, never through a shell, each run bounded in time and in
//! what it may print, and killed when its future is dropped.

use std::ffi::OsString;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::Command;

/// A git that takes longer (a lock, a huge repository, a slow network
/// filesystem) is killed.
const TIMEOUT: Duration = Duration::from_secs(10);
/// What is kept of stderr, for messages; the rest is read and dropped so
/// git never blocks on a full pipe.
const STDERR_KEPT: usize = 4096;

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

/// How one run differs from the plain one: its environment, its bound in
/// time, what it reads on stdin.
pub struct Options {
    /// Set for this run only (a private index or object store, say).
    pub env: Vec<(&'static str, OsString)>,
    /// Killed past this.
    pub timeout: Duration,
    /// Written to git's stdin, which is then closed; none: stdin is empty.
    pub input: Option<Vec<u8>>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            env: Vec::new(),
            timeout: TIMEOUT,
            input: None,
        }
    }
}

/// `git -C dir args…`, reading at most `max_bytes` of its output; an error
/// says why git could not run or finish.
pub async fn run(dir: &Path, args: &[&str], max_bytes: usize) -> Result<Output, String> {
    run_with(dir, args, max_bytes, Options::default()).await
}

/// [`run`], with `options`.
pub async fn run_with(
    dir: &Path,
    args: &[&str],
    max_bytes: usize,
    options: Options,
) -> Result<Output, String> {
    let Options {
        env,
        timeout,
        input,
    } = options;
    let mut child = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        // Never a pager, a prompt or a colour code.
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_PAGER", "cat")
        .envs(env)
        .stdin(match input {
            Some(_) => Stdio::piped(),
            None => Stdio::null(),
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("cannot run git: {e}"))?;
    let (Some(stdout), Some(stderr)) = (child.stdout.take(), child.stderr.take()) else {
        return Err("git's output is not readable".into());
    };
    let stdin = child.stdin.take();
    let work = async {
        // Fed beside the reads, so neither side waits on a full pipe; a git
        // that stops reading early only ends the write.
        let feed = async {
            if let (Some(mut stdin), Some(input)) = (stdin, input) {
                let _ = stdin.write_all(&input).await;
            }
        };
        let mut out = Vec::new();
        let read_out = async {
            let read = stdout
                .take(max_bytes as u64 + 1)
                .read_to_end(&mut out)
                .await;
            // Past the bound git may still be writing (and so never close
            // stderr): stop it.
            if out.len() > max_bytes {
                let _ = child.start_kill();
            }
            read
        };
        let (read, errors, ()) = tokio::join!(read_out, head_of(stderr), feed);
        read.map_err(|e| format!("cannot read git's output: {e}"))?;
        let cut = out.len() > max_bytes;
        out.truncate(max_bytes);
        let status = child
            .wait()
            .await
            .map_err(|e| format!("git did not finish: {e}"))?;
        Ok(Output {
            stdout: out,
            cut,
            code: status.code().unwrap_or(-1),
            stderr: String::from_utf8_lossy(&errors).trim().to_owned(),
        })
    };
    match tokio::time::timeout(timeout, work).await {
        Ok(output) => output,
        // The child is dropped with the future, and so killed.
        Err(_) => Err(format!(
            "git {} took more than {} s and was stopped",
            command_of(args),
            timeout.as_secs()
        )),
    }
}

/// The git command `args` run (`add` in `-c x=y add -A`), for messages.
fn command_of<'a>(args: &[&'a str]) -> &'a str {
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match *arg {
            "-c" => {
                args.next();
            }
            flag if flag.starts_with('-') => {}
            command => return command,
        }
    }
    ""
}

/// The first [`STDERR_KEPT`] bytes of `stream`, read to its end.
async fn head_of(mut stream: impl AsyncRead + Unpin) -> Vec<u8> {
    let mut head = Vec::new();
    let _ = (&mut stream)
        .take(STDERR_KEPT as u64)
        .read_to_end(&mut head)
        .await;
    let _ = tokio::io::copy(&mut stream, &mut tokio::io::sink()).await;
    head
}

/// The top of the work tree holding `dir`, or why there is none.
pub async fn top(dir: &Path) -> Result<String, String> {
    let out = run(dir, &["rev-parse", "--show-toplevel"], 4096).await?;
    if out.code != 0 {
        return Err(format!(
            "{} is not in a git repository ({})",
            dir.display(),
            out.stderr
        ));
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
        let outside = top(&dir).await.unwrap_err();
        assert!(outside.contains("not in a git repository"), "{outside}");
        let bad = run(&dir, &["no-such-command"], 100).await.unwrap();
        assert_ne!(bad.code, 0);
        assert!(!bad.stderr.is_empty());
    }

    #[tokio::test]
    async fn output_past_the_bound_stops_git_at_once() {
        let dir = crate::scratch::Scratch::new("git-long");
        assert_eq!(run(&dir, &["init", "-q"], 100).await.unwrap().code, 0);
        // git echoes an unknown revision on stdout, more than a pipe holds,
        // and keeps stderr open until it has written it all.
        let long = "x".repeat(100 * 1024);
        let cut = run(&dir, &["rev-parse", &long], 100).await.unwrap();
        assert!(cut.cut);
        assert_eq!(cut.stdout.len(), 100);
        let whole = run(&dir, &["rev-parse", &long], 1 << 20).await.unwrap();
        assert!(!whole.cut);
        assert_ne!(whole.code, 0);
        assert!(whole.stderr.len() <= STDERR_KEPT, "{}", whole.stderr.len());
    }
}
