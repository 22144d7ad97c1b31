//! `get_call_hierarchy {filePath, line, column, direction, depth?}`: the callers (incoming) or callees
//! (outgoing) of the function at the position, level by level, from the
//! language server; bounded in depth and count.

use serde::Deserialize;
use serde_json::json;

use async_trait::async_trait;

use super::{ProjectTool, Spec, object};
use crate::project::hierarchy::{MAX_DEPTH, Walk, walk};
use crate::project::{Answer, Failure, Project};
use crate::state::State;

pub struct GetCallHierarchy;

#[async_trait]
impl ProjectTool for GetCallHierarchy {
    type Args = Args;

    const SPEC: Spec = Spec {
        name: "get_call_hierarchy",
        description: "Callers (direction \"incoming\") or callees (\"outgoing\") of the function or method at a 1-based line and column, from the language server, as a tree: items {name, kind, detail?, filePath, line, column, lineText, children}, 1-based (UTF-16 columns), depth levels deep (default 1, at most 3), at most 100 items.",
        schema: || {
            object(
                json!({
                    "filePath": {"type": "string", "description": "Path relative to the project root"},
                    "line": {"type": "integer", "minimum": 1, "description": "1-based line"},
                    "column": {"type": "integer", "minimum": 1, "description": "1-based column, in UTF-16 code units"},
                    "direction": {"type": "string", "enum": ["incoming", "outgoing"], "description": "incoming: who calls it; outgoing: what it calls"},
                    "depth": {"type": "integer", "minimum": 1, "maximum": MAX_DEPTH, "description": "Levels below the symbol (default 1, at most 3)"},
                }),
                &["filePath", "line", "column", "direction"],
            )
        },
        waits_for_the_person: false,
        in_project: true,
    };

    async fn run(state: &State, project: &Project, args: Self::Args) -> Answer {
        let step = match args.direction.as_str() {
            "incoming" => "incoming_calls",
            "outgoing" => "outgoing_calls",
            other => {
                return Err(Failure(format!(
                    "direction must be \"incoming\" or \"outgoing\", got \"{other}\""
                )));
            }
        };
        let path = project.resolve(&args.file_path)?;
        walk(
            state,
            project,
            Walk {
                prepare: "call_hierarchy",
                step,
            },
            path,
            args.line.max(1) - 1,
            args.column.max(1) - 1,
            args.depth,
        )
        .await
    }
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Args {
    file_path: String,
    line: u64,
    column: u64,
    direction: String,
    #[serde(default = "one")]
    depth: u64,
}

fn one() -> u64 {
    1
}
