//! `pi-ide codex-hook`: Codex's `PreToolUse` hook on `apply_patch`, which
//! `:PiIde agent codex` passes Codex (`-c hooks.PreToolUse=…`) and the
//! person trusts once in Codex's `/hooks`. Codex runs it before each patch
//! with `{tool_name, tool_input: {command: <patch>}, cwd, …}` on stdin; it
//! asks the Neovim behind `$TMPDIR/codex-ipc/ipc-<uid>.sock` (the socket
//! Codex's `/ide` uses: `:PiIde agent codex` points `TMPDIR` at this
//! Neovim's) to show the patch, waits for the person and prints what
//! Codex does ([`crate::codex::review`]):
//!
//! * nothing (exit 0): apply the patch as it is;
//! * `permissionDecision: "deny"` with the person's reason: blocked, and
//!   the model reads why;
//! * `permissionDecision: "allow"` with `updatedInput.command`: apply this
//!   patch instead (what the person accepted, their edits included);
//! * a `systemMessage` only: no Neovim reviews here; Codex goes on as
//!   without the hook.
//!
//! The socket is trusted as Codex trusts it: its directory the user's and
//! nobody else's to write, the process behind it the user's. Plain blocking
//! I/O: one request, one answer.

use std::io::{self, Read, Write};
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use serde_json::{Value, json};

use super::MAX_FRAME_BYTES;
use crate::codex::review::METHOD;

/// Most bytes read from stdin (the hook's input carries the patch).
const MAX_INPUT_BYTES: u64 = 64 << 20;
/// Codex kills the hook after the timeout `:PiIde agent codex` gives it
/// (24 h) and then applies the patch: the hook denies it first.
const DECISION_DEADLINE: Duration = Duration::from_secs(24 * 3600 - 300);

/// Runs the hook: reads stdin, prints the answer for Codex, exits 0.
pub fn run() -> ExitCode {
    let mut input = String::new();
    let read = io::stdin().take(MAX_INPUT_BYTES).read_to_string(&mut input);
    let output = match read {
        Ok(_) => output_for(&input, &socket_path()),
        Err(error) => Some(system_message(&format!(
            "cannot read the hook's input: {error}"
        ))),
    };
    if let Some(output) = output {
        let mut stdout = io::stdout().lock();
        let _ = stdout.write_all(output.to_string().as_bytes());
        let _ = stdout.flush();
    }
    ExitCode::SUCCESS
}

/// Where Codex looks for its editor: `$TMPDIR/codex-ipc/ipc-<uid>.sock`.
fn socket_path() -> PathBuf {
    super::file::socket_in(&std::env::temp_dir())
}

/// What to print for hook input `input` (None: nothing, apply as is).
pub fn output_for(input: &str, socket: &Path) -> Option<Value> {
    let input: Value = match serde_json::from_str(input) {
        Ok(input) => input,
        Err(error) => {
            return Some(system_message(&format!(
                "the hook's input is not JSON: {error}"
            )));
        }
    };
    if input["tool_name"] != "apply_patch" {
        return None;
    }
    let patch = input["tool_input"]["command"]
        .as_str()
        .or_else(|| input["tool_input"]["input"].as_str())
        .or_else(|| input["tool_input"].as_str());
    let (Some(patch), Some(cwd)) = (patch, input["cwd"].as_str()) else {
        return Some(system_message("the hook's input has no patch or cwd"));
    };
    let params = json!({"cwd": cwd, "patch": patch, "toolUseId": input["tool_use_id"]});
    let result = match ask(socket, params) {
        Ok(result) => result,
        Err(Unreached(why)) => return Some(system_message(&why)),
        Err(Lost(why)) => {
            return Some(deny(&format!(
                "Neovim went away before the person decided ({why}); nothing was applied"
            )));
        }
    };
    match result["decision"].as_str() {
        Some("allow") => result["patch"].as_str().map(|patch| {
            json!({"hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "allow",
                "updatedInput": {"command": patch},
                "additionalContext": result["context"],
            }})
        }),
        Some("deny") => Some(deny(
            result["reason"].as_str().unwrap_or("rejected in Neovim"),
        )),
        _ => Some(system_message(&format!(
            "Neovim did not review this patch: {}",
            result["reason"].as_str().unwrap_or("not its project")
        ))),
    }
}

fn deny(reason: &str) -> Value {
    json!({"hookSpecificOutput": {
        "hookEventName": "PreToolUse",
        "permissionDecision": "deny",
        "permissionDecisionReason": reason,
    }})
}

fn system_message(text: &str) -> Value {
    json!({"systemMessage": format!("pi-ide: {text}")})
}

/// Why there is no answer.
enum Failed {
    /// No Neovim of ours is there: Codex goes on unreviewed.
    Unreached(String),
    /// The Neovim went away mid-review: the patch is denied.
    Lost(String),
}
use Failed::{Lost, Unreached};

