//! `getOpenEditors {}`: the listed file buffers; the current window's one
//! is active.

use async_trait::async_trait;
use serde_json::{Value, json};

use super::{Call, NoArgs, Outcome, Spec, Tool, json_text, language_id, no_arguments};
use crate::nvim::seam::{LuaCall, OpenEditor};
use crate::state::State;
use crate::uri::file_url;

pub struct GetOpenEditors;

#[async_trait]
impl Tool for GetOpenEditors {
    type Args = NoArgs;

    const SPEC: Spec = Spec::editor(
        "getOpenEditors",
        "The files open in Neovim (listed buffers): uri, label, language, unsaved changes, which is current.",
        no_arguments,
    );

    async fn run(call: &Call<'_>, _args: NoArgs) -> Outcome {
        Ok(run(call.state).await)
    }
}

pub async fn run(state: &State) -> Value {
    let editors = match state
        .editor()
        .query::<Vec<OpenEditor>>(LuaCall::OpenEditors)
        .await
    {
        Ok(editors) => editors.unwrap_or_default(),
        Err(error) => {
            tracing::warn!("cannot list the open buffers: {error}");
            vec![]
        }
    };
    let tabs: Vec<Value> = editors
        .iter()
        .map(|editor| {
            let label = std::path::Path::new(&editor.path)
                .file_name()
                .map_or_else(|| editor.path.clone(), |n| n.to_string_lossy().into_owned());
            json!({
                "uri": file_url(&editor.path),
                "isActive": editor.active,
                "label": label,
                "languageId": language_id(&editor.filetype),
                "isDirty": editor.modified,
            })
        })
        .collect();
    json_text(json!({ "tabs": tabs }))
}
