//! A reviewed file's decision, written to disk: kept as it is, written as
//! the person left the right side (some hunks reverted, or edited), or put
//! back whole (a modified file reverted, a deleted one restored, a new one
//! removed). Every write goes below the root without following a link,
//! whole (see `confine::beneath`), and only while the file still holds
//! what the person was shown: a file that changed meanwhile is left alone
//! and listed again next time.

use crate::confine::beneath::WriteError;
use crate::diff::pending::DiffOutcome;

use super::listing::Texts;

/// What became of one file.
#[derive(Debug, Clone, PartialEq)]
pub enum Fate {
    /// Left as it is now.
    Kept,
    /// Written as the person left the right side.
    Written(String),
    /// Its baseline text written back.
    Reverted,
    /// A deleted file created again.
    Restored,
    /// A new file removed.
    Removed,
    /// Closed undecided: listed again next time.
    Later,
    /// Nothing written, for this reason.
    Failed(String),
}

impl Fate {
    /// The word Lua shows.
    pub fn as_str(&self) -> &'static str {
        match self {
            Fate::Kept => "kept",
            Fate::Written(_) => "written",
            Fate::Reverted => "reverted",
            Fate::Restored => "restored",
            Fate::Removed => "removed",
            Fate::Later => "later",
            Fate::Failed(_) => "failed",
        }
    }

    /// What the baseline now holds for the file: `Some(None)` for no
    /// file, `Some(Some(text))`; `None` when it stays as it was (put back,
    /// or not decided).
    pub fn settled<'a>(&'a self, texts: &'a Texts) -> Option<Option<&'a str>> {
        match self {
            Fate::Kept => Some(texts.now.as_deref()),
            Fate::Written(text) => Some(Some(text.as_str())),
            _ => None,
        }
    }
}

/// Carries out `outcome` for `texts`.
pub async fn apply(texts: &Texts, outcome: DiffOutcome) -> Fate {
    let now = texts.now.as_deref();
    let result = match outcome {
        DiffOutcome::Closed => return Fate::Later,
        DiffOutcome::Rejected {
            reason: Some(reason),
        } => return Fate::Failed(reason),
        DiffOutcome::Accepted(text) => {
            if now == Some(text.as_str()) || (now.is_none() && text.is_empty()) {
                return Fate::Kept;
            }
            write(texts, &text).await.map(|()| Fate::Written(text))
        }
        DiffOutcome::Rejected { reason: None } | DiffOutcome::Declined(_) => {
            match (&texts.before, now) {
                (None, Some(now)) => texts
                    .confined
                    .remove(now.as_bytes().to_vec())
                    .await
                    .map(|()| Fate::Removed),
                (Some((before, _)), None) => texts
                    .confined
                    .create(before.as_bytes().to_vec(), texts.mode.is_executable())
                    .await
                    .map(|()| Fate::Restored),
                (Some((before, _)), Some(_)) => write(texts, before).await.map(|()| Fate::Reverted),
                (None, None) => Ok(Fate::Kept),
            }
        }
    };
    result.unwrap_or_else(|error| Fate::Failed(explain(error)))
}

/// Writes `text` over the file as it was shown (or creates it again).
async fn write(texts: &Texts, text: &str) -> Result<(), WriteError> {
    let contents = text.as_bytes().to_vec();
    match texts.now.as_deref() {
        Some(now) => {
            let expected = Some(now.as_bytes().to_vec());
            texts.confined.write(contents, expected).await
        }
        None => {
            texts
                .confined
                .create(contents, texts.mode.is_executable())
                .await
        }
    }
}

fn explain(error: WriteError) -> String {
    match error {
        WriteError::Changed => "it changed on disk while you reviewed it, so nothing was \
                                written; :PiIde changes shows it again"
            .to_owned(),
        WriteError::Io(error) if error.raw_os_error() == Some(libc::ELOOP) => {
            "it is a symbolic link now; nothing was written through it".to_owned()
        }
        WriteError::Io(error) => format!("cannot write it: {error}"),
    }
}
