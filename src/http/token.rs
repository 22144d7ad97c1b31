//! The token kept for a fixed MCP port, so a client configured once
//! (`claude mcp add … --header "Authorization: Bearer …"`) keeps working
//! after Neovim restarts. The file holds one token, is 0600, ours, in a
//! 0700 directory; anything else is replaced by a fresh token, and the
//! person is told why. The token itself is never logged or reported.

use std::fs::{self};
use std::io::{self};
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use crate::auth::new_token;
use crate::private_file;

/// The token to serve with, and why the kept one could not be used.
#[derive(Debug)]
pub struct Kept {
    pub token: String,
    /// Said to the person; `None` when the kept token was used or a first
    /// one was kept without trouble.
    pub warning: Option<String>,
}

/// The token kept at `path`, or a fresh one that is kept there from now on.
pub fn kept(path: &Path) -> Kept {
    let shown = path.display();
    if let Some(dir) = path.parent()
        && let Err(error) = crate::lockfile::ensure_private_dir(dir)
    {
        return Kept {
            token: new_token(),
            warning: Some(format!(
                "cannot keep the MCP token in {}: {error}; a fresh token lasts until Neovim exits",
                dir.display()
            )),
        };
    }
    let problem = match read(path) {
        Ok(Some(token)) => {
            return Kept {
                token,
                warning: None,
            };
        }
        Ok(None) => match create(path) {
            Ok(token) => {
                return Kept {
                    token,
                    warning: None,
                };
            }
            Err(error) => format!("cannot be written ({error})"),
        },
        Err(problem) => problem,
    };
    let token = new_token();
    let outcome = match private_file::replace(path, format!("{token}\n").as_bytes()) {
        Ok(()) => "a fresh token replaces it: configure MCP clients again (:PiIde mcp)".to_owned(),
        Err(error) => {
            format!("a fresh token lasts until Neovim exits (cannot replace the file: {error})")
        }
    };
    Kept {
        token,
        warning: Some(format!("the kept MCP token {shown} {problem}; {outcome}")),
    }
}

/// The kept token; `None` when there is no file; `Err` says what is wrong
/// with the one there.
fn read(path: &Path) -> Result<Option<String>, String> {
    let metadata = match fs::symlink_metadata(path) {
        Ok(metadata) => metadata,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(format!("cannot be read ({error})")),
    };
    if !metadata.file_type().is_file() {
        return Err("is not a regular file".into());
    }
    // SAFETY: getuid cannot fail and has no preconditions.
    if metadata.uid() != unsafe { libc::getuid() } {
        return Err("belongs to another user".into());
    }
    let mode = metadata.mode() & 0o777;
    if mode & 0o077 != 0 {
        return Err(format!("has mode {mode:o}, so others may have read it"));
    }
    let text = fs::read_to_string(path).map_err(|error| format!("cannot be read ({error})"))?;
    let token = text.trim_end_matches('\n');
    if token.len() == 64 && token.bytes().all(|b| b.is_ascii_hexdigit()) {
        Ok(Some(token.to_owned()))
    } else {
        Err("is not a token (corrupt)".into())
    }
}

/// Keeps a fresh token at `path` unless another Neovim just did; the token
/// that is there afterwards.
fn create(path: &Path) -> io::Result<String> {
    let token = new_token();
    let tmp = private_file::write_beside(path, format!("{token}\n").as_bytes())?;
    // A link, unlike a rename, never replaces a file that appeared meanwhile.
    let linked = fs::hard_link(&tmp, path);
    let _ = fs::remove_file(&tmp);
    match linked {
        Ok(()) => Ok(token),
        Err(error) if error.kind() == io::ErrorKind::AlreadyExists => match read(path) {
            Ok(Some(theirs)) => Ok(theirs),
            _ => Err(error),
        },
        Err(error) => Err(error),
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;
    use crate::scratch::Scratch;

    fn mode(path: &Path) -> u32 {
        fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn a_first_token_is_kept_private_and_reused() {
        let scratch = Scratch::new("token");
        let path = scratch.join("state/pi-ide/mcp-token");
        let first = kept(&path);
        assert!(first.warning.is_none(), "{:?}", first.warning);
        assert_eq!(first.token.len(), 64);
        assert_eq!(mode(&path), 0o600);
        assert_eq!(mode(path.parent().unwrap()), 0o700);
        let again = kept(&path);
        assert_eq!(again.token, first.token);
        assert!(again.warning.is_none());
        let names: Vec<_> = fs::read_dir(path.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["mcp-token"], "no temp file left behind");
    }

    #[test]
    fn a_corrupt_or_exposed_file_gives_a_fresh_kept_token_and_a_reason() {
        let scratch = Scratch::new("token-bad");
        let path = scratch.join("mcp-token");
        let cases: [(&str, u32, &str); 3] = [
            ("not a token\n", 0o600, "corrupt"),
            (&"a".repeat(63), 0o600, "corrupt"),
            (&"b".repeat(64), 0o644, "mode 644"),
        ];
        for (body, file_mode, reason) in cases {
            let _ = fs::remove_file(&path);
            fs::write(&path, body).unwrap();
            fs::set_permissions(&path, fs::Permissions::from_mode(file_mode)).unwrap();
            let got = kept(&path);
            let warning = got.warning.unwrap_or_default();
            assert!(warning.contains(reason), "{warning}");
            assert!(!warning.contains(&got.token), "never shows the token");
            assert_ne!(got.token, body.trim());
            assert_eq!(mode(&path), 0o600);
            assert_eq!(kept(&path).token, got.token, "the fresh one is kept");
        }
    }

    #[test]
    fn a_directory_in_the_way_still_gives_a_token() {
        let scratch = Scratch::new("token-dir");
        let path = scratch.join("mcp-token");
        fs::create_dir(&path).unwrap();
        let got = kept(&path);
        assert_eq!(got.token.len(), 64);
        let warning = got.warning.unwrap_or_default();
        assert!(warning.contains("not a regular file"), "{warning}");
        assert!(warning.contains("until Neovim exits"), "{warning}");
    }
}
