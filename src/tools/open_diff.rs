//! `openDiff`: shows the agent's proposal next to the file on disk and waits
//! for the person. Never answers with a JSON-RPC error — pi would run the edit
//! unapproved — and never writes the file: the agent writes it after
//! `FILE_SAVED`.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use nvim_rs::Value as Msgpack;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{ToolSpec, text_content};
use crate::diffs::DiffOutcome;
use crate::host::Shared;
use crate::hub::ClientId;
use crate::hunks::{DEADLINE, HOST_DIFF_BYTES, Hunk, hunks};

pub const SPEC: ToolSpec = ToolSpec {
    name: "openDiff",
    description: "Show a proposed change as a diff in Neovim and wait until the person accepts or rejects it.",
    schema: || {
        json!({
            "type": "object",
            "properties": {
                "old_file_path": {"type": "string", "description": "absolute path of the file on disk"},
                "new_file_path": {"type": "string", "description": "absolute path the contents are for"},
                "new_file_contents": {"type": "string", "description": "complete proposed contents"},
                "tab_name": {"type": "string", "description": "identifies this diff"},
            },
            "required": ["old_file_path", "new_file_path", "new_file_contents", "tab_name"],
        })
    },
};

#[derive(Debug, Deserialize)]
pub struct Args {
    old_file_path: String,
    new_file_path: String,
    new_file_contents: String,
    tab_name: String,
}

/// Checked `openDiff` arguments; bad ones still need a `DIFF_REJECTED`
/// naming the tab, never a JSON-RPC error.
#[derive(Debug)]
pub struct Request {
    tab_name: String,
    args: Result<Args, String>,
}

