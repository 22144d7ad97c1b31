//! `pi-ide/review-patch {cwd, patch}`: an `apply_patch` Codex is about to
//! run, shown in the review before it writes anything (asked by
//! `pi-ide codex-hook`, Codex's `PreToolUse` hook). Each file is one diff
//! against the file on disk (Codex writes the disk, not the buffer),
//! decided together as one edit. The answer says what Codex does:
//!
//! * `{decision: "allow"}`: every file accepted as proposed; Codex applies
//!   its own patch;
//! * `{decision: "allow", patch, context}`: the person accepted some files
//!   or changed the proposal: Codex applies `patch` instead (the accepted
//!   files as the person left them), and `context` tells its model what
//!   was rejected or changed;
//! * `{decision: "deny", reason}`: nothing accepted (or nothing can be
//!   shown: a patch that does not apply, a path outside the project, a
//!   move onto a file that exists, Neovim's roots unreadable); the reason,
//!   the person's own words when they gave them, goes to the model;
//! * `{decision: "none", reason}`: Codex's cwd is not in this Neovim's
//!   project: not ours to review.

use serde_json::{Value, json};

use super::patch::{self, FileOp};
use crate::diff::pending::DiffOutcome;
use crate::project::edits::current::Current;
use crate::project::edits::{MAX_FILES, Proposed, review};
use crate::project::{NoProject, Project};
use crate::state::State;

/// The method `pi-ide codex-hook` asks.
pub const METHOD: &str = "pi-ide/review-patch";

/// The decision on the patch `params` carries, asked by process `pid`.
pub async fn answer(state: &State, params: &Value, pid: Option<u32>) -> Value {
    let (Some(cwd), Some(text)) = (
        params.get("cwd").and_then(Value::as_str),
        params.get("patch").and_then(Value::as_str),
    ) else {
        return json!({"decision": "none", "reason": "the request names no cwd or patch"});
    };
    let project = match Project::open_telling(state, &json!({"projectPath": cwd})).await {
        Ok(project) => project,
        Err(NoProject::Elsewhere(why)) => return json!({"decision": "none", "reason": why.0}),
        // It may be this project's patch: unreviewed, it is not applied.
        Err(NoProject::Failed(why)) => {
            return deny(format!(
                "Neovim cannot review this patch now ({}); nothing was changed",
                why.0
            ));
        }
    };
    let shown = match proposals(&project, text.to_owned()).await {
        Ok(shown) => shown,
        Err(why) => return deny(format!("{why}; nothing was changed")),
    };
    let (ops, files): (Vec<FileOp>, Vec<Proposed>) = shown.into_iter().unzip();
    let outcomes = review(state, &project, "codex", "apply_patch", pid, &files).await;
    decide(&project, ops.into_iter().zip(files).collect(), outcomes)
}

fn deny(reason: String) -> Value {
    json!({"decision": "deny", "reason": reason})
}

/// Each file of `text` and what it would hold, or why it cannot be shown.
/// Reading the patch and placing its chunks take time that grows with
/// it: they run off the host's runtime thread.
async fn proposals(project: &Project, text: String) -> Result<Vec<(FileOp, Proposed)>, String> {
    let ops = crate::task::spawn_blocking(move || patch::parse(&text))
        .await
        .map_err(|error| format!("Neovim cannot read the patch: {error}"))?
        .map_err(|why| format!("Neovim cannot read the patch: {why}"))?;
    if ops.len() > MAX_FILES {
        return Err(format!(
            "the patch changes {} files; at most {MAX_FILES} are reviewed at once",
            ops.len()
        ));
    }
    let mut read = Vec::with_capacity(ops.len());
    for op in ops {
        let confined = project.confine(op.path()).map_err(|why| why.0)?;
        if let FileOp::Update {
            move_to: Some(to), ..
        } = &op
        {
            let destination = project.confine(to).map_err(|why| why.0)?;
            // Codex writes the new text over the destination: the diff of
            // the source would not show what is lost there.
            if tokio::fs::symlink_metadata(&destination.path).await.is_ok() {
                return Err(format!(
                    "the patch moves {} to {to}, which exists and would be replaced unseen; \
                     move it to a new name, or change {to} and delete {} in steps of their own",
                    op.path(),
                    op.path()
                ));
            }
        }
        let before = Current::on_disk(&confined).await.map_err(|why| why.0)?;
        if !before.exists && !matches!(op, FileOp::Add { .. }) {
            return Err(format!(
                "the patch changes {}, which does not exist",
                op.path()
            ));
        }
        read.push((op, confined.path, before));
    }
    crate::task::spawn_blocking(move || read.into_iter().map(proposed).collect())
        .await
        .map_err(|error| format!("Neovim cannot place the patch: {error}"))?
}

