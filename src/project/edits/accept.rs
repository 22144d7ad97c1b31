//! An accepted file of an MCP edit, applied. When the file changed while
//! the person reviewed it (they typed in its buffer, it was reloaded,
//! another program wrote it), the edit is carried over onto the new text
//! and shown again, as long as the two changes do not overlap; when they
//! do, or the edit cannot be applied at all, the accepted text (the
//! person's edits to the proposal included) goes to a buffer of its own.
//! Either way the person is told. Nothing is written over a text the person
//! did not see the edit against.

use super::current::Current;
use super::report::Fate;
use super::{Change, Shown, Withdraw, show};
use crate::confine::Confined;
use crate::confine::beneath::WriteError;
use crate::diff::pending::DiffOutcome;
use crate::diff::rebase::rebase;
use crate::diff::text::Lines;
use crate::nvim::seam::{AppliedEdit, ApplyEdit, EditNotice, ExpectedText, LuaCall};
use crate::project::{Failure, Project};
use crate::state::State;

/// How often one file's edit is shown again while the file keeps changing.
const MAX_REOFFERS: usize = 3;

/// What became of putting a text into a file's buffer (or the file).
pub enum Applied {
    Done,
    /// The buffer (or file) no longer holds what the edit was computed from.
    Stale(String),
    Failed {
        /// For the agent.
        message: String,
        /// For the person, when it says more than `message`.
        why: Option<String>,
        /// The text is in the buffer already (only the write failed).
        in_buffer: bool,
    },
}

/// Applies `text`, which the person accepted for `change` (shown as
/// `proposal`), re-offering it on the new text while the file changed.
pub async fn accepted(
    state: &State,
    project: &Project,
    change: &Change,
    proposal: &Lines,
    text: &str,
    mut shown: Shown,
) -> Fate {
    let path = change.path.as_str();
    let mut accepted = change.before.proposal(text);
    let edited = accepted != *proposal;
    // The text the edit was last shown against, once it was shown again.
    let mut rebased_on: Option<Current> = None;
    let title = shown.edit.title.clone();
    let mut reoffered = 0;
    loop {
        let before = rebased_on.as_ref().unwrap_or(&change.before);
        let rebased = rebased_on.is_some();
        let stale = match apply(state, project, path, before, accepted.clone(), true).await {
            Applied::Done => {
                return Fate::Applied { edited, rebased };
            }
            Applied::Failed {
                message,
                why,
                in_buffer,
            } => {
                let why = why.unwrap_or_else(|| could_not(&message));
                let kept = (!in_buffer).then_some(&accepted);
                notice(state, path, why, kept).await;
                return Fate::Failed(message);
            }
            Applied::Stale(message) => message,
        };
        let now = match read_again(state, project, path).await {
            Ok(now) => now,
            Err(Failure(message)) => {
                notice(state, path, could_not(&message), Some(&accepted)).await;
                return Fate::Failed(message);
            }
        };
        let merged = rebase(&before.text.lines, &now.text.lines, &accepted.lines)
            .filter(|_| reoffered < MAX_REOFFERS);
        let Some(lines) = merged else {
            let why = "changed while you reviewed the edit, in the lines it changes, \
                       so the edit was not applied";
            notice(state, path, why.into(), Some(&accepted)).await;
            return Fate::Failed(format!(
                "{stale}: the file changed while the person reviewed the edit, in the lines \
                 it changes, so nothing was written; the accepted text is kept in a Neovim \
                 buffer for the person. Read the file again before proposing the edit anew"
            ));
        };
        let proposal = Lines {
            lines,
            // A change of the final newline or the line endings is the edit's
            // only where the edit made it.
            eol: pick(before.text.eol, now.text.eol, accepted.eol),
            crlf: pick(before.text.crlf, now.text.crlf, accepted.crlf),
        };
        if now.unchanged_by(&proposal) {
            return Fate::Failed(format!(
                "{stale}: it holds the accepted edit already (the person made the same \
                 change meanwhile), so nothing was written"
            ));
        }
        let why = "changed while you reviewed the edit: it is shown again on the new text";
        notice(state, path, why.into(), None).await;
        shown.edit.from_buffer = now.from_buffer;
        shown.edit.title = format!("{title} (shown again: the file changed)");
        reoffered += 1;
        let withdraw = Withdraw {
            state,
            requester: crate::client::Requester::Mcp,
            tabs: vec![shown.tab_name.clone()],
        };
        let outcome = show(state, path, &now, &proposal, &shown).await;
        withdraw.disarm();
        match outcome {
            DiffOutcome::Accepted(text) => {
                accepted = now.proposal(&text);
                rebased_on = Some(now);
            }
            DiffOutcome::Rejected { reason: None }
            | DiffOutcome::Closed
            | DiffOutcome::Declined(_) => {
                return Fate::Declined;
            }
            DiffOutcome::Rejected {
                reason: Some(reason),
            } => return Fate::NotShown(reason),
        }
    }
}

/// The person's words for a failure the agent is told about as `message`.
fn could_not(message: &str) -> String {
    format!("could not take the edit you accepted: {message}")
}

