//! One `permission.asked` for an edit, reviewed: `{id, permission: "edit",
//! metadata: {filepath, diff}}` (opencode's `edit` and `write`), or with
//! `metadata.files: [{filePath, type, patch}]` (its `apply_patch`). Each
//! file's proposal is its text on disk with the unified diff applied; the
//! files are decided together and answered at `/permission/:id/reply`:
//!
//! * every file accepted as proposed: `once` (opencode writes them);
//! * every file rejected: `reject`, with the person's reasons as its
//!   message (the model reads them);
//! * accepted with the person's own changes, or some files accepted and
//!   others rejected: opencode's permission is all or nothing and it can
//!   only write its own text, so Neovim writes what the person accepted
//!   (as for an MCP edit) and answers `reject` with a message naming what
//!   was written and what was rejected. What the person accepted is never
//!   dropped.
//!
//! An edit this review cannot show (outside the project, a rename, a diff
//! that does not apply, more than [`MAX_FILES`] files) is left to
//! opencode's own prompt.

use percent_encoding::{NON_ALPHANUMERIC, utf8_percent_encode};
use serde_json::{Value, json};

use super::client::Server;
use crate::diff::pending::DiffOutcome;
use crate::nvim::seam::LuaCall;
use crate::project::Project;
use crate::project::edits::current::Current;
use crate::project::edits::{MAX_FILES, Proposed, patch, review as show, take_accepted};
use crate::state::State;

/// How the person's decision reaches opencode.
#[derive(Debug, PartialEq)]
pub struct Reply {
    /// `once` or `reject`.
    pub reply: &'static str,
    pub message: Option<String>,
}

/// Reviews permission request `asked` of the opencode instance at
/// `server` working in `directory`, and answers it.
pub async fn review(state: &State, server: &Server, directory: &str, asked: &Value) {
    let Some(id) = asked["id"].as_str() else {
        return;
    };
    let project = match Project::open(state, &json!({"projectPath": directory})).await {
        Ok(project) => project,
        Err(why) => {
            tracing::info!("opencode's edit not reviewed here: {}", why.0);
            return;
        }
    };
    let files = match proposals(&project, asked).await {
        Ok(files) => files,
        Err(Unshown::Told(why)) => {
            tracing::info!("opencode's edit left to its own prompt: {why}");
            let message = format!("opencode's edit is left to its own prompt: {why}");
            state.editor().push(LuaCall::Refused { message });
            return;
        }
        Err(Unshown::Logged(why)) => {
            tracing::info!("opencode's edit left to its own prompt: {why}");
            return;
        }
    };
    let outcomes = show(state, &project, "opencode", "edit", None, &files).await;
    let reply = match decide(&project, &files, &outcomes) {
        Decided::Reply(reply) => reply,
        Decided::Write { rejected } => write(state, &project, &files, &outcomes, &rejected).await,
    };
    let mut body = json!({"reply": reply.reply});
    if let Some(message) = &reply.message {
        body["message"] = json!(message);
    }
    let instance = utf8_percent_encode(directory, NON_ALPHANUMERIC);
    let path = format!("/permission/{id}/reply?directory={instance}");
    if let Err(error) = server.post(&path, &body).await {
        tracing::warn!("cannot answer opencode's permission request: {error}");
    }
}

/// Why an edit is not shown: said to the person, or only logged (opencode
/// asks in its own prompt either way).
enum Unshown {
    Told(String),
    Logged(String),
}

impl From<String> for Unshown {
    fn from(why: String) -> Unshown {
        Unshown::Logged(why)
    }
}

impl From<&str> for Unshown {
    fn from(why: &str) -> Unshown {
        Unshown::Logged(why.to_owned())
    }
}

