//! Integration tests: a real headless Neovim starts the real host through the
//! real Lua glue, and a real WebSocket client plays the agent.

mod common;

mod adversarial;

mod diagnostics;
mod diffs;
mod faults;
mod handshake;
mod lifecycle;
mod load;
mod load_driver;
mod lua;
mod mcp;
mod properties;
mod reload;
mod seam;
mod selection;
mod suggest;
