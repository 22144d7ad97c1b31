//! A mirror of Neovim's diagnostics, fed by Lua whenever they change, so
//! `getDiagnostics` — which pi sends before every model call, from every
//! session — is answered without touching Neovim's main loop.
//!
//! Lua announces a change at once (`diagnostics_pending`) and sends the
//! changed buffers' diagnostics a moment later; an answer waits for that
//! data, so it is never older than the last change Neovim reported before
//! the request.
//!
//! What the servers reported is also [`kept`] for each file after its
//! buffer goes, for the project's problems.

pub mod kept;
pub mod shape;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;
use tokio::sync::watch;

use crate::client::DiagnosticsShape;
use crate::uri::path_of;

/// How long an answer waits for announced data before it makes do with
/// what the mirror holds (Lua flushes within ~20 ms).
const FLUSH_WAIT: Duration = Duration::from_millis(500);

/// One buffer's diagnostics as Lua reports them.
#[derive(Debug, Deserialize)]
pub struct BufferDiagnostics {
    pub buf: i64,
    /// `file://` uri; `None` for a buffer without a file, or a wiped one.
    pub uri: Option<String>,
    /// `[{severity, message, source?, range}]`; empty when it has none.
    #[serde(default)]
    pub diagnostics: Value,
    /// An unloaded buffer holds what a server reported on a file no buffer
    /// has open; its columns are bytes.
    #[serde(default = "yes")]
    pub loaded: bool,
    /// The diagnostics are about unsaved text.
    #[serde(default)]
    pub modified: bool,
}

fn yes() -> bool {
    true
}

/// One file's diagnostics, serialized once per change for each client kind.
struct File {
    uri: String,
    /// The uri's path, percent-decoded, to match uris spelled differently.
    path: String,
    pi: String,
    claude: String,
    /// As Lua sent it, for the project tools' own shape.
    raw: Vec<Value>,
}

pub struct Mirror {
    /// Loaded buffers with diagnostics.
    files: Mutex<BTreeMap<i64, File>>,
    /// What the servers last reported for each file, loaded or not.
    pub kept: kept::Kept,
    /// When the last `workspace/diagnostic` pull ended, and what became of
    /// it: callers that asked while it ran share it.
    pub pulls: tokio::sync::Mutex<Option<(tokio::time::Instant, kept::Pulled)>>,
    /// True from an announced change until its data arrived; true at start
    /// until Lua's first snapshot.
    pending: watch::Sender<bool>,
    /// [`Mirror::reply_now`]'s replies for pi's and Claude's shapes, until
    /// the next change.
    replies: Mutex<[Option<Arc<RawValue>>; 2]>,
}

impl Default for Mirror {
    fn default() -> Self {
        Mirror {
            files: Mutex::default(),
            kept: kept::Kept::default(),
            pulls: tokio::sync::Mutex::default(),
            pending: watch::Sender::new(true),
            replies: Mutex::default(),
        }
    }
}

impl Mirror {
    /// Lua saw a change; its data follows.
    pub fn mark_pending(&self) {
        *crate::mutex::lock(&self.replies) = Default::default();
        self.pending.send_replace(true);
    }

    /// The current diagnostics of the buffers that changed.
    pub fn update(&self, changed: Vec<BufferDiagnostics>) {
        {
            let mut files = crate::mutex::lock(&self.files);
            for buffer in &changed {
                let list = buffer.diagnostics.as_array().filter(|l| !l.is_empty());
                match (&buffer.uri, list) {
                    (Some(uri), Some(list)) if buffer.loaded => {
                        files.insert(buffer.buf, File::new(uri.clone(), list));
                    }
                    _ => {
                        files.remove(&buffer.buf);
                    }
                }
            }
        }
        for buffer in &changed {
            self.keep(buffer);
        }
        // After the files' lock: `reply_now` takes the two the other way round.
        *crate::mutex::lock(&self.replies) = Default::default();
        self.pending.send_replace(false);
    }

    /// The `getDiagnostics` answer text in the shape `kind` reads: one
    /// file (listed even when clean) or every file with diagnostics.
    pub async fn answer(&self, kind: impl Into<DiagnosticsShape>, uri: Option<&str>) -> String {
        self.settle().await;
        self.render(kind.into(), uri)
    }

