//! Reading and writing a file below a root without following any symbolic
//! link: the root is opened, then each directory on the way with
//! `openat(O_NOFOLLOW | O_DIRECTORY)`, then the file with `O_NOFOLLOW`. A
//! link swapped in after the path was checked makes the call fail; it can
//! never send the read or the write elsewhere.

use std::ffi::{CStr, CString};
use std::fs::File;
use std::io::{self, Read};

use super::whole;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path};

/// Why a write did not happen.
#[derive(Debug)]
pub enum WriteError {
    /// The file no longer holds what it was expected to (or appeared, or
    /// vanished).
    Changed,
    Io(io::Error),
}

impl From<io::Error> for WriteError {
    fn from(error: io::Error) -> Self {
        WriteError::Io(error)
    }
}

/// Reads `relative` (a file) below `root`.
pub fn read(root: &Path, relative: &Path) -> io::Result<Vec<u8>> {
    let (dirs, name) = split(relative)?;
    let dir = open_dirs(root, &dirs, false)?;
    let mut file = File::from(open_at(&dir, &name, libc::O_RDONLY | NO_FOLLOW, 0)?);
    regular(&file)?;
    let mut bytes = vec![];
    file.read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// Creates the directories of `relative` (a file) below `root` that are
/// missing.
pub fn create_parents(root: &Path, relative: &Path) -> io::Result<()> {
    let (dirs, _) = split(relative)?;
    open_dirs(root, &dirs, true).map(drop)
}

/// Writes `contents` to `relative` below `root` if it holds `expected` now
/// (`None`: if it does not exist), whole: a crash leaves the old text or
/// the new (see `whole`). Its mode, owner and hard links are kept; a new
/// file is created only where none exists.
pub fn write(
    root: &Path,
    relative: &Path,
    contents: &[u8],
    expected: Option<&[u8]>,
) -> Result<(), WriteError> {
    let (dirs, name) = split(relative)?;
    let dir = open_dirs(root, &dirs, expected.is_none())?;
    let Some(expected) = expected else {
        return match whole::create(&dir, &name, contents, 0o666)? {
            true => Ok(()),
            false => Err(WriteError::Changed),
        };
    };
    let (mut file, found) = holding(&dir, &name, expected, libc::O_RDWR)?;
    whole::replace(&dir, &name, &mut file, &found, contents)?;
    Ok(())
}

/// Creates `relative` below `root` with `contents`, executable when asked
/// (as the umask allows), only where nothing has that name.
pub fn create(
    root: &Path,
    relative: &Path,
    contents: &[u8],
    executable: bool,
) -> Result<(), WriteError> {
    let (dirs, name) = split(relative)?;
    let dir = open_dirs(root, &dirs, true)?;
    let mode = if executable { 0o777 } else { 0o666 };
    match whole::create(&dir, &name, contents, mode)? {
        true => Ok(()),
        false => Err(WriteError::Changed),
    }
}

/// Removes the file `relative` below `root` if it holds `expected`.
pub fn remove(root: &Path, relative: &Path, expected: &[u8]) -> Result<(), WriteError> {
    let (dirs, name) = split(relative)?;
    let dir = match open_dirs(root, &dirs, false) {
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Err(WriteError::Changed),
        other => other?,
    };
    holding(&dir, &name, expected, libc::O_RDONLY)?;
    whole::remove(&dir, &name)?;
    Ok(())
}

/// `name` in `dir`, opened with `flags` (never through a link), and its
/// bytes, if it is a file holding `expected`.
fn holding(
    dir: &OwnedFd,
    name: &CStr,
    expected: &[u8],
    flags: libc::c_int,
) -> Result<(File, Vec<u8>), WriteError> {
    let fd = match open_at(dir, name, flags | NO_FOLLOW, 0) {
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Err(WriteError::Changed),
        other => other?,
    };
    let mut file = File::from(fd);
    regular(&file)?;
    let mut found = vec![];
    file.read_to_end(&mut found)?;
    if found != expected {
        return Err(WriteError::Changed);
    }
    Ok((file, found))
}

/// Never a link; never waiting on a FIFO someone put there.
const NO_FOLLOW: libc::c_int = libc::O_NOFOLLOW | libc::O_NONBLOCK;

/// The directory names of `relative` and its file name; only plain names.
fn split(relative: &Path) -> io::Result<(Vec<CString>, CString)> {
    let mut names = relative
        .components()
        .map(|component| match component {
            Component::Normal(name) => CString::new(name.as_bytes())
                .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a NUL in the path")),
            _ => Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{} is not a plain relative path", relative.display()),
            )),
        })
        .collect::<io::Result<Vec<_>>>()?;
    let name = names
        .pop()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "the path names no file"))?;
    Ok((names, name))
}

