//! The host's ports, bound before anything is announced: the WebSocket
//! (on another port when its own is taken), the MCP endpoint and one per
//! companion CLI. A port that cannot be had costs only its own transport.

use std::io;
use std::net::Ipv4Addr;
use std::path::PathBuf;

use tokio::net::TcpListener;

use crate::client::ClientKind;
use crate::codex_ipc::file::{self as codex_file, Bound, Places};
use crate::config::Config;
use crate::nvim::seam::CodexInfo;

/// Every port the host listens on, and why any is missing.
pub struct Ports {
    pub websocket: TcpListener,
    /// Why the configured WebSocket port was not used.
    pub port_taken: Option<String>,
    pub mcp: Option<TcpListener>,
    /// The MCP endpoint's URL, when it listens.
    pub mcp_url: Option<String>,
    pub mcp_error: Option<String>,
    /// Each companion CLI's port, with the directory it is announced in.
    pub companions: Vec<(ClientKind, PathBuf, TcpListener)>,
    pub companion_errors: Vec<String>,
    /// Codex CLI's IDE socket(s), when served.
    pub codex: Option<CodexSockets>,
    /// Why it is not served.
    pub codex_error: Option<String>,
}

/// The places Codex's socket listens on.
pub struct CodexSockets {
    pub bound: Vec<Bound>,
    pub places: Places,
    /// Why the shared place is not served (someone else answers there).
    pub shared_note: Option<String>,
}

impl CodexSockets {
    /// What Lua hears.
    pub fn info(&self) -> CodexInfo {
        let shared = self
            .bound
            .iter()
            .any(|bound| bound.file.path() == self.places.shared);
        CodexInfo {
            tmpdir: self.places.private_tmpdir.display().to_string(),
            socket: self.places.private.display().to_string(),
            shared: shared.then(|| self.places.shared.display().to_string()),
            shared_note: self.shared_note.clone(),
        }
    }
}

impl Ports {
    pub async fn bind(config: &Config) -> io::Result<Ports> {
        let (websocket, port_taken) = bind_websocket(config.port).await?;
        // A taken MCP port must not cost the agents the WebSocket server.
        let (mcp, mcp_error) = match config.mcp_port {
            Some(mcp_port) => match TcpListener::bind((Ipv4Addr::LOCALHOST, mcp_port)).await {
                Ok(listener) => (Some(listener), None),
                Err(e) => (
                    None,
                    Some(format!(
                        "cannot listen for MCP on 127.0.0.1:{mcp_port}: {e}"
                    )),
                ),
            },
            None => (None, None),
        };
        let mcp_url = match &mcp {
            Some(listener) => Some(format!(
                "http://127.0.0.1:{}{}",
                listener.local_addr()?.port(),
                crate::http::PATH
            )),
            None => None,
        };
        let (companions, companion_errors) = bind_companions(config).await;
        let (codex, codex_error) = match &config.codex_tmpdir {
            Some(tmpdir) => match bind_codex(tmpdir, config.nvim_pid).await {
                Ok(codex) => (Some(codex), None),
                Err(error) => (None, Some(error)),
            },
            None => (None, None),
        };
        Ok(Ports {
            websocket,
            port_taken,
            mcp,
            mcp_url,
            mcp_error,
            companions,
            companion_errors,
            codex,
            codex_error,
        })
    }

    pub fn port(&self) -> io::Result<u16> {
        Ok(self.websocket.local_addr()?.port())
    }
}

/// The companion listeners asked for (loopback, any free port), with the
/// directory each is announced in, and why any could not listen.
async fn bind_companions(
    config: &Config,
) -> (Vec<(ClientKind, PathBuf, TcpListener)>, Vec<String>) {
    let mut bound = Vec::new();
    let mut errors = Vec::new();
    for (kind, dir) in &config.companions {
        match TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await {
            Ok(listener) => bound.push((*kind, dir.clone(), listener)),
            Err(error) => errors.push(format!("cannot listen for {}: {error}", kind.as_str())),
        }
    }
    (bound, errors)
}

/// Codex's socket in this Neovim's private place, and in the shared one
/// when nobody answers there.
async fn bind_codex(tmpdir: &std::path::Path, nvim_pid: u32) -> Result<CodexSockets, String> {
    codex_file::remove_stale(tmpdir);
    let places = Places::under(tmpdir, nvim_pid);
    let private = codex_file::bind_private_place(&places, nvim_pid)
        .await
        .map_err(|error| {
            format!(
                "cannot serve Codex's IDE socket in {}: {error}",
                places.private_tmpdir.display()
            )
        })?;
    let mut bound = vec![private];
    let shared_note = match codex_file::bind_shared_place(&places, nvim_pid).await {
        Ok(shared) => {
            bound.push(shared);
            None
        }
        Err(why) => Some(why),
    };
    Ok(CodexSockets {
        bound,
        places,
        shared_note,
    })
}

/// The WebSocket listener on `port`, or on any free port when that one is
/// taken (and why it was not used).
async fn bind_websocket(port: u16) -> io::Result<(TcpListener, Option<String>)> {
    if port != 0 {
        match TcpListener::bind((Ipv4Addr::LOCALHOST, port)).await {
            Ok(listener) => return Ok((listener, None)),
            Err(error) => {
                let why = format!("port {port} is taken ({error}); listening on another one");
                let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await?;
                return Ok((listener, Some(why)));
            }
        }
    }
    Ok((TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await?, None))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_taken_port_falls_back_to_a_free_one_and_says_why() {
        let taken = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await.unwrap();
        let port = taken.local_addr().unwrap().port();
        let (other, why) = bind_websocket(port).await.unwrap();
        assert_ne!(other.local_addr().unwrap().port(), port);
        assert!(why.unwrap().contains(&format!("port {port} is taken")));
        drop(taken);
        let (again, why) = bind_websocket(port).await.unwrap();
        assert_eq!(
            again.local_addr().unwrap().port(),
            port,
            "free again: bound"
        );
        assert_eq!(why, None);
    }
}
