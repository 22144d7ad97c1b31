//! The files that changed since the baseline, each read for the review:
//! its text then (from the baseline) and now (from disk), or why it is not
//! shown in the two-pane diff (binary, too large, a link, a repository).

use serde_json::{Value as Json, json};

use super::Project;
use crate::confine::{Confined, confine};
use crate::snapshot::{Blob, Difference};

/// Larger files are listed, not shown.
pub const MAX_FILE_BYTES: usize = 8 << 20;

/// How a file differs from its baseline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    New,
    Deleted,
    Modified,
}

impl Change {
    pub fn as_str(self) -> &'static str {
        match self {
            Change::New => "new",
            Change::Deleted => "deleted",
            Change::Modified => "modified",
        }
    }
}

/// One changed file.
pub struct Listed {
    /// Absolute, spelled from the root as Neovim names it.
    pub path: String,
    /// Relative to the project root, for the person.
    pub relative: String,
    /// Relative to the store's work tree, as the baseline names it.
    pub in_tree: String,
    pub change: Change,
    pub shown: Shown,
}

/// Whether the file can be shown in the two-pane diff.
pub enum Shown {
    Yes(Texts),
    /// Not shown, for the reason given; `settle`: it is settled as it is
    /// now (the person was told), else listed again next time.
    No {
        why: String,
        settle: Option<Blob>,
    },
}

/// A file's texts on both sides, exactly as their bytes are.
pub struct Texts {
    pub confined: Confined,
    /// `None`: no such file in the baseline.
    pub before: Option<(String, Blob)>,
    /// `None`: the file is gone now.
    pub now: Option<String>,
    /// Its mode now (the baseline's for a deleted file).
    pub mode: Blob,
}

/// Reads each of `differences` for the review.
pub async fn read(project: &Project, differences: Vec<Difference>) -> Vec<Listed> {
    let mut listed = Vec::with_capacity(differences.len());
    for difference in differences {
        listed.push(read_one(project, difference).await);
    }
    listed
}

async fn read_one(project: &Project, difference: Difference) -> Listed {
    let relative = match project.prefix.as_str() {
        "" => difference.path.clone(),
        prefix => difference
            .path
            .strip_prefix(prefix)
            .map(|rest| rest.trim_start_matches('/').to_owned())
            .unwrap_or_else(|| difference.path.clone()),
    };
    let path = format!("{}/{relative}", project.root.given().trim_end_matches('/'));
    let change = match (&difference.before, &difference.after) {
        (None, _) => Change::New,
        (_, None) => Change::Deleted,
        _ => Change::Modified,
    };
    let shown = shown(project, &path, &difference).await;
    Listed {
        path,
        relative,
        in_tree: difference.path,
        change,
        shown,
    }
}

async fn shown(project: &Project, path: &str, difference: &Difference) -> Shown {
    let settle_as_is = |why: &str| Shown::No {
        why: why.to_owned(),
        settle: difference.after.clone(),
    };
    let later = |why: String| Shown::No { why, settle: None };
    let sides = [&difference.before, &difference.after];
    if sides
        .iter()
        .any(|side| side.as_ref().is_some_and(|b| !b.is_file()))
    {
        return settle_as_is("a symbolic link or a nested repository: not shown, kept as it is");
    }
    if let (Some(before), Some(after)) = (&difference.before, &difference.after)
        && before.id == after.id
    {
        return settle_as_is("only its mode changed: kept as it is");
    }
    let confined = match confine(std::slice::from_ref(&project.root), path, true) {
        Ok(confined) => confined,
        Err(escape) => return later(escape.explain(path, "the project")),
    };
    let before = match &difference.before {
        None => None,
        Some(blob) => match project.store.read(&blob.id, MAX_FILE_BYTES).await {
            Ok(Some(bytes)) => match text(bytes) {
                Some(text) => Some((text, blob.clone())),
                None => return settle_as_is("binary: not shown, kept as it is"),
            },
            Ok(None) => return settle_as_is("too large to show: kept as it is"),
            Err(error) => return later(format!("its baseline cannot be read: {error}")),
        },
    };
    let now = match &difference.after {
        None => None,
        Some(_) => match confined.read().await {
            Ok(bytes) if bytes.len() > MAX_FILE_BYTES => {
                return settle_as_is("too large to show: kept as it is");
            }
            Ok(bytes) => match text(bytes) {
                Some(text) => Some(text),
                None => return settle_as_is("binary: not shown, kept as it is"),
            },
            Err(error) => return later(format!("cannot be read now: {error}")),
        },
    };
    let mode = difference
        .after
        .clone()
        .or_else(|| difference.before.clone())
        .expect("a difference has a side");
    Shown::Yes(Texts {
        confined,
        before,
        now,
        mode,
    })
}

/// The bytes as text, unless they are binary.
fn text(bytes: Vec<u8>) -> Option<String> {
    if bytes.contains(&0) {
        return None;
    }
    String::from_utf8(bytes).ok()
}

/// What Lua lists for the person.
pub fn describe(listed: &Listed) -> Json {
    let mut fields = json!({
        "relative": listed.relative,
        "change": listed.change.as_str(),
    });
    if let Shown::No { why, .. } = &listed.shown {
        fields["note"] = json!(why);
    }
    super::file_json(&listed.path, fields)
}
