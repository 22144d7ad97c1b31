//! The workspace folder of the editor tools (Claude's IDE protocol and the
//! IDE companion): Neovim's global cwd, confirmed as a project, and paths
//! confined to it.

use crate::confine::{self, Confined, ProjectRoot, links};
use crate::nvim::seam::LuaCall;
use crate::state::State;

/// Neovim's global cwd, confirmed as a project: the workspace folder
/// agents' paths are confined to.
pub async fn workspace(state: &State) -> Result<ProjectRoot, String> {
    match state.editor().query::<String>(LuaCall::Workspace).await {
        Ok(Some(cwd)) if !cwd.is_empty() => {
            ProjectRoot::confirm(&cwd).map_err(|not| format!("Neovim's current directory {not}"))
        }
        Ok(_) => Err("Neovim has no current directory".into()),
        Err(error) => Err(format!("cannot read Neovim's current directory: {error}")),
    }
}

/// `given` (absolute, or relative to the workspace folder) if it leads
/// into the workspace folder, else why not.
pub fn confine(root: &ProjectRoot, given: &str) -> Result<Confined, String> {
    let path = links::absolute(root.given(), given);
    confine::confine(std::slice::from_ref(root), &path, false)
        .map_err(|escape| escape.explain(&path, &format!("the workspace folder {}", root.given())))
}
