//! The ACP chat against a scriptable mock agent (`tests/acp_agent`, the
//! protocol crate's agent side): real Neovim, the real host spawning the
//! agent, the person answering through the public Lua API and the review.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Value, json};

use crate::common::{Session, eventually, host_binary};

/// The mock agent `cargo test` builds beside the host.
pub(crate) fn mock_agent() -> PathBuf {
    let bin = host_binary()
        .parent()
        .unwrap()
        .join("examples/mock_acp_agent");
    assert!(
        bin.exists(),
        "no mock agent at {} (cargo test builds it)",
        bin.display()
    );
    bin
}

/// Neovim with the mock as agent `mock` (its `env` as a Lua table), host up.
pub(crate) async fn session_with(env: &str) -> Session {
    let opts = format!(
        "{{ acp = {{ agents = {{ mock = {{ cmd = {{ '{}' }}, env = {env} }} }} }} }}",
        mock_agent().display()
    );
    let session = Session::start_with(&opts).await;
    session.lockfile().await;
    session
        .exec("_G.chat_events = {}; for _, e in ipairs({'PiIdeChatUpdate', 'PiIdeChatPermission', 'PiIdeChatEnded'}) do vim.api.nvim_create_autocmd('User', { pattern = e, callback = function(a) table.insert(_G.chat_events, {name = e, data = a.data}) end }) end")
        .await;
    session
}

