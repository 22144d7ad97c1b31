//! The workspace's diagnostics pulled from the language servers that offer
//! them (`workspace/diagnostic`, capability
//! `diagnosticProvider.workspaceDiagnostics`), for `get_project_problems`:
//! Lua asks without blocking Neovim, within [`PULL_TIMEOUT`], and passes on
//! at most a bounded number of reports; they are kept as the servers'
//! pushed ones are (a newer one replaces them, a change of the file drops
//! them), and each call lists those of its project. Callers that ask while
//! a pull runs share it, so many agents asking at once cost Neovim one
//! pull.

use std::time::Duration;

use serde_json::{Value, json};
use tokio::time::Instant;

use super::lsp;
use crate::diagnostics::kept::{Columns, Pulled};
use crate::nvim::seam::{LspQuery, items as list};
use crate::state::State;
use crate::uri::path_of;

/// How long a pull waits for the servers' answers.
pub const PULL_TIMEOUT: Duration = Duration::from_secs(2);

/// Pulls the servers' workspace diagnostics into the kept reports, or
/// shares a pull that was under way when this call asked.
pub async fn pull(state: &State) -> Pulled {
    shared(&state.diagnostics().pulls, ask(state)).await
}

/// What `run` gives, run now unless a run that ends after this call asked
/// (one under way, or one queued before this call) gives it.
async fn shared(
    slot: &tokio::sync::Mutex<Option<(Instant, Pulled)>>,
    run: impl Future<Output = Pulled>,
) -> Pulled {
    let asked = Instant::now();
    let mut last = slot.lock().await;
    if let Some((ended, pulled)) = &*last
        && *ended > asked
    {
        return pulled.clone();
    }
    let pulled = run.await;
    *last = Some((Instant::now(), pulled.clone()));
    pulled
}

async fn ask(state: &State) -> Pulled {
    let query = LspQuery {
        kind: "workspace_diagnostics",
        timeout_ms: PULL_TIMEOUT.as_millis() as u64,
        ..Default::default()
    };
    let answer = match lsp::send(state, query).await {
        Ok(answer) => answer,
        Err(failure) => {
            return Pulled {
                errors: vec![failure.0],
                ..Default::default()
            };
        }
    };
    if let Some(error) = answer.error {
        return Pulled {
            errors: vec![error],
            ..Default::default()
        };
    }
    let Some(found) = answer.result else {
        return Pulled::default();
    };
    let texts = |key: &str| -> Vec<String> {
        list(&found[key])
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect()
    };
    let pulled = Pulled {
        silent: texts("silent"),
        errors: texts("errors"),
    };
    let reports = full_reports(&found);
    let mirror = state.diagnostics().clone();
    // Stamping each file reads the file system.
    let _ = crate::task::spawn_blocking(move || {
        for (path, diagnostics, columns) in reports {
            mirror.kept.record(&path, &diagnostics, columns);
        }
    })
    .await;
    pulled
}

/// `(path, diagnostics, columns)` of each full report of `found.responses`
/// (`{encoding, reports}` per server); an `unchanged` one says nothing new.
fn full_reports(found: &Value) -> Vec<(String, Vec<Value>, Columns)> {
    let mut out = vec![];
    for response in list(&found["responses"]) {
        let columns = match response["encoding"].as_str() {
            Some("utf-8") => Columns::Utf8,
            Some("utf-32") => Columns::Utf32,
            _ => Columns::Utf16,
        };
        for report in list(&response["reports"]) {
            let Some(uri) = report["uri"].as_str() else {
                continue;
            };
            if report["kind"] != "full" || !uri.starts_with("file:") {
                continue;
            }
            let diagnostics = list(&report["items"]).map(diagnostic).collect();
            out.push((path_of(uri), diagnostics, columns));
        }
    }
    out
}

/// The fields of an LSP diagnostic the tools show.
fn diagnostic(raw: &Value) -> Value {
    let mut kept = json!({
        "severity": raw["severity"],
        "message": raw["message"],
        "range": raw["range"],
    });
    if let Some(source) = raw["source"].as_str() {
        kept["source"] = json!(source);
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    fn named(name: &str) -> Pulled {
        Pulled {
            silent: vec![name.into()],
            errors: vec![],
        }
    }

    #[tokio::test(start_paused = true)]
    async fn callers_that_ask_while_a_pull_runs_share_it_and_later_ones_pull_again() {
        let slot = tokio::sync::Mutex::default();
        let first = async {
            tokio::time::sleep(PULL_TIMEOUT).await;
            named("first")
        };
        let meanwhile = async {
            tokio::task::yield_now().await;
            shared(&slot, async { named("second") }).await
        };
        let (a, b) = tokio::join!(shared(&slot, first), meanwhile);
        assert_eq!(
            (a.silent, b.silent),
            (vec!["first".to_owned()], vec!["first".to_owned()])
        );
        let later = shared(&slot, async { named("third") }).await;
        assert_eq!(later.silent, ["third"]);
    }

    #[test]
    fn full_reports_of_files_are_read_in_their_servers_encoding() {
        let range =
            json!({"start": {"line": 0, "character": 6}, "end": {"line": 0, "character": 9}});
        let found = json!({"responses": [
            {"encoding": "utf-8", "reports": [
                {"kind": "full", "uri": "file:///w/a%20b.md", "items": [
                    {"severity": 1, "message": "boom", "source": "stub", "range": range, "code": 7}]},
                {"kind": "unchanged", "uri": "file:///w/c.md", "resultId": "1"},
                {"kind": "full", "uri": "untitled:1", "items": []},
            ]},
            {"reports": {}},
        ]});
        let reports = full_reports(&found);
        assert_eq!(reports.len(), 1, "{reports:?}");
        let (path, diagnostics, columns) = &reports[0];
        assert_eq!(path, "/w/a b.md");
        assert_eq!(*columns, Columns::Utf8);
        assert_eq!(
            diagnostics[0],
            json!({"severity": 1, "message": "boom", "source": "stub", "range": range})
        );
    }
}
