//! A file as an edit is computed from and shown against: the text of its
//! loaded buffer (unsaved edits included), else the file on disk, else
//! nothing (a file to create).

use super::super::Failure;
use crate::confine::Confined;
use crate::diff::text::Lines;
use crate::nvim::seam::{BufferText, ExpectedText, LuaCall};
use crate::state::State;

/// A file's text before an edit.
#[derive(Debug, Clone)]
pub struct Current {
    pub text: Lines,
    /// False: neither a buffer nor a file holds it yet.
    pub exists: bool,
    /// Read from Neovim's buffer rather than from disk.
    pub from_buffer: bool,
}

impl Current {
    /// Reads the file from its loaded buffer, else from disk (never
    /// through a link).
    pub async fn read(state: &State, file: &Confined) -> Result<Current, Failure> {
        let path = file.path.as_str();
        let buffer = state
            .editor()
            .query::<BufferText>(LuaCall::BufferText {
                path: path.to_owned(),
            })
            .await
            .map_err(|e| Failure(format!("cannot read the buffer of {path}: {e}")))?;
        if buffer.as_ref().is_some_and(|b| b.disk_changed) {
            return Err(Failure(format!(
                "{path} has unsaved edits in Neovim and changed on disk as well; \
                 the person must settle that (save or reload it) before an edit is proposed"
            )));
        }
        if let Some(buffer) = buffer {
            return Ok(Current {
                text: Lines {
                    lines: buffer.lines,
                    eol: buffer.eol,
                    crlf: buffer.crlf,
                },
                exists: true,
                from_buffer: true,
            });
        }
        Current::on_disk(file).await
    }

    /// The file as it is on disk (never through a link), for an agent that
    /// changes the file itself; a missing file is one to create.
    pub async fn on_disk(file: &Confined) -> Result<Current, Failure> {
        let path = file.path.as_str();
        match file.read().await {
            Ok(bytes) => {
                let text = String::from_utf8(bytes)
                    .ok()
                    .filter(|text| !text.contains('\0'))
                    .ok_or_else(|| Failure(format!("{path} is not a text file")))?;
                Ok(Current {
                    text: Lines::split(&text),
                    exists: true,
                    from_buffer: false,
                })
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Current {
                text: Lines::split(""),
                exists: false,
                from_buffer: false,
            }),
            Err(e) => Err(Failure(format!("cannot read {path}: {e}"))),
        }
    }

    /// The text with `\n` newlines, as agents and language servers see it.
    pub fn lf_text(&self) -> String {
        let mut text = self.text.lines.join("\n");
        if self.text.eol && self.exists {
            text.push('\n');
        }
        text
    }

    /// `after` as lines to show and write, in this file's line endings.
    pub fn proposal(&self, after: &str) -> Lines {
        let mut lines = Lines::split(after);
        if self.text.crlf && !after.contains('\r') {
            lines.crlf = true;
        }
        lines
    }

    /// What the file must still hold when the edit is applied.
    pub fn expected(&self) -> ExpectedText {
        ExpectedText {
            lines: self.text.lines.clone(),
            eol: self.text.eol,
            crlf: self.text.crlf,
            exists: self.exists,
        }
    }

    /// Whether `proposal` leaves the file as it is.
    pub fn unchanged_by(&self, proposal: &Lines) -> bool {
        self.exists && self.text == *proposal
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn current(text: &str) -> Current {
        Current {
            text: Lines::split(text),
            exists: true,
            from_buffer: false,
        }
    }

    #[test]
    fn proposals_keep_the_files_line_endings() {
        let dos = current("a\r\nb\r\n");
        assert_eq!(dos.lf_text(), "a\nb\n");
        let proposal = dos.proposal("a\nc\n");
        assert!(proposal.crlf);
        assert_eq!(proposal.join(), "a\r\nc\r\n");
        assert!(dos.unchanged_by(&dos.proposal("a\nb\n")));
        assert!(!current("a").unchanged_by(&Lines::split("a\n")));
        let missing = Current {
            text: Lines::split(""),
            exists: false,
            from_buffer: false,
        };
        assert_eq!(missing.lf_text(), "");
        assert!(
            !missing.unchanged_by(&Lines::split("")),
            "creating an empty file is a change"
        );
    }
}
