//! `fs/read_text_file` and `fs/write_text_file`, confined to the chat's
//! project like every path an agent names. Reads come from the file's
//! buffer when it is loaded (unsaved edits included), else from disk;
//! writes open the two-pane review, and the file is written only when the
//! person accepts, with their final text.

use serde_json::{Value as Json, json};

use super::Chat;
use crate::project::edits::current::Current;
use crate::project::edits::{Change, apply_approved, propose};
use crate::project::{Failure, Project};
use crate::state::State;

/// `{content}` of lines `line` (1-based) to `line + limit - 1`.
pub async fn read(state: &State, chat: &Chat, request: &Json) -> Result<Json, String> {
    let path = request["path"].as_str().ok_or("path must be a string")?;
    let project = project(state, chat).await?;
    let file = project.confine(path).map_err(refused(chat))?;
    let current = Current::read(state, &file).await.map_err(|f| f.0)?;
    if !current.exists {
        return Err(format!("{path} does not exist"));
    }
    let line = request["line"].as_u64();
    let limit = request["limit"].as_u64();
    Ok(json!({"content": slice(&current.lf_text(), line, limit)}))
}

/// `{}` once the person accepted and the file holds their text; an error
/// that says so when they declined.
pub async fn write(state: &State, chat: &Chat, request: &Json) -> Result<Json, String> {
    let path = request["path"].as_str().ok_or("path must be a string")?;
    let content = request["content"]
        .as_str()
        .ok_or("content must be a string")?;
    let project = project(state, chat).await?;
    let file = project.confine(path).map_err(refused(chat))?;
    if tokio::fs::metadata(&file.real)
        .await
        .is_ok_and(|meta| meta.is_dir())
    {
        return Err(format!("{path} is a directory"));
    }
    let before = Current::read(state, &file).await.map_err(|f| f.0)?;
    let approved = {
        let mut approved = crate::mutex::lock(&chat.approved);
        match approved.get(&file.path) {
            Some((proposed, _)) if proposed == content => approved.remove(&file.path),
            _ => None,
        }
    };
    let answer = match approved {
        Some((_, accepted)) => {
            let change = Change {
                path: file.path,
                before,
                after: accepted,
            };
            apply_approved(state, &project, change).await
        }
        None => {
            let change = Change {
                path: file.path,
                before,
                after: content.to_owned(),
            };
            let title = format!("{} fs/write_text_file", chat.agent);
            propose(state, &project, &title, vec![change]).await
        }
    };
    match answer {
        Ok(_) => Ok(json!({})),
        Err(Failure(message)) => Err(message),
    }
}

/// The chat's project: the checkout holding its cwd.
async fn project(state: &State, chat: &Chat) -> Result<Project, String> {
    Project::open(state, &json!({"projectPath": chat.cwd}))
        .await
        .map_err(|failure| failure.0)
}

/// A path out of the project: the agent is told, and the person sees it.
fn refused(chat: &Chat) -> impl Fn(Failure) -> String + '_ {
    move |Failure(message)| {
        chat.outbox.notice("warn", format!("refused: {message}"));
        message
    }
}

/// Lines `line` (1-based; none: the first) to `line + limit - 1` of `text`,
/// each with its newline.
fn slice(text: &str, line: Option<u64>, limit: Option<u64>) -> String {
    if line.is_none() && limit.is_none() {
        return text.to_owned();
    }
    let skip = line.map_or(0, |line| line.saturating_sub(1)) as usize;
    let take = limit.map_or(usize::MAX, |limit| limit as usize);
    text.split_inclusive('\n').skip(skip).take(take).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_and_limit_pick_lines_one_based() {
        let text = "a\nb\nc\nd";
        assert_eq!(slice(text, None, None), text);
        assert_eq!(slice(text, Some(2), Some(2)), "b\nc\n");
        assert_eq!(slice(text, Some(3), None), "c\nd");
        assert_eq!(slice(text, None, Some(1)), "a\n");
        assert_eq!(slice(text, Some(9), Some(1)), "");
    }
}
