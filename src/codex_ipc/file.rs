//! Where the socket goes. Codex looks in `<tmpdir>/codex-ipc/ipc-<uid>.sock`
//! and checks that the directory is the user's and not writable by anyone
//! else. Two places are served:
//!
//! * private: `<tmpdir>/pi-ide-<uid>/codex-<nvim pid>/codex-ipc/…`, always;
//!   `:PiIde agent codex` runs Codex with `TMPDIR=<tmpdir>/pi-ide-<uid>/
//!   codex-<nvim pid>`, so it reaches this Neovim whoever holds the shared
//!   place;
//! * shared: `<tmpdir>/codex-ipc/…`, only when nobody answers there (a
//!   Codex desktop app or another editor may): a Codex typed in any shell
//!   of this user then reaches this Neovim.
//!
//! Only a socket this process bound is ever removed; a private directory
//! left by a Neovim that is gone is cleaned at start.

use std::fs::{self, DirBuilder};
use std::io;
use std::os::unix::fs::{DirBuilderExt, FileTypeExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use tokio::net::UnixListener;

use crate::socket::file::{SocketFile, bind_private, claimable};

/// The socket Codex looks for under `tmpdir`.
pub fn socket_in(tmpdir: &Path) -> PathBuf {
    tmpdir
        .join("codex-ipc")
        .join(format!("ipc-{}.sock", super::uid()))
}

/// The two places for a Neovim under its `tmpdir`.
#[derive(Debug, Clone)]
pub struct Places {
    /// What `:PiIde agent codex` sets Codex's `TMPDIR` to.
    pub private_tmpdir: PathBuf,
    pub private: PathBuf,
    pub shared: PathBuf,
}

impl Places {
    pub fn under(tmpdir: &Path, nvim_pid: u32) -> Places {
        let private_tmpdir = own_base(tmpdir).join(format!("codex-{nvim_pid}"));
        Places {
            private: socket_in(&private_tmpdir),
            private_tmpdir,
            shared: socket_in(tmpdir),
        }
    }
}

/// Whether `dir` is a Neovim's private `TMPDIR` (`<tmpdir>/pi-ide-<uid>/
/// codex-<pid>`, see [`Places`]), there or gone: a Codex running with it
/// was started by `:PiIde agent codex`.
pub fn is_private_tmpdir(dir: &Path) -> bool {
    let name = |path: Option<&Path>| {
        path.and_then(Path::file_name)
            .and_then(|name| name.to_str())
            .map(str::to_owned)
    };
    let pid = name(Some(dir)).and_then(|name| name.strip_prefix("codex-")?.parse::<u32>().ok());
    pid.is_some() && name(dir.parent()) == Some(format!("pi-ide-{}", super::uid()))
}

/// `<tmpdir>/pi-ide-<uid>`: this user's directory for private places.
fn own_base(tmpdir: &Path) -> PathBuf {
    tmpdir.join(format!("pi-ide-{}", super::uid()))
}

/// A socket this process listens on.
pub struct Bound {
    pub listener: UnixListener,
    pub file: SocketFile,
}

/// Binds the private place, making its directories (0700, the user's).
pub async fn bind_private_place(places: &Places, pid: u32) -> io::Result<Bound> {
    let base = places.private_tmpdir.parent().unwrap_or(Path::new("/"));
    own_dir(base)?;
    own_dir(&places.private_tmpdir)?;
    let dir = places.private.parent().unwrap_or(Path::new("/"));
    own_dir(dir)?;
    bind_free(&places.private, pid)
        .await
        .map_err(|why| io::Error::other(why.unwrap_or_else(|| "taken".into())))
}

/// Binds the shared place unless someone answers there, or its directory
/// is not this user's alone; `Err(why)` says which.
pub async fn bind_shared_place(places: &Places, pid: u32) -> Result<Bound, String> {
    let dir = places.shared.parent().unwrap_or(Path::new("/"));
    match fs::symlink_metadata(dir) {
        Err(error) if error.kind() == io::ErrorKind::NotFound => {
            own_dir(dir).map_err(|error| format!("cannot create {}: {error}", dir.display()))?;
        }
        Err(error) => return Err(format!("cannot read {}: {error}", dir.display())),
        Ok(meta) if !meta.is_dir() || meta.uid() != super::uid() => {
            return Err(format!(
                "{} is not a directory of this user's",
                dir.display()
            ));
        }
        Ok(meta) if meta.permissions().mode() & 0o022 != 0 => {
            return Err(format!(
                "{} is writable by other users (Codex refuses it)",
                dir.display()
            ));
        }
        Ok(_) => {}
    }
    bind_free(&places.shared, pid).await.map_err(|why| {
        why.unwrap_or_else(|| {
            format!(
                "{} is served by another program (Codex's desktop app or another editor)",
                places.shared.display()
            )
        })
    })
}

/// Binds `path` if nobody answers there; `Err(None)`: someone does.
async fn bind_free(path: &Path, pid: u32) -> Result<Bound, Option<String>> {
    if !claimable(path).await {
        return Err(None);
    }
    let failed = |error: io::Error| Some(format!("cannot listen on {}: {error}", path.display()));
    if fs::symlink_metadata(path).is_ok_and(|meta| meta.file_type().is_socket()) {
        // Nobody accepts on it (checked above): a leftover.
        fs::remove_file(path).map_err(failed)?;
    }
    let listener = bind_private(path, pid).map_err(failed)?;
    let file = SocketFile::bound(path.to_owned()).map_err(failed)?;
    Ok(Bound { listener, file })
}

/// Makes `dir` (not its parents) a 0700 directory of this user's, or says
/// why it is not one: never a link, never someone else's.
fn own_dir(dir: &Path) -> io::Result<()> {
    match DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => {}
        Err(error) if error.kind() == io::ErrorKind::AlreadyExists => {}
        Err(error) => return Err(error),
    }
    let meta = fs::symlink_metadata(dir)?;
    if !meta.is_dir() || meta.uid() != super::uid() {
        return Err(io::Error::other(format!(
            "{} is not a directory of this user's",
            dir.display()
        )));
    }
    if meta.permissions().mode() & 0o077 != 0 {
        fs::set_permissions(dir, fs::Permissions::from_mode(0o700))?;
    }
    Ok(())
}

