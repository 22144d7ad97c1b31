//! `get_file_diff {pathInProject, staged?}`: one file's changes as a
//! unified diff from git: the file on disk against HEAD, or (staged) the
//! index against HEAD; an untracked file against nothing. Unsaved edits in
//! Neovim's buffer are not on disk, and so not in the diff.

use std::path::Path;

use serde::Deserialize;
use serde_json::json;

use async_trait::async_trait;

use super::{ProjectTool, Spec, object};
use crate::git;
use crate::project::{Answer, Failure, Project};
use crate::state::State;

/// A longer diff is cut here, and the answer says so.
const MAX_DIFF: usize = 256 * 1024;

pub struct GetFileDiff;

#[async_trait]
impl ProjectTool for GetFileDiff {
    type Args = Args;

    const SPEC: Spec = Spec::project(
        "get_file_diff",
        "A project file's changes as a unified diff (git; its headers name the file relative to the git root): the file on disk against HEAD, or with staged=true what is staged (the index against HEAD). An untracked file is shown whole as added. Unsaved edits in Neovim are not included.",
        || {
            object(
                json!({
                    "pathInProject": {"type": "string", "description": "Path relative to the project root"},
                    "staged": {"type": "boolean", "description": "Only what is staged: the index against HEAD (default false: the file on disk against HEAD)"},
                }),
                &["pathInProject"],
            )
        },
    );

    async fn run(_state: &State, project: &Project, args: Self::Args) -> Answer {
        let file = project.confine(&args.path_in_project)?;
        let relative = project.relative(&file.path);
        let root = Path::new(&project.root);
        let top = git::top(root).await?;
        // Relative to the top, as the diff's headers name it.
        let Some(path) = file
            .real
            .strip_prefix(&top)
            .ok()
            .and_then(|p| p.to_str())
            .map(str::to_owned)
        else {
            return Err(Failure(format!(
                "{relative} is not in the git repository {top}"
            )));
        };
        let path = path.as_str();
        let tracked = git::run(
            Path::new(&top),
            &["ls-files", "--error-unmatch", "--", path],
            4096,
        )
        .await?
        .code
            == 0;
        let common = ["--no-color", "--no-ext-diff", "--no-prefix"];
        let out = match (tracked, args.staged) {
            (false, true) => None,
            (false, false) => {
                let mut list = vec!["diff", "--no-index"];
                list.extend(common);
                list.extend(["--", "/dev/null", path]);
                Some(git::run(Path::new(&top), &list, MAX_DIFF).await?)
            }
            (true, staged) => {
                let mut list = vec!["diff", if staged { "--cached" } else { "HEAD" }];
                list.extend(common);
                list.extend(["--", path]);
                Some(git::run(Path::new(&top), &list, MAX_DIFF).await?)
            }
        };
        // `--no-index` answers 1 when the files differ.
        if let Some(out) = &out
            && out.code != 0
            && (out.code != 1 || tracked)
        {
            return Err(Failure(format!(
                "git diff of {relative} failed: {}",
                out.stderr
            )));
        }
        let (diff, cut) = out.map_or((String::new(), false), |out| (out.text(), out.cut));
        let mut text = if diff.is_empty() {
            match (tracked, args.staged) {
                (false, true) => {
                    format!("{relative} is not tracked by git: nothing of it is staged")
                }
                (_, true) => format!("nothing of {relative} is staged"),
                _ => format!("{relative} has no changes against HEAD"),
            }
        } else {
            diff.clone()
        };
        if cut {
            text.push_str(&format!("\n(cut at {} KiB)", MAX_DIFF / 1024));
        }
        Ok((
            text,
            json!({"filePath": relative, "staged": args.staged, "untracked": !tracked, "diff": diff, "limitReached": cut}),
        ))
    }
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    path_in_project: String,
    #[serde(default)]
    staged: bool,
}
