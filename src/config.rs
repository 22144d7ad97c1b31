//! The command line Neovim starts the host with (see `lua/pi-ide/host.lua`).

use std::path::PathBuf;
use std::time::Duration;

use crate::client::ClientKind;

/// Everything the host needs to know about the Neovim that started it.
#[derive(Debug, Clone)]
pub struct Config {
    /// Neovim's pid: agents check it for liveness, so it must be the editor's.
    pub nvim_pid: u32,
    /// The WebSocket port to bind again (a restart keeps the port agents
    /// know); 0, or taken: any free one.
    pub port: u16,
    /// Initial workspace folder (Neovim's cwd); later changes arrive over RPC.
    pub cwd: String,
    /// Initial project root (the git root of the cwd, else the cwd); empty
    /// means the cwd. Later changes arrive with the cwd's.
    pub root: String,
    /// Name of pi's context socket (`<root>/.pi/ide/<name>.sock`); `None`: off.
    pub context_socket: Option<String>,
    /// Where lockfiles go; `None` means `$PI_IDE_LOCK_DIR` or `~/.pi/ide`.
    pub lock_dir: Option<PathBuf>,
    /// Claude Code's lock directory, to be announced there too; `None`: not.
    pub claude_lock_dir: Option<PathBuf>,
    /// Log file; `None` disables logging.
    pub log_file: Option<PathBuf>,
    /// `error`, `warn`, `info`, `debug` or `trace`.
    pub log_level: String,
    /// Port of the Streamable-HTTP MCP endpoint (0: any free one); `None`: off.
    pub mcp_port: Option<u16>,
    /// Whether MCP tools' edits wait for the person's approval.
    pub mcp_approve_edits: bool,
    /// Whether `execute_terminal_command` is offered (option
    /// `mcp.terminal_commands`).
    pub mcp_terminal_commands: bool,
    /// Where the token is kept across restarts (a fixed MCP port); `None`:
    /// a fresh token each start.
    pub mcp_token_file: Option<PathBuf>,
    /// MCP sessions idle this long (no stream open) are closed; `None`:
    /// only when the cap needs their place.
    pub mcp_session_idle: Option<Duration>,
    /// The companion CLIs to serve, each with the discovery directory it
    /// is announced in (`--gemini-dir <tmpdir>/gemini/ide`, `--qwen-dir
    /// $QWEN_HOME/ide`; empty: not served).
    pub companions: Vec<(ClientKind, PathBuf)>,
    /// The temporary directory Codex CLI looks for its IDE socket under
    /// (`--codex-tmpdir`, Neovim's `$TMPDIR` or `/tmp`); `None`: not served.
    pub codex_tmpdir: Option<PathBuf>,
}

/// What the command line asks for.
#[derive(Debug)]
pub enum Parsed {
    Run(Box<Config>),
    Version,
    /// `--check-root DIR`: whether agents may be served files below DIR
    /// (`:checkhealth` asks about Neovim's cwd).
    CheckRoot(String),
    /// `mcp-stdio`: relay stdio to the `/mcp` endpoint (an ACP agent's
    /// MCP server).
    McpStdio,
}