/// Each file the request names, with its proposal.
async fn proposals(project: &Project, asked: &Value) -> Result<Vec<Proposed>, Unshown> {
    let metadata = &asked["metadata"];
    if let Some(files) = metadata["files"].as_array()
        && files.len() > MAX_FILES
    {
        return Err(Unshown::Told(format!(
            "it changes {} files, and Neovim reviews at most {MAX_FILES} at once",
            files.len()
        )));
    }
    let entries: Vec<(&str, &str, &str)> = match metadata["files"].as_array() {
        Some(files) => files
            .iter()
            .map(|file| {
                Some((
                    file["filePath"].as_str()?,
                    file["patch"].as_str().unwrap_or_default(),
                    file["type"].as_str().unwrap_or("update"),
                ))
            })
            .collect::<Option<_>>()
            .ok_or("a file without a path")?,
        None => vec![(
            metadata["filepath"].as_str().ok_or("no file named")?,
            metadata["diff"].as_str().ok_or("no diff")?,
            "update",
        )],
    };
    let mut files = Vec::with_capacity(entries.len());
    for (path, diff, kind) in entries {
        let confined = project.confine(path).map_err(|why| why.0)?;
        let before = Current::on_disk(&confined).await.map_err(|why| why.0)?;
        let after = match kind {
            "delete" => String::new(),
            "add" | "update" => applied(&before, diff)?,
            other => return Err(format!("a change of kind {other}").into()),
        };
        let proposal = before.proposal(&after);
        files.push(Proposed {
            path: confined.path,
            before,
            proposal,
        });
    }
    Ok(files)
}

/// `before` with the unified `diff` of one file applied.
fn applied(before: &Current, diff: &str) -> Result<String, String> {
    let parsed = patch::parse(diff)?;
    let [file] = parsed.as_slice() else {
        return Err(format!("a diff of {} files for one", parsed.len()));
    };
    patch::apply(&before.lf_text(), file)
}

enum Decided {
    Reply(Reply),
    /// Neovim writes what the person accepted (their changes, or some
    /// files of several); `rejected` are the others, with the reasons given.
    Write {
        rejected: Vec<(String, Option<String>)>,
    },
}

fn decide(project: &Project, files: &[Proposed], outcomes: &[DiffOutcome]) -> Decided {
    let mut rejected = vec![];
    let mut changed = false;
    for (file, outcome) in files.iter().zip(outcomes) {
        let name = project.relative(&file.path);
        match outcome {
            DiffOutcome::Accepted(text) => changed |= file.before.proposal(text) != file.proposal,
            DiffOutcome::Declined(why) => rejected.push((name, Some(why.clone()))),
            DiffOutcome::Rejected {
                reason: Some(reason),
            } => rejected.push((name, Some(format!("Neovim did not show it: {reason}")))),
            DiffOutcome::Rejected { reason: None } | DiffOutcome::Closed => {
                rejected.push((name, None))
            }
        }
    }
    if rejected.is_empty() && !changed {
        return Decided::Reply(Reply {
            reply: "once",
            message: None,
        });
    }
    if rejected.len() < files.len() {
        return Decided::Write { rejected };
    }
    let reasons = reasons(&rejected);
    let message = match (files.len(), reasons.as_slice()) {
        (_, []) => None,
        (1, _) => rejected[0].1.clone(),
        _ => Some(format!(
            "The person rejected this edit in Neovim ({}); nothing was written",
            reasons.join("; ")
        )),
    };
    Decided::Reply(Reply {
        reply: "reject",
        message,
    })
}

/// `name: reason` of each file rejected with a reason.
fn reasons(rejected: &[(String, Option<String>)]) -> Vec<String> {
    rejected
        .iter()
        .filter_map(|(name, why)| Some(format!("{name}: {}", why.as_ref()?)))
        .collect()
}

/// Writes what the person accepted, their changes included, and tells
/// opencode which files hold their version and which were rejected.
async fn write(
    state: &State,
    project: &Project,
    files: &[Proposed],
    outcomes: &[DiffOutcome],
    rejected: &[(String, Option<String>)],
) -> Reply {
    let mut written = vec![];
    let mut failed = vec![];
    for (file, outcome) in files.iter().zip(outcomes) {
        let DiffOutcome::Accepted(text) = outcome else {
            continue;
        };
        let name = project.relative(&file.path);
        match take_accepted(state, project, "opencode", "edit", file, text).await {
            Ok(()) => written.push(name),
            Err(why) => failed.push(format!("{name} ({why})")),
        }
    }
    Reply {
        reply: "reject",
        message: Some(told(&written, &failed, rejected)),
    }
}

