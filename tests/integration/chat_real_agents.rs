//! Real ACP agents from npm, pinned, in the chat: Gemini CLI 0.61 with
//! `--acp` (installed by [`crate::real_clis`] in `tests/gemini_cli`)
//! against its stub model on loopback: a prompt answered, an edit reviewed
//! in Neovim and on disk only once accepted, a permission asked in Neovim,
//! and this Neovim's MCP tools listed by the agent (its requests to the
//! stub model did not carry them in these runs).

use std::path::Path;

use serde_json::json;

use crate::chat::{send, transcript, wait_status, wait_text};
use crate::common::{Scratch, Session, eventually, fresh_dir, scratch_dir};
use crate::pi_extension::{installed_and_current, run_in};
use crate::real_clis::{GEMINI, Helper, cli_dir, model_env, require_clis, write_settings};

/// `tests/acp_agents`: the ACP adapters pinned in its package-lock.json.
fn adapters_dir() -> std::path::PathBuf {
    crate::common::repo_root().join("tests/acp_agents")
}

const CLAUDE_ACP: &str = "node_modules/@zed-industries/claude-agent-acp/dist/index.js";
const PI_ACP: &str = "node_modules/pi-acp/dist/index.js";

static INSTALL: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Installs the pinned adapters when missing or older than the lockfile.
fn require_adapters() {
    let _one_at_a_time = INSTALL.lock().unwrap_or_else(|e| e.into_inner());
    if installed_and_current(&adapters_dir(), &[CLAUDE_ACP, PI_ACP]) {
        return;
    }
    run_in(
        &adapters_dir(),
        "npm",
        &["ci", "--no-audit", "--no-fund", "--ignore-scripts"],
        &[],
    );
    assert!(
        adapters_dir().join(CLAUDE_ACP).exists(),
        "{CLAUDE_ACP} missing after npm ci"
    );
}

#[tokio::test]
async fn gemini_cli_in_acp_mode_answers_edits_through_the_review_asks_permission_and_sees_the_mcp_tools()
 {
    require_clis();
    let helpers = scratch_dir("acp-gemini");
    let work = fresh_dir("acp-gemini-work");
    let file = work.join("a.txt");
    std::fs::write(&file, "one\n").unwrap();
    let model = Helper::start(GEMINI.stub, &helpers, &work).await;
    let home: Scratch = scratch_dir("acp-gemini-home");
    let env = model_env(&GEMINI, &model);
    let mut session_env: Vec<(&str, &Path)> = vec![("HOME", &home)];
    session_env.extend(env.iter().map(|(n, v)| (*n, Path::new(v.as_str()))));
    let gemini = cli_dir().join(GEMINI.program);
    let opts = format!(
        "{{ log_level = 'debug', acp = {{ agents = {{ gemini = {{ cmd = {{ 'node', '{}', '--acp' }} }} }} }} }}",
        gemini.display()
    );
    let session = Session::start_in(work.clone(), &session_env, &opts).await;
    write_settings(&GEMINI, &home, &session);
    session.lockfile().await;
    // Gemini CLI writes through Neovim (fs/write_text_file): the person's
    // edits to the proposal are what lands.
    drive(&session, "gemini", &work, "two, edited\n").await;
}

/// What both agents are put through, in the chat of `session` with agent
/// `agent`, in `work` (whose a.txt holds "one"): a prompt answered; an
/// edit reviewed in Neovim (the proposal edited to "two, edited"), on disk
/// only once accepted and then as `written`, and shown once; a shell
/// command asked in Neovim and run once allowed; this Neovim's MCP tools
/// listed by the agent's MCP client (the host's debug log has the request
/// and its answer).
async fn drive(session: &Session, agent: &str, work: &Path, written: &str) {
    let file = work.join("a.txt");
    session
        .exec("_G.chat_events = {}; vim.api.nvim_create_autocmd('User', { pattern = 'PiIdeChatPermission', callback = function(a) table.insert(_G.chat_events, a.data) end })")
        .await;
    session
        .lua_with("require('pi-ide.chat').open(...)", vec![json!(agent)])
        .await;
    eventually(&format!("{agent}'s session ready"), || async {
        let status = crate::chat::status(session).await;
        assert_ne!(status, "ended", "{}", transcript(session).await);
        (status == "ready").then_some(())
    })
    .await;

    send(session, "hello").await;
    wait_text(session, "Hello from the stub model.").await;
    wait_status(session, "idle").await;

    send(session, &format!("edit {} to two", file.display())).await;
    let diffs = session.wait_diffs(1).await;
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "one\n",
        "not before the decision"
    );
    crate::chat::accept_edited(session, &diffs[0], "two, edited").await;
    eventually("the accepted write on disk", || async {
        (std::fs::read_to_string(&file).unwrap() == written).then_some(())
    })
    .await;
    wait_status(session, "idle").await;
    assert_eq!(
        session.lua("return #require('pi-ide.diff').list()").await,
        json!(0),
        "reviewed once"
    );

    send(
        session,
        &format!("run command: echo from-{agent} > ran.txt"),
    )
    .await;
    crate::chat::wait_asked(session, 1).await;
    session
        .exec("require('pi-ide.chat').permission('allow_once')")
        .await;
    eventually("the command run", || async {
        std::fs::read_to_string(work.join("ran.txt"))
            .ok()
            .filter(|t| t.contains(&format!("from-{agent}")))
    })
    .await;
    wait_status(session, "idle").await;
    let listed = session
        .host_log_shows("ListToolsResult")
        .await
        .lines()
        .any(|line| line.contains("ListToolsResult") && line.contains("\"find_references\""));
    assert!(listed, "{agent} never listed the MCP tools");
}