/// Removes the private directories of Neovims that are gone: their socket,
/// then each directory that is empty.
pub fn remove_stale(tmpdir: &Path) {
    let base = own_base(tmpdir);
    let Ok(entries) = fs::read_dir(&base) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|name| name.strip_prefix("codex-"))
            .and_then(|pid| pid.parse::<u32>().ok())
        else {
            continue;
        };
        if crate::lockfile::process_alive(pid) {
            continue;
        }
        let dir = entry.path();
        let socket = socket_in(&dir);
        if fs::symlink_metadata(&socket).is_ok_and(|meta| meta.file_type().is_socket()) {
            let _ = fs::remove_file(&socket);
        }
        remove_if_empty(&dir);
        tracing::info!(
            "removed Codex's directory of a Neovim gone: {}",
            dir.display()
        );
    }
}

/// Removes the private place's socket's directory and the private TMPDIR
/// when nothing else is in them (Codex may have left files there).
pub fn remove_if_empty(private_tmpdir: &Path) {
    let _ = fs::remove_dir(private_tmpdir.join("codex-ipc"));
    let _ = fs::remove_dir(private_tmpdir);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A short scratch directory: socket paths must fit in 108 bytes.
    struct Short(PathBuf);

    impl Short {
        fn new() -> Short {
            let name = uuid::Uuid::new_v4().simple().to_string();
            let dir = std::env::temp_dir().join(format!("cx{}", &name[..8]));
            fs::create_dir(&dir).unwrap();
            Short(dir)
        }
    }

    impl std::ops::Deref for Short {
        type Target = Path;
        fn deref(&self) -> &Path {
            &self.0
        }
    }

    impl Drop for Short {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.0);
        }
    }

    fn mode(path: &Path) -> u32 {
        fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[tokio::test]
    async fn binds_privately_and_never_takes_a_shared_socket_that_answers() {
        let tmp = Short::new();
        let places = Places::under(&tmp, 42);
        assert_eq!(
            places.private_tmpdir,
            tmp.join(format!("pi-ide-{}/codex-42", crate::codex_ipc::uid()))
        );
        let private = bind_private_place(&places, 42).await.unwrap();
        assert_eq!(private.file.path(), places.private);
        assert_eq!(mode(places.private.parent().unwrap()), 0o700);
        assert_eq!(mode(&places.private), 0o600);
        let shared = bind_shared_place(&places, 42).await.unwrap();
        assert_eq!(shared.file.path(), places.shared);
        assert_eq!(mode(places.shared.parent().unwrap()), 0o700);
        // Another Neovim finds the shared place answering: it keeps off.
        let other = Places::under(&tmp, 43);
        let why = bind_shared_place(&other, 43).await.err().unwrap();
        assert!(why.contains("served by another program"), "{why}");
        assert!(shared.file.is_there());
        // A socket nobody answers on is a leftover: taken.
        drop(shared);
        assert!(bind_shared_place(&other, 43).await.is_ok());
    }

    #[tokio::test]
    async fn a_shared_directory_others_may_write_is_left_alone() {
        let tmp = Short::new();
        let places = Places::under(&tmp, 7);
        let dir = places.shared.parent().unwrap();
        fs::create_dir(dir).unwrap();
        fs::set_permissions(dir, fs::Permissions::from_mode(0o777)).unwrap();
        let why = bind_shared_place(&places, 7).await.err().unwrap();
        assert!(why.contains("writable by other users"), "{why}");
        assert!(!places.shared.exists());
    }

    #[tokio::test]
    async fn directories_of_neovims_gone_are_cleaned() {
        let tmp = Short::new();
        // No process has pid 2^22 + 1 (above Linux's pid_max default).
        let gone = Places::under(&tmp, 4_194_305);
        let bound = bind_private_place(&gone, 4_194_305).await.unwrap();
        drop(bound);
        let alive = Places::under(&tmp, std::process::id());
        let _kept = bind_private_place(&alive, std::process::id())
            .await
            .unwrap();
        remove_stale(&tmp);
        assert!(!gone.private_tmpdir.exists());
        assert!(alive.private.exists());
    }
}
