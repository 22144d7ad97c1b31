//! Everything Lua needs to draw a diff, read and checked off the UI thread:
//! both sides as lines and, for large files, the changed regions, so Neovim
//! need not compute them.

use std::path::Path;

use serde::Serialize;

use super::hunks::{DEADLINE, Hunk, hunks, is_large};
use super::text::Lines;
use super::words::words;

/// Both sides of a diff, ready to show.
#[derive(Debug, Serialize)]
pub struct Prepared {
    pub original: Lines,
    /// False for a file the agent creates.
    pub original_exists: bool,
    pub proposed: Lines,
    /// For large files: the changed regions, drawn by Lua instead of
    /// Neovim's diff mode.
    pub hunks: Option<Vec<Hunk>>,
    /// With `hunks`: the words that differ in each hunk's changed lines
    /// (see [`super::words`]).
    pub words: Option<Vec<u32>>,
}

/// What Lua's `open_diff` receives.
#[derive(Debug, Serialize)]
pub struct DiffView {
    pub id: u64,
    pub tab_name: String,
    pub path: String,
    pub original_path: String,
    /// `pi`, `claude` or `mcp`, for the winbar.
    pub client: &'static str,
    /// The connection that asked (none for MCP), so Lua can tell which
    /// agent terminal it came from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_id: Option<u64>,
    #[serde(flatten)]
    pub sides: Prepared,
    /// Set for edits the host applies itself once accepted (MCP tools).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub edit: Option<EditInfo>,
}

/// What the winbar says about an edit of an MCP tool, and which diffs
/// belong together (accept-all / reject-all).
#[derive(Debug, Clone, Serialize)]
pub struct EditInfo {
    /// Shared by every file of one tool call.
    pub group: u64,
    /// This file's place in the group, from 1, and the group's size.
    pub index: usize,
    pub count: usize,
    /// The tool that asks, e.g. `rename_refactoring`.
    pub title: String,
    /// The left side is the file's buffer, unsaved edits included, rather
    /// than the file on disk.
    pub from_buffer: bool,
}

/// Reads the file on disk (off the UI thread) and checks both sides are text.
pub async fn prepare(
    old_file_path: &str,
    new_file_path: &str,
    new_file_contents: &str,
) -> Result<Prepared, String> {
    for path in [old_file_path, new_file_path] {
        if !Path::new(path).is_absolute() {
            return Err(format!("path is not absolute: {path:?}"));
        }
    }
    let (original, original_exists) = match tokio::fs::read(old_file_path).await {
        Ok(bytes) => (
            text_of(bytes).ok_or_else(|| format!("{} is not a text file", old_file_path))?,
            true,
        ),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => (String::new(), false),
        Err(error) => return Err(format!("cannot read {}: {error}", old_file_path)),
    };
    if new_file_contents.contains('\0') {
        return Err("the proposed contents are binary".into());
    }
    prepare_lines(
        Lines::split(&original),
        original_exists,
        Lines::split(new_file_contents),
    )
    .await
}

/// Both sides from text already read; large ones diffed off the UI thread.
pub async fn prepare_lines(
    original: Lines,
    original_exists: bool,
    proposed: Lines,
) -> Result<Prepared, String> {
    if !is_large(text_len(&original), text_len(&proposed)) {
        return Ok(Prepared {
            original,
            original_exists,
            proposed,
            hunks: None,
            words: None,
        });
    }
    let diffed = crate::task::spawn_blocking(move || {
        let found = hunks(&original.lines, &proposed.lines, DEADLINE);
        let changed = words(&original.lines, &proposed.lines, &found);
        (original, proposed, found, changed)
    })
    .await;
    let (original, proposed, found, changed) =
        diffed.map_err(|e| format!("diffing failed: {e}"))?;
    Ok(Prepared {
        original,
        original_exists,
        proposed,
        hunks: Some(found),
        words: Some(changed),
    })
}

fn text_len(lines: &Lines) -> usize {
    lines.lines.iter().map(|l| l.len() + 1).sum()
}

fn text_of(bytes: Vec<u8>) -> Option<String> {
    if bytes.contains(&0) {
        return None;
    }
    String::from_utf8(bytes).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scratch::Scratch;

    /// Prepares a diff of `path` against itself, as pi sends them.
    async fn refusal(path: &str, contents: &str) -> String {
        prepare(path, path, contents).await.unwrap_err()
    }

    #[tokio::test]
    async fn prepare_refuses_what_it_cannot_show() {
        let dir = Scratch::new("prepare");
        std::fs::write(dir.join("bin"), b"a\0b").unwrap();
        let at = |name: &str| dir.join(name).to_str().unwrap().to_owned();
        assert!(refusal("relative.txt", "x").await.contains("not absolute"));
        assert!(refusal(&at(""), "x").await.contains("cannot read"));
        assert!(refusal(&at("bin"), "x").await.contains("not a text file"));
        assert!(refusal(&at("new"), "a\0").await.contains("binary"));
        let new_file = at("missing/new.txt");
        let spec = prepare(&new_file, &new_file, "hi\n").await.unwrap();
        assert!(!spec.original_exists);
        assert_eq!(spec.proposed.lines, vec!["hi".to_string()]);
        assert!(spec.hunks.is_none(), "small files use Neovim's diff mode");
    }

    #[tokio::test]
    async fn large_files_come_with_hunks() {
        let old: String = (0..40_000).map(|i| format!("line {i}\n")).collect();
        let dir = Scratch::new("large");
        let path = dir.join("big.txt");
        std::fs::write(&path, &old).unwrap();
        let new = old.replacen("line 20000\n", "changed\n", 1);
        let path = path.to_str().unwrap();
        let spec = prepare(path, path, &new).await.unwrap();
        let hunks = spec.hunks.expect("above HOST_DIFF_BYTES the host diffs");
        assert_eq!(hunks.len(), 1);
        assert_eq!((hunks[0].old_start, hunks[0].new_start), (20_000, 20_000));
        assert_eq!(spec.words.unwrap(), [0, 0, 0, 0, 10, 0, 1, 0, 0, 7]);
    }
}
