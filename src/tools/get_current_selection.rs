//! `getCurrentSelection {}`: the selection (or cursor) of the current
//! window when it shows a file, shaped like `selection_changed`.

use async_trait::async_trait;
use serde_json::{Value, json};

use super::{Call, NoArgs, Outcome, Spec, Tool, json_text, no_arguments};
use crate::nvim::seam::LuaCall;
use crate::selection::Positions;
use crate::state::State;

pub struct GetCurrentSelection;

#[async_trait]
impl Tool for GetCurrentSelection {
    type Args = NoArgs;

    const SPEC: Spec = Spec::editor(
        "getCurrentSelection",
        "The selected text (or cursor) of Neovim's current window, if it shows a file.",
        no_arguments,
    );

    async fn run(call: &Call<'_>, _args: NoArgs) -> Outcome {
        Ok(run(call.state).await)
    }
}

pub async fn run(state: &State) -> Value {
    let positions = state
        .editor()
        .query::<Positions>(LuaCall::CurrentPositions)
        .await;
    answer(state, positions, "No active editor found").await
}

/// `{success:true, text, filePath, selection:{start, end}}` for `positions`
/// (0-based lines, UTF-16 characters), or `{success:false, message}`.
pub async fn answer(
    state: &State,
    positions: Result<Option<Positions>, String>,
    missing: &str,
) -> Value {
    let fail = |message: &str| json_text(json!({"success": false, "message": message}));
    let positions = match positions {
        Ok(Some(positions)) => positions,
        Ok(None) => return fail(missing),
        Err(error) => return fail(&format!("cannot read the selection: {error}")),
    };
    let (first, last) = positions.rows();
    match state.editor().lines(positions.buf, first, last).await {
        Ok(lines) => {
            let params = positions.to_params(&lines);
            let selection = &params["selection"];
            json_text(json!({
                "success": true,
                "text": params["text"],
                "filePath": params["filePath"],
                "selection": {"start": selection["start"], "end": selection["end"]},
            }))
        }
        Err(error) => fail(&format!("cannot read the selected lines: {error}")),
    }
}
