//! Codex CLI's `ide-context` as Codex asks it (group `codex`): a connection
//! of its own per request, sequential, with a 200-line selection kept:
//! round trips at the client (p50, p99 of 1,000), and the same while
//! Neovim's main loop is blocked (the answer never waits on Neovim).

use std::path::{Path, PathBuf};
use std::time::Instant;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::UnixStream;

use crate::common::{Session, eventually, fresh_dir};
use crate::report;

const REQUESTS: usize = 1000;

async fn ide_context(socket: &str, workspace: &Path) -> Value {
    let mut stream = UnixStream::connect(socket).await.unwrap();
    let request = json!({"type": "request", "requestId": "r", "sourceClientId": "codex-tui",
        "version": 0, "method": "ide-context", "params": {"workspaceRoot": workspace}});
    let bytes = request.to_string().into_bytes();
    stream
        .write_all(&(bytes.len() as u32).to_le_bytes())
        .await
        .unwrap();
    stream.write_all(&bytes).await.unwrap();
    let mut len = [0u8; 4];
    stream.read_exact(&mut len).await.unwrap();
    let mut answer = vec![0; u32::from_le_bytes(len) as usize];
    stream.read_exact(&mut answer).await.unwrap();
    serde_json::from_slice(&answer).unwrap()
}

/// p50 and p99 of `n` round trips, in ms.
async fn round_trips(socket: &str, workspace: &Path, n: usize) -> (f64, f64) {
    let mut sample = Vec::with_capacity(n);
    for _ in 0..n {
        let start = Instant::now();
        ide_context(socket, workspace).await;
        sample.push(start.elapsed().as_secs_f64() * 1000.0);
    }
    sample.sort_by(f64::total_cmp);
    (sample[n / 2], sample[n * 99 / 100])
}

pub async fn run() {
    let name = uuid::Uuid::new_v4().simple().to_string();
    let tmp = PathBuf::from(format!("/tmp/cxb{}", &name[..8]));
    std::fs::create_dir(&tmp).unwrap();
    let work = fresh_dir("bench-codex");
    let file = work.join("big.rs");
    let text: String = (0..1000)
        .map(|n| format!("let line_{n} = {n};\n"))
        .collect();
    std::fs::write(&file, text).unwrap();
    let session = Session::start_in(work.clone(), &[("TMPDIR", &tmp)], "{ codex = true }").await;
    let socket = eventually("Codex's socket", || async {
        let codex = session.lua("return require('pi-ide').status().codex").await;
        codex["socket"].as_str().map(str::to_owned)
    })
    .await;
    session
        .exec(&format!("vim.cmd.edit('{}')", file.display()))
        .await;
    session.place_cursor(100, 0).await;
    session.input("V199j").await;
    eventually("the 200-line selection kept", || async {
        let answer = ide_context(&socket, &work).await;
        let selected = &answer["result"]["ideContext"]["activeFile"]["activeSelectionContent"];
        (selected.as_str()?.lines().count() == 200).then_some(())
    })
    .await;
    let (p50, p99) = round_trips(&socket, &work, REQUESTS).await;
    report("codex_ide_context_p50", p50, "ms");
    report("codex_ide_context_p99", p99, "ms");
    let (blocked, release) = (tmp.join("blocked"), tmp.join("release"));
    session
        .exec(&format!(
            "vim.defer_fn(function()
               io.open('{}', 'w'):close()
               while not vim.uv.fs_stat('{}') do vim.uv.sleep(1) end
             end, 0)",
            blocked.display(),
            release.display()
        ))
        .await;
    eventually("Neovim blocked", || async {
        blocked.exists().then_some(())
    })
    .await;
    let (busy_p50, busy_p99) = round_trips(&socket, &work, REQUESTS).await;
    std::fs::write(&release, "").unwrap();
    report("codex_ide_context_neovim_blocked_p50", busy_p50, "ms");
    report("codex_ide_context_neovim_blocked_p99", busy_p99, "ms");
    drop(session);
    let _ = std::fs::remove_dir_all(&tmp);
}
