//! `get_call_hierarchy {filePath, line, column, direction, depth?}`: the callers (incoming) or callees
//! (outgoing) of the function at the position, level by level, from the
//! language server; bounded in depth and count.

use async_trait::async_trait;
use serde_json::json;

use super::{ProjectTool, Spec};
use crate::project::hierarchy::{HierarchyArgs, schema, walk_from};
use crate::project::{Answer, Project};
use crate::state::State;

pub struct GetCallHierarchy;

#[async_trait]
impl ProjectTool for GetCallHierarchy {
    type Args = HierarchyArgs;

    const SPEC: Spec = Spec::project(
        "get_call_hierarchy",
        "Callers (direction \"incoming\") or callees (\"outgoing\") of the function or method at a 1-based line and column, from the language server, as a tree: items {name, kind, detail?, filePath, line, column, lineText, children}, 1-based (UTF-16 columns), depth levels deep (default 1, at most 3), at most 100 items.",
        || {
            schema(
                json!({"type": "string", "enum": ["incoming", "outgoing"], "description": "incoming: who calls it; outgoing: what it calls"}),
            )
        },
    );

    async fn run(state: &State, project: &Project, args: HierarchyArgs) -> Answer {
        walk_from(
            state,
            project,
            "call_hierarchy",
            [
                ("incoming", "incoming_calls"),
                ("outgoing", "outgoing_calls"),
            ],
            &args,
        )
        .await
    }
}
