//! Files written whole: a crash, a kill or a full disk at any instant leaves
//! the old contents or the new, never a mix. The new text goes to a file
//! beside the target (in the directory already opened beneath the root),
//! is synced, and then replaces the target in one rename (or, for a new
//! file, appears in one link); the directory is synced after. A file with
//! other hard links is rewritten in place instead, so that every name keeps
//! showing it, with a synced copy of the old text beside it until the new
//! text is on disk, as Vim's `backupcopy=auto` does. The steps are named
//! for [`fault`]: a test build stops at one so a test can kill it there.

use std::ffi::{CStr, CString};
use std::fs::File;
use std::io::{self, Seek, Write};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::fs::MetadataExt;
use std::sync::atomic::{AtomicU64, Ordering};

use super::beneath::open_at;
use super::fault;

/// Replaces `name` in `dir` (open as `file`, holding `old`) by `contents`,
/// keeping its mode, owner and hard links.
pub(super) fn replace(
    dir: &OwnedFd,
    name: &CStr,
    file: &mut File,
    old: &[u8],
    contents: &[u8],
) -> io::Result<()> {
    let meta = file.metadata()?;
    if meta.nlink() > 1 {
        // Several names share the file: rewritten in place, the old text
        // kept beside it until the new one is on disk. A rewrite that
        // fails (a full disk) puts the old text back; if even that fails,
        // the copy stays and the error names it.
        let backup = Beside::write(dir, name, &OLD, old, 0o600)?;
        sync_dir(dir)?;
        fault::step("backup-kept");
        if let Err(error) = overwrite(file, contents) {
            if overwrite(file, old).is_err() {
                let kept = backup.keep();
                return Err(io::Error::new(
                    error.kind(),
                    format!("{error}; its old text is in {kept} beside it"),
                ));
            }
            return Err(error);
        }
        drop(backup);
        sync_dir(dir)?;
        fault::step("backup-removed");
        return Ok(());
    }
    let temp = Beside::write(dir, name, &NEW, contents, 0o600)?;
    let temp_file = temp.file.as_ref().expect("open until renamed");
    // SAFETY: plain syscalls on a descriptor we own.
    unsafe {
        if libc::fchmod(temp_file.as_raw_fd(), meta.mode() as libc::mode_t & 0o7777) != 0 {
            return Err(io::Error::last_os_error());
        }
        // Another owner is kept where the person may give it (else theirs).
        let _ = libc::fchown(temp_file.as_raw_fd(), meta.uid(), meta.gid());
    }
    temp.rename_over(name)?;
    fault::step("renamed");
    sync_dir(dir)?;
    fault::step("dir-synced");
    Ok(())
}

/// `file`'s text replaced by `contents`, synced.
fn overwrite(file: &mut File, contents: &[u8]) -> io::Result<()> {
    file.set_len(0)?;
    fault::step("truncated");
    file.rewind()?;
    let (first, rest) = contents.split_at(contents.len() / 2);
    file.write_all(first)?;
    fault::step("half-rewritten");
    file.write_all(rest)?;
    fault::step("rewritten");
    file.sync_all()?;
    fault::step("rewrite-synced");
    Ok(())
}

/// Creates `name` in `dir` with `contents` and `mode` (less the umask);
/// `Ok(false)` if it exists.
pub(super) fn create(
    dir: &OwnedFd,
    name: &CStr,
    contents: &[u8],
    mode: libc::c_uint,
) -> io::Result<bool> {
    let temp = Beside::write(dir, name, &NEW, contents, mode)?;
    if !temp.link_as(name)? {
        return Ok(false);
    }
    fault::step("linked");
    sync_dir(dir)?;
    fault::step("dir-synced");
    Ok(true)
}

