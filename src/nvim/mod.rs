//! The msgpack-RPC seam with Neovim, the bottom layer of the host.
//!
//! * [`seam`]    – every Lua function the host calls and every event Lua
//!   sends, with their payloads (the table of the seam lives there).
//! * [`editor`]  – calls into Neovim from spawned tasks.
//! * [`handler`] – receives notifications and forwards them.
//! * [`convert`] – msgpack ⇄ JSON values.

pub mod convert;
pub(crate) mod editor;
pub(crate) mod handler;
pub mod seam;

use std::io;
use std::os::fd::AsFd;

use nvim_rs::Neovim;
use nvim_rs::error::LoopError;
use tokio::task::JoinHandle;
use tokio_util::compat::{TokioAsyncReadCompatExt, TokioAsyncWriteCompatExt};

use editor::Nvim;
use handler::NvimHandler;

/// Largest chunk buffered for Neovim's pipe. tokio's default (2 MiB) stays
/// allocated for the host's lifetime once a large diff was sent.
const STDOUT_BUFFER: usize = 64 * 1024;

/// The RPC I/O loop; it ends when Neovim closes the channel.
pub(crate) type IoLoop = JoinHandle<Result<(), Box<LoopError>>>;

/// Attaches to the Neovim that started us over stdin/stdout.
pub(crate) fn attach_parent(handler: NvimHandler) -> io::Result<(Nvim, IoLoop)> {
    let stdout = std::fs::File::from(io::stdout().as_fd().try_clone_to_owned()?);
    let mut stdout = tokio::fs::File::from_std(stdout);
    stdout.set_max_buf_size(STDOUT_BUFFER);
    let (nvim, io_loop) = Neovim::new(tokio::io::stdin().compat(), stdout.compat_write(), handler);
    Ok((nvim, tokio::spawn(io_loop)))
}
