//! `get_type_hierarchy {filePath, line, column, direction, depth?}`: the supertypes or subtypes of the type
//! at the position, from language servers that support type hierarchies;
//! a clear refusal from those that do not.

use async_trait::async_trait;
use serde_json::json;

use super::{ProjectTool, Spec};
use crate::project::hierarchy::{HierarchyArgs, schema, walk_from};
use crate::project::{Answer, Failure, Project};
use crate::state::State;

pub struct GetTypeHierarchy;

#[async_trait]
impl ProjectTool for GetTypeHierarchy {
    type Args = HierarchyArgs;

    const SPEC: Spec = Spec::project(
        "get_type_hierarchy",
        "Supertypes (direction \"supertypes\": what it extends or implements) or subtypes (\"subtypes\") of the class or type at a 1-based line and column, from the language server, as a tree: items {name, kind, detail?, filePath, line, column, lineText, children}, 1-based (UTF-16 columns), depth levels deep (default 1, at most 3), at most 100 items. Not every language server supports type hierarchies; the result says so when this one does not.",
        || {
            schema(
                json!({"type": "string", "enum": ["supertypes", "subtypes"], "description": "supertypes: what it extends or implements; subtypes: what extends or implements it"}),
            )
        },
    );

    async fn run(state: &State, project: &Project, args: HierarchyArgs) -> Answer {
        let found = walk_from(
            state,
            project,
            "type_hierarchy",
            [("supertypes", "supertypes"), ("subtypes", "subtypes")],
            &args,
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