impl Config {
    /// Parses `--pid N --cwd DIR [--port N] [--root DIR] [--context-socket NAME]
    /// [--lock-dir DIR] [--claude-lock-dir DIR] [--log-file F] [--log-level L]
    /// [--mcp-port N] [--mcp-approve-edits true|false] [--mcp-token-file F]
    /// [--mcp-session-idle-ms N] [--gemini-dir DIR] [--qwen-dir DIR] [--codex-tmpdir DIR]`
    /// (an empty `--mcp-port`: no MCP endpoint; an empty `--codex-tmpdir`: no
    /// Codex socket; idle 0: idle sessions stay until the cap needs their
    /// place; absent: four hours), `--version` or `--check-root DIR`.
    pub fn from_args(args: impl IntoIterator<Item = String>) -> Result<Parsed, String> {
        let mut pid = None;
        let mut port = 0;
        let mut cwd = None;
        let mut root = String::new();
        let mut context_socket = None;
        let mut lock_dir = None;
        let mut claude_lock_dir = None;
        let mut log_file = None;
        let mut log_level = "info".to_string();
        let mut mcp_port = None;
        let mut mcp_approve_edits = true;
        let mut mcp_terminal_commands = true;
        let mut mcp_token_file = None;
        let mut mcp_session_idle = Some(crate::http::sessions::DEFAULT_IDLE);
        let mut companions = Vec::new();
        let mut codex_tmpdir = None;
        let mut args = args.into_iter();
        while let Some(flag) = args.next() {
            if flag == "--version" {
                return Ok(Parsed::Version);
            }
            if flag == "mcp-stdio" {
                return Ok(Parsed::McpStdio);
            }
            let value = args.next().ok_or_else(|| format!("{flag} needs a value"))?;
            match flag.as_str() {
                "--check-root" => return Ok(Parsed::CheckRoot(value)),
                "--pid" => {
                    pid = Some(
                        value
                            .parse()
                            .map_err(|_| format!("--pid {value}: not a pid"))?,
                    )
                }
                "--cwd" => cwd = Some(value),
                "--port" => {
                    port = value
                        .parse()
                        .map_err(|_| format!("--port {value}: not a port"))?
                }
                "--root" => root = value,
                "--context-socket" if value.is_empty() => {}
                "--context-socket" if !valid_socket_name(&value) => {
                    return Err(format!(
                        "--context-socket {value}: letters, digits, `.`, `_` and `-` only"
                    ));
                }
                "--context-socket" => context_socket = Some(value),
                "--lock-dir" if !value.is_empty() => lock_dir = Some(PathBuf::from(value)),
                "--lock-dir" => {}
                "--claude-lock-dir" if !value.is_empty() => {
                    claude_lock_dir = Some(PathBuf::from(value))
                }
                "--claude-lock-dir" => {}
                "--log-file" if !value.is_empty() => log_file = Some(PathBuf::from(value)),
                "--log-file" => {}
                "--log-level" => log_level = value,
                "--mcp-port" if value.is_empty() => mcp_port = None,
                "--mcp-port" => {
                    mcp_port = Some(
                        value
                            .parse()
                            .map_err(|_| format!("--mcp-port {value}: not a port"))?,
                    )
                }
                "--mcp-approve-edits" => {
                    mcp_approve_edits = match value.as_str() {
                        "true" => true,
                        "false" => false,
                        _ => return Err(format!("--mcp-approve-edits {value}: true or false")),
                    }
                }
                "--mcp-terminal-commands" => {
                    mcp_terminal_commands = match value.as_str() {
                        "true" => true,
                        "false" => false,
                        _ => return Err(format!("--mcp-terminal-commands {value}: true or false")),
                    }
                }
                "--mcp-token-file" if !value.is_empty() => {
                    mcp_token_file = Some(PathBuf::from(value))
                }
                "--mcp-token-file" => {}
                "--codex-tmpdir" if value.is_empty() => codex_tmpdir = None,
                "--codex-tmpdir" => codex_tmpdir = Some(PathBuf::from(value)),
                "--mcp-session-idle-ms" => {
                    let ms: u64 = value
                        .parse()
                        .map_err(|_| format!("--mcp-session-idle-ms {value}: not a number"))?;
                    mcp_session_idle = (ms > 0).then(|| Duration::from_millis(ms));
                }
                other => {
                    let kind = companion_for(other).ok_or(format!("unknown option {flag}"))?;
                    companions.retain(|(known, _)| *known != kind);
                    if !value.is_empty() {
                        companions.push((kind, PathBuf::from(value)));
                    }
                }
            }
        }
        let cwd = cwd.unwrap_or_default();
        companions.sort_by_key(|(kind, _)| ClientKind::ALL.iter().position(|k| k == kind));
        Ok(Parsed::Run(Box::new(Config {
            nvim_pid: pid.ok_or("--pid is required (the host is started by the Lua glue)")?,
            port,
            root: if root.is_empty() { cwd.clone() } else { root },
            cwd,
            context_socket,
            lock_dir,
            claude_lock_dir,
            log_file,
            log_level,
            mcp_port,
            mcp_approve_edits,
            mcp_terminal_commands,
            mcp_token_file,
            mcp_session_idle,
            companions,
            codex_tmpdir,
        })))
    }
}

/// The agent whose discovery directory `option` names.
fn companion_for(option: &str) -> Option<ClientKind> {
    ClientKind::ALL.into_iter().find(|kind| {
        kind.profile()
            .discovery
            .as_ref()
            .is_some_and(|file| file.option == option)
    })
}

