//! The MCP tools that change files, and the approval that guards them.
//! Every tool computes the new text of each file it changes and hands the
//! lot to [`propose`]: with `mcp.approve_edits` (the default) each file is
//! shown as a diff, like `openDiff`, and the call is answered once every
//! file is decided; accepted files get the proposal buffer's final text
//! (the person's edits included) in their buffer and on disk. Without
//! approval the texts go into the buffers, undoably, unsaved.
//!
//! * [`accept`]  – an accepted file applied, or shown again when it
//!   changed meanwhile, or kept for the person when it cannot be.
//! * [`current`] – a file's text before the edit (buffer, else disk).
//! * [`text`]    – `replace_text_in_file`, `create_new_file`.
//! * [`lsp`]     – `reformat_file`, `rename_refactoring`,
//!   `get_code_actions`, `apply_code_action`, from language servers.
//! * [`patch`]   – unified diffs read and applied to a file's text.
//! * [`text_edits`] – language servers' edits applied to a file's text.
//! * [`report`]  – what the agent is told.

mod accept;
pub mod current;
pub mod lsp;
pub mod patch;
mod report;
pub mod text;
mod text_edits;

use std::sync::atomic::{AtomicU64, Ordering};

use futures_util::future::join_all;

use super::{Answer, Project};
use crate::client::Requester;
use crate::diff::pending::DiffOutcome;
use crate::diff::prepare::{EditInfo, prepare_lines};
use crate::diff::text::Lines;
use crate::state::{DiffTarget, State};
use accept::Applied;
use current::Current;
use report::{Fate, Report};

/// At most this many files are shown in one review (an agent's patch or
/// edit of more is refused, or left to its own prompt).
pub const MAX_FILES: usize = 100;

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
    let mut report = Report::new(project, state.approve_edits());
    if changes.is_empty() {
        return report.finish();
    }
    if !state.approve_edits() {
        for (change, proposal) in changes {
            let fate = match accept::apply(
                state,
                project,
                &change.path,
                &change.before,
                proposal,
                false,
            )
            .await
            {
                Applied::Done => Fate::Applied {
                    edited: false,
                    rebased: false,
                },
                Applied::Stale(message) | Applied::Failed { message, .. } => Fate::Failed(message),
            };
            report.add(&change.path, fate);
        }
        return report.finish();
    }
    let group = new_group();
    let count = changes.len();
    let requester_pid = match project.caller {
        Some(caller) => caller.pid().await,
        None => None,
    };
    let mut shown = Vec::with_capacity(count);
    let mut tabs = Vec::with_capacity(count);
    for (index, (change, proposal)) in changes.iter().enumerate() {
        let shown_as = Shown {
            tab_name: format!("mcp-{group}:{}", project.relative(&change.path)),
            edit: EditInfo {
                requester_pid,
                ..EditInfo::new(group, index + 1, count, title, change.before.from_buffer)
            },
        };
        tabs.push(shown_as.tab_name.clone());
        shown.push(async move {
            let outcome = show(state, &change.path, &change.before, proposal, &shown_as).await;
            (outcome, shown_as)
        });
    }
    let withdraw = Withdraw {
        state,
        requester: Requester::Mcp,
        tabs,
    };
    let outcomes = join_all(shown).await;
    withdraw.disarm();
    for ((change, proposal), (outcome, shown_as)) in changes.into_iter().zip(outcomes) {
        let fate = match outcome {
            DiffOutcome::Accepted(text) => {
                accept::accepted(state, project, &change, &proposal, &text, shown_as).await
            }
            DiffOutcome::Rejected { reason: None }
            | DiffOutcome::Closed
            | DiffOutcome::Declined(_) => Fate::Declined,
            DiffOutcome::Rejected {
                reason: Some(reason),
            } => Fate::NotShown(reason),
        };
        report.add(&change.path, fate);
    }
    report.finish()
}

/// One file an agent that writes files itself asks the person about.
#[derive(Clone)]
pub struct Proposed {
    /// Absolute, inside the project root.
    pub path: String,
    /// The file as the agent will change it (on disk, for an agent).
    pub before: Current,
    pub proposal: Lines,
}

impl Proposed {
    /// `path` proposed to go from `before` to `after` (unit tests).
    #[cfg(test)]
    pub fn of(path: &str, before: &str, after: &str) -> Proposed {
        let before = Current {
            text: Lines::split(before),
            exists: true,
            from_buffer: false,
        };
        let proposal = before.proposal(after);
        Proposed {
            path: path.into(),
            before,
            proposal,
        }
    }
}

