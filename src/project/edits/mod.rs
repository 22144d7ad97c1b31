//! The MCP tools that change files, and the approval that guards them.
//! Every tool computes the new text of each file it changes and hands the
//! lot to [`propose`]: with `mcp.approve_edits` (the default) each file is
//! shown as a diff, like `openDiff`, and the call is answered once every
//! file is decided; accepted files get the proposal buffer's final text
//! (the person's edits included) in their buffer and on disk. Without
//! approval the texts go into the buffers, undoably, unsaved.
//!
//! * [`current`] – a file's text before the edit (buffer, else disk).
//! * [`text`]    – `replace_text_in_file`, `create_new_file`.
//! * [`lsp`]     – `reformat_file`, `rename_refactoring`,
//!   `get_code_actions`, `apply_code_action`, from language servers.
//! * [`report`]  – what the agent is told.

pub mod current;
pub mod lsp;
mod report;
pub mod text;

use std::sync::atomic::{AtomicU64, Ordering};

use futures_util::future::join_all;

use super::{Answer, Failure, Project};
use crate::client::ClientId;
use crate::confine::Confined;
use crate::confine::beneath::WriteError;
use crate::diff::pending::DiffOutcome;
use crate::diff::prepare::{EditInfo, prepare_lines};
use crate::diff::text::Lines;
use crate::nvim::seam::{AppliedEdit, ApplyEdit, LuaCall};
use crate::state::{DiffTarget, State};
use current::Current;
use report::{Fate, Report};

/// One file an edit changes: what it holds now and its proposed text.
pub struct Change {
    /// Absolute, inside the project root.
    pub path: String,
    pub before: Current,
    /// The whole new text (`\n` newlines are kept as the file's own).
    pub after: String,
}

/// Numbers each tool call's group of diffs.
static GROUPS: AtomicU64 = AtomicU64::new(0);

/// Proposes `changes` as one edit by tool `title`, waits for the person
/// when approval is on, applies what they accepted and says what happened.
pub async fn propose(
    state: &State,
    project: &Project,
    title: &str,
    changes: Vec<Change>,
) -> Answer {
    let changes: Vec<(Change, Lines)> = changes
        .into_iter()
        .map(|change| {
            let proposal = change.before.proposal(&change.after);
            (change, proposal)
        })
        .filter(|(change, proposal)| !change.before.unchanged_by(proposal))
        .collect();
    let mut report = Report::new(project, state.approve_edits);
    if changes.is_empty() {
        return report.finish();
    }
    if !state.approve_edits {
        for (change, proposal) in changes {
            let fate = apply(state, project, &change, proposal, false).await;
            report.add(&change.path, fate);
        }
        return report.finish();
    }
    let group = GROUPS.fetch_add(1, Ordering::Relaxed) + 1;
    let count = changes.len();
    let mut shown = Vec::with_capacity(count);
    let mut tabs = Vec::with_capacity(count);
    for (index, (change, proposal)) in changes.iter().enumerate() {
        let relative = project.relative(&change.path);
        let tab_name = format!("mcp-{group}:{relative}");
        tabs.push(tab_name.clone());
        let target = DiffTarget {
            tab_name,
            path: change.path.clone(),
            original_path: change.path.clone(),
            edit: Some(EditInfo {
                group,
                index: index + 1,
                count,
                title: title.to_owned(),
                from_buffer: change.before.from_buffer,
            }),
        };
        let sides = prepare_lines(
            change.before.text.clone(),
            change.before.exists,
            proposal.clone(),
        );
        shown.push(async move {
            match sides.await {
                Ok(sides) => state.show_diff(ClientId::MCP, target, sides).await,
                Err(reason) => DiffOutcome::rejected(reason),
            }
        });
    }
    let withdraw = Withdraw { state, tabs };
    let outcomes = join_all(shown).await;
    withdraw.disarm();
    for ((change, proposal), outcome) in changes.into_iter().zip(outcomes) {
        let fate = match outcome {
            DiffOutcome::Accepted(text) => {
                let accepted = change.before.proposal(&text);
                let edited = accepted != proposal;
                match apply(state, project, &change, accepted, true).await {
                    Fate::Applied { .. } => Fate::Applied { edited },
                    failed => failed,
                }
            }
            DiffOutcome::Rejected { reason: None } => Fate::Declined,
            DiffOutcome::Rejected {
                reason: Some(reason),
            } => Fate::NotShown(reason),
        };
        report.add(&change.path, fate);
    }
    report.finish()
}

/// Puts `text` into the file's buffer (writing it when `write`), if the
/// file still holds what the edit was computed from. A file without a
/// buffer is written here, below the root, never through a link.
async fn apply(
    state: &State,
    project: &Project,
    change: &Change,
    text: Lines,
    write: bool,
) -> Fate {
    // A link out of the root may have appeared while the person reviewed.
    let confined = match project.confine(&change.path) {
        Ok(confined) => confined,
        Err(Failure(message)) => return Fate::Failed(message),
    };
    if !change.before.exists
        && let Err(error) = confined.create_parents().await
    {
        return Fate::Failed(format!("cannot create its directories: {error}"));
    }
    let contents = text.join();
    let edit = ApplyEdit {
        path: change.path.clone(),
        real: confined.real.to_string_lossy().into_owned(),
        lines: text.lines,
        eol: text.eol,
        crlf: text.crlf,
        expected: change.before.expected(),
        write,
    };
    match state
        .editor
        .query::<AppliedEdit>(LuaCall::ApplyEdit(edit))
        .await
    {
        Ok(Some(applied)) if applied.no_buffer => {
            write_file(
                &confined,
                &project.relative(&change.path),
                contents,
                &change.before,
            )
            .await
        }
        Ok(Some(applied)) if applied.ok => Fate::Applied { edited: false },
        Ok(Some(applied)) => Fate::Failed(applied.error.unwrap_or_else(|| "not applied".into())),
        Ok(None) => Fate::Failed("Neovim did not say whether it applied the edit".into()),
        Err(e) => Fate::Failed(format!("Neovim could not apply the edit: {e}")),
    }
}

/// Writes a file that has no buffer, if it still holds what the edit was
/// computed from.
async fn write_file(confined: &Confined, shown: &str, contents: String, before: &Current) -> Fate {
    let expected = before.exists.then(|| before.text.join().into_bytes());
    match confined.write(contents.into_bytes(), expected).await {
        Ok(()) => Fate::Applied { edited: false },
        Err(WriteError::Changed) => Fate::Failed(format!(
            "{shown} changed while the edit waited; it was not applied"
        )),
        Err(WriteError::Io(error)) if error.raw_os_error() == Some(libc::ELOOP) => Fate::Failed(
            format!("{shown} is a symbolic link now; nothing was written through it"),
        ),
        Err(WriteError::Io(error)) => Fate::Failed(format!("cannot write {shown}: {error}")),
    }
}

/// Closes an edit's diffs when its call ends before the person decided
/// (the agent cancelled it or went away).
struct Withdraw<'a> {
    state: &'a State,
    tabs: Vec<String>,
}

impl Withdraw<'_> {
    fn disarm(mut self) {
        self.tabs.clear();
    }
}

impl Drop for Withdraw<'_> {
    fn drop(&mut self) {
        for tab in self.tabs.drain(..) {
            if let Some(diff) = self.state.diffs.take_tab(ClientId::MCP, &tab) {
                self.state
                    .finish_diff(diff, DiffOutcome::rejected("the agent cancelled the edit"));
            }
        }
    }
}