#[tokio::test]
async fn claude_code_through_claude_agent_acp_answers_edits_through_the_review_asks_permission_and_lists_the_mcp_tools()
 {
    require_adapters();
    let helpers = scratch_dir("acp-claude");
    let work = fresh_dir("acp-claude-work");
    let file = work.join("a.txt");
    std::fs::write(&file, "one\n").unwrap();
    let model = Helper::start_at(&adapters_dir().join("stub_anthropic.py"), &helpers, &work).await;
    let home: Scratch = scratch_dir("acp-claude-home");
    let url = format!("http://127.0.0.1:{}", model.port);
    let session_env: Vec<(&str, &Path)> = vec![
        ("HOME", &home),
        ("ANTHROPIC_API_KEY", Path::new("stub-key")),
        ("ANTHROPIC_BASE_URL", Path::new(&url)),
        ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", Path::new("1")),
        ("DISABLE_AUTOUPDATER", Path::new("1")),
        // The adapter starts Claude Code able to skip permissions later,
        // which it refuses as root (CI's user) outside a sandbox.
        ("IS_SANDBOX", Path::new("1")),
    ];
    let adapter = adapters_dir().join(CLAUDE_ACP);
    let opts = format!(
        "{{ log_level = 'debug', acp = {{ agents = {{ claude = {{ cmd = {{ 'node', '{}' }} }} }} }} }}",
        adapter.display()
    );
    let session = Session::start_in(work.clone(), &session_env, &opts).await;
    session.lockfile().await;
    // The adapter writes the file itself once allowed (not through
    // fs/write_text_file): the proposal as it was lands, and the person,
    // who edited it, is told so.
    drive(&session, "claude", &work, "two\n").await;
    wait_text(&session, "you changed the proposal of a.txt").await;
}

/// pi through pi-acp, running the newest pi pinned in `pi/earendil` (pi-acp
/// 0.0.34 gets no session from pi 0.73) with an OpenAI-compatible stub
/// model: a prompt answered in the chat. (pi edits files itself and has no
/// MCP client: pi-acp hands it neither the client's files nor the MCP
/// servers.)
#[tokio::test]
async fn pi_through_pi_acp_answers_in_the_chat() {
    require_adapters();
    let newest = crate::pi_extension::newest_pi();
    let helpers = scratch_dir("acp-pi");
    let work = fresh_dir("acp-pi-work");
    let model = Helper::start("stub_openai.py", &helpers, &work).await;
    let home: Scratch = scratch_dir("acp-pi-home");
    let agent_dir = home.join("agent");
    std::fs::create_dir_all(&agent_dir).unwrap();
    let provider = json!({
        "baseUrl": format!("http://127.0.0.1:{}/v1", model.port),
        "api": "openai-completions",
        "apiKey": "stub-key",
        "compat": {"supportsDeveloperRole": false, "supportsReasoningEffort": false},
        "models": [{"id": "stub-model", "name": "Stub", "reasoning": false, "input": ["text"]}],
    });
    std::fs::write(
        agent_dir.join("models.json"),
        json!({"providers": {"stub": provider}}).to_string(),
    )
    .unwrap();
    std::fs::write(
        agent_dir.join("settings.json"),
        json!({"defaultProvider": "stub", "defaultModel": "stub-model"}).to_string(),
    )
    .unwrap();
    // pi-acp runs one program: the newest pi on the Node it needs.
    let pi = home.join("pi");
    std::fs::write(
        &pi,
        format!(
            "#!/bin/sh\nexec '{}' '{}' \"$@\"\n",
            newest.node.display(),
            newest.cli.display()
        ),
    )
    .unwrap();
    let mut mode = std::fs::metadata(&pi).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut mode, 0o755);
    std::fs::set_permissions(&pi, mode).unwrap();
    let session_env: Vec<(&str, &Path)> = vec![
        ("HOME", &home),
        ("PI_CODING_AGENT_DIR", &agent_dir),
        ("PI_ACP_PI_COMMAND", &pi),
        ("PI_OFFLINE", Path::new("1")),
        ("PI_SKIP_VERSION_CHECK", Path::new("1")),
    ];
    let adapter = adapters_dir().join(PI_ACP);
    let opts = format!(
        "{{ acp = {{ agents = {{ pi = {{ cmd = {{ 'node', '{}' }} }} }} }} }}",
        adapter.display()
    );
    let session = Session::start_in(work.clone(), &session_env, &opts).await;
    session.lockfile().await;
    session.exec("require('pi-ide.chat').open('pi')").await;
    eventually("pi's session ready", || async {
        let status = crate::chat::status(&session).await;
        assert_ne!(status, "ended", "{}", transcript(&session).await);
        (status == "ready").then_some(())
    })
    .await;
    send(&session, "hello").await;
    wait_text(&session, "Hello from the stub model.").await;
    wait_status(&session, "idle").await;
}
