//! What the tools know about the project: which one a call is about, its
//! files, problems, language servers, git, and the edits proposed to the
//! person. Knows nothing of transports or tool shapes.
//!
//! * [`routing`]  – which project a call is about (`projectPath`), and
//!   keeping its paths inside it.
//! * [`workspace`] – Neovim's cwd as the workspace folder of the editor tools.
//! * [`files`]    – open files, buffer text, showing a file.
//! * [`problems`] – diagnostics of a file (loaded and waited for) or of all.
//! * [`workspace_problems`] – the servers' workspace diagnostics, pulled.
//! * [`search`]   – walking the project: globs, names, text, regex, trees.
//! * [`lsp`]      – asking Neovim's language servers, locations and symbols.
//! * [`lsp_answers`] – the servers' answers as Lua passes them on, read.
//! * [`line_text`] – the text of the lines an answer names, off the UI thread.
//! * [`edits`]    – changing files through the person's approval (one diff
//!   per file, accept-all / reject-all for several), and the edits that
//!   language servers compute.
//! * [`symbol_search`] – workspace symbols, else the tree-sitter outline.
//! * [`hierarchy`] – call and type hierarchies walked level by level.
//! * [`run`]      – running configurations and commands once the person agreed.

pub mod edits;
pub mod files;
pub mod hierarchy;
pub mod line_text;
pub mod lsp;
mod lsp_answers;
pub mod problems;
mod routing;
pub mod run;
pub mod search;
pub mod symbol_search;
pub mod workspace;
mod workspace_problems;

pub use routing::{NoProject, Project};

/// Why a project question has no answer, told to the agent.
#[derive(Debug)]
pub struct Failure(pub String);

impl From<String> for Failure {
    fn from(message: String) -> Self {
        Failure(message)
    }
}

/// A successful answer: its text, and the same as JSON.
pub type Answer = Result<(String, serde_json::Value), Failure>;
