//! `get_all_open_file_paths {}` and `get_file_text_by_path {pathInProject,
//! maxLinesCount, truncateMode}`: text as in Neovim's buffer when the file
//! is loaded (unsaved edits included), else from disk.
//! `open_file_in_editor {filePath, line?, column?}`: shows a project file in
//! the person's last used file window (never a diff tab or a terminal).

use serde::Deserialize;
use serde_json::json;

use super::{Answer, Failure, Project};
use crate::nvim::seam::{BufferText, LuaCall, OpenEditor, OpenFile, OpenedFile};
use crate::state::State;

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OpenArgs {
    file_path: String,
    line: Option<u64>,
    column: Option<u64>,
}

pub async fn open_in_editor(state: &State, project: &Project, args: OpenArgs) -> Answer {
    let path = project.resolve(&args.file_path)?;
    match tokio::fs::metadata(&path).await {
        Ok(meta) if meta.is_file() => {}
        Ok(_) => return Err(Failure(format!("{} is not a file", args.file_path))),
        Err(e) => return Err(Failure(format!("cannot open {}: {e}", args.file_path))),
    }
    let request = OpenFile {
        path: path.clone(),
        start_text: None,
        end_text: None,
        select_to_end_of_line: false,
        frontmost: true,
        line: args.line.map(|line| line.max(1)),
        column: args.line.and(args.column).map(|column| column.max(1)),
    };
    let opened = state
        .editor()
        .query::<OpenedFile>(LuaCall::OpenFile(request))
        .await
        .map_err(|e| Failure(format!("Neovim could not open {}: {e}", args.file_path)))?
        .ok_or_else(|| Failure("Neovim did not say what it opened".into()))?;
    let relative = project.relative(&path);
    Ok((
        format!("Opened {relative}"),
        json!({"filePath": relative, "lineCount": opened.line_count, "filetype": opened.filetype}),
    ))
}

pub async fn open_files(state: &State, project: &Project) -> Answer {
    let editors = state
        .editor()
        .query::<Vec<OpenEditor>>(LuaCall::OpenEditors)
        .await
        .map_err(|e| Failure(format!("cannot list Neovim's buffers: {e}")))?
        .unwrap_or_default();
    let active = editors
        .iter()
        .find(|editor| editor.active)
        .map(|editor| project.relative(&editor.path));
    let open: Vec<String> = editors
        .iter()
        .map(|editor| project.relative(&editor.path))
        .collect();
    let mut text = open.join("\n");
    if let Some(active) = &active {
        text = format!("active: {active}\n{text}");
    }
    Ok((text, json!({"activeFilePath": active, "openFiles": open})))
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TextArgs {
    path_in_project: String,
    #[serde(default = "default_max_lines")]
    max_lines_count: usize,
    #[serde(default)]
    truncate_mode: Truncate,
}

fn default_max_lines() -> usize {
    1000
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
enum Truncate {
    #[default]
    Start,
    Middle,
    End,
    None,
}

pub async fn file_text(state: &State, project: &Project, args: TextArgs) -> Answer {
    let file = project.confine(&args.path_in_project)?;
    let path = file.path.clone();
    let buffer = state
        .editor()
        .query::<BufferText>(LuaCall::BufferText { path: path.clone() })
        .await
        .map_err(|e| Failure(format!("cannot read the buffer of {path}: {e}")))?;
    let (lines, from_buffer, disk_changed) = match buffer {
        Some(buffer) => (buffer.lines, true, buffer.disk_changed),
        None => {
            let bytes = file
                .read()
                .await
                .map_err(|e| Failure(format!("cannot read {}: {e}", args.path_in_project)))?;
            let text = String::from_utf8(bytes)
                .map_err(|_| Failure(format!("{} is not UTF-8 text", args.path_in_project)))?;
            (text.lines().map(str::to_owned).collect(), false, false)
        }
    };
    let line_count = lines.len();
    let (kept, truncated) = truncate(lines, args.max_lines_count.max(1), args.truncate_mode);
    let text = kept.join("\n");
    let structured = json!({
        "pathInProject": project.relative(&path),
        "text": text,
        "lineCount": line_count,
        "truncated": truncated,
        "fromBuffer": from_buffer,
        "diskChanged": disk_changed,
    });
    Ok((text, structured))
}

/// At most `max` lines, which ones as `mode` says; a marker line stands
/// for what was left out.
fn truncate(lines: Vec<String>, max: usize, mode: Truncate) -> (Vec<String>, bool) {
    if mode == Truncate::None || lines.len() <= max {
        return (lines, false);
    }
    let dropped = lines.len() - max;
    let marker = format!("<{dropped} lines truncated>");
    let kept = match mode {
        Truncate::End => {
            let mut kept = vec![marker];
            kept.extend(lines[dropped..].iter().cloned());
            kept
        }
        Truncate::Middle => {
            let head = max.div_ceil(2);
            let tail = max - head;
            let mut kept = lines[..head].to_vec();
            kept.push(marker);
            kept.extend(lines[lines.len() - tail..].iter().cloned());
            kept
        }
        Truncate::Start | Truncate::None => {
            let mut kept = lines[..max].to_vec();
            kept.push(marker);
            kept
        }
    };
    (kept, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn numbered(n: usize) -> Vec<String> {
        (1..=n).map(|i| i.to_string()).collect()
    }

    #[test]
    fn truncation_keeps_the_asked_for_lines_and_says_so() {
        assert_eq!(
            truncate(numbered(3), 5, Truncate::Start),
            (numbered(3), false)
        );
        assert_eq!(
            truncate(numbered(5), 2, Truncate::Start).0,
            ["1", "2", "<3 lines truncated>"]
        );
        assert_eq!(
            truncate(numbered(5), 2, Truncate::End).0,
            ["<3 lines truncated>", "4", "5"]
        );
        assert_eq!(
            truncate(numbered(5), 3, Truncate::Middle).0,
            ["1", "2", "<2 lines truncated>", "5"]
        );
        assert_eq!(
            truncate(numbered(5), 2, Truncate::None),
            (numbered(5), false)
        );
    }

    #[test]
    fn arguments_take_jetbrains_names_and_defaults() {
        let args: TextArgs = serde_json::from_value(json!({"pathInProject": "a"})).unwrap();
        assert_eq!(args.max_lines_count, 1000);
        assert_eq!(args.truncate_mode, Truncate::Start);
        let args: TextArgs = serde_json::from_value(
            json!({"pathInProject": "a", "truncateMode": "MIDDLE", "maxLinesCount": 3}),
        )
        .unwrap();
        assert_eq!(args.truncate_mode, Truncate::Middle);
    }
}