/// Shows `files` as one edit `title` by an agent that writes them itself
/// once told (Codex's hook, opencode's permission requests), and waits
/// until every file is decided or this future is dropped (then its diffs
/// close). Each outcome in order; the person may say why they reject.
pub async fn review(
    state: &State,
    project: &Project,
    agent: &'static str,
    title: &str,
    requester_pid: Option<u32>,
    files: &[Proposed],
) -> Vec<DiffOutcome> {
    let group = new_group();
    let count = files.len();
    let mut tabs = Vec::with_capacity(count);
    let mut shown = Vec::with_capacity(count);
    for (index, file) in files.iter().enumerate() {
        let shown_as = Shown {
            tab_name: format!("{agent}-{group}:{}", project.relative(&file.path)),
            edit: EditInfo {
                requester_pid,
                agent_writes: true,
                ask_reason: true,
                ..EditInfo::new(group, index + 1, count, title, false)
            },
        };
        tabs.push(shown_as.tab_name.clone());
        shown.push(async move {
            show_as(
                state,
                Requester::Agent(agent),
                &file.path,
                &file.before,
                &file.proposal,
                &shown_as,
            )
            .await
        });
    }
    let withdraw = Withdraw {
        state,
        requester: Requester::Agent(agent),
        tabs,
    };
    let outcomes = join_all(shown).await;
    withdraw.disarm();
    outcomes
}

/// Puts the text the person accepted for `file` (asked about by `agent`)
/// into its buffer and onto disk, as for an MCP edit: shown again when the
/// file changed meanwhile, kept in a buffer of its own when it cannot be
/// applied. For an agent that cannot take the person's edits itself.
pub async fn take_accepted(
    state: &State,
    project: &Project,
    agent: &'static str,
    title: &str,
    file: &Proposed,
    text: &str,
) -> Result<(), String> {
    let group = new_group();
    let change = Change {
        path: file.path.clone(),
        before: file.before.clone(),
        after: file.proposal.join(),
    };
    let shown = Shown {
        tab_name: format!("{agent}-{group}:{}", project.relative(&file.path)),
        edit: EditInfo::new(group, 1, 1, title, false),
    };
    match accept::accepted(state, project, &change, &file.proposal, text, shown).await {
        Fate::Applied { .. } => Ok(()),
        Fate::Failed(message) | Fate::NotShown(message) => Err(message),
        Fate::Declined => Err("the person rejected it when it was shown again".into()),
    }
}

/// Where a file's diff is shown: its tab and what the winbar says.
#[derive(Clone)]
struct Shown {
    tab_name: String,
    edit: EditInfo,
}

/// A new number for a group of diffs decided together (`:PiIde accept all`).
pub fn new_group() -> u64 {
    GROUPS.fetch_add(1, Ordering::Relaxed) + 1
}

/// Shows `after` against `path` as it is now and waits for the person,
/// applying nothing: for a change the agent makes itself once the person
/// agreed (an ACP permission whose tool call carries a diff). The diff is
/// tab `tab_name`, its winbar says `title`.
pub async fn review_only(
    state: &State,
    path: &str,
    before: &Current,
    after: &str,
    title: &str,
    tab_name: String,
) -> DiffOutcome {
    let proposal = before.proposal(after);
    let shown = Shown {
        tab_name,
        edit: EditInfo::new(new_group(), 1, 1, title, before.from_buffer),
    };
    show(state, path, before, &proposal, &shown).await
}

/// Applies `change`, which the person already approved as shown (an ACP
/// permission's diff, then the agent's write of the same text): into its
/// buffer and on disk, with no second review.
pub async fn apply_approved(state: &State, project: &Project, change: Change) -> Answer {
    let proposal = change.before.proposal(&change.after);
    let mut report = Report::new(project, true);
    let fate =
        match accept::apply(state, project, &change.path, &change.before, proposal, true).await {
            Applied::Done => Fate::Applied {
                edited: false,
                rebased: false,
            },
            Applied::Stale(message) | Applied::Failed { message, .. } => Fate::Failed(message),
        };
    report.add(&change.path, fate);
    report.finish()
}

/// Shows `proposal` against `before` and waits for the person.
async fn show(
    state: &State,
    path: &str,
    before: &Current,
    proposal: &Lines,
    shown: &Shown,
) -> DiffOutcome {
    show_as(state, Requester::Mcp, path, before, proposal, shown).await
}

/// [`show`] for `requester`.
async fn show_as(
    state: &State,
    requester: Requester,
    path: &str,
    before: &Current,
    proposal: &Lines,
    shown: &Shown,
) -> DiffOutcome {
    let target = DiffTarget {
        tab_name: shown.tab_name.clone(),
        path: path.to_owned(),
        original_path: path.to_owned(),
        edit: Some(shown.edit.clone()),
    };
    let sides = prepare_lines(before.text.clone(), before.exists, proposal.clone());
    match sides.await {
        Ok(sides) => state.show_diff(requester, target, sides).await,
        Err(reason) => DiffOutcome::rejected(reason),
    }
}

/// Closes an edit's diffs when its call ends before the person decided
/// (the agent cancelled it or went away).
struct Withdraw<'a> {
    state: &'a State,
    requester: Requester,
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
            if let Some(diff) = self.state.diffs().take_tab(self.requester, &tab) {
                self.state
                    .finish_diff(diff, DiffOutcome::rejected("the agent cancelled the edit"));
            }
        }
    }
}
