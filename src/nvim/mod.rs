//! The msgpack-RPC seam with Neovim, the bottom layer of the host.
//!
//! * [`seam`]    – every Lua function the host calls and every event Lua
//!   sends, with their payloads (the table of the seam lives there).
//! * [`editor`]  – calls into Neovim from spawned tasks.
//! * [`handler`] – receives notifications and forwards them.
//! * [`convert`] – msgpack ⇄ JSON values.
//! * [`stdio`]   – the channel's ends, stdin and stdout.

pub mod convert;
pub(crate) mod editor;
pub(crate) mod handler;
pub mod seam;
mod stdio;

use std::io;

use nvim_rs::Neovim;
use nvim_rs::error::LoopError;
use tokio::task::{JoinError, JoinHandle};
use tokio_util::compat::{TokioAsyncReadCompatExt, TokioAsyncWriteCompatExt};

use editor::Nvim;
use handler::NvimHandler;

/// The RPC I/O loop; it ends when Neovim closes the channel.
pub(crate) type IoLoop = JoinHandle<Result<(), Box<LoopError>>>;

/// Attaches to the Neovim that started us over stdin/stdout.
pub(crate) fn attach_parent(handler: NvimHandler) -> io::Result<(Nvim, IoLoop)> {
    let (input, output) = stdio::open()?;
    let (nvim, io_loop) = Neovim::new(input.compat(), output.compat_write(), handler);
    Ok((nvim, crate::task::spawn(io_loop)))
}

/// Attaches over one end of a socket pair: a stand-in Neovim for the fuzz
/// targets serves the other.
#[cfg(feature = "fuzzing")]
pub(crate) fn attach_socket(
    stream: tokio::net::UnixStream,
    handler: NvimHandler,
) -> io::Result<(Nvim, IoLoop)> {
    let read = stream.into_std()?;
    let write = read.try_clone()?;
    let input = stdio::Input::Socket(tokio::net::UnixStream::from_std(read)?);
    let output = stdio::Output::Socket(tokio::net::UnixStream::from_std(write)?);
    let (nvim, io_loop) = Neovim::new(input.compat(), output.compat_write(), handler);
    Ok((nvim, crate::task::spawn(io_loop)))
}

/// Why the RPC channel ended, unless Neovim closed it.
pub(crate) fn channel_failure(
    ended: Result<Result<(), Box<LoopError>>, JoinError>,
) -> Option<String> {
    let why = match ended {
        Ok(Ok(())) => return None,
        Ok(Err(error)) if error.is_channel_closed() => {
            tracing::info!("Neovim closed the channel");
            return None;
        }
        Ok(Err(error)) => format!("the RPC channel with Neovim failed: {error}"),
        Err(error) => format!("the RPC channel with Neovim failed: {error}"),
    };
    tracing::error!("{why}");
    Some(why)
}
