//! The msgpack-RPC seam with Neovim, the bottom layer of the host.
//!
//! * [`seam`]    – every Lua function the host calls and every event Lua
//!   sends, with their payloads (the table of the seam lives there).
//! * [`editor`]  – calls into Neovim from spawned tasks.
//! * [`handler`] – receives notifications and forwards them.
//! * [`convert`] – msgpack ⇄ JSON values.

pub mod convert;
pub mod editor;
pub mod handler;
pub mod seam;