/// What a file beside the target holds, and the steps of writing it.
struct Kind {
    /// In its name.
    what: &'static str,
    /// Opened, half written, written, synced.
    steps: [&'static str; 4],
}

/// The new text, before it takes the target's place.
const NEW: Kind = Kind {
    what: "new",
    steps: [
        "new-opened",
        "new-half-written",
        "new-written",
        "new-synced",
    ],
};
/// A copy of the old text while a file with several names is rewritten.
const OLD: Kind = Kind {
    what: "old",
    steps: [
        "old-opened",
        "old-half-written",
        "old-written",
        "old-synced",
    ],
};

/// A synced file beside the target, removed when dropped unless it took
/// the target's place.
struct Beside<'a> {
    dir: &'a OwnedFd,
    name: CString,
    file: Option<File>,
}

impl<'a> Beside<'a> {
    fn write(
        dir: &'a OwnedFd,
        target: &CStr,
        kind: &Kind,
        contents: &[u8],
        mode: libc::c_uint,
    ) -> io::Result<Beside<'a>> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let mut name = b".".to_vec();
        name.extend_from_slice(target.to_bytes());
        name.extend_from_slice(
            format!(
                ".pi-ide-{}-{}-{}",
                kind.what,
                std::process::id(),
                NEXT.fetch_add(1, Ordering::Relaxed)
            )
            .as_bytes(),
        );
        let name = CString::new(name).expect("no NUL in a file name");
        let flags = libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW;
        let file = File::from(open_at(dir, &name, flags, mode)?);
        let beside = Beside {
            dir,
            name,
            file: Some(file),
        };
        let mut file = beside.file.as_ref().expect("just opened");
        fault::step(kind.steps[0]);
        let (first, rest) = contents.split_at(contents.len() / 2);
        file.write_all(first)?;
        fault::step(kind.steps[1]);
        file.write_all(rest)?;
        fault::step(kind.steps[2]);
        file.sync_all()?;
        fault::step(kind.steps[3]);
        Ok(beside)
    }

    /// Left on disk: its name.
    fn keep(mut self) -> String {
        let name = std::mem::take(&mut self.name);
        name.to_string_lossy().into_owned()
    }

    /// Takes `target`'s place in one step.
    fn rename_over(mut self, target: &CStr) -> io::Result<()> {
        let fd = self.dir.as_raw_fd();
        // SAFETY: both names are NUL-terminated, `fd` an open directory.
        if unsafe { libc::renameat(fd, self.name.as_ptr(), fd, target.as_ptr()) } != 0 {
            return Err(io::Error::last_os_error());
        }
        self.file = None;
        self.name = CString::default();
        Ok(())
    }

    /// Appears as `target` if nothing has that name (false if something has).
    fn link_as(self, target: &CStr) -> io::Result<bool> {
        let fd = self.dir.as_raw_fd();
        // SAFETY: both names are NUL-terminated, `fd` an open directory.
        if unsafe { libc::linkat(fd, self.name.as_ptr(), fd, target.as_ptr(), 0) } != 0 {
            let error = io::Error::last_os_error();
            return match error.raw_os_error() {
                Some(libc::EEXIST) => Ok(false),
                _ => Err(error),
            };
        }
        Ok(true)
    }
}

impl Drop for Beside<'_> {
    fn drop(&mut self) {
        if !self.name.is_empty() {
            // SAFETY: a NUL-terminated name in an open directory.
            unsafe { libc::unlinkat(self.dir.as_raw_fd(), self.name.as_ptr(), 0) };
        }
    }
}

/// Removes `name` from `dir` (a file, never a link followed), then makes
/// that last.
pub(super) fn remove(dir: &OwnedFd, name: &CStr) -> io::Result<()> {
    // SAFETY: a NUL-terminated name in an open directory.
    if unsafe { libc::unlinkat(dir.as_raw_fd(), name.as_ptr(), 0) } != 0 {
        return Err(io::Error::last_os_error());
    }
    sync_dir(dir)
}

fn sync_dir(dir: &OwnedFd) -> io::Result<()> {
    // SAFETY: fsync on a descriptor we own.
    if unsafe { libc::fsync(dir.as_raw_fd()) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}
