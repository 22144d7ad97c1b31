//! Where agents find this Neovim: pi's lockfile, Claude Code's (the same
//! content in its own directory) and the companion CLIs' discovery files.
//! All carry the workspace, rewritten after `:cd`, and go at shutdown.

use super::bind::Ports;
use crate::config::Config;
use crate::discovery::Discovery;
use crate::lockfile::{self, LockInfo, Lockfile, Lockfiles};
use crate::nvim::seam::Announced;
use std::io;

/// The files this process wrote for agents to find it.
pub struct Announcements {
    locks: Lockfiles,
    discoveries: Vec<Discovery>,
    /// pi's lockfile, and how many stale ones went before it was written.
    pub pi_path: String,
    pub stale_removed: usize,
    pub claude_lockfile: Option<String>,
    pub claude_error: Option<String>,
    /// Each companion CLI announced, for Lua.
    pub companions: Vec<Announced>,
    pub companion_error: Option<String>,
}

/// The secret every transport checks, the same in every file.
pub struct Token {
    pub value: String,
    /// Where it is kept across restarts, when it is.
    pub file: Option<String>,
    /// Why the kept one could not be read or written.
    pub warning: Option<String>,
}

impl Token {
    /// A fixed MCP port keeps its token, so a client configured once keeps
    /// working; else a fresh one.
    pub fn choose(config: &Config, ports: &Ports) -> Token {
        match (&ports.mcp, config.mcp_port, &config.mcp_token_file) {
            (Some(_), Some(mcp_port), Some(file)) if mcp_port != 0 => {
                let kept = crate::http::token::kept(file);
                Token {
                    value: kept.token,
                    file: Some(file.display().to_string()),
                    warning: kept.warning,
                }
            }
            _ => Token {
                value: crate::auth::new_token(),
                file: None,
                warning: None,
            },
        }
    }
}

impl Announcements {
    /// Writes pi's lockfile (failing that, the host cannot be found: an
    /// error), Claude Code's and the discovery file of each companion
    /// port; a companion that could not be announced is not served.
    pub fn write(config: &Config, ports: &mut Ports, token: &str) -> io::Result<Announcements> {
        let dir = config
            .lock_dir
            .clone()
            .or_else(lockfile::default_dir)
            .ok_or_else(|| io::Error::other("no lock directory: set $PI_IDE_LOCK_DIR or $HOME"))?;
        let stale_removed = lockfile::remove_stale(&dir);
        let info = LockInfo {
            pid: config.nvim_pid,
            workspace_folders: vec![config.cwd.clone()],
            ide_name: lockfile::IDE_NAME.into(),
            transport: "ws".into(),
            auth_token: token.to_owned(),
            mcp_url: ports.mcp_url.clone(),
        };
        let port = ports.port()?;
        let pi_lock = Lockfile::create(&dir, port, info.clone()).map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("cannot write a lockfile in {}: {e}", dir.display()),
            )
        })?;
        let pi_path = pi_lock.path().display().to_string();
        let mut locks = Lockfiles::default();
        locks.push(pi_lock);
        // Claude Code finds IDEs only in its own directory; failing there must
        // not cost pi its editor.
        let claude = config.claude_lock_dir.as_deref().map(|claude_dir| {
            lockfile::remove_stale(claude_dir);
            Lockfile::create(claude_dir, port, info).map_err(|error| {
                format!(
                    "cannot write Claude Code's lockfile in {}: {error}",
                    claude_dir.display()
                )
            })
        });
        let (claude_lockfile, claude_error) = match claude {
            Some(Ok(lockfile)) => {
                let path = lockfile.path().display().to_string();
                locks.push(lockfile);
                (Some(path), None)
            }
            Some(Err(error)) => (None, Some(error)),
            None => (None, None),
        };
        let mut discoveries = Vec::new();
        let mut announced = Vec::new();
        let roots = workspace_roots(&config.cwd, &config.root);
        let mut kept = Vec::new();
        let mut companion_errors = std::mem::take(&mut ports.companion_errors);
        for (kind, dir, listener) in ports.companions.drain(..) {
            let companion_port = listener.local_addr()?.port();
            let created = Discovery::create(
                kind,
                &dir,
                config.nvim_pid,
                companion_port,
                token,
                roots.clone(),
            );
            match created {
                Ok(discovery) => {
                    announced.push(Announced {
                        client: kind.as_str(),
                        port: companion_port,
                        file: discovery.path().display().to_string(),
                    });
                    discoveries.push(discovery);
                    kept.push((kind, dir, listener));
                }
                Err(error) => companion_errors.push(format!(
                    "cannot announce Neovim to {} in {}: {error}",
                    kind.as_str(),
                    dir.display()
                )),
            }
        }
        ports.companions = kept;
        let companion_error = (!companion_errors.is_empty()).then(|| companion_errors.join("; "));
        Ok(Announcements {
            locks,
            discoveries,
            pi_path,
            stale_removed,
            claude_lockfile,
            claude_error,
            companions: announced,
            companion_error,
        })
    }

    /// Neovim's cwd (and so the project root) changed.
    pub fn set_workspace(&mut self, dir: &str, root: &str) {
        let roots = workspace_roots(dir, root);
        for discovery in &mut self.discoveries {
            discovery.set_workspace(&roots);
        }
        self.locks.set_workspace_folders(&[dir.to_owned()]);
    }

    pub fn remove(&self) {
        self.locks.remove();
        for discovery in &self.discoveries {
            discovery.remove();
        }
    }
}

/// The workspace the companion CLIs match their cwd against: Neovim's cwd
/// and, when it differs, its project root.
fn workspace_roots(cwd: &str, root: &str) -> Vec<String> {
    let mut roots = vec![cwd.to_owned()];
    if !root.is_empty() && root != cwd {
        roots.push(root.to_owned());
    }
    roots
}
