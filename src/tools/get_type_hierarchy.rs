//! `get_type_hierarchy {filePath, line, column, direction, depth?}`: the supertypes or subtypes of the type
//! at the position, from language servers that support type hierarchies;
//! a clear refusal from those that do not.

use serde::Deserialize;
use serde_json::json;

use async_trait::async_trait;

use super::{ProjectTool, Spec, object};
use crate::project::hierarchy::{MAX_DEPTH, Walk, walk};
use crate::project::{Answer, Failure, Project};
use crate::state::State;

pub struct GetTypeHierarchy;

#[async_trait]
impl ProjectTool for GetTypeHierarchy {
    type Args = Args;

    const SPEC: Spec = Spec {
        name: "get_type_hierarchy",
        description: "Supertypes (direction \"supertypes\": what it extends or implements) or subtypes (\"subtypes\") of the class or type at a 1-based line and column, from the language server, as a tree: items {name, kind, detail?, filePath, line, column, lineText, children}, 1-based (UTF-16 columns), depth levels deep (default 1, at most 3), at most 100 items. Not every language server supports type hierarchies; the result says so when this one does not.",
        schema: || {
            object(
                json!({
                    "filePath": {"type": "string", "description": "Path relative to the project root"},
                    "line": {"type": "integer", "minimum": 1, "description": "1-based line"},
                    "column": {"type": "integer", "minimum": 1, "description": "1-based column, in UTF-16 code units"},
                    "direction": {"type": "string", "enum": ["supertypes", "subtypes"], "description": "supertypes: what it extends or implements; subtypes: what extends or implements it"},
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
            "supertypes" => "supertypes",
            "subtypes" => "subtypes",
            other => {
                return Err(Failure(format!(
                    "direction must be \"supertypes\" or \"subtypes\", got \"{other}\""
                )));
            }
        };
        let path = project.resolve(&args.file_path)?;
        let found = walk(
            state,
            project,
            Walk {
                prepare: "type_hierarchy",
                step,
            },
            path,
            args.line.max(1) - 1,
            args.column.max(1) - 1,
            args.depth,
        )
        .await;
        found.map_err(|Failure(why)| match why.contains("prepareTypeHierarchy") {
            true => Failure(format!(
                "the language server of {} does not support type hierarchies ({why}); \
             find_implementations lists implementations, find_references the uses",
                args.file_path
            )),
            false => Failure(why),
        })
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
