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
//! * `permissionDecision: "deny"` with the reason: blocked, and the model
//!   reads why;
//! * `permissionDecision: "allow"` with `updatedInput.command`: apply this
//!   patch instead (what the person accepted, their edits included);
//! * a `systemMessage` only: Codex goes on as without the hook.
//!
//! Nothing goes through unreviewed because the hook failed: input it
//! cannot read (over [`MAX_FRAME_BYTES`], not UTF-8, not JSON, no patch or
//! cwd), and anything that goes wrong once a Neovim answered the socket,
//! deny the patch. Only two answers let it through unreviewed, each said
//! in Codex: the Neovim reached says the patch is not its project's, or no
//! Neovim answers at all *and* Codex was not started by one (its `TMPDIR`
//! is not a Neovim's private place: the person put the hook in Codex's own
//! config and runs Codex on its own). A Codex `:PiIde agent codex` started
//! finds no Neovim only when that Neovim or its host is gone: nobody can
//! approve, so the patch is denied.
//!
//! The socket is trusted as Codex trusts it: its directory the user's and
//! nobody else's to write, the process behind it the user's. Plain blocking
//! I/O: one request, one answer.

use std::io::{self, Read, Write};
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use serde_json::{Value, json};

use super::MAX_FRAME_BYTES;
use super::file;
use crate::codex::review::METHOD;

/// Codex kills the hook after the timeout `:PiIde agent codex` gives it
/// (24 h) and then applies the patch: the hook denies it first.
const DECISION_DEADLINE: Duration = Duration::from_secs(24 * 3600 - 300);

/// Runs the hook: reads stdin, prints the answer for Codex, exits 0.
pub fn run() -> ExitCode {
    if let Some(output) = answer(io::stdin().lock(), &std::env::temp_dir()) {
        let mut stdout = io::stdout().lock();
        let _ = stdout.write_all(output.to_string().as_bytes());
        let _ = stdout.flush();
    }
    ExitCode::SUCCESS
}

/// What to print for the hook input on `stdin`, Codex's `TMPDIR` being
/// `tmpdir` (None: nothing, apply as is).
pub fn answer(mut stdin: impl Read, tmpdir: &Path) -> Option<Value> {
    // The input carries the patch, which goes to Neovim in one frame.
    let mut bytes = Vec::new();
    if let Err(error) = (&mut stdin)
        .take(MAX_FRAME_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
    {
        return Some(deny(&format!(
            "pi-ide cannot read this patch ({error}); nothing was applied"
        )));
    }
    if bytes.len() > MAX_FRAME_BYTES {
        // Read to the end all the same: Codex's write must not fail.
        let _ = io::copy(&mut stdin, &mut io::sink());
        return Some(deny(&too_large()));
    }
    let Ok(input) = String::from_utf8(bytes) else {
        return Some(deny(
            "pi-ide cannot read this patch (its hook input is not UTF-8); nothing was applied",
        ));
    };
    let unreached = match file::is_private_tmpdir(tmpdir) {
        true => Unreached::Deny,
        false => Unreached::GoOn,
    };
    output_for(&input, &file::socket_in(tmpdir), unreached)
}

fn too_large() -> String {
    format!(
        "this patch is larger than the {} MiB Neovim reviews at once; nothing was applied: \
         split it into smaller patches",
        MAX_FRAME_BYTES >> 20
    )
}

/// What a patch becomes when no Neovim answers the socket.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Unreached {
    /// Codex was started by a Neovim (its private place): denied.
    Deny,
    /// Codex runs on its own: it goes on, saying so.
    GoOn,
}