/// A property of the merged text: the edit's where it changed it, else the
/// file's as it is now.
fn pick(base: bool, now: bool, edit: bool) -> bool {
    if edit != base { edit } else { now }
}

/// Tells the person what became of the edit of `path` and, with `kept`,
/// puts that text into a buffer of its own.
async fn notice(state: &State, path: &str, why: String, kept: Option<&Lines>) {
    let call = LuaCall::EditNotice(EditNotice {
        path: path.to_owned(),
        why,
        kept: kept.cloned(),
    });
    if let Err(error) = state.editor().call(call).await {
        tracing::warn!("cannot tell the person about the edit of {path}: {error}");
    }
}

/// What `path` holds now, read again where it leads now.
async fn read_again(state: &State, project: &Project, path: &str) -> Result<Current, Failure> {
    let confined = project.confine(path)?;
    Current::read(state, &confined).await
}

/// Puts `text` into the file's buffer (writing it when `write`), if the
/// file still holds `before`, what the edit was computed from. A file
/// without a buffer is written here, below the root, never through a link.
pub async fn apply(
    state: &State,
    project: &Project,
    path: &str,
    before: &Current,
    text: Lines,
    write: bool,
) -> Applied {
    let failed = |message: String| Applied::Failed {
        message,
        why: None,
        in_buffer: false,
    };
    // A link out of the root may have appeared while the person reviewed.
    let confined = match project.confine(path) {
        Ok(confined) => confined,
        Err(Failure(message)) => return failed(message),
    };
    if !before.exists
        && let Err(error) = confined.create_parents().await
    {
        return failed(format!("cannot create its directories: {error}"));
    }
    let contents = text.join();
    let real = confined.real.to_string_lossy().into_owned();
    // A file read from disk is usually open nowhere: asked first without
    // the text, Neovim never decodes a large edit that is not its to apply.
    if write && !before.from_buffer {
        let probe = ApplyEdit {
            path: path.to_owned(),
            real: real.clone(),
            lines: vec![],
            eol: text.eol,
            crlf: text.crlf,
            expected: ExpectedText::default(),
            write,
            probe: true,
        };
        if let Ok(Some(AppliedEdit {
            no_buffer: true, ..
        })) = state
            .editor()
            .query::<AppliedEdit>(LuaCall::ApplyEdit(probe))
            .await
        {
            return write_file(&confined, &project.relative(path), contents, before).await;
        }
    }
    let edit = ApplyEdit {
        path: path.to_owned(),
        real,
        lines: text.lines,
        eol: text.eol,
        crlf: text.crlf,
        expected: before.expected(),
        write,
        probe: false,
    };
    match state
        .editor()
        .query::<AppliedEdit>(LuaCall::ApplyEdit(edit))
        .await
    {
        Ok(Some(applied)) if applied.no_buffer => {
            write_file(&confined, &project.relative(path), contents, before).await
        }
        Ok(Some(applied)) if applied.ok => Applied::Done,
        Ok(Some(applied)) => {
            let message = applied.error.unwrap_or_else(|| "not applied".into());
            match applied.stale {
                true => Applied::Stale(message),
                false => Applied::Failed {
                    message,
                    why: applied.why,
                    in_buffer: applied.in_buffer,
                },
            }
        }
        Ok(None) => failed("Neovim did not say whether it applied the edit".into()),
        Err(e) => failed(format!("Neovim could not apply the edit: {e}")),
    }
}

/// Writes a file that has no buffer, if it still holds what the edit was
/// computed from (else it is stale, and shown again on its new text).
async fn write_file(
    confined: &Confined,
    shown: &str,
    contents: String,
    before: &Current,
) -> Applied {
    let expected = before.exists.then(|| before.text.join().into_bytes());
    let failed = |message: String| Applied::Failed {
        message,
        why: None,
        in_buffer: false,
    };
    match confined.write(contents.into_bytes(), expected).await {
        Ok(()) => Applied::Done,
        Err(WriteError::Changed) => {
            Applied::Stale(format!("{shown} changed while the edit waited"))
        }
        Err(WriteError::Io(error)) if error.raw_os_error() == Some(libc::ELOOP) => failed(format!(
            "{shown} is a symbolic link now; nothing was written through it"
        )),
        Err(WriteError::Io(error)) => match out_of_room(&error) {
            Some(room) => Applied::Failed {
                message: format!(
                    "cannot write {shown}: {room} ({error}), so {shown} keeps its old content; \
                     the accepted text is kept in a Neovim buffer for the person"
                ),
                why: Some(format!(
                    "could not be written: {room}. It keeps its old content"
                )),
                in_buffer: false,
            },
            None => failed(format!("cannot write {shown}: {error}")),
        },
    }
}

/// What ran out when a write failed for want of room, in the person's words.
fn out_of_room(error: &std::io::Error) -> Option<&'static str> {
    use std::io::ErrorKind;
    match error.kind() {
        ErrorKind::StorageFull => Some("the disk is full"),
        ErrorKind::QuotaExceeded => Some("the disk quota is used up"),
        ErrorKind::FileTooLarge => {
            Some("the file would pass the size this system allows for a file")
        }
        _ => None,
    }
}
