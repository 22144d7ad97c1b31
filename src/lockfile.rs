//! Discovery lockfiles: `<dir>/<port>.lock`, read by agents to find us.
//!
//! The port lives in the file *name* (pi parses it from there). Files are
//! written to a temp name and renamed so a reader never sees half a file, are
//! 0600 in a 0700 directory, and only our own schema is ever garbage-collected.

use std::fs::{self, DirBuilder};
use std::io;
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// Name agents show in their picker, and the mark of our own lockfiles.
pub const IDE_NAME: &str = "Neovim";

/// The lockfile's JSON body.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct LockInfo {
    pub pid: u32,
    pub workspace_folders: Vec<String>,
    pub ide_name: String,
    pub transport: String,
    pub auth_token: String,
    /// The Streamable-HTTP MCP endpoint (same token, as a bearer token).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp_url: Option<String>,
}

/// A lockfile this process owns; [`Lockfile::remove`] deletes it.
#[derive(Debug)]
pub struct Lockfile {
    path: PathBuf,
    info: LockInfo,
}

/// Every lockfile that announces this server (pi's, and Claude Code's when
/// asked): they change and go together.
#[derive(Debug, Default)]
pub struct Lockfiles {
    files: Vec<Lockfile>,
}

impl Lockfiles {
    pub fn push(&mut self, lockfile: Lockfile) {
        self.files.push(lockfile);
    }

    /// Rewrites each with new workspace folders (after `:cd`).
    pub fn set_workspace_folders(&mut self, folders: &[String]) {
        for lockfile in &mut self.files {
            if let Err(error) = lockfile.set_workspace_folders(folders.to_vec()) {
                tracing::warn!("cannot update {}: {error}", lockfile.path.display());
            }
        }
    }

    pub fn remove(&self) {
        for lockfile in &self.files {
            lockfile.remove();
        }
    }
}

/// `$PI_IDE_LOCK_DIR` when set and non-empty, else `~/.pi/ide`.
pub fn default_dir() -> Option<PathBuf> {
    match std::env::var_os("PI_IDE_LOCK_DIR") {
        Some(dir) if !dir.is_empty() => Some(PathBuf::from(dir)),
        _ => dirs::home_dir().map(|home| home.join(".pi").join("ide")),
    }
}

