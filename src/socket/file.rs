//! The socket file: `<root>/.pi/ide/<name>.sock` in a 0700 directory, 0600
//! itself. A live socket of that name (another Neovim in the same project)
//! is never taken over: this one is then `<name>-<nvim pid>.sock`. A stale
//! one (nobody accepts) is replaced. Only the file this process bound is
//! ever removed.

use std::fs;
use std::io;
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio::net::{UnixListener, UnixStream};

/// How long a connect to an existing socket may take before it counts as
/// live but busy.
const LIVENESS_TIMEOUT: Duration = Duration::from_millis(500);

/// The socket file this process bound, known by its inode.
#[derive(Debug)]
pub struct SocketFile {
    path: PathBuf,
    dev: u64,
    ino: u64,
}

/// `<root>/.pi/ide`, where pi looks.
pub fn dir(root: &Path) -> PathBuf {
    root.join(".pi").join("ide")
}

/// Binds the socket for `name` under `root`.
pub async fn bind(root: &Path, name: &str, pid: u32) -> io::Result<(UnixListener, SocketFile)> {
    if !root.is_dir() {
        return Err(io::Error::other(format!(
            "the project root {} is not a directory",
            root.display()
        )));
    }
    let dir = dir(root);
    crate::lockfile::ensure_private_dir(&dir)?;
    let preferred = dir.join(format!("{name}.sock"));
    let path = match claimable(&preferred).await {
        true => preferred,
        false => dir.join(format!("{name}-{pid}.sock")),
    };
    if fs::symlink_metadata(&path).is_ok_and(|meta| meta.file_type().is_socket()) {
        // Stale (checked above) or a leftover of this pid: nobody's live socket.
        fs::remove_file(&path)?;
    }
    let listener = bind_private(&path, pid)?;
    let file = SocketFile::bound(path)?;
    Ok((listener, file))
}

/// Binds under a hidden name, makes it 0600, then renames it into place, so
/// the socket never shows at `path` with the umask's wider mode.
pub fn bind_private(path: &Path, pid: u32) -> io::Result<UnixListener> {
    let file_name = path.file_name().unwrap_or_default().to_string_lossy();
    let hidden = path.with_file_name(format!(".{file_name}.{pid}.binding"));
    let _ = fs::remove_file(&hidden);
    let listener = UnixListener::bind(&hidden)?;
    let placed = fs::set_permissions(&hidden, fs::Permissions::from_mode(0o600))
        .and_then(|()| fs::rename(&hidden, path));
    if let Err(error) = placed {
        let _ = fs::remove_file(&hidden);
        return Err(error);
    }
    Ok(listener)
}

/// Whether `path` is free for us: absent, or a socket nobody accepts on.
pub async fn claimable(path: &Path) -> bool {
    match fs::symlink_metadata(path) {
        Err(error) => error.kind() == io::ErrorKind::NotFound,
        Ok(meta) if !meta.file_type().is_socket() => false,
        // A refused connect is a stale socket; a slow one is a busy server.
        Ok(_) => matches!(
            tokio::time::timeout(LIVENESS_TIMEOUT, UnixStream::connect(path)).await,
            Ok(Err(_))
        ),
    }
}

impl SocketFile {
    /// The socket this process just bound at `path`.
    pub fn bound(path: PathBuf) -> io::Result<SocketFile> {
        let meta = fs::symlink_metadata(&path)?;
        Ok(SocketFile {
            path,
            dev: meta.dev(),
            ino: meta.ino(),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether the path still holds the socket this process bound.
    pub fn is_there(&self) -> bool {
        fs::symlink_metadata(&self.path)
            .is_ok_and(|meta| meta.dev() == self.dev && meta.ino() == self.ino)
    }

    /// Removes the file if it is still ours.
    pub fn remove(&self) {
        if self.is_there() {
            match fs::remove_file(&self.path) {
                Ok(()) => tracing::info!("removed socket {}", self.path.display()),
                Err(error) => {
                    tracing::warn!("cannot remove socket {}: {error}", self.path.display())
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scratch::Scratch;

    fn mode(path: &Path) -> u32 {
        fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[tokio::test]
    async fn binds_privately_and_never_takes_a_live_name() {
        let root = Scratch::new("socket-file");
        let (_listener, first) = bind(&root, "nvim", 7).await.unwrap();
        assert_eq!(first.path(), root.join(".pi/ide/nvim.sock"));
        assert_eq!(mode(&root.join(".pi/ide")), 0o700);
        assert_eq!(mode(first.path()), 0o600);
        let (second_listener, second) = bind(&root, "nvim", 8).await.unwrap();
        assert_eq!(second.path(), root.join(".pi/ide/nvim-8.sock"), "live");
        assert!(first.is_there() && second.is_there());
        drop(second_listener);
        second.remove();
        assert!(!second.path().exists());
        // A socket nobody accepts on is stale: taken over.
        let stale = root.join(".pi/ide/old.sock");
        drop(std::os::unix::net::UnixListener::bind(&stale).unwrap());
        let (_l, taken) = bind(&root, "old", 9).await.unwrap();
        assert_eq!(taken.path(), stale);
        // Not ours any more: left alone.
        fs::remove_file(taken.path()).unwrap();
        fs::write(taken.path(), "someone else's").unwrap();
        assert!(!taken.is_there());
        taken.remove();
        assert!(taken.path().exists());
        assert!(bind(&root.join("missing"), "nvim", 1).await.is_err());
    }
}
