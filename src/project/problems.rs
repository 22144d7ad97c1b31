//! `get_file_problems {filePath, errorsOnly}`, asked of Neovim (which loads
//! the file and waits, boundedly, for its language servers' first
//! diagnostics), and `get_project_problems {}`: the loaded buffers'
//! diagnostics, what the servers reported for files no buffer holds now
//! (kept until the file changes), and what the servers that offer it
//! report for the workspace, pulled at each call. Positions are 1-based,
//! columns in UTF-16 code units.

use std::time::Duration;

use serde::Deserialize;
use serde_json::{Value, json};

use super::lsp_answers::{Encoding, utf16_column};
use super::workspace_problems::{self, PULL_TIMEOUT};
use super::{Answer, Failure, Project, line_text, lsp};
use crate::diagnostics::kept::{Columns, Pulled, Report};
use crate::nvim::seam::{LspQuery, items as list};
use crate::state::State;

/// How long a call waits for the file's language servers to publish their
/// first diagnostics (a server that never does costs this much).
const FIRST_DIAGNOSTICS: Duration = Duration::from_secs(5);

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FileArgs {
    file_path: String,
    #[serde(default = "yes")]
    errors_only: bool,
}

fn yes() -> bool {
    true
}

pub async fn file_problems(state: &State, project: &Project, args: FileArgs) -> Answer {
    let found = of_file(state, project, &args.file_path, args.errors_only).await?;
    Ok((found.text(), found.structured()))
}

/// One file's problems, once its servers published (or the wait ended).
pub struct FileProblems {
    /// Relative to the project.
    pub file_path: String,
    pub errors: Vec<Value>,
    pub no_server: bool,
    /// Servers that published nothing for the file in time.
    pub silent: Vec<String>,
}

impl FileProblems {
    pub fn text(&self) -> String {
        self.with_notes(render(&[(self.file_path.clone(), self.errors.clone())]))
    }

    /// As [`Self::text`], naming the file even when it has no problems.
    pub fn named_text(&self) -> String {
        match self.errors.is_empty() {
            true => self.with_notes(format!("{}: no problems", self.file_path)),
            false => self.text(),
        }
    }

    fn with_notes(&self, mut text: String) -> String {
        if self.no_server {
            text.push_str("\n(no language server is attached to this file)");
        } else if !self.silent.is_empty() {
            text.push_str(&format!(
                "\n({} published no diagnostics for this file within {} s)",
                self.silent.join(", "),
                FIRST_DIAGNOSTICS.as_secs()
            ));
        }
        text
    }

    pub fn structured(&self) -> Value {
        let mut structured = json!({"filePath": self.file_path, "errors": self.errors});
        if !self.no_server && !self.silent.is_empty() {
            structured["serversNotReported"] = json!(self.silent);
        }
        structured
    }
}

/// The problems of `given` (errors only, or all), the file loaded and its
/// servers' first diagnostics waited for, boundedly.
pub async fn of_file(
    state: &State,
    project: &Project,
    given: &str,
    errors_only: bool,
) -> Result<FileProblems, Failure> {
    let path = project.resolve(given)?;
    let relative = project.relative(&path);
    let query = LspQuery {
        id: 0,
        kind: "problems",
        path,
        line: 0,
        character: 0,
        text: None,
        timeout_ms: FIRST_DIAGNOSTICS.as_millis() as u64,
        ..Default::default()
    };
    let answer = lsp::send(state, query).await?;
    if let Some(error) = answer.error {
        return Err(Failure(format!("{relative}: {error}")));
    }
    let found = answer.result.unwrap_or_default();
    let errors: Vec<Value> = list(&found["diagnostics"])
        .filter(|d| !errors_only || severity_number(d) == 1)
        .map(problem)
        .collect();
    let silent = list(&found["pending"])
        .filter_map(Value::as_str)
        .map(str::to_owned)
        .collect();
    Ok(FileProblems {
        file_path: relative,
        errors,
        no_server: answer.no_server,
        silent,
    })
}

pub async fn project_problems(state: &State, project: &Project) -> Answer {
    let pulled = workspace_problems::pull(state).await;
    let reports = state.diagnostics().everywhere().await;
    let project_copy = project.clone();
    // Confining and naming each file reads the file system.
    let inside = crate::task::spawn_blocking(move || {
        reports
            .into_iter()
            .filter(|report| project_copy.confine(&report.path).is_ok())
            .map(|report| (project_copy.relative(&report.path), report))
            .collect::<Vec<_>>()
    })
    .await
    .map_err(|e| Failure(format!("the project's problems could not be gathered: {e}")))?;
    let inside = in_utf16(state, inside).await?;
    let files: Vec<(String, Vec<Value>)> = inside
        .into_iter()
        .map(|(path, report)| (path, report.diagnostics.iter().map(problem).collect()))
        .collect();
    let problems: Vec<Value> = files
        .iter()
        .flat_map(|(path, list)| {
            list.iter().map(move |p| {
                let mut p = p.clone();
                p["filePath"] = json!(path);
                p
            })
        })
        .collect();
    let mut structured = json!({"problems": problems});
    if !pulled.silent.is_empty() {
        structured["serversNotReported"] = json!(pulled.silent);
    }
    Ok((with_pull_notes(render(&files), &pulled), structured))
}

