//! `apply_patch {patch}`: a unified diff over one or more project files,
//! shown to the person as one reviewed diff per file (accept-all /
//! reject-all, as for a rename) unless approval is off. A patch that does
//! not apply to a file as it is now (its buffer's text when loaded) is
//! refused whole, naming the hunk; so is one that deletes, renames or
//! reaches outside the project.

use serde::Deserialize;
use serde_json::json;

use async_trait::async_trait;

use super::{ProjectTool, Spec, object};
use crate::project::edits::current::Current;
use crate::project::edits::patch;
use crate::project::edits::{Change, MAX_FILES, propose};
use crate::project::{Answer, Failure, Project};
use crate::state::State;

pub struct ApplyPatch;

#[async_trait]
impl ProjectTool for ApplyPatch {
    type Args = Args;

    const SPEC: Spec = Spec::project(
        "apply_patch",
        "Apply a unified diff (as `diff -u` or `git diff` print it; paths relative to the project root, `a/` and `b/` prefixes allowed) to one or more project files, Neovim's buffers included. Each changed file is shown to the person as a diff to accept or reject (unless approval is off); the result lists the files applied and declined (isError unless all were applied). A patch that does not apply is refused, naming the hunk and the line that differs; nothing is changed then. New files (`--- /dev/null`) are created; deleting or renaming files is not supported.",
        || {
            object(
                json!({
                    "patch": {"type": "string", "description": "The unified diff"},
                }),
                &["patch"],
            )
        },
    ).waiting();

    async fn run(state: &State, project: &Project, args: Self::Args) -> Answer {
        let files = patch::parse(&args.patch).map_err(Failure)?;
        if files.len() > MAX_FILES {
            return Err(Failure(format!(
                "the patch changes {} files; at most {MAX_FILES} are shown at once",
                files.len()
            )));
        }
        let mut changes: Vec<Change> = Vec::with_capacity(files.len());
        for file in &files {
            if file.new_path.is_none() {
                return Err(Failure(format!(
                    "the patch deletes {}, which is not supported; nothing was changed",
                    file.path()
                )));
            }
            let confined = project.confine(file.path())?;
            if changes.iter().any(|c| c.path == confined.path) {
                return Err(Failure(format!(
                    "the patch changes {} twice; send its hunks under one header",
                    file.path()
                )));
            }
            let before = Current::read(state, &confined).await?;
            if file.old_path.is_none() && before.exists && !before.lf_text().is_empty() {
                return Err(Failure(format!(
                    "the patch creates {}, which exists already; nothing was changed",
                    file.path()
                )));
            }
            if file.old_path.is_some() && !before.exists {
                return Err(Failure(format!(
                    "the patch changes {}, which does not exist; nothing was changed",
                    file.path()
                )));
            }
            let after = patch::apply(&before.lf_text(), file)
                .map_err(|why| Failure(format!("{why}; nothing was changed")))?;
            changes.push(Change {
                path: confined.path,
                before,
                after,
            });
        }
        propose(state, project, "apply_patch", changes).await
    }
}

#[derive(Debug, Deserialize)]
pub struct Args {
    patch: String,
}