pub(crate) async fn transcript(session: &Session) -> String {
    let lines = session
        .lua("return require('pi-ide.chat').transcript()")
        .await;
    lines
        .as_array()
        .map(|l| {
            l.iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

pub(crate) async fn wait_text(session: &Session, wanted: &str) -> String {
    let shown = transcript(session).await;
    eventually(
        &format!("{wanted:?} in the transcript (it held {shown:?} when the wait began)"),
        || async {
            let text = transcript(session).await;
            text.contains(wanted).then_some(text)
        },
    )
    .await
}

pub(crate) async fn status(session: &Session) -> String {
    let list = session
        .lua("return require('pi-ide.chat').sessions()")
        .await;
    list[0]["status"].as_str().unwrap_or_default().to_owned()
}

pub(crate) async fn wait_status(session: &Session, wanted: &str) {
    let deadline = tokio::time::Instant::now() + crate::common::DEADLINE;
    while status(session).await != wanted {
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for chat status {wanted} (it is {}); the transcript:\n{}",
            status(session).await,
            transcript(session).await
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Waits until `n` permission questions reached Neovim (`_G.chat_events`
/// records `PiIdeChatPermission`).
pub(crate) async fn wait_asked(session: &Session, n: usize) {
    let deadline = tokio::time::Instant::now() + crate::common::DEADLINE;
    let count = "local n = 0; for _, e in ipairs(_G.chat_events) do if e.name == nil or e.name == 'PiIdeChatPermission' then n = n + 1 end end; return n";
    while session.lua(count).await != json!(n) {
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for {n} permission questions; the transcript:\n{}",
            transcript(session).await
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Opens the mock's chat and waits until its session is ready.
pub(crate) async fn open(session: &Session) {
    let id = session
        .lua("return require('pi-ide.chat').open('mock')")
        .await;
    assert_eq!(id, json!(1));
    wait_status(session, "ready").await;
}

/// Puts `text` in the diff's proposal and accepts it, as the person would.
pub(crate) async fn accept_edited(session: &Session, diff: &Value, text: &str) {
    let proposal = diff["proposed_buf"].as_i64().unwrap();
    let tab = diff["tab_name"].as_str().unwrap();
    session
        .lua_with(
            &format!("vim.api.nvim_buf_set_lines({proposal}, 0, -1, false, {{...}}); require('pi-ide.diff').accept('{tab}')"),
            vec![json!(text)],
        )
        .await;
}

/// Sends `text` and waits for the turn to end.
pub(crate) async fn send(session: &Session, text: &str) {
    let sent = session
        .lua_with("return require('pi-ide.chat').send(...)", vec![json!(text)])
        .await;
    assert_eq!(sent, json!(true), "{text} was not sent");
}

#[tokio::test]
async fn a_prompt_streams_its_answer_thoughts_plan_and_tool_rows_into_the_transcript() {
    let session = session_with("{}").await;
    open(&session).await;
    let notes = session.write_file("notes.md", "a\nb\nc\n");
    send(&session, &format!("hello {}", notes.display())).await;
    let text = wait_text(&session, "Hello from the mock agent.").await;
    wait_status(&session, "idle").await;
    assert!(text.contains("### You\nhello"), "{text}");
    assert!(text.contains("┆ Thinking it over"), "{text}");
    assert!(
        text.contains("- [x] Look around") && text.contains("- [ ] Answer ◐"),
        "{text}"
    );
    assert!(
        text.contains("**read** Read notes · notes.md:2 · completed"),
        "{text}"
    );
    assert!(
        text.contains("### mock\nHello from the mock agent."),
        "{text}"
    );
    // The tool row jumps to its location.
    session
        .exec("local buf = vim.fn.bufnr('pi-ide://chat/mock#1'); local win = vim.fn.bufwinid(buf); vim.api.nvim_set_current_win(win); for i, l in ipairs(vim.api.nvim_buf_get_lines(buf, 0, -1, false)) do if l:find('Read notes') then vim.api.nvim_win_set_cursor(win, {i, 0}) end end")
        .await;
    session.input("gf").await;
    eventually("the tool call's location shown", || async {
        let at = session
            .lua("return {vim.api.nvim_buf_get_name(0), vim.api.nvim_win_get_cursor(0)[1]}")
            .await;
        (at[0].as_str().unwrap_or_default().ends_with("notes.md") && at[1] == 2).then_some(())
    })
    .await;
    // The thought folds in the transcript's window.
    let folded = session
        .lua("local win = vim.fn.bufwinid('pi-ide://chat/mock#1'); return vim.api.nvim_win_call(win, function() for i = 1, vim.fn.line('$') do if vim.fn.getline(i):find('Thinking') then return vim.fn.foldclosed(i) end end end)")
        .await;
    assert!(
        folded.as_i64().unwrap_or(-1) > 0,
        "the thought is not folded: {folded}"
    );
    // Slash commands complete in the prompt.
    let completed = session
        .lua("return require('pi-ide.chat').complete(0, '/re')")
        .await;
    assert_eq!(completed[0]["word"], "/review", "{completed}");
    // Modes, and the statusline.
    session.exec("require('pi-ide.chat').mode('code')").await;
    eventually("mode code in the statusline", || async {
        let line = session
            .lua("return require('pi-ide.chat').statusline()")
            .await;
        (line == "mock: idle · code").then_some(())
    })
    .await;
    wait_text(&session, "> mode: code").await;
    // Session options: the agent's own, set and shown.
    session
        .exec("require('pi-ide.chat').option('model', 'smart')")
        .await;
    wait_text(&session, "> options: Model = smart").await;
    let events = session.lua("return _G.chat_events").await;
    assert!(
        events
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["name"] == "PiIdeChatUpdate" && e["data"]["agent"] == "mock"),
        "{events}"
    );
}

#[tokio::test]
async fn reads_come_from_the_unsaved_buffer_and_stay_in_the_project() {
    let session = session_with("{}").await;
    open(&session).await;
    let file = session.write_file("a.txt", "one\ntwo\nthree\n");
    session
        .exec(&format!(
            "vim.cmd.edit('{}'); vim.api.nvim_buf_set_lines(0, 1, 2, false, {{'TWO unsaved'}})",
            file.display()
        ))
        .await;
    send(&session, &format!("read {} 2 1", file.display())).await;
    wait_text(&session, "READ:TWO unsaved\n").await;
    wait_status(&session, "idle").await;
    send(&session, "read /etc/hostname").await;
    let text = wait_text(&session, "READ ERROR").await;
    assert!(
        text.contains("refused:"),
        "the person sees the refusal: {text}"
    );
    send(&session, &format!("write {} x", "/tmp/pi-ide-outside.txt")).await;
    wait_text(&session, "WRITE ERROR").await;
    assert!(!std::path::Path::new("/tmp/pi-ide-outside.txt").exists());
}

#[tokio::test]
async fn a_write_is_reviewed_and_lands_only_when_accepted_with_the_persons_text() {
    let session = session_with("{}").await;
    open(&session).await;
    let file = session.write_file("b.txt", "old\n");
    send(&session, &format!("write {} new text", file.display())).await;
    session.wait_diffs(1).await;
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "old\n",
        "nothing before the decision"
    );
    session.exec("require('pi-ide.diff').reject()").await;
    let text = wait_text(&session, "WRITE ERROR").await;
    assert!(text.contains("declined"), "{text}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "old\n");
    wait_status(&session, "idle").await;

    send(&session, &format!("write {} second try", file.display())).await;
    let diffs = session.wait_diffs(1).await;
    accept_edited(&session, &diffs[0], "edited by me").await;
    wait_text(&session, "WRITE OK").await;
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "edited by me\n");
}

#[tokio::test]
async fn permission_is_asked_in_neovim_with_the_agents_options() {
    let session = session_with("{}").await;
    open(&session).await;
    send(&session, "permission").await;
    eventually("the permission event", || async {
        let events = session.lua("return _G.chat_events").await;
        events
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["name"] == "PiIdeChatPermission")
            .then_some(())
    })
    .await;
    assert!(
        transcript(&session)
            .await
            .contains("[1] Allow once [2] Always allow [3] Reject")
    );
    session
        .exec("require('pi-ide.chat').permission('yes')")
        .await;
    wait_text(&session, "PERMISSION: yes").await;
    wait_status(&session, "idle").await;
    send(&session, "permission").await;
    wait_text(&session, "❓ mock asks: Run the build").await;
    eventually("a second question", || async {
        let n = session.lua("local n = 0; for _, e in ipairs(_G.chat_events) do if e.name == 'PiIdeChatPermission' then n = n + 1 end end; return n").await;
        (n == 2).then_some(())
    })
    .await;
    session.exec("require('pi-ide.chat').permission(3)").await;
    wait_text(&session, "PERMISSION: no").await;
    wait_status(&session, "idle").await;
    // Cancelling the turn answers the open question `cancelled`.
    send(&session, "permission").await;
    eventually("a third question", || async {
        let n = session.lua("local n = 0; for _, e in ipairs(_G.chat_events) do if e.name == 'PiIdeChatPermission' then n = n + 1 end end; return n").await;
        (n == 3).then_some(())
    })
    .await;
    session.exec("require('pi-ide.chat').cancel()").await;
    wait_text(&session, "PERMISSION: cancelled").await;
}

#[tokio::test]
async fn a_tool_call_with_a_diff_is_reviewed_once_and_its_write_follows_unreviewed() {
    let session = session_with("{}").await;
    open(&session).await;
    let file = session.write_file("c.txt", "before\n");
    send(&session, &format!("permdiff {} after", file.display())).await;
    let diffs = session.wait_diffs(1).await;
    accept_edited(&session, &diffs[0], "after, edited").await;
    wait_text(&session, "PERMISSION: yes").await;
    wait_text(&session, "WRITE OK").await;
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "after, edited\n");
    assert_eq!(
        session.lua("return #require('pi-ide.diff').list()").await,
        json!(0)
    );

    wait_status(&session, "idle").await;
    send(&session, &format!("permdiff {} other", file.display())).await;
    let diffs = session.wait_diffs(1).await;
    let tab = diffs[0]["tab_name"].as_str().unwrap();
    session
        .exec(&format!("require('pi-ide.diff').reject('{tab}')"))
        .await;
    wait_text(&session, "PERMISSION: no").await;
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "after, edited\n");
}

#[tokio::test]
async fn commands_run_in_a_terminal_buffer_and_can_be_killed() {
    let session = session_with("{}").await;
    open(&session).await;
    send(&session, "terminal printf %s\\n hello there").await;
    let text = wait_text(&session, "TERMINAL exit=0").await;
    assert!(text.contains("output=hello|there"), "{text}");
    assert!(
        !text.contains("Process exited"),
        "only the command's output: {text}"
    );
    let terminal = session
        .lua("for _, b in ipairs(vim.api.nvim_list_bufs()) do if vim.api.nvim_buf_get_name(b):find('pi%-ide://chat/1/term%-') then return vim.bo[b].buftype end end")
        .await;
    assert_eq!(terminal, json!("terminal"));
    wait_status(&session, "idle").await;
    send(&session, "terminal seq 1 200").await;
    let text = wait_text(&session, "|200").await;
    assert!(
        text.contains("truncated=true"),
        "the 200-byte limit: {text}"
    );
    assert!(text.contains("|200"), "the tail is kept: {text}");
    wait_status(&session, "idle").await;
    send(&session, "kill sleep 30").await;
    wait_text(&session, "signal=\"SIGTERM\"").await;
}

#[tokio::test]
async fn an_agent_that_crashes_mid_prompt_ends_the_chat_and_the_transcript_stays() {
    let session = session_with("{}").await;
    open(&session).await;
    send(&session, "crash").await;
    wait_status(&session, "ended").await;
    let text = transcript(&session).await;
    assert!(text.contains("about to crash"), "{text}");
    assert!(text.contains("session ended: the agent exited"), "{text}");
    assert!(
        text.contains("crashing on purpose"),
        "its last words: {text}"
    );
    let ended = session
        .lua("for _, e in ipairs(_G.chat_events) do if e.name == 'PiIdeChatEnded' then return e.data.reason end end")
        .await;
    assert!(
        ended.as_str().unwrap_or_default().contains("exited"),
        "{ended}"
    );
    // The host is fine: a new chat works.
    session.exec("require('pi-ide.chat').open('mock')").await;
    eventually("the second chat ready", || async {
        let list = session
            .lua("return require('pi-ide.chat').sessions()")
            .await;
        (list[1]["status"] == "ready").then_some(())
    })
    .await;
}

#[tokio::test]
async fn an_agent_that_writes_garbage_ends_its_chat_with_the_reason() {
    let session = session_with("{}").await;
    open(&session).await;
    send(&session, "garbage").await;
    wait_status(&session, "ended").await;
    let text = transcript(&session).await;
    assert!(
        text.contains("not JSON-RPC to stdout: this is not json"),
        "{text}"
    );
}

#[tokio::test]
async fn a_flood_of_chunks_arrives_whole_while_keys_typed_elsewhere_are_kept() {
    let session = session_with("{}").await;
    open(&session).await;
    session
        .exec("vim.cmd('wincmd t'); vim.cmd.enew(); _G.typed_buf = vim.api.nvim_get_current_buf(); _G.draws = 0; local chat = require('pi-ide.chat'); local on = chat.on_update; chat.on_update = function(...) _G.draws = _G.draws + 1; return on(...) end")
        .await;
    send(&session, "flood 20000").await;
    let typed = "the quick brown fox jumps over the lazy dog";
    session.input("i").await;
    for word in typed.split_inclusive(' ') {
        session.input(word).await;
    }
    session.input("<Esc>").await;
    let text = wait_text(&session, "DONE").await;
    assert!(text.contains(&"x".repeat(20000)), "every chunk arrived");
    let line = session
        .lua("return vim.api.nvim_buf_get_lines(_G.typed_buf, 0, -1, false)")
        .await;
    assert_eq!(line, json!([typed]), "no key lost or misplaced");
    let draws = session.lua("return _G.draws").await.as_i64().unwrap();
    assert!(draws < 2000, "20,000 chunks reached Lua in {draws} calls");
}

#[tokio::test]
async fn sign_in_when_the_agent_asks_then_the_session_starts() {
    let session = session_with("{ MOCK_ACP_AUTH = '1' }").await;
    session.exec("require('pi-ide.chat').open('mock')").await;
    wait_text(&session, "mock wants you to sign in (Mock login)").await;
    session
        .exec("require('pi-ide.chat').auth('mock-login')")
        .await;
    wait_status(&session, "ready").await;
}

#[tokio::test]
async fn the_agent_gets_this_neovims_mcp_endpoint_over_http_or_the_stdio_relay() {
    let session = session_with("{}").await;
    open(&session).await;
    send(&session, "mcp").await;
    let text = wait_text(&session, "MCP: ").await;
    let host = host_binary().display().to_string();
    assert!(
        text.contains(&format!("MCP: stdio nvim {host} [\"mcp-stdio\"]")),
        "{text}"
    );

    let session = session_with("{ MOCK_ACP_HTTP_MCP = '1' }").await;
    open(&session).await;
    send(&session, "mcp").await;
    let text = wait_text(&session, "MCP: ").await;
    let (url, _) = crate::mcp_http::endpoint(&session).await;
    assert!(text.contains(&format!("MCP: http nvim {url}")), "{text}");
}

#[tokio::test]
async fn the_stdio_relay_serves_the_endpoints_tools() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    let session = Session::start().await;
    let (url, token) = crate::mcp_http::endpoint(&session).await;
    let mut relay = tokio::process::Command::new(host_binary())
        .arg("mcp-stdio")
        .env("PI_IDE_MCP_URL", &url)
        .env("PI_IDE_MCP_TOKEN", &token)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdin = relay.stdin.take().unwrap();
    let mut stdout = BufReader::new(relay.stdout.take().unwrap()).lines();
    let messages = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
    ];
    for message in messages {
        stdin
            .write_all(format!("{message}\n").as_bytes())
            .await
            .unwrap();
    }
    let mut tools = None;
    while tools.is_none() {
        let line = tokio::time::timeout(Duration::from_secs(15), stdout.next_line())
            .await
            .expect("an answer in time")
            .unwrap()
            .expect("a line");
        let answer: Value = serde_json::from_str(&line).unwrap();
        if answer["id"] == 2 {
            tools = Some(answer["result"]["tools"].clone());
        }
    }
    let names: Vec<String> = tools
        .unwrap()
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect();
    assert!(names.contains(&"find_references".to_owned()), "{names:?}");
}

#[tokio::test]
async fn a_missing_agent_says_how_to_install_it() {
    let session =
        Session::start_with("{ acp = { agents = { ghost = { cmd = { 'no-such-acp-agent' } } } } }")
            .await;
    session.lockfile().await;
    session
        .exec("require('pi-ide.chat').open('ghost'); require('pi-ide.chat').open('claude')")
        .await;
    let notes = session.notifications().await.join("\n");
    assert!(notes.contains("no-such-acp-agent not on PATH"), "{notes}");
    if !notes.contains("claude-agent-acp not on PATH") {
        return;
    }
    assert!(
        notes.contains("npm install -g @zed-industries/claude-agent-acp"),
        "{notes}"
    );
}

#[tokio::test]
async fn a_chat_resumes_its_session_where_the_agent_can_load_it() {
    let session = session_with("{}").await;
    open(&session).await;
    session.exec("require('pi-ide.chat').close()").await;
    wait_status(&session, "ended").await;
    session.exec("require('pi-ide.chat').resume()").await;
    wait_text(&session, "an earlier answer").await;
    wait_status(&session, "ready").await;
}

#[tokio::test]
async fn checkhealth_lists_each_chat_agent_and_whether_it_runs() {
    let session = session_with("{}").await;
    session
        .exec("require('pi-ide.config').values.acp.agents.ghost = { cmd = { 'no-such-acp-agent' }, env = {} }")
        .await;
    let report = crate::health::health_report(&session).await;
    let mock = mock_agent().display().to_string();
    assert!(
        report.contains("pi-ide chat (:PiIde chat, ACP agents)"),
        "{report}"
    );
    assert!(report.contains(&format!("OK mock: {mock}")), "{report}");
    assert!(
        report.contains("ghost is not installed (no-such-acp-agent not on PATH)"),
        "{report}"
    );
    for name in ["gemini", "qwen", "opencode", "claude", "codex", "pi"] {
        assert!(report.contains(name), "{name}: {report}");
    }
}
