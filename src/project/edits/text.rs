//! `replace_text_in_file {pathInProject, oldText, newText, replaceAll,
//! caseSensitive}` and `create_new_file {pathInProject, text, overwrite}`,
//! as JetBrains names them, through [`super::propose`].

use regex::{NoExpand, RegexBuilder};
use serde::Deserialize;

use super::super::{Answer, Failure, Project};
use super::current::Current;
use super::{Change, propose};
use crate::state::State;

fn yes() -> bool {
    true
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReplaceArgs {
    path_in_project: String,
    old_text: String,
    new_text: String,
    #[serde(default = "yes")]
    replace_all: bool,
    #[serde(default = "yes")]
    case_sensitive: bool,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateArgs {
    path_in_project: String,
    #[serde(default)]
    text: String,
    #[serde(default)]
    overwrite: bool,
}

pub async fn replace_text(state: &State, project: &Project, args: ReplaceArgs) -> Answer {
    if args.old_text.is_empty() {
        return Err(Failure("oldText must not be empty".into()));
    }
    let file = project.confine(&args.path_in_project)?;
    let before = Current::read(state, &file).await?;
    if !before.exists {
        return Err(Failure(format!(
            "{} does not exist (create_new_file creates files)",
            args.path_in_project
        )));
    }
    let text = before.lf_text();
    let Some(after) = replace(&text, &args) else {
        let hint = if args.case_sensitive && replace_with_case(&text, &args, false).is_some() {
            " (it occurs with other case: caseSensitive=false finds it)"
        } else {
            ""
        };
        return Err(Failure(format!(
            "oldText was not found in {}{hint}; nothing was changed",
            args.path_in_project
        )));
    };
    let change = Change {
        path: file.path,
        before,
        after,
    };
    propose(state, project, "replace_text_in_file", vec![change]).await
}

/// `text` with `oldText` replaced as asked; `None` when it does not occur.
/// Agents send `\n` newlines, which is how [`Current::lf_text`] reads.
fn replace(text: &str, args: &ReplaceArgs) -> Option<String> {
    replace_with_case(text, args, args.case_sensitive)
}

/// [`replace`], matching case or not whatever `args` asks.
fn replace_with_case(text: &str, args: &ReplaceArgs, case_sensitive: bool) -> Option<String> {
    let old = args.old_text.replace("\r\n", "\n");
    let pattern = RegexBuilder::new(&regex::escape(&old))
        .case_insensitive(!case_sensitive)
        .size_limit(1 << 24)
        .build()
        .ok()?;
    if !pattern.is_match(text) {
        return None;
    }
    let limit = if args.replace_all { 0 } else { 1 };
    Some(
        pattern
            .replacen(text, limit, NoExpand(&args.new_text))
            .into_owned(),
    )
}

pub async fn create_file(state: &State, project: &Project, args: CreateArgs) -> Answer {
    let file = project.confine(&args.path_in_project)?;
    if tokio::fs::metadata(&file.real)
        .await
        .is_ok_and(|meta| meta.is_dir())
    {
        return Err(Failure(format!("{} is a directory", args.path_in_project)));
    }
    let before = Current::read(state, &file).await?;
    if before.exists && !args.overwrite {
        return Err(Failure(format!(
            "{} already exists; overwrite=true replaces it",
            args.path_in_project
        )));
    }
    let change = Change {
        path: file.path,
        before,
        after: args.text,
    };
    propose(state, project, "create_new_file", vec![change]).await
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn args(old: &str, new: &str, all: bool, case: bool) -> ReplaceArgs {
        ReplaceArgs {
            path_in_project: "a".into(),
            old_text: old.into(),
            new_text: new.into(),
            replace_all: all,
            case_sensitive: case,
        }
    }

    #[test]
    fn replaces_literally_first_or_all_with_or_without_case() {
        let text = "a.b A.B a.b\n";
        assert_eq!(
            replace(text, &args("a.b", "$1", true, true)).unwrap(),
            "$1 A.B $1\n"
        );
        assert_eq!(
            replace(text, &args("a.b", "x", false, true)).unwrap(),
            "x A.B a.b\n"
        );
        assert_eq!(
            replace(text, &args("A.b", "x", true, false)).unwrap(),
            "x x x\n"
        );
        assert_eq!(replace(text, &args("a?b", "x", true, true)), None);
        assert_eq!(
            replace("one\ntwo\n", &args("one\r\ntwo", "2", true, true)).unwrap(),
            "2\n"
        );
    }

    #[test]
    fn arguments_default_as_jetbrains_does() {
        let parsed: ReplaceArgs =
            serde_json::from_value(json!({"pathInProject": "a", "oldText": "x", "newText": "y"}))
                .unwrap();
        assert!(parsed.replace_all && parsed.case_sensitive);
        let created: CreateArgs = serde_json::from_value(json!({"pathInProject": "a"})).unwrap();
        assert_eq!((created.text.as_str(), created.overwrite), ("", false));
    }
}
