//! Where the person is, as `context`: the file relative to the project root
//! (null for a help, terminal or diff buffer, or a file outside the
//! project) and, only for a visual selection, its lines, 1-based inclusive.
//! Each client gets a context only when it differs from its last one.

use std::path::{Component, Path};
use std::sync::Arc;

use super::messages;
use crate::client::{ClientId, ClientKind};
use crate::nvim::seam::LuaCall;
use crate::selection::{Mode, Positions};
use crate::state::State;

/// The `context` message for `positions` (`None`: no file) under `root`.
pub fn message(root: &Path, positions: Option<&Positions>) -> String {
    let Some(positions) = positions else {
        return messages::context(None, None);
    };
    let Some(file) = relative(root, Path::new(&positions.path)) else {
        return messages::context(None, None);
    };
    let lines = (positions.mode != Mode::Cursor).then(|| {
        let (first, last) = positions.rows();
        (first + 1, last + 1)
    });
    messages::context(Some(&file), lines)
}

/// `path` relative to `root` with `/` separators, if it lies under it.
fn relative(root: &Path, path: &Path) -> Option<String> {
    let within = |root: &Path, path: &Path| -> Option<String> {
        let rest = path.strip_prefix(root).ok()?;
        let parts: Vec<&str> = rest
            .components()
            .map(|part| match part {
                Component::Normal(name) => name.to_str(),
                _ => None,
            })
            .collect::<Option<_>>()?;
        (!parts.is_empty()).then(|| parts.join("/"))
    };
    within(root, path).or_else(|| {
        // The same place reached through a symlink (a /tmp that is a link).
        within(&root.canonicalize().ok()?, &path.canonicalize().ok()?)
    })
}

/// Pushes the context to every socket client whose last one differs.
pub fn broadcast(state: &State, positions: Option<&Positions>) {
    let message = message(&state.root.borrow(), positions);
    state.clients.push_changed(ClientKind::Socket, &message);
}

/// Sends the current context to one client (right after its `hello`).
pub async fn send_current(state: &Arc<State>, client: ClientId) {
    let positions = match state
        .editor
        .query::<Positions>(LuaCall::CurrentPositions)
        .await
    {
        Ok(positions) => positions,
        Err(error) => {
            tracing::warn!("cannot read the current position: {error}");
            None
        }
    };
    let message = message(&state.root.borrow(), positions.as_ref());
    state.clients.push_changed_to(client, &message);
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn positions(path: &str, mode: Mode, start: u32, end: u32) -> Positions {
        Positions {
            buf: 1,
            path: path.into(),
            mode,
            start: [start, 3],
            end: [end, 0],
        }
    }

    fn parsed(root: &str, positions: Option<&Positions>) -> Value {
        serde_json::from_str(&message(Path::new(root), positions)).unwrap()
    }

    #[test]
    fn files_are_relative_and_lines_one_based_only_for_selections() {
        let cursor = positions("/w/src/a.rs", Mode::Cursor, 4, 4);
        assert_eq!(
            parsed("/w", Some(&cursor)),
            json!({"type": "context", "file": "src/a.rs"})
        );
        let lines = positions("/w/src/a.rs", Mode::Line, 2, 5);
        assert_eq!(
            parsed("/w", Some(&lines)),
            json!({"type": "context", "file": "src/a.rs", "startLine": 3, "endLine": 6})
        );
        let chars = positions("/w/a.rs", Mode::Char, 0, 0);
        assert_eq!(parsed("/w/", Some(&chars))["endLine"], 1);
    }

    #[test]
    fn no_file_outside_the_root_or_without_a_file() {
        let null = json!({"type": "context", "file": null});
        assert_eq!(parsed("/w", None), null);
        let outside = positions("/elsewhere/a.rs", Mode::Line, 0, 1);
        assert_eq!(parsed("/w", Some(&outside)), null);
        let prefix = positions("/work/a.rs", Mode::Cursor, 0, 0);
        assert_eq!(parsed("/w", Some(&prefix)), null, "a prefix is no parent");
        let escaping = positions("/w/../etc/passwd", Mode::Cursor, 0, 0);
        assert_eq!(parsed("/w", Some(&escaping)), null);
    }
}