/// Sends the review request and waits for its answer's `result`.
fn ask(socket: &Path, params: Value) -> Result<Value, Failed> {
    let mut stream = connect(socket).map_err(|why| {
        Unreached(format!(
            "no Neovim to review this patch at {} ({why}); start Codex with :PiIde agent codex",
            socket.display()
        ))
    })?;
    let id = uuid::Uuid::new_v4().to_string();
    let request = json!({
        "type": "request",
        "requestId": id,
        "sourceClientId": "pi-ide-codex-hook",
        "version": 0,
        "method": METHOD,
        "params": params,
    });
    write_frame(&mut stream, &request).map_err(|e| Unreached(format!("cannot ask Neovim: {e}")))?;
    let _ = stream.set_read_timeout(Some(DECISION_DEADLINE));
    loop {
        let message = read_frame(&mut stream).map_err(|error| match error.kind() {
            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => {
                Lost("no decision within a day".into())
            }
            _ => Lost(error.to_string()),
        })?;
        if message["type"] != "response" || message["requestId"] != id.as_str() {
            continue;
        }
        return match message["resultType"].as_str() {
            Some("success") => Ok(message["result"].clone()),
            // Another program serves the socket (Codex's desktop app).
            _ => Err(Unreached(format!(
                "the program at {} does not review patches ({})",
                socket.display(),
                message["error"].as_str().unwrap_or("an error")
            ))),
        };
    }
}

/// Connects to `socket` if its directory and the process behind it are
/// this user's alone.
fn connect(socket: &Path) -> io::Result<UnixStream> {
    let uid = super::uid();
    let dir = socket.parent().unwrap_or(Path::new("/"));
    let dir_meta = std::fs::symlink_metadata(dir)?;
    if !dir_meta.is_dir() || dir_meta.uid() != uid || dir_meta.permissions().mode() & 0o022 != 0 {
        return Err(io::Error::other(format!(
            "{} is not a directory of this user's alone",
            dir.display()
        )));
    }
    let meta = std::fs::symlink_metadata(socket)?;
    if !meta.file_type().is_socket() || meta.uid() != uid {
        return Err(io::Error::other("not a socket of this user's"));
    }
    let stream = UnixStream::connect(socket)?;
    if peer_uid(&stream)? != uid {
        return Err(io::Error::other("another user's process listens there"));
    }
    Ok(stream)
}

fn peer_uid(stream: &UnixStream) -> io::Result<u32> {
    use std::os::fd::AsRawFd;
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        let mut cred = libc::ucred {
            pid: 0,
            uid: 0,
            gid: 0,
        };
        let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
        // SAFETY: a valid socket and a buffer of the size given.
        let got = unsafe {
            libc::getsockopt(
                stream.as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_PEERCRED,
                (&mut cred as *mut libc::ucred).cast(),
                &mut len,
            )
        };
        if got != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(cred.uid)
    }
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    {
        let (mut uid, mut gid) = (0, 0);
        // SAFETY: a valid socket and two out-parameters.
        if unsafe { libc::getpeereid(stream.as_raw_fd(), &mut uid, &mut gid) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(uid)
    }
}

fn write_frame(stream: &mut UnixStream, message: &Value) -> io::Result<()> {
    let bytes = message.to_string().into_bytes();
    let len = u32::try_from(bytes.len()).map_err(|_| io::Error::other("the patch is too large"))?;
    stream.write_all(&len.to_le_bytes())?;
    stream.write_all(&bytes)?;
    stream.flush()
}

fn read_frame(stream: &mut UnixStream) -> io::Result<Value> {
    let mut len = [0u8; 4];
    stream.read_exact(&mut len)?;
    let len = u32::from_le_bytes(len) as usize;
    if len > MAX_FRAME_BYTES {
        return Err(io::Error::other(
            "an answer larger than any this hook asks for",
        ));
    }
    let mut bytes = vec![0; len];
    stream.read_exact(&mut bytes)?;
    serde_json::from_slice(&bytes).map_err(io::Error::other)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scratch::Scratch;

    #[test]
    fn other_tools_pass_and_no_neovim_lets_codex_go_on_saying_so() {
        let dir = Scratch::new("codex-hook");
        let socket = dir.join("codex-ipc/ipc-0.sock");
        let bash = json!({"tool_name": "Bash", "tool_input": {"command": "ls"}, "cwd": "/"});
        assert_eq!(output_for(&bash.to_string(), &socket), None);
        let patch = json!({"tool_name": "apply_patch", "tool_input": {"command": "*** Begin Patch"}, "cwd": "/w"});
        let said = output_for(&patch.to_string(), &socket).unwrap();
        let message = said["systemMessage"].as_str().unwrap();
        assert!(
            message.contains("no Neovim to review this patch"),
            "{message}"
        );
        assert!(
            said.get("hookSpecificOutput").is_none(),
            "not blocked: {said}"
        );
    }
}
