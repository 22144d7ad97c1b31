//! What an edit tool tells the agent: which files were applied (and
//! whether the person changed the proposal first), declined, or could not
//! be applied. Anything short of every file applied is an `isError`
//! result, so an agent never takes a declined edit for a done one.

use serde_json::{Value, json};

use super::super::{Answer, Failure, Project};

/// What became of one file of an edit.
#[derive(Debug, PartialEq)]
pub enum Fate {
    /// In the buffer (and, after approval, on disk); `edited`: the person
    /// changed the proposal before accepting it; `rebased`: the file changed
    /// while they reviewed it, and the edit was shown again on the new text
    /// and accepted there.
    Applied { edited: bool, rebased: bool },
    /// The person rejected it.
    Declined,
    /// Never decided: the diff could not be shown, or it was closed by
    /// something other than the person (shutdown, cancellation).
    NotShown(String),
    /// Accepted, but it could not be applied.
    Failed(String),
}

pub struct Report<'a> {
    project: &'a Project,
    approved: bool,
    files: Vec<(String, Fate)>,
}

impl<'a> Report<'a> {
    /// `approved`: edits went through the person's review.
    pub fn new(project: &'a Project, approved: bool) -> Self {
        Report {
            project,
            approved,
            files: vec![],
        }
    }

    pub fn add(&mut self, path: &str, fate: Fate) {
        self.files.push((self.project.relative(path), fate));
    }

    pub fn finish(self) -> Answer {
        if self.files.is_empty() {
            return Ok((
                "No changes: the files already hold the proposed text.".into(),
                json!({"applied": [], "declined": [], "failed": []}),
            ));
        }
        let mut applied = vec![];
        let mut edited = vec![];
        let mut rebased = vec![];
        let mut declined = vec![];
        let mut failed = vec![];
        for (path, fate) in &self.files {
            match fate {
                Fate::Applied {
                    edited: by_person,
                    rebased: shown_again,
                } => {
                    applied.push(path.clone());
                    if *by_person {
                        edited.push(path.clone());
                    }
                    if *shown_again {
                        rebased.push(path.clone());
                    }
                }
                Fate::Declined => declined.push(json!({"filePath": path})),
                Fate::NotShown(reason) | Fate::Failed(reason) => {
                    failed.push(json!({"filePath": path, "reason": reason}))
                }
            }
        }
        let mut lines = vec![];
        if !applied.is_empty() {
            lines.push(if self.approved {
                format!(
                    "Accepted by the person, applied and saved: {}",
                    applied.join(", ")
                )
            } else {
                format!(
                    "Applied to Neovim's buffers (not saved; the person can undo it): {}",
                    applied.join(", ")
                )
            });
        }
        if !rebased.is_empty() {
            lines.push(format!(
                "Changed in Neovim while the person reviewed the edit, so it was shown again \
                 on the new text and accepted there (read these files again, they hold more \
                 than the proposal): {}",
                rebased.join(", ")
            ));
        }
        if !edited.is_empty() {
            lines.push(format!(
                "The person changed the proposal before accepting it; read these files again: {}",
                edited.join(", ")
            ));
        }
        if !declined.is_empty() {
            let paths: Vec<&str> = declined
                .iter()
                .filter_map(|d| d["filePath"].as_str())
                .collect();
            let unchanged = match paths.len() {
                1 => "it was not changed",
                _ => "those files were not changed",
            };
            lines.push(format!(
                "The person declined the edit of {}; {unchanged}.",
                paths.join(", ")
            ));
        }
        for entry in &failed {
            lines.push(format!(
                "Not applied to {}: {}",
                entry["filePath"].as_str().unwrap_or_default(),
                entry["reason"].as_str().unwrap_or_default()
            ));
        }
        let text = lines.join("\n");
        if declined.is_empty() && failed.is_empty() {
            let structured: Value = json!({
                "applied": applied,
                "editedByPerson": edited,
                "shownAgain": rebased,
                "saved": self.approved,
                "declined": [],
                "failed": [],
            });
            Ok((text, structured))
        } else {
            Err(Failure(text))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn project() -> Project {
        Project::at("/w")
    }

    #[test]
    fn a_declined_or_failed_file_makes_the_result_an_error_naming_each() {
        let project = project();
        let mut mixed = Report::new(&project, true);
        mixed.add(
            "/w/a.py",
            Fate::Applied {
                edited: true,
                rebased: false,
            },
        );
        mixed.add("/w/b.py", Fate::Declined);
        mixed.add("/w/c.py", Fate::Failed("it changed".into()));
        let Err(Failure(text)) = mixed.finish() else {
            panic!("a declined file is an error");
        };
        assert!(text.contains("applied and saved: a.py"), "{text}");
        assert!(text.contains("read these files again: a.py"), "{text}");
        assert!(text.contains("declined the edit of b.py"), "{text}");
        assert!(text.contains("Not applied to c.py: it changed"), "{text}");

        let mut unapproved = Report::new(&project, false);
        unapproved.add(
            "/w/a.py",
            Fate::Applied {
                edited: false,
                rebased: false,
            },
        );
        let (text, structured) = unapproved.finish().unwrap();
        assert!(text.contains("not saved"), "{text}");
        assert_eq!(structured["applied"], json!(["a.py"]));
        assert_eq!(structured["saved"], false);

        let mut again = Report::new(&project, true);
        again.add(
            "/w/a.py",
            Fate::Applied {
                edited: false,
                rebased: true,
            },
        );
        let (text, structured) = again.finish().unwrap();
        assert!(text.contains("shown again on the new text"), "{text}");
        assert!(text.contains("read these files again"), "{text}");
        assert_eq!(structured["shownAgain"], json!(["a.py"]));
        assert!(
            Report::new(&project, true)
                .finish()
                .unwrap()
                .0
                .contains("No changes")
        );
    }
}