/// A socket name stays one file name in `.pi/ide/`.
fn valid_socket_name(name: &str) -> bool {
    !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Parsed, String> {
        Config::from_args(args.iter().map(|s| s.to_string()))
    }

    #[test]
    fn parses_a_full_command_line() {
        let Ok(Parsed::Run(config)) = parse(&[
            "--pid",
            "42",
            "--cwd",
            "/w/sub",
            "--port",
            "4321",
            "--root",
            "/w",
            "--context-socket",
            "nvim",
            "--lock-dir",
            "/l",
            "--claude-lock-dir",
            "/c/ide",
            "--log-level",
            "debug",
            "--mcp-port",
            "0",
            "--mcp-approve-edits",
            "false",
            "--mcp-token-file",
            "/s/pi-ide/mcp-token",
            "--mcp-session-idle-ms",
            "1500",
            "--gemini-dir",
            "/tmp/gemini/ide",
            "--qwen-dir",
            "",
        ]) else {
            panic!("expected a run config");
        };
        assert_eq!(config.nvim_pid, 42);
        assert_eq!(config.cwd, "/w/sub");
        assert_eq!(config.port, 4321);
        assert_eq!(config.root, "/w");
        assert_eq!(config.context_socket.as_deref(), Some("nvim"));
        assert_eq!(config.lock_dir, Some(PathBuf::from("/l")));
        assert_eq!(config.claude_lock_dir, Some(PathBuf::from("/c/ide")));
        assert_eq!(config.log_level, "debug");
        assert_eq!(config.log_file, None);
        assert_eq!(config.mcp_port, Some(0));
        assert!(!config.mcp_approve_edits);
        assert_eq!(
            config.mcp_token_file,
            Some(PathBuf::from("/s/pi-ide/mcp-token"))
        );
        assert_eq!(config.mcp_session_idle, Some(Duration::from_millis(1500)));
        assert_eq!(
            config.companions,
            [(ClientKind::Gemini, PathBuf::from("/tmp/gemini/ide"))],
            "empty: Qwen Code not served"
        );
    }

    #[test]
    fn rejects_bad_input_with_a_reason() {
        assert!(parse(&["--pid", "x"]).unwrap_err().contains("not a pid"));
        assert!(
            parse(&["--cwd", "/w"])
                .unwrap_err()
                .contains("--pid is required")
        );
        assert!(
            parse(&["--bogus", "1"])
                .unwrap_err()
                .contains("unknown option")
        );
        assert!(parse(&["--pid"]).unwrap_err().contains("needs a value"));
        assert!(
            parse(&["--pid", "1", "--mcp-port", "70000"])
                .unwrap_err()
                .contains("not a port")
        );
        assert!(
            parse(&["--pid", "1", "--port", "-1"])
                .unwrap_err()
                .contains("not a port")
        );
        assert!(
            parse(&["--pid", "1", "--mcp-approve-edits", "no"])
                .unwrap_err()
                .contains("true or false")
        );
        assert!(
            parse(&["--pid", "1", "--mcp-session-idle-ms", "-1"])
                .unwrap_err()
                .contains("not a number")
        );
        let Ok(Parsed::Run(never)) = parse(&["--pid", "1", "--mcp-session-idle-ms", "0"]) else {
            panic!("idle 0 is valid");
        };
        assert_eq!(never.mcp_session_idle, None, "0: sessions never expire");
        let Ok(Parsed::Run(default)) = parse(&["--pid", "1"]) else {
            panic!("a pid alone is valid");
        };
        assert_eq!(
            default.mcp_session_idle,
            Some(crate::http::sessions::DEFAULT_IDLE),
            "idle sessions expire unless told otherwise"
        );
        assert_eq!(never.mcp_token_file, None, "no file: a fresh token");
        assert!(matches!(parse(&["--version"]), Ok(Parsed::Version)));
        assert!(
            matches!(parse(&["--check-root", "/w"]), Ok(Parsed::CheckRoot(dir)) if dir == "/w")
        );
        let Ok(Parsed::Run(off)) = parse(&["--pid", "1", "--claude-lock-dir", ""]) else {
            panic!("an empty Claude lock dir is valid");
        };
        assert_eq!(
            off.claude_lock_dir, None,
            "empty means: do not announce to Claude"
        );
        let Ok(Parsed::Run(plain)) = parse(&["--pid", "1", "--cwd", "/w", "--context-socket", ""])
        else {
            panic!("an empty socket name is valid");
        };
        assert_eq!(plain.context_socket, None, "empty means: no socket");
        assert_eq!(plain.root, "/w", "the root defaults to the cwd");
        assert_eq!(plain.port, 0, "any free port by default");
        assert!(
            plain.mcp_approve_edits,
            "edits wait for approval by default"
        );
        for bad in ["../x", "a/b", ".hidden"] {
            assert!(
                parse(&["--pid", "1", "--context-socket", bad]).is_err(),
                "{bad}"
            );
        }
    }
}