impl Lockfile {
    /// Creates the directory if needed and writes `<port>.lock`.
    pub fn create(dir: &Path, port: u16, info: LockInfo) -> io::Result<Self> {
        ensure_private_dir(dir)?;
        let lockfile = Lockfile {
            path: dir.join(format!("{port}.lock")),
            info,
        };
        lockfile.write()?;
        Ok(lockfile)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Rewrites the file with new workspace folders (after `:cd`).
    pub fn set_workspace_folders(&mut self, folders: Vec<String>) -> io::Result<()> {
        if self.info.workspace_folders == folders {
            return Ok(());
        }
        self.info.workspace_folders = folders;
        self.write()
    }

    /// Deletes the file; a file that is already gone is fine.
    pub fn remove(&self) {
        crate::private_file::remove(&self.path, "lockfile");
    }

    fn write(&self) -> io::Result<()> {
        let body = serde_json::to_vec(&self.info).map_err(io::Error::other)?;
        crate::private_file::replace(&self.path, &body)
    }
}

/// Creates `dir` (0700) or tightens an existing one we own to 0700.
pub fn ensure_private_dir(dir: &Path) -> io::Result<()> {
    DirBuilder::new().recursive(true).mode(0o700).create(dir)?;
    let metadata = fs::metadata(dir)?;
    if !metadata.is_dir() {
        return Err(io::Error::other(format!(
            "{} is not a directory",
            dir.display()
        )));
    }
    if metadata.permissions().mode() & 0o077 != 0 {
        fs::set_permissions(dir, fs::Permissions::from_mode(0o700))?;
    }
    Ok(())
}

/// Removes lockfiles of our schema whose Neovim is gone; returns how many.
/// Other tools' files, unparsable files and live editors are left alone.
pub fn remove_stale(dir: &Path) -> usize {
    let Ok(entries) = fs::read_dir(dir) else {
        return 0;
    };
    let mut removed = 0;
    for entry in entries.flatten() {
        let path = entry.path();
        if path.extension().is_none_or(|ext| ext != "lock") {
            continue;
        }
        let Some(info) = fs::read(&path)
            .ok()
            .and_then(|bytes| serde_json::from_slice::<LockInfo>(&bytes).ok())
        else {
            continue;
        };
        if info.ide_name == IDE_NAME
            && info.transport == "ws"
            && !process_alive(info.pid)
            && fs::remove_file(&path).is_ok()
        {
            tracing::info!("removed stale lockfile {}", path.display());
            removed += 1;
        }
    }
    removed
}

/// `kill(pid, 0)`: alive unless the kernel says no such process.
pub fn process_alive(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    if pid <= 0 {
        return false;
    }
    // SAFETY: signal 0 performs only the existence and permission check.
    let result = unsafe { libc::kill(pid, 0) };
    result == 0 || io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scratch::Scratch;

    fn info(pid: u32) -> LockInfo {
        LockInfo {
            pid,
            workspace_folders: vec!["/w".into()],
            ide_name: IDE_NAME.into(),
            transport: "ws".into(),
            auth_token: "secret".into(),
            mcp_url: None,
        }
    }

    #[test]
    fn the_mcp_url_is_written_only_when_there_is_one() {
        let plain = serde_json::to_value(info(1)).unwrap();
        assert!(plain.get("mcpUrl").is_none(), "{plain}");
        let mut with = info(1);
        with.mcp_url = Some("http://127.0.0.1:9/mcp".into());
        let json = serde_json::to_value(&with).unwrap();
        assert_eq!(json["mcpUrl"], "http://127.0.0.1:9/mcp");
        let back: LockInfo = serde_json::from_value(json).unwrap();
        assert_eq!(back, with);
    }

    #[test]
    fn writes_private_file_named_by_port() {
        let scratch = Scratch::new("write");
        let dir = scratch.join("nested");
        let lock = Lockfile::create(&dir, 4242, info(std::process::id())).unwrap();
        assert_eq!(lock.path(), dir.join("4242.lock"));
        assert_eq!(
            fs::metadata(&dir).unwrap().permissions().mode() & 0o777,
            0o700
        );
        assert_eq!(
            fs::metadata(lock.path()).unwrap().permissions().mode() & 0o777,
            0o600
        );
        let json: serde_json::Value =
            serde_json::from_slice(&fs::read(lock.path()).unwrap()).unwrap();
        assert_eq!(json["pid"], std::process::id());
        assert_eq!(json["workspaceFolders"][0], "/w");
        assert_eq!(json["authToken"], "secret");
        lock.remove();
        assert!(!lock.path().exists());
        assert_eq!(
            fs::read_dir(&dir).unwrap().count(),
            0,
            "no temp file left behind"
        );
    }

    #[test]
    fn updates_workspace_folders_in_place() {
        let dir = Scratch::new("update");
        let mut lock = Lockfile::create(&dir, 1, info(std::process::id())).unwrap();
        lock.set_workspace_folders(vec!["/elsewhere".into()])
            .unwrap();
        let read: LockInfo = serde_json::from_slice(&fs::read(lock.path()).unwrap()).unwrap();
        assert_eq!(read.workspace_folders, vec!["/elsewhere".to_string()]);
    }

    #[test]
    fn removes_only_dead_lockfiles_of_our_schema() {
        let dir = Scratch::new("stale");
        let dead_pid = 999_999_999;
        let write = |name: &str, body: &str| fs::write(dir.join(name), body).unwrap();
        write("1.lock", &serde_json::to_string(&info(dead_pid)).unwrap());
        write(
            "2.lock",
            &serde_json::to_string(&info(std::process::id())).unwrap(),
        );
        let mut other = info(dead_pid);
        other.ide_name = "VS Code".into();
        write("3.lock", &serde_json::to_string(&other).unwrap());
        write("4.lock", "not json");
        write("5.txt", &serde_json::to_string(&info(dead_pid)).unwrap());
        assert_eq!(remove_stale(&dir), 1);
        let mut left: Vec<_> = fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        left.sort();
        assert_eq!(left, ["2.lock", "3.lock", "4.lock", "5.txt"]);
    }

    #[test]
    fn liveness_follows_the_kernel() {
        assert!(process_alive(std::process::id()));
        assert!(!process_alive(999_999_999));
        assert!(!process_alive(0));
    }
}
