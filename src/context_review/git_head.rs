//! What each reviewed file was at git HEAD, so the review shows what
//! changed: `git show` run here, never on Neovim's thread, a few files at a
//! time, each run bounded in time and size ([`crate::git`]). A file git cannot show (no
//! repository, not in HEAD, git missing or hung) simply has no HEAD side.

use std::collections::BTreeMap;
use std::path::Path;

use futures_util::{StreamExt, stream};

/// How many `git show` run at once.
const PARALLEL: usize = 4;
/// A HEAD version larger than this is not shown.
const MAX_BYTES: usize = 16 * 1024 * 1024;

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

/// `file` at HEAD as lines (as a buffer shows a DOS file: no `\r`); a
/// `git show` that fails, is cut or stopped gives none.
async fn head(root: &Path, file: &str) -> Option<Vec<String>> {
    // `HEAD:./path` is relative to `-C root`, which need not be the top.
    let shown = crate::git::run(root, &["show", &format!("HEAD:./{file}")], MAX_BYTES)
        .await
        .ok()?;
    (shown.code == 0 && !shown.cut).then(|| lines(&String::from_utf8_lossy(&shown.stdout)))
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