/// What file `path` would hold after `op`, from `before`.
fn proposed((op, path, before): (FileOp, String, Current)) -> Result<(FileOp, Proposed), String> {
    let after = match &op {
        FileOp::Add { lines, .. } if lines.is_empty() => String::new(),
        FileOp::Add { lines, .. } => lines.join("\n") + "\n",
        FileOp::Delete { .. } => String::new(),
        FileOp::Update { chunks, .. } => patch::apply(&before.lf_text(), chunks)
            .map_err(|why| format!("the patch does not apply to {}: {why}", op.path()))?,
    };
    let proposal = before.proposal(&after);
    Ok((
        op,
        Proposed {
            path,
            before,
            proposal,
        },
    ))
}

/// What the person decided about one file.
enum Fate {
    Kept(FileOp),
    Changed(FileOp),
    Rejected(Option<String>),
}

fn decide(project: &Project, shown: Vec<(FileOp, Proposed)>, outcomes: Vec<DiffOutcome>) -> Value {
    let mut fates = Vec::with_capacity(shown.len());
    for ((op, file), outcome) in shown.into_iter().zip(outcomes) {
        let name = project.relative(&file.path);
        let fate = match outcome {
            DiffOutcome::Accepted(text) if file.before.proposal(&text) == file.proposal => {
                Fate::Kept(op)
            }
            DiffOutcome::Accepted(text) => Fate::Changed(as_accepted(op, &file, &text)),
            DiffOutcome::Declined(why) => Fate::Rejected(Some(why)),
            DiffOutcome::Rejected { reason: None } | DiffOutcome::Closed => Fate::Rejected(None),
            DiffOutcome::Rejected {
                reason: Some(reason),
            } => Fate::Rejected(Some(format!("Neovim did not show it: {reason}"))),
        };
        fates.push((name, fate));
    }
    let all_kept = fates.iter().all(|(_, fate)| matches!(fate, Fate::Kept(_)));
    // One file, rejected for a reason: the reason says it all.
    let single_reason = match fates.as_slice() {
        [(_, Fate::Rejected(Some(why)))] => Some(why.clone()),
        _ => None,
    };
    if all_kept {
        return json!({"decision": "allow"});
    }
    let mut applied = vec![];
    let mut notes = vec![];
    let mut rejected = vec![];
    for (name, fate) in fates {
        match fate {
            Fate::Kept(op) => applied.push(op),
            Fate::Changed(op) => {
                notes.push(format!(
                    "the person changed your change to {name} before it was applied: the file holds their version"
                ));
                applied.push(op);
            }
            Fate::Rejected(why) => {
                let said = why.map_or(String::new(), |why| format!(" ({why})"));
                rejected.push(format!("{name}{said}"));
            }
        }
    }
    if applied.is_empty() {
        let reason = match (rejected.as_slice(), single_reason) {
            (_, Some(why)) => format!("The person rejected this patch in Neovim: {why}"),
            ([one], None) if !one.contains('(') => {
                "The person rejected this patch in Neovim.".to_owned()
            }
            _ => format!(
                "The person rejected this patch in Neovim: {}",
                rejected.join("; ")
            ),
        };
        return deny(reason);
    }
    if !rejected.is_empty() {
        notes.insert(
            0,
            format!(
                "the person rejected your changes to {}; they were not applied",
                rejected.join("; ")
            ),
        );
    }
    json!({
        "decision": "allow",
        "patch": patch::render(&applied),
        "context": format!("In Neovim {}.", notes.join(", and ")),
    })
}

