//! Integration tests: a real headless Neovim starts the real host through the
//! real Lua glue, and a real WebSocket client plays the agent.

use pi_ide_test_support as common;
use pi_ide_test_support::load_driver;

mod adversarial;
mod agent_terminal;
mod agents;
mod claude_discovery;
mod claude_tools;
mod confinement;
mod context_socket;
mod diagnostics;
mod diff_review;
mod diffs;
mod faults;
mod follow;
mod handshake;
mod health;
mod help;
mod hunk_decisions;
mod large_view;
mod layers;
mod lifecycle;
mod load;
mod lua;
mod mcp;
mod mcp_edits;
mod mcp_edits_changed;
mod mcp_edits_lsp;
mod mcp_http;
mod mcp_lasting;
mod mcp_lsp;
mod mcp_lsp_many;
mod mcp_navigation;
mod mcp_python;
mod mentions;
mod neovim_version;
mod pi_bridge;
mod pi_extension;
mod properties;
mod reload;
mod review_git;
mod routing;
mod seam;
mod secrets;
mod selection;
mod suggest;
