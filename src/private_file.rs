//! Files only this user may read (lockfiles, the kept MCP token), written
//! so that no reader ever sees them half-written or with a wider mode.

use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// A new 0600 file beside `path`, named for this process, holding `body`,
/// synced. Hidden, so that a CLI scanning the directory for its pattern
/// (`gemini-ide-server-*`, `*.lock`) never takes it for the file itself.
pub fn write_beside(path: &Path, body: &[u8]) -> io::Result<PathBuf> {
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let tmp = path.with_file_name(format!(".{name}.tmp{}", std::process::id()));
    let _ = fs::remove_file(&tmp);
    let written = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&tmp)
        .and_then(|mut file| file.write_all(body).and_then(|()| file.sync_all()));
    match written {
        Ok(()) => Ok(tmp),
        Err(error) => {
            let _ = fs::remove_file(&tmp);
            Err(error)
        }
    }
}

/// Replaces whatever is at `path` with a 0600 file holding `body`, atomically.
pub fn replace(path: &Path, body: &[u8]) -> io::Result<()> {
    let tmp = write_beside(path, body)?;
    let renamed = fs::rename(&tmp, path);
    if renamed.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    renamed
}

/// Deletes the file at `path` (`what` names it in the log); one already
/// gone is fine.
pub fn remove(path: &Path, what: &str) {
    match fs::remove_file(path) {
        Ok(()) => tracing::info!("removed {what} {}", path.display()),
        Err(error) if error.kind() == io::ErrorKind::NotFound => {}
        Err(error) => tracing::warn!("cannot remove {what} {}: {error}", path.display()),
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    #[test]
    fn replaces_whole_and_private_leaving_no_temporary_file() {
        let dir = crate::scratch::Scratch::new("private-file");
        let path = dir.join("a.lock");
        fs::write(&path, "old, readable by all").unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o644)).unwrap();
        replace(&path, b"new").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"new");
        assert_eq!(
            fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o600
        );
        assert_eq!(fs::read_dir(&*dir).unwrap().count(), 1);
    }
}