/// What opencode's model reads when Neovim wrote the files.
fn told(written: &[String], failed: &[String], rejected: &[(String, Option<String>)]) -> String {
    let holds = match written.len() {
        1 => "holds",
        _ => "hold",
    };
    let mut message = match rejected {
        [] => format!(
            "The person accepted this edit in Neovim with changes of their own, and Neovim wrote it: {} now {holds} their version (read it before changing it again)",
            written.join(", ")
        ),
        _ => format!(
            "The person accepted part of this edit in Neovim, and Neovim wrote that part: {} now {holds} what they accepted (read it before changing it again)",
            match written {
                [] => "no file".to_owned(),
                _ => written.join(", "),
            }
        ),
    };
    if !failed.is_empty() {
        message.push_str(&format!("; not written: {}", failed.join(", ")));
    }
    if !rejected.is_empty() {
        let named: Vec<String> = rejected
            .iter()
            .map(|(name, why)| match why {
                Some(why) => format!("{name} ({why})"),
                None => name.clone(),
            })
            .collect();
        message.push_str(&format!("; rejected: {}", named.join(", ")));
    }
    message
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(path: &str, before: &str, after: &str) -> Proposed {
        Proposed::of(path, before, after)
    }

    #[test]
    fn accepted_as_proposed_is_once_and_a_reason_goes_with_a_rejection() {
        let project = Project::at("/w");
        let files = [file("/w/a", "x\n", "y\n")];
        let Decided::Reply(once) = decide(&project, &files, &[DiffOutcome::Accepted("y\n".into())])
        else {
            panic!("not a reply");
        };
        assert_eq!(
            once,
            Reply {
                reply: "once",
                message: None
            }
        );
        let Decided::Reply(reject) = decide(
            &project,
            &files,
            &[DiffOutcome::Declined("too long".into())],
        ) else {
            panic!("not a reply");
        };
        assert_eq!(
            reject,
            Reply {
                reply: "reject",
                message: Some("too long".into())
            }
        );
        let Decided::Reply(closed) = decide(&project, &files, &[DiffOutcome::Closed]) else {
            panic!("not a reply");
        };
        assert_eq!(
            closed,
            Reply {
                reply: "reject",
                message: None
            }
        );
        assert!(matches!(
            decide(&project, &files, &[DiffOutcome::Accepted("mine\n".into())]),
            Decided::Write { rejected } if rejected.is_empty()
        ));
    }

    #[test]
    fn an_edit_of_several_files_all_rejected_is_rejected_whole_naming_why() {
        let project = Project::at("/w");
        let files = [file("/w/a", "x\n", "y\n"), file("/w/b", "x\n", "z\n")];
        let Decided::Reply(reply) = decide(
            &project,
            &files,
            &[DiffOutcome::Closed, DiffOutcome::Declined("no".into())],
        ) else {
            panic!("not a reply");
        };
        assert_eq!(reply.reply, "reject");
        assert_eq!(
            reply.message.as_deref(),
            Some("The person rejected this edit in Neovim (b: no); nothing was written")
        );
    }

    #[test]
    fn what_the_person_accepted_of_several_files_is_written_and_said() {
        let project = Project::at("/w");
        let files = [
            file("/w/a", "x\n", "y\n"),
            file("/w/b", "x\n", "z\n"),
            file("/w/c", "x\n", "w\n"),
        ];
        let outcomes = [
            DiffOutcome::Accepted("mine\n".into()),
            DiffOutcome::Declined("no".into()),
            DiffOutcome::Accepted("w\n".into()),
        ];
        let Decided::Write { rejected } = decide(&project, &files, &outcomes) else {
            panic!("the accepted files are not written");
        };
        assert_eq!(rejected, vec![("b".to_owned(), Some("no".to_owned()))]);
        assert_eq!(
            told(&["a".into(), "c".into()], &[], &rejected),
            "The person accepted part of this edit in Neovim, and Neovim wrote that part: a, c now hold what they accepted (read it before changing it again); rejected: b (no)"
        );
        let as_proposed = [
            DiffOutcome::Accepted("y\n".into()),
            DiffOutcome::Closed,
            DiffOutcome::Closed,
        ];
        assert!(matches!(
            decide(&project, &files, &as_proposed),
            Decided::Write { rejected } if rejected.len() == 2
        ));
    }

    #[test]
    fn opencodes_diff_applies_to_the_file() {
        let before = file("/w/a", "one\ntwo\nthree\n", "").before;
        let diff = "Index: /w/a\n===================================================================\n--- /w/a\n+++ /w/a\n@@ -1,3 +1,1 @@\n-one\n-two\n-three\n+accepted\n";
        assert_eq!(applied(&before, diff).unwrap(), "accepted\n");
    }
}
