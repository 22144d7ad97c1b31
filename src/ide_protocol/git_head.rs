//! What each reviewed file was at git HEAD, so the review shows what
//! changed: `git show` run here, never on Neovim's thread, a few files at a
//! time, each run bounded in time and size. A file git cannot show (no
//! repository, not in HEAD, git missing or hung) simply has no HEAD side.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use futures_util::{StreamExt, stream};
use tokio::io::AsyncReadExt;
use tokio::process::Command;

/// How many `git show` run at once.
const PARALLEL: usize = 4;
/// A `git show` that takes longer (a lock, a slow network filesystem) is
/// killed; the review opens without that file's HEAD side.
const TIMEOUT: Duration = Duration::from_secs(10);
/// A HEAD version larger than this is not shown.
const MAX_BYTES: u64 = 16 * 1024 * 1024;

/// The lines at HEAD of each of `files` (relative to `root`) git has.
pub async fn heads(root: &Path, files: &[String]) -> BTreeMap<String, Vec<String>> {
    let shown: Vec<(String, Option<Vec<String>>)> = stream::iter(files.to_vec())
        .map(|file| {
            let root = root.to_path_buf();
            async move {
                let lines = head(&root, &file).await;
                (file, lines)
            }
        })
        .buffer_unordered(PARALLEL)
        .collect()
        .await;
    shown
        .into_iter()
        .filter_map(|(file, lines)| Some((file, lines?)))
        .collect()
}

/// `file` at HEAD as lines (as a buffer shows a DOS file: no `\r`).
async fn head(root: &Path, file: &str) -> Option<Vec<String>> {
    // `HEAD:./path` is relative to `-C root`, which need not be the top.
    let mut child = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(["show", &format!("HEAD:./{file}")])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .ok()?;
    let mut stdout = child.stdout.take()?.take(MAX_BYTES + 1);
    let run = async {
        let mut bytes = Vec::new();
        stdout.read_to_end(&mut bytes).await.ok()?;
        if bytes.len() as u64 > MAX_BYTES {
            return None;
        }
        child.wait().await.ok()?.success().then_some(bytes)
    };
    // On timeout or a refusal the child is dropped, and so killed.
    let bytes = tokio::time::timeout(TIMEOUT, run).await.ok()??;
    Some(lines(&String::from_utf8_lossy(&bytes)))
}

fn lines(text: &str) -> Vec<String> {
    if text.is_empty() {
        return vec![];
    }
    let body = text.strip_suffix('\n').unwrap_or(text);
    body.split('\n')
        .map(|line| line.strip_suffix('\r').unwrap_or(line).to_owned())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_split_as_a_buffer_shows_them() {
        assert_eq!(lines("a\r\nb\r\n"), ["a", "b"]);
        assert_eq!(lines("a\nb"), ["a", "b"]);
        assert_eq!(lines("a\n\n"), ["a", ""]);
        assert!(lines("").is_empty());
        assert_eq!(lines("\n"), [""]);
    }

    #[tokio::test]
    async fn files_outside_git_have_no_head() {
        let root = crate::scratch::Scratch::new("git-head");
        std::fs::write(root.join("a.txt"), "a\n").unwrap();
        assert!(heads(&root, &["a.txt".into()]).await.is_empty());
    }
}