/// `text` with what the pull could not get.
fn with_pull_notes(mut text: String, pulled: &Pulled) -> String {
    if !pulled.silent.is_empty() {
        text.push_str(&format!(
            "\n({} reported no workspace diagnostics within {} s)",
            pulled.silent.join(", "),
            PULL_TIMEOUT.as_secs()
        ));
    }
    for error in &pulled.errors {
        text.push_str(&format!("\n(workspace diagnostics: {error})"));
    }
    text
}

/// Reports whose columns count other units than UTF-16 code units,
/// converted with their lines' text (read off the UI thread).
async fn in_utf16(
    state: &State,
    mut reports: Vec<(String, Report)>,
) -> Result<Vec<(String, Report)>, Failure> {
    let rows = line_text::rows(
        reports
            .iter()
            .filter(|(_, report)| report.columns != Columns::Utf16)
            .flat_map(|(_, report)| {
                report.diagnostics.iter().flat_map(|d| {
                    ["start", "end"].map(|end| (report.path.as_str(), line_of(d, end)))
                })
            }),
    );
    if rows.is_empty() {
        return Ok(reports);
    }
    let texts = line_text::read(state, rows).await?;
    for (_, report) in &mut reports {
        let encoding = match report.columns {
            Columns::Utf16 => continue,
            Columns::Utf8 => Encoding::Utf8,
            Columns::Utf32 => Encoding::Utf32,
        };
        for d in &mut report.diagnostics {
            for end in ["start", "end"] {
                let text = texts.get(&report.path, line_of(d, end));
                if let Some(character) = d.pointer_mut(&format!("/range/{end}/character"))
                    && let Some(index) = character.as_u64()
                {
                    *character = json!(utf16_column(text, index, encoding));
                }
            }
        }
        report.columns = Columns::Utf16;
    }
    Ok(reports)
}

/// The 0-based line of `range.start` or `range.end`.
fn line_of(raw: &Value, end: &str) -> u64 {
    raw.pointer(&format!("/range/{end}/line"))
        .and_then(Value::as_u64)
        .unwrap_or(0)
}

fn severity_number(raw: &Value) -> u64 {
    raw.get("severity").and_then(Value::as_u64).unwrap_or(4)
}

/// One diagnostic with 1-based positions, JetBrains' names.
fn problem(raw: &Value) -> Value {
    let severity = match severity_number(raw) {
        1 => "ERROR",
        2 => "WARNING",
        3 => "INFO",
        _ => "HINT",
    };
    let at = |end: &str, field: &str| {
        raw.pointer(&format!("/range/{end}/{field}"))
            .and_then(Value::as_u64)
            .unwrap_or(0)
            + 1
    };
    let mut out = json!({
        "severity": severity,
        "description": raw.get("message").and_then(Value::as_str).unwrap_or(""),
        "line": at("start", "line"),
        "column": at("start", "character"),
        "endLine": at("end", "line"),
        "endColumn": at("end", "character"),
    });
    if let Some(source) = raw.get("source").and_then(Value::as_str) {
        out["source"] = json!(source);
    }
    out
}

/// `path:line:column: SEVERITY description` lines.
fn render(files: &[(String, Vec<Value>)]) -> String {
    let lines: Vec<String> = files
        .iter()
        .flat_map(|(path, list)| {
            list.iter().map(move |p| {
                format!(
                    "{path}:{}:{}: {} {}",
                    p["line"],
                    p["column"],
                    p["severity"].as_str().unwrap_or(""),
                    p["description"].as_str().unwrap_or("")
                )
            })
        })
        .collect();
    if lines.is_empty() {
        "no problems".into()
    } else {
        lines.join("\n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_become_one_based() {
        let raw = json!({"severity": 1, "message": "boom", "source": "pyright",
            "range": {"start": {"line": 0, "character": 4}, "end": {"line": 1, "character": 0}}});
        let p = problem(&raw);
        assert_eq!(p["line"], 1);
        assert_eq!(p["column"], 5);
        assert_eq!(p["endLine"], 2);
        assert_eq!(p["severity"], "ERROR");
        assert_eq!(render(&[("a.py".into(), vec![p])]), "a.py:1:5: ERROR boom");
    }
}