/// What to print for hook input `input` (None: nothing, apply as is).
pub fn output_for(input: &str, socket: &Path, unreached: Unreached) -> Option<Value> {
    let input: Value = match serde_json::from_str(input) {
        Ok(input) => input,
        Err(error) => {
            return Some(deny(&format!(
                "pi-ide cannot read this patch (its hook input is not JSON: {error}); nothing was applied"
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
        return Some(deny(
            "pi-ide cannot review this patch: its hook input has no patch or cwd; nothing was applied",
        ));
    };
    let params = json!({"cwd": cwd, "patch": patch, "toolUseId": input["tool_use_id"]});
    let result = match ask(socket, params) {
        Ok(result) => result,
        Err(Failed::Unreached(why)) => {
            return Some(match unreached {
                Unreached::GoOn => system_message(&why),
                Unreached::Deny => deny(&format!(
                    "{why}; the Neovim that started this Codex is gone or its pi-ide host stopped \
                     (:PiIde status): nothing was applied"
                )),
            });
        }
        Err(Failed::Lost(why)) => {
            return Some(deny(&format!(
                "Neovim did not review this patch ({why}); nothing was applied"
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
        Some("none") => Some(system_message(&format!(
            "Neovim did not review this patch: {}",
            result["reason"].as_str().unwrap_or("not its project")
        ))),
        _ => Some(deny(
            "Neovim's answer has no decision on this patch; nothing was applied",
        )),
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
    /// Nothing answers the socket (see [`Unreached`]).
    Unreached(String),
    /// Something answered, then failed: the patch is denied.
    Lost(String),
}
use Failed::Lost;

/// Sends the review request and waits for its answer's `result`.
fn ask(socket: &Path, params: Value) -> Result<Value, Failed> {
    let mut stream = connect(socket).map_err(|why| {
        Failed::Unreached(format!(
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
    write_frame(&mut stream, &request).map_err(|e| Lost(format!("cannot ask it: {e}")))?;
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
            _ => Err(Lost(format!(
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
    // A longer frame would be cut off by Neovim's host mid-write.
    if bytes.len() > MAX_FRAME_BYTES {
        return Err(io::Error::other(too_large()));
    }
    let len = u32::try_from(bytes.len()).map_err(|_| io::Error::other(too_large()))?;
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

    fn patch_input(patch: &str) -> String {
        json!({"tool_name": "apply_patch", "tool_input": {"command": patch}, "cwd": "/w"})
            .to_string()
    }

    fn denied(said: &Option<Value>) -> &str {
        let output = &said.as_ref().expect("an answer")["hookSpecificOutput"];
        assert_eq!(output["permissionDecision"], "deny", "{said:?}");
        output["permissionDecisionReason"].as_str().unwrap()
    }

    #[test]
    fn other_tools_pass_and_no_neovim_lets_a_codex_of_its_own_go_on_saying_so() {
        let dir = Scratch::new("codex-hook");
        let bash = json!({"tool_name": "Bash", "tool_input": {"command": "ls"}, "cwd": "/"});
        assert_eq!(answer(bash.to_string().as_bytes(), &dir), None);
        let said = answer(patch_input("*** Begin Patch").as_bytes(), &dir).unwrap();
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

    #[test]
    fn a_codex_a_neovim_started_is_denied_when_that_neovim_is_gone() {
        let dir = Scratch::new("codex-hook-gone");
        // Where `:PiIde agent codex` of a Neovim that is gone pointed it.
        let places = file::Places::under(&dir, 4_194_305);
        let said = answer(
            patch_input("*** Begin Patch").as_bytes(),
            &places.private_tmpdir,
        );
        let reason = denied(&said);
        assert!(
            reason.contains("no Neovim to review this patch"),
            "{reason}"
        );
        assert!(reason.contains("nothing was applied"), "{reason}");
    }

    #[test]
    fn input_it_cannot_read_denies_the_patch() {
        let dir = Scratch::new("codex-hook-input");
        let huge = patch_input(&"+x\n".repeat(MAX_FRAME_BYTES / 3));
        assert!(denied(&answer(huge.as_bytes(), &dir)).contains("larger than the 16 MiB"));
        let mut latin1 = patch_input("caf\u{e9}").into_bytes();
        let at = latin1.iter().position(|&b| b == 0xc3).unwrap();
        latin1.remove(at);
        assert!(denied(&answer(&latin1[..], &dir)).contains("not UTF-8"));
        assert!(denied(&answer(&b"{\"tool_name\": \"apply"[..], &dir)).contains("not JSON"));
        let no_cwd = json!({"tool_name": "apply_patch", "tool_input": {"command": "x"}});
        assert!(denied(&answer(no_cwd.to_string().as_bytes(), &dir)).contains("no patch or cwd"));
    }
}
