//! Review sessions a client asks for with `{files}`: the files are checked
//! Review sessions a client asks for with `{files}`: the files are checked
//! (a root that is a project, never `/` or the home directory; at most
//! [`MAX_FILES`], relative, inside the project root, existing regular
//! files) and their HEAD versions read before the review UI sees them; one
//! review at a time; the result goes to the client that asked, exactly
//! once, as `reviewResult`. A refusal is a `cancelled` result whose `error`
//! says why.

use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use super::{git_head, messages};
use crate::client::ClientId;
use crate::confine::ProjectRoot;
use crate::nvim::seam::{LuaCall, Review, ReviewDone, ReviewStatus};
use crate::state::State;

/// At most this many files per review: Neovim loads each into a buffer.
pub const MAX_FILES: usize = 100;

/// `files` (or why the request was malformed) from `client`.
pub async fn request(state: &Arc<State>, client: ClientId, files: Result<Vec<String>, String>) {
    let root = state.root.borrow().clone();
    let project = ProjectRoot::confirm(&root.to_string_lossy())
        .map_err(|not| format!("Neovim's project root {not}"));
    let files = match project.and_then(|_| {
        files
            .and_then(capped)
            .and_then(|files| check(&root, &files))
    }) {
        Ok(files) => files,
        Err(why) => return refuse(state, client, format!("review refused: {why}")),
    };
    let Some(id) = state.reviews.begin(client) else {
        let why = "review refused: a review is already open; submit or cancel it first";
        return refuse(state, client, why.into());
    };
    let heads = git_head::heads(&root, &files).await;
    if !state.reviews.is_open(id) {
        tracing::info!("review {id}: its client left while git ran");
        return;
    }
    let review = Review {
        id,
        root: root.to_string_lossy().into_owned(),
        files,
        heads,
    };
    tracing::info!("review {id} for client {}: {:?}", client.0, review.files);
    if let Err(error) = state.editor.call(LuaCall::ReviewOpen(review)).await
        && state.reviews.finish(id).is_some()
    {
        refuse(state, client, format!("cannot open the review: {error}"));
    }
}

/// The review UI ended review `id`: its result goes to the client that
/// asked, if it is still open (a result comes once).
pub fn done(state: &State, done: ReviewDone) {
    match state.reviews.finish(done.id) {
        Some(client) => {
            let result = messages::review_result(done.status, &done.comments);
            if !state.clients.send(client, result) {
                tracing::info!("review {}: its client is gone", done.id);
            }
        }
        None => tracing::debug!("review {} is not open; result dropped", done.id),
    }
}

/// Neovim is closing: the open review is answered `cancelled` and closed.
pub fn shutdown(state: &State) {
    if let Some((id, client)) = state.reviews.take() {
        cancelled(state, client);
        state.editor.push(LuaCall::ReviewClose {
            id,
            reason: "Neovim is closing".into(),
        });
    }
}

fn cancelled(state: &State, client: ClientId) {
    let result = messages::review_result(ReviewStatus::Cancelled, &[]);
    state.clients.send(client, result);
}

/// Answers `cancelled` with the reason at once and tells the person why.
fn refuse(state: &State, client: ClientId, message: String) {
    tracing::info!("client {}: {message}", client.0);
    state
        .clients
        .send(client, messages::review_refused(&message));
    state.editor.push(LuaCall::ReviewRefused { message });
}

/// `files` unless there are more than [`MAX_FILES`].
fn capped(files: Vec<String>) -> Result<Vec<String>, String> {
    match files.len() {
        n if n > MAX_FILES => Err(format!(
            "{n} files asked for, and a review takes at most {MAX_FILES}: ask for fewer at a time"
        )),
        _ => Ok(files),
    }
}

/// The requested files, normalized (`./a/../b` → `b`) and without
/// duplicates, or why the request is refused.
pub fn check(root: &Path, files: &[String]) -> Result<Vec<String>, String> {
    let real_root = root
        .canonicalize()
        .map_err(|error| format!("the project root {} is unusable: {error}", root.display()))?;
    let mut checked: Vec<String> = vec![];
    for file in files {
        let relative = normalize(file)?;
        let path = root.join(&relative);
        let real = path
            .canonicalize()
            .map_err(|_| format!("{file} does not exist in {}", root.display()))?;
        if !real.starts_with(&real_root) {
            return Err(format!("{file} leads out of the project root (a symlink)"));
        }
        if !real.is_file() {
            return Err(format!("{file} is not a regular file"));
        }
        let relative = relative.to_string_lossy().into_owned();
        if !checked.contains(&relative) {
            checked.push(relative);
        }
    }
    Ok(checked)
}

/// `file` as a relative path without `.` and `..`; refused when absolute
/// or when a `..` leaves the root.
fn normalize(file: &str) -> Result<PathBuf, String> {
    let mut normal = PathBuf::new();
    for component in Path::new(file).components() {
        match component {
            Component::Normal(name) => normal.push(name),
            Component::CurDir => {}
            Component::ParentDir => {
                if !normal.pop() {
                    return Err(format!("{file} leaves the project root"));
                }
            }
            Component::RootDir | Component::Prefix(_) => {
                return Err(format!(
                    "{file} is absolute; only paths relative to the project root are reviewed"
                ));
            }
        }
    }
    if normal.as_os_str().is_empty() {
        return Err(format!("{file:?} names no file"));
    }
    Ok(normal)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scratch::Scratch;

    #[test]
    fn a_review_of_too_many_files_is_refused_naming_the_cap() {
        let many: Vec<String> = (0..=MAX_FILES).map(|i| format!("f{i}")).collect();
        let why = capped(many.clone()).unwrap_err();
        assert!(why.contains(&format!("at most {MAX_FILES}")), "{why}");
        assert_eq!(capped(many[..MAX_FILES].to_vec()).unwrap().len(), MAX_FILES);
    }

    #[test]
    fn only_existing_files_inside_the_root_pass() {
        let root = Scratch::new("review-check");
        std::fs::create_dir(root.join("src")).unwrap();
        std::fs::write(root.join("src/a.rs"), "a").unwrap();
        std::fs::write(root.join("b.txt"), "b").unwrap();
        let files = |list: &[&str]| list.iter().map(|f| f.to_string()).collect::<Vec<_>>();
        assert_eq!(
            check(&root, &files(&["src/a.rs", "./b.txt", "src/../b.txt"])).unwrap(),
            ["src/a.rs", "b.txt"]
        );
        let refused = |list: &[&str]| check(&root, &files(list)).unwrap_err();
        assert!(refused(&["../x"]).contains("leaves the project root"));
        assert!(refused(&["src/../../x"]).contains("leaves the project root"));
        assert!(refused(&["/etc/passwd"]).contains("is absolute"));
        assert!(refused(&["missing.rs"]).contains("does not exist"));
        assert!(refused(&["src"]).contains("not a regular file"));
        assert!(refused(&["."]).contains("names no file"));
        std::os::unix::fs::symlink("/", root.join("out")).unwrap();
        assert!(refused(&["out"]).contains("out of the project root"));
        assert!(refused(&["b.txt", "nope"]).contains("nope"), "all or none");
    }
}