/// `op` with the text the person accepted for it.
fn as_accepted(op: FileOp, file: &Proposed, text: &str) -> FileOp {
    let text = text.replace("\r\n", "\n");
    let old = file.before.lf_text();
    match op {
        FileOp::Add { path, .. } => FileOp::Add {
            path,
            lines: text.lines().map(str::to_owned).collect(),
        },
        FileOp::Delete { path } if text.is_empty() => FileOp::Delete { path },
        FileOp::Delete { path } => patch::replace_whole(&path, None, &old, &text),
        FileOp::Update { path, move_to, .. } => patch::replace_whole(&path, move_to, &old, &text),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(path: &str, before: &str, after: &str) -> Proposed {
        Proposed::of(path, before, after)
    }

    fn update(path: &str) -> FileOp {
        patch::parse(&format!(
            "*** Begin Patch\n*** Update File: {path}\n-a\n+b\n*** End Patch"
        ))
        .unwrap()
        .remove(0)
    }

    #[tokio::test]
    async fn a_move_onto_a_file_that_exists_is_refused_one_onto_a_new_name_shown() {
        let dir = crate::scratch::Scratch::new("codex-move");
        std::fs::write(dir.join("a.txt"), "one\n").unwrap();
        std::fs::write(dir.join("b.txt"), "precious\n").unwrap();
        let project = Project::at(dir.to_str().unwrap());
        let moving = |to: &str| {
            format!(
                "*** Begin Patch\n*** Update File: a.txt\n*** Move to: {to}\n@@\n-one\n+two\n*** End Patch"
            )
        };
        let Err(why) = proposals(&project, moving("b.txt")).await else {
            panic!("a move onto b.txt shown");
        };
        assert!(why.contains("moves a.txt to b.txt, which exists"), "{why}");
        let shown = proposals(&project, moving("c.txt")).await.unwrap();
        assert_eq!(shown[0].1.proposal.join(), "two\n");
    }

    #[test]
    fn every_file_as_proposed_lets_codex_apply_its_own_patch() {
        let project = Project::at("/w");
        let shown = vec![(update("x"), file("/w/x", "a\n", "b\n"))];
        let got = decide(&project, shown, vec![DiffOutcome::Accepted("b\n".into())]);
        assert_eq!(got, json!({"decision": "allow"}));
    }

    #[test]
    fn nothing_accepted_denies_with_the_persons_words() {
        let project = Project::at("/w");
        let shown = vec![(update("x"), file("/w/x", "a\n", "b\n"))];
        let got = decide(
            &project,
            shown,
            vec![DiffOutcome::Declined("too long".into())],
        );
        assert_eq!(
            got,
            json!({"decision": "deny", "reason": "The person rejected this patch in Neovim: too long"})
        );
        let shown = vec![(update("x"), file("/w/x", "a\n", "b\n"))];
        let got = decide(&project, shown, vec![DiffOutcome::Closed]);
        assert_eq!(got["reason"], "The person rejected this patch in Neovim.");
    }

    #[test]
    fn the_persons_changes_and_a_partial_accept_go_back_as_a_patch() {
        let project = Project::at("/w");
        let shown = vec![
            (update("x"), file("/w/x", "a\n", "b\n")),
            (update("y"), file("/w/y", "a\n", "b\n")),
        ];
        let got = decide(
            &project,
            shown,
            vec![
                DiffOutcome::Accepted("b\nmine\n".into()),
                DiffOutcome::Declined("no".into()),
            ],
        );
        assert_eq!(got["decision"], "allow");
        assert_eq!(
            got["patch"],
            "*** Begin Patch\n*** Update File: x\n@@\n-a\n+b\n+mine\n*** End of File\n*** End Patch"
        );
        let context = got["context"].as_str().unwrap();
        assert!(
            context.contains("rejected your changes to y (no)"),
            "{context}"
        );
        assert!(context.contains("changed your change to x"), "{context}");
    }
}