/// `root`, then each of `dirs` below it without following a link; missing
/// ones created first when `create`.
fn open_dirs(root: &Path, dirs: &[CString], create: bool) -> io::Result<OwnedFd> {
    let flags = libc::O_RDONLY | libc::O_DIRECTORY;
    let root = CString::new(root.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a NUL in the root"))?;
    let mut dir = open_fd(libc::AT_FDCWD, &root, flags, 0)?;
    for name in dirs {
        dir = match open_at(&dir, name, flags | libc::O_NOFOLLOW, 0) {
            Err(error) if create && error.kind() == io::ErrorKind::NotFound => {
                // SAFETY: `dir` is an open directory, `name` NUL-terminated.
                let made = unsafe { libc::mkdirat(dir.as_raw_fd(), name.as_ptr(), 0o777) };
                if made != 0 {
                    let error = io::Error::last_os_error();
                    if error.raw_os_error() != Some(libc::EEXIST) {
                        return Err(error);
                    }
                }
                open_at(&dir, name, flags | libc::O_NOFOLLOW, 0)?
            }
            other => other?,
        };
    }
    Ok(dir)
}

pub(super) fn open_at(
    dir: &OwnedFd,
    name: &CStr,
    flags: libc::c_int,
    mode: libc::c_uint,
) -> io::Result<OwnedFd> {
    open_fd(dir.as_raw_fd(), name, flags, mode)
}

fn open_fd(
    dir: libc::c_int,
    name: &CStr,
    flags: libc::c_int,
    mode: libc::c_uint,
) -> io::Result<OwnedFd> {
    // SAFETY: `name` is NUL-terminated; the fd returned is ours alone.
    let fd = unsafe { libc::openat(dir, name.as_ptr(), flags | libc::O_CLOEXEC, mode) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` was just opened and is owned by nothing else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn regular(file: &File) -> io::Result<()> {
    if file.metadata()?.is_file() {
        Ok(())
    } else {
        Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a regular file",
        ))
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::{PermissionsExt, symlink};

    use super::*;
    use crate::scratch::Scratch;

    fn setup() -> (Scratch, std::path::PathBuf, std::path::PathBuf) {
        let scratch = Scratch::new("beneath");
        let real = scratch.canonicalize().unwrap();
        let (root, outside) = (real.join("root"), real.join("outside"));
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        (scratch, root, outside)
    }

    #[test]
    fn writes_only_what_was_expected_and_creates_new_files_exclusively() {
        let (_scratch, root, _) = setup();
        std::fs::write(root.join("src/a.rs"), "old\n").unwrap();
        std::fs::set_permissions(root.join("src/a.rs"), PermissionsExt::from_mode(0o640)).unwrap();
        write(&root, Path::new("src/a.rs"), b"new\n", Some(b"old\n")).unwrap();
        assert_eq!(std::fs::read(root.join("src/a.rs")).unwrap(), b"new\n");
        let mode = std::fs::metadata(root.join("src/a.rs"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o640, "its mode kept");
        assert_eq!(read(&root, Path::new("src/a.rs")).unwrap(), b"new\n");

        let stale = write(&root, Path::new("src/a.rs"), b"x", Some(b"old\n"));
        assert!(matches!(stale, Err(WriteError::Changed)), "{stale:?}");
        let exists = write(&root, Path::new("src/a.rs"), b"x", None);
        assert!(matches!(exists, Err(WriteError::Changed)), "{exists:?}");
        let gone = write(&root, Path::new("src/b.rs"), b"x", Some(b""));
        assert!(matches!(gone, Err(WriteError::Changed)), "{gone:?}");

        write(&root, Path::new("new/dir/c.rs"), b"c", None).unwrap();
        assert_eq!(std::fs::read(root.join("new/dir/c.rs")).unwrap(), b"c");
        create_parents(&root, Path::new("made/here/d.rs")).unwrap();
        assert!(root.join("made/here").is_dir() && !root.join("made/here/d.rs").exists());
        assert!(write(&root, Path::new("../escape"), b"x", None).is_err());
        assert!(read(&root, Path::new("src")).is_err(), "a directory");
    }

    #[test]
    fn a_link_anywhere_on_the_way_fails_and_nothing_outside_changes() {
        let (_scratch, root, outside) = setup();
        std::fs::write(outside.join("target"), "outside\n").unwrap();
        symlink(outside.join("target"), root.join("file-link")).unwrap();
        symlink(outside.join("missing"), root.join("dangling")).unwrap();
        symlink(&outside, root.join("dir-link")).unwrap();

        for (name, expected) in [
            ("file-link", Some(&b"outside\n"[..])),
            ("dangling", None),
            ("dir-link/target", Some(&b"outside\n"[..])),
            ("dir-link/new", None),
        ] {
            // A link where a new file goes is "something is there".
            let result = write(&root, Path::new(name), b"planted", expected);
            assert!(result.is_err(), "{name}: {result:?}");
            assert!(read(&root, Path::new(name)).is_err(), "{name}");
        }
        assert!(create_parents(&root, Path::new("dir-link/sub/x")).is_err());
        assert_eq!(std::fs::read(outside.join("target")).unwrap(), b"outside\n");
        assert!(!outside.join("missing").exists() && !outside.join("new").exists());
        assert!(!outside.join("sub").exists());
        let fifo = CString::new(root.join("fifo").as_os_str().as_bytes()).unwrap();
        // SAFETY: a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
        assert!(read(&root, Path::new("fifo")).is_err(), "no wait on a FIFO");
    }

    /// Names in `dir` that a write left beside its files.
    fn left_beside(dir: &Path) -> Vec<String> {
        std::fs::read_dir(dir)
            .unwrap()
            .flatten()
            .map(|entry| entry.file_name().to_string_lossy().into_owned())
            .filter(|name| name.contains(".pi-ide-"))
            .collect()
    }

    #[test]
    fn a_rewrite_replaces_the_file_whole_instead_of_truncating_it() {
        let (_scratch, root, _) = setup();
        let path = root.join("src/a.rs");
        std::fs::write(&path, "old text\n").unwrap();
        // Whoever has the file open (a crash, a reader) never sees it
        // emptied or half-written: the new text arrives in one rename.
        let mut held = File::open(&path).unwrap();
        write(&root, Path::new("src/a.rs"), b"new\n", Some(b"old text\n")).unwrap();
        let mut seen = String::new();
        held.read_to_string(&mut seen).unwrap();
        assert_eq!(seen, "old text\n");
        assert_eq!(std::fs::read(&path).unwrap(), b"new\n");
        assert_eq!(left_beside(&root.join("src")), Vec::<String>::new());
    }

    #[test]
    fn a_file_with_other_hard_links_is_rewritten_for_every_name() {
        let (_scratch, root, _) = setup();
        std::fs::write(root.join("src/a.rs"), "old\n").unwrap();
        std::fs::hard_link(root.join("src/a.rs"), root.join("src/also.rs")).unwrap();
        write(&root, Path::new("src/a.rs"), b"new\n", Some(b"old\n")).unwrap();
        assert_eq!(std::fs::read(root.join("src/also.rs")).unwrap(), b"new\n");
        assert_eq!(left_beside(&root.join("src")), Vec::<String>::new());
    }

    #[test]
    fn files_are_removed_and_created_only_as_expected() {
        let (_scratch, root, outside) = setup();
        std::fs::write(root.join("src/a.rs"), "agent\n").unwrap();
        let stale = remove(&root, Path::new("src/a.rs"), b"other\n");
        assert!(matches!(stale, Err(WriteError::Changed)), "{stale:?}");
        remove(&root, Path::new("src/a.rs"), b"agent\n").unwrap();
        assert!(!root.join("src/a.rs").exists());
        let gone = remove(&root, Path::new("no/such.rs"), b"");
        assert!(matches!(gone, Err(WriteError::Changed)), "{gone:?}");
        std::fs::write(outside.join("t"), "x").unwrap();
        symlink(outside.join("t"), root.join("link")).unwrap();
        assert!(remove(&root, Path::new("link"), b"x").is_err());
        assert!(outside.join("t").exists() && root.join("link").exists());

        create(&root, Path::new("bin/run.sh"), b"#!/bin/sh\n", true).unwrap();
        let mode = std::fs::metadata(root.join("bin/run.sh"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o100, 0o100, "executable again");
        let twice = create(&root, Path::new("bin/run.sh"), b"", false);
        assert!(matches!(twice, Err(WriteError::Changed)), "{twice:?}");
        assert_eq!(left_beside(&root.join("bin")), Vec::<String>::new());
    }

    #[test]
    fn a_new_file_appears_whole_and_never_over_one_that_exists() {
        let (_scratch, root, _) = setup();
        write(&root, Path::new("src/n.rs"), b"made\n", None).unwrap();
        assert_eq!(std::fs::read(root.join("src/n.rs")).unwrap(), b"made\n");
        let again = write(&root, Path::new("src/n.rs"), b"other\n", None);
        assert!(matches!(again, Err(WriteError::Changed)), "{again:?}");
        assert_eq!(std::fs::read(root.join("src/n.rs")).unwrap(), b"made\n");
        assert_eq!(left_beside(&root.join("src")), Vec::<String>::new());
    }
}