    /// The answer for every file, turned into a reply by `reply`, at once
    /// unless announced data is still on its way. Kept until the next
    /// change: agents ask far more often than diagnostics change.
    pub fn reply_now(
        &self,
        kind: impl Into<DiagnosticsShape>,
        reply: impl FnOnce(&str) -> Box<RawValue>,
    ) -> Option<Arc<RawValue>> {
        if *self.pending.borrow() {
            return None;
        }
        let shape = kind.into();
        let slot = usize::from(shape == DiagnosticsShape::UriList);
        let mut replies = crate::mutex::lock(&self.replies);
        if let Some(kept) = &replies[slot] {
            return Some(kept.clone());
        }
        let made: Arc<RawValue> = reply(&self.render(shape, None)).into();
        replies[slot] = Some(made.clone());
        Some(made)
    }

    /// A buffer's report as what is known about its file. A loaded
    /// buffer's diagnostics are the servers' newest word on it (none, or
    /// about unsaved text: nothing known). An unloaded buffer's are a
    /// server's report on a file it was not handed; an empty list there is
    /// a server taking back what it said of a file it was told is closed,
    /// no news about the file.
    fn keep(&self, buffer: &BufferDiagnostics) {
        let Some(uri) = &buffer.uri else {
            return;
        };
        let path = path_of(uri);
        let list = buffer.diagnostics.as_array().map_or(&[][..], Vec::as_slice);
        match (buffer.loaded, buffer.modified) {
            (true, true) => self.kept.forget(&path),
            (true, false) => self.kept.record(&path, list, kept::Columns::Utf16),
            (false, _) if !list.is_empty() => self.kept.record(&path, list, kept::Columns::Utf8),
            (false, _) => {}
        }
    }

    /// Every file's diagnostics by path: loaded buffers' as they are, and
    /// for the other files what was kept while they are as they were then.
    /// Reads the kept files' stamps off the runtime's thread.
    pub async fn everywhere(self: &Arc<Self>) -> Vec<kept::Report> {
        self.settle().await;
        let mirror = self.clone();
        let kept = crate::task::spawn_blocking(move || mirror.kept.current())
            .await
            .unwrap_or_default();
        let mut all: BTreeMap<String, kept::Report> = kept
            .into_iter()
            .map(|report| (report.path.clone(), report))
            .collect();
        for file in crate::mutex::lock(&self.files).values() {
            let live = kept::Report {
                path: file.path.clone(),
                diagnostics: file.raw.clone(),
                columns: kept::Columns::Utf16,
            };
            all.insert(file.path.clone(), live);
        }
        all.into_values().collect()
    }

    /// Waits (bounded) for announced data.
    async fn settle(&self) {
        let mut pending = self.pending.subscribe();
        if *pending.borrow_and_update() {
            let started = tokio::time::Instant::now();
            let _ = tokio::time::timeout(FLUSH_WAIT, pending.wait_for(|p| !*p)).await;
            tracing::debug!(
                "diagnostics waited {:?} for announced data",
                started.elapsed()
            );
        }
    }

    fn render(&self, shape: DiagnosticsShape, uri: Option<&str>) -> String {
        let files = crate::mutex::lock(&self.files);
        let entries: Vec<(&str, &str)> = match uri {
            None => files
                .values()
                .map(|file| (file.uri.as_str(), file.list(shape)))
                .collect(),
            Some(uri) => {
                let path = path_of(uri);
                let found = files.values().find(|file| file.path == path);
                vec![(uri, found.map_or("[]", |file| file.list(shape)))]
            }
        };
        let quoted = |uri: &str| Value::from(uri).to_string();
        match shape {
            DiagnosticsShape::ByUri => {
                let pairs: Vec<String> = entries
                    .iter()
                    .map(|(uri, list)| format!("{}:{list}", quoted(uri)))
                    .collect();
                format!("{{{}}}", pairs.join(","))
            }
            DiagnosticsShape::UriList => {
                let items: Vec<String> = entries
                    .iter()
                    .map(|(uri, list)| {
                        format!("{{\"uri\":{},\"diagnostics\":{list}}}", quoted(uri))
                    })
                    .collect();
                format!("[{}]", items.join(","))
            }
        }
    }
}

