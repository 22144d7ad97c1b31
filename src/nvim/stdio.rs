//! The host's ends of its RPC channel with Neovim, stdin and stdout. Neovim's
//! job control makes them sockets, which tokio's reactor drives directly; a
//! pipe or file (a host started some other way) falls back to tokio's
//! blocking-thread I/O, which costs a thread hand-off per read and write.

use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::fs::FileTypeExt;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::UnixStream;

/// Largest chunk buffered for a non-socket stdout. tokio's default (2 MiB)
/// stays allocated for the host's lifetime once a large diff was sent.
const STDOUT_BUFFER: usize = 64 * 1024;

/// What the host reads Neovim's messages from.
pub enum Input {
    Socket(UnixStream),
    Stdin(tokio::io::Stdin),
}

/// What the host writes its messages to.
pub enum Output {
    Socket(UnixStream),
    File(tokio::fs::File),
}

/// stdin and stdout, as sockets when they are.
pub fn open() -> io::Result<(Input, Output)> {
    let input = match socket(io::stdin().as_fd().try_clone_to_owned()?)? {
        Some(stream) => Input::Socket(stream),
        None => Input::Stdin(tokio::io::stdin()),
    };
    let stdout = io::stdout().as_fd().try_clone_to_owned()?;
    let output = match socket(stdout.try_clone()?)? {
        Some(stream) => Output::Socket(stream),
        None => {
            let mut file = tokio::fs::File::from_std(std::fs::File::from(stdout));
            file.set_max_buf_size(STDOUT_BUFFER);
            Output::File(file)
        }
    };
    Ok((input, output))
}

/// `fd` registered with tokio's reactor when it is a socket.
fn socket(fd: OwnedFd) -> io::Result<Option<UnixStream>> {
    let file = std::fs::File::from(fd);
    if !file.metadata()?.file_type().is_socket() {
        return Ok(None);
    }
    let stream = std::os::unix::net::UnixStream::from(OwnedFd::from(file));
    stream.set_nonblocking(true)?;
    UnixStream::from_std(stream).map(Some)
}

impl AsyncRead for Input {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Input::Socket(stream) => Pin::new(stream).poll_read(cx, buf),
            Input::Stdin(stdin) => Pin::new(stdin).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Output {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Output::Socket(stream) => Pin::new(stream).poll_write(cx, buf),
            Output::File(file) => Pin::new(file).poll_write(cx, buf),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Output::Socket(stream) => Pin::new(stream).poll_flush(cx),
            Output::File(file) => Pin::new(file).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Output::Socket(stream) => Pin::new(stream).poll_shutdown(cx),
            Output::File(file) => Pin::new(file).poll_shutdown(cx),
        }
    }
}