pub fn parse(args: Value) -> Request {
    let tab_name = args
        .get("tab_name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let args = serde_json::from_value(args)
        .map_err(|error| format!("invalid openDiff arguments: {error}"));
    Request { tab_name, args }
}

pub async fn run(shared: &Arc<Shared>, client: ClientId, request: Request) -> Value {
    let args = match request.args {
        Ok(args) => args,
        Err(reason) => return reply(&request.tab_name, DiffOutcome::rejected(reason)),
    };
    let outcome = match prepare(&args).await {
        Ok(spec) => show_and_wait(shared, client, &args, spec).await,
        Err(reason) => DiffOutcome::rejected(reason),
    };
    if let DiffOutcome::Rejected {
        reason: Some(reason),
    } = &outcome
    {
        tracing::info!("openDiff {} rejected: {reason}", args.tab_name);
    }
    reply(&args.tab_name, outcome)
}

async fn show_and_wait(
    shared: &Arc<Shared>,
    client: ClientId,
    args: &Args,
    spec: DiffSpec,
) -> DiffOutcome {
    let begun = shared
        .diffs
        .begin(client, &args.tab_name, PathBuf::from(&args.new_file_path));
    if let Some(old) = begun.replaced {
        shared.finish_diff(
            old,
            DiffOutcome::rejected("replaced by a newer openDiff with the same tab_name"),
        );
    }
    let kind = shared.hub.kind(client).map_or("pi", |kind| kind.as_str());
    if let Err(error) = shared
        .editor
        .open_diff(spec.into_msgpack(begun.id, args, kind))
        .await
        && let Some(diff) = shared.diffs.take(begun.id)
    {
        diff.answer(DiffOutcome::rejected(format!(
            "Neovim could not show the diff: {error}"
        )));
    }
    begun
        .answer
        .await
        .unwrap_or_else(|_| DiffOutcome::rejected("the diff was dropped"))
}

/// `FILE_SAVED` + final text, or `DIFF_REJECTED` + tab name (+ why, if known).
fn reply(tab_name: &str, outcome: DiffOutcome) -> Value {
    match outcome {
        DiffOutcome::Accepted(text) => text_content(&["FILE_SAVED", text.as_str()]),
        DiffOutcome::Rejected { reason: None } => text_content(&["DIFF_REJECTED", tab_name]),
        DiffOutcome::Rejected {
            reason: Some(reason),
        } => text_content(&["DIFF_REJECTED", tab_name, reason.as_str()]),
    }
}

/// Text split into buffer lines plus what it takes to join them back exactly.
#[derive(Debug, PartialEq)]
pub struct Lines {
    pub lines: Vec<String>,
    /// Ends with a newline (the buffer's `'eol'`).
    pub eol: bool,
    /// Every newline is `\r\n` (the buffer's `'fileformat'` is `dos`).
    pub crlf: bool,
}

impl Lines {
    pub fn split(text: &str) -> Lines {
        let crlf =
            text.contains("\r\n") && text.matches('\n').count() == text.matches("\r\n").count();
        let normalized = if crlf {
            text.replace("\r\n", "\n")
        } else {
            text.to_owned()
        };
        let eol = normalized.ends_with('\n');
        let body = if eol {
            &normalized[..normalized.len() - 1]
        } else {
            &normalized[..]
        };
        Lines {
            lines: body.split('\n').map(str::to_owned).collect(),
            eol,
            crlf,
        }
    }

    /// The exact text these lines came from.
    pub fn join(&self) -> String {
        let newline = if self.crlf { "\r\n" } else { "\n" };
        let mut text = self.lines.join(newline);
        if self.eol {
            text.push_str(newline);
        }
        text
    }

    fn into_msgpack(self) -> Msgpack {
        map(vec![
            (
                "lines",
                Msgpack::Array(self.lines.into_iter().map(Msgpack::from).collect()),
            ),
            ("eol", Msgpack::from(self.eol)),
            ("crlf", Msgpack::from(self.crlf)),
        ])
    }
}

/// Everything Lua needs to draw a diff.
struct DiffSpec {
    original: Lines,
    original_exists: bool,
    proposed: Lines,
    /// For large files: the changed regions, drawn by Lua instead of
    /// Neovim's diff mode.
    hunks: Option<Vec<Hunk>>,
}

impl DiffSpec {
    fn into_msgpack(self, id: u64, args: &Args, client_kind: &str) -> Msgpack {
        map(vec![
            ("id", Msgpack::from(id)),
            ("tab_name", Msgpack::from(args.tab_name.as_str())),
            ("path", Msgpack::from(args.new_file_path.as_str())),
            ("original_path", Msgpack::from(args.old_file_path.as_str())),
            ("client", Msgpack::from(client_kind)),
            ("original_exists", Msgpack::from(self.original_exists)),
            ("original", self.original.into_msgpack()),
            ("proposed", self.proposed.into_msgpack()),
            (
                "hunks",
                self.hunks.map_or(Msgpack::Nil, |hunks| {
                    Msgpack::Array(hunks.iter().map(hunk_msgpack).collect())
                }),
            ),
        ])
    }
}

/// `[old_start, old_len, new_start, new_len]`, 0-based.
fn hunk_msgpack(hunk: &Hunk) -> Msgpack {
    let numbers = [hunk.old_start, hunk.old_len, hunk.new_start, hunk.new_len];
    Msgpack::Array(numbers.iter().map(|&n| Msgpack::from(n as u64)).collect())
}

fn map(pairs: Vec<(&str, Msgpack)>) -> Msgpack {
    Msgpack::Map(
        pairs
            .into_iter()
            .map(|(k, v)| (Msgpack::from(k), v))
            .collect(),
    )
}

/// Reads the file on disk (off the UI thread) and checks both sides are text.
async fn prepare(args: &Args) -> Result<DiffSpec, String> {
    for path in [&args.old_file_path, &args.new_file_path] {
        if !Path::new(path).is_absolute() {
            return Err(format!("path is not absolute: {path:?}"));
        }
    }
    let (original, original_exists) = match tokio::fs::read(&args.old_file_path).await {
        Ok(bytes) => (
            text_of(bytes).ok_or_else(|| format!("{} is not a text file", args.old_file_path))?,
            true,
        ),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => (String::new(), false),
        Err(error) => return Err(format!("cannot read {}: {error}", args.old_file_path)),
    };
    if args.new_file_contents.contains('\0') {
        return Err("the proposed contents are binary".into());
    }
    let original = Lines::split(&original);
    let proposed = Lines::split(&args.new_file_contents);
    if original_len(&original) + args.new_file_contents.len() <= HOST_DIFF_BYTES {
        return Ok(DiffSpec {
            original,
            original_exists,
            proposed,
            hunks: None,
        });
    }
    let diffed = tokio::task::spawn_blocking(move || {
        let found = hunks(&original.lines, &proposed.lines, DEADLINE);
        (original, proposed, found)
    })
    .await;
    let (original, proposed, found) = diffed.map_err(|e| format!("diffing failed: {e}"))?;
    Ok(DiffSpec {
        original,
        original_exists,
        proposed,
        hunks: Some(found),
    })
}

fn original_len(lines: &Lines) -> usize {
    lines.lines.iter().map(|l| l.len() + 1).sum()
}

fn text_of(bytes: Vec<u8>) -> Option<String> {
    if bytes.contains(&0) {
        return None;
    }
    String::from_utf8(bytes).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_round_trip_exactly() {
        for text in [
            "",
            "\n",
            "a",
            "a\n",
            "a\nb",
            "a\nb\n",
            "a\r\nb\r\n",
            "a\r\nb",
            "mixed\r\nends\n",
            "\n\n",
            "x\ry\n",
        ] {
            let lines = Lines::split(text);
            assert_eq!(lines.join(), text, "{text:?}");
        }
        assert_eq!(
            Lines::split(""),
            Lines {
                lines: vec![String::new()],
                eol: false,
                crlf: false
            }
        );
        assert_eq!(
            Lines::split("a\r\nb\r\n"),
            Lines {
                lines: vec!["a".into(), "b".into()],
                eol: true,
                crlf: true
            }
        );
        assert!(
            !Lines::split("mixed\r\nends\n").crlf,
            "mixed endings keep their \\r in the lines"
        );
    }

    #[test]
    fn replies_have_the_shapes_clients_parse() {
        assert_eq!(
            reply("t", DiffOutcome::Accepted("x\n".into()))["content"][1]["text"],
            "x\n"
        );
        assert_eq!(
            reply("t", DiffOutcome::Accepted(String::new()))["content"]
                .as_array()
                .unwrap()
                .len(),
            2
        );
        let rejected = reply("t", DiffOutcome::Rejected { reason: None });
        assert_eq!(rejected["content"][0]["text"], "DIFF_REJECTED");
        assert_eq!(rejected["content"][1]["text"], "t");
        assert_eq!(
            reply("t", DiffOutcome::rejected("why"))["content"][2]["text"],
            "why"
        );
    }

    #[tokio::test]
    async fn prepare_refuses_what_it_cannot_show() {
        let dir =
            std::env::temp_dir().join(format!("pi-ide-prepare-{}", uuid::Uuid::new_v4().simple()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("bin"), b"a\0b").unwrap();
        let args = |old: &str, contents: &str| Args {
            old_file_path: old.into(),
            new_file_path: old.into(),
            new_file_contents: contents.into(),
            tab_name: "t".into(),
        };
        let dir_s = dir.to_str().unwrap();
        assert!(
            prepare(&args("relative.txt", "x"))
                .await
                .err()
                .unwrap()
                .contains("not absolute")
        );
        assert!(
            prepare(&args(dir_s, "x"))
                .await
                .err()
                .unwrap()
                .contains("cannot read")
        );
        assert!(
            prepare(&args(&format!("{dir_s}/bin"), "x"))
                .await
                .err()
                .unwrap()
                .contains("not a text file")
        );
        assert!(
            prepare(&args(&format!("{dir_s}/new"), "a\0"))
                .await
                .err()
                .unwrap()
                .contains("binary")
        );
        let spec = prepare(&args(&format!("{dir_s}/missing/new.txt"), "hi\n"))
            .await
            .unwrap();
        assert!(!spec.original_exists);
        assert_eq!(spec.proposed.lines, vec!["hi".to_string()]);
    }
}