impl File {
    fn new(uri: String, raw: &[Value]) -> File {
        File {
            path: path_of(&uri),
            pi: shape::list(DiagnosticsShape::ByUri, raw).to_string(),
            claude: shape::list(DiagnosticsShape::UriList, raw).to_string(),
            raw: raw.to_vec(),
            uri,
        }
    }

    fn list(&self, shape: DiagnosticsShape) -> &str {
        match shape {
            DiagnosticsShape::ByUri => &self.pi,
            DiagnosticsShape::UriList => &self.claude,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::ClientKind;
    use serde_json::json;

    fn buffer(buf: i64, uri: Option<&str>, diagnostics: Value) -> BufferDiagnostics {
        BufferDiagnostics {
            buf,
            uri: uri.map(str::to_owned),
            diagnostics,
            loaded: true,
            modified: false,
        }
    }

    fn parsed(text: String) -> Value {
        serde_json::from_str(&text).unwrap()
    }

    #[tokio::test]
    async fn answers_in_each_shape_and_forgets_what_was_cleared() {
        let mirror = Mirror::default();
        mirror.update(vec![
            buffer(
                1,
                Some("file:///w/a%20b.rs"),
                json!([{"severity": 1, "message": "boom"}]),
            ),
            buffer(
                2,
                Some("file:///w/c.rs"),
                json!([{"severity": 3, "message": "fyi"}]),
            ),
            buffer(3, None, json!([{"severity": 1, "message": "scratch"}])),
        ]);
        let pi = parsed(mirror.answer(ClientKind::Pi, None).await);
        assert_eq!(pi.as_object().unwrap().len(), 2, "{pi}");
        assert_eq!(pi["file:///w/a%20b.rs"][0]["message"], "boom");
        assert_eq!(pi["file:///w/c.rs"][0]["severity"], "Information");
        let claude = parsed(mirror.answer(ClientKind::Claude, None).await);
        assert_eq!(claude[1]["uri"], "file:///w/c.rs");
        assert_eq!(claude[1]["diagnostics"][0]["severity"], "Info");

        let one = parsed(
            mirror
                .answer(ClientKind::Pi, Some("file:///w/a b.rs"))
                .await,
        );
        assert_eq!(one["file:///w/a b.rs"][0]["message"], "boom", "{one}");
        let clean = parsed(
            mirror
                .answer(ClientKind::Claude, Some("file:///x.rs"))
                .await,
        );
        assert_eq!(clean, json!([{"uri": "file:///x.rs", "diagnostics": []}]));

        mirror.update(vec![
            buffer(1, Some("file:///w/a%20b.rs"), json!({})),
            buffer(2, None, json!([])),
        ]);
        assert_eq!(parsed(mirror.answer(ClientKind::Pi, None).await), json!({}));
    }

    #[tokio::test]
    async fn what_the_servers_said_of_a_file_outlives_its_buffer_until_news_about_the_file() {
        let dir = crate::scratch::Scratch::new("mirror-kept");
        let (a, b) = (dir.join("a.c"), dir.join("b.c"));
        std::fs::write(&a, "int a = x;\n").unwrap();
        std::fs::write(&b, "int b = y;\n").unwrap();
        let uri = |path: &std::path::Path| format!("file://{}", path.display());
        let error = |message: &str| json!([{"severity": 1, "message": message}]);
        let known = |mirror: &Arc<Mirror>| {
            let mirror = mirror.clone();
            async move {
                let all = mirror.everywhere().await;
                all.into_iter()
                    .map(|r| (r.path, r.diagnostics[0]["message"].clone(), r.columns))
                    .collect::<Vec<_>>()
            }
        };
        let (a_path, b_path) = (a.display().to_string(), b.display().to_string());
        let mirror = Arc::new(Mirror::default());

        mirror.update(vec![buffer(1, Some(&uri(&a)), error("x"))]);
        mirror.update(vec![buffer(1, None, json!([]))]);
        assert_eq!(
            known(&mirror).await,
            [(a_path.clone(), json!("x"), kept::Columns::Utf16)],
            "the buffer went, its file's report stays"
        );
        assert_eq!(parsed(mirror.answer(ClientKind::Pi, None).await), json!({}));

        let mut closed = buffer(2, Some(&uri(&b)), error("y"));
        closed.loaded = false;
        mirror.update(vec![closed]);
        let mut taken_back = buffer(2, Some(&uri(&b)), json!([]));
        taken_back.loaded = false;
        mirror.update(vec![taken_back]);
        assert_eq!(
            known(&mirror).await[1],
            (b_path, json!("y"), kept::Columns::Utf8),
            "a server's report on a closed file, in bytes; clearing it on close is no news"
        );

        let mut edited = buffer(3, Some(&uri(&a)), error("unsaved"));
        edited.modified = true;
        mirror.update(vec![edited]);
        assert_eq!(
            known(&mirror).await[0].1,
            json!("unsaved"),
            "the buffer's own"
        );
        mirror.update(vec![buffer(3, None, json!([]))]);
        assert_eq!(
            known(&mirror).await.len(),
            1,
            "what was said of a's file was no answer after the edit"
        );

        mirror.update(vec![buffer(4, Some(&uri(&a)), error("x"))]);
        mirror.update(vec![buffer(4, Some(&uri(&a)), json!([]))]);
        assert_eq!(known(&mirror).await.len(), 1, "a server found a clean");
    }

    #[tokio::test(start_paused = true)]
    async fn an_announced_change_is_waited_for() {
        let mirror = std::sync::Arc::new(Mirror::default());
        mirror.update(vec![]);
        mirror.mark_pending();
        let asking = {
            let mirror = mirror.clone();
            crate::task::spawn(async move { mirror.answer(ClientKind::Pi, None).await })
        };
        tokio::task::yield_now().await;
        mirror.update(vec![buffer(1, Some("file:///a"), json!([{"severity": 2}]))]);
        let answer = parsed(asking.await.unwrap());
        assert_eq!(answer["file:///a"][0]["severity"], "Warning");

        mirror.mark_pending();
        let started = tokio::time::Instant::now();
        let stale = parsed(mirror.answer(ClientKind::Pi, None).await);
        assert!(
            started.elapsed() >= FLUSH_WAIT && started.elapsed() < FLUSH_WAIT * 2,
            "data that never comes is waited for, boundedly"
        );
        assert_eq!(stale["file:///a"][0]["severity"], "Warning");
    }

    #[test]
    fn a_reply_made_now_is_kept_until_the_next_change_and_never_made_while_one_is_coming() {
        let mirror = Mirror::default();
        let text = |reply: Option<Arc<RawValue>>| reply.map(|raw| raw.get().to_owned());
        let raw = |text: &str| crate::jsonrpc::raw(&format!("<{text}>"));
        assert_eq!(
            text(mirror.reply_now(ClientKind::Pi, raw)),
            None,
            "no snapshot yet"
        );
        mirror.update(vec![buffer(
            1,
            Some("file:///a"),
            json!([{"severity": 1, "message": "x"}]),
        )]);
        let made = std::cell::Cell::new(0);
        let reply = |text: &str| {
            made.set(made.get() + 1);
            raw(text)
        };
        let pi = text(mirror.reply_now(ClientKind::Pi, reply)).unwrap();
        assert_eq!(text(mirror.reply_now(ClientKind::Pi, reply)).unwrap(), pi);
        assert_eq!(made.get(), 1, "kept, not made again");
        let claude = text(mirror.reply_now(ClientKind::Claude, reply)).unwrap();
        assert!(claude.starts_with("\"<[{\\\"uri\\\""), "{claude}");
        assert!(pi.starts_with("\"<{\\\"file:///a\\\""), "{pi}");

        mirror.mark_pending();
        assert_eq!(text(mirror.reply_now(ClientKind::Pi, reply)), None);
        mirror.update(vec![buffer(1, Some("file:///a"), json!([]))]);
        assert_eq!(
            text(mirror.reply_now(ClientKind::Pi, reply)).unwrap(),
            "\"<{}>\""
        );
        assert_eq!(made.get(), 3);
    }
}
