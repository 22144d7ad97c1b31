//! `lint_files {paths, errorsOnly?}`: the problems of several files, each
//! loaded if it was not and its language servers' first diagnostics waited
//! for (what `get_file_problems` does for one), a few at a time, bounded in
//! count; a file that cannot be linted says why without failing the rest.

use futures_util::{StreamExt, stream};
use serde::Deserialize;
use serde_json::{Value, json};

use async_trait::async_trait;

use super::{ProjectTool, Spec, object};
use crate::project::Failure;
use crate::project::problems::of_file;
use crate::project::{Answer, Project};
use crate::state::State;

/// At most this many files per call.
const MAX_FILES: usize = 50;
/// Files loaded and waited for at once.
const AT_ONCE: usize = 8;

pub struct LintFiles;

#[async_trait]
impl ProjectTool for LintFiles {
    type Args = Args;

    const SPEC: Spec = Spec::project(
        "lint_files",
        "Problems (diagnostics) of several project files at once, each loaded if needed and its language servers' first diagnostics waited for (a few seconds at most): [{filePath, errors, serversNotReported?, error?}], 1-based lines and columns (UTF-16). At most 50 files.",
        || {
            object(
                json!({
                    "paths": {"type": "array", "items": {"type": "string"}, "description": "Paths relative to the project root"},
                    "errorsOnly": {"type": "boolean", "description": "Only errors, no warnings or hints (default false)"},
                }),
                &["paths"],
            )
        },
    );

    async fn run(state: &State, project: &Project, args: Self::Args) -> Answer {
        if args.paths.is_empty() {
            return Err(Failure("paths must name at least one file".into()));
        }
        if args.paths.len() > MAX_FILES {
            return Err(Failure(format!(
                "lint_files takes at most {MAX_FILES} files, got {}; ask in parts",
                args.paths.len()
            )));
        }
        let errors_only = args.errors_only;
        let mut found: Vec<(usize, Value, String)> =
            stream::iter(args.paths.into_iter().enumerate())
                .map(|(index, given)| async move {
                    match of_file(state, project, &given, errors_only).await {
                        Ok(problems) => (index, problems.structured(), problems.named_text()),
                        Err(Failure(error)) => (
                            index,
                            json!({"filePath": given, "errors": [], "error": error}),
                            error,
                        ),
                    }
                })
                .buffer_unordered(AT_ONCE)
                .collect()
                .await;
        found.sort_by_key(|(index, _, _)| *index);
        let text = found
            .iter()
            .map(|(_, _, text)| text.as_str())
            .collect::<Vec<_>>()
            .join("\n");
        let files: Vec<Value> = found.into_iter().map(|(_, file, _)| file).collect();
        Ok((text, json!({"files": files})))
    }
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    paths: Vec<String>,
    #[serde(default)]
    errors_only: bool,
}
