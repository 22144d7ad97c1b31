//! The real opencode 1.18 (npm, pinned in `tests/agent_clis`, installed
//! there once) started by `:PiIde agent opencode` in a tmux pane beside
//! Neovim (`agent.position = "tmux"`; opencode's Bun crashes in a terminal
//! of a Neovim with no UI attached, as the tests' Neovim is), its
//! model a stub speaking the OpenAI chat API on loopback
//! (`tests/agent_clis/stub_chat.py`). Neovim ran in another editor's
//! terminal, which set `CLAUDE_CODE_SSE_PORT`: opencode would dial that
//! port, without a token; it reads Claude Code's lockfiles instead and
//! connects here with the token, gets the selection, and its prompts go in
//! through its server (`:PiIde ask`). Each edit it asks permission for
//! opens in Neovim's review: rejected with a reason (its model reads it),
//! accepted (opencode writes it), accepted with the person's own line
//! (Neovim writes their version and opencode's model is told).

use std::net::TcpListener;
use std::path::Path;

use serde_json::json;

use crate::codex_socket::accept_with_line;
use crate::common::{Session, eventually, fresh_dir, scratch_dir};
use crate::real_codex::{
    OPENCODE, Stub, agents_dir, diff_of, require_agents, seen_diff, select_and_start, stub,
    text_of, within,
};

/// A tmux server of the test's own, a pane of which Neovim "runs in".
pub struct Tmux {
    socket: std::path::PathBuf,
    session: &'static str,
}

impl Tmux {
    /// The server, with the environment of the shell Neovim runs in.
    pub fn start(dir: &Path, env: &[(&str, &Path)]) -> Tmux {
        let tmux = Tmux {
            socket: dir.join("tmux.sock"),
            session: "pi-ide-test",
        };
        let started = tmux
            .command()
            .envs(env.iter().map(|(name, value)| (*name, *value)))
            .env_remove("CI")
            .args([
                "new-session",
                "-d",
                "-s",
                tmux.session,
                "-x",
                "160",
                "-y",
                "40",
                "sleep 100000",
            ])
            .status()
            .expect("tmux runs");
        assert!(started.success());
        tmux
    }

    fn command(&self) -> std::process::Command {
        let mut command = std::process::Command::new("tmux");
        // Its own server even when the tests run inside tmux.
        command
            .arg("-S")
            .arg(&self.socket)
            .env_remove("TMUX")
            .env_remove("TMUX_PANE");
        command
    }

    fn output(&self, args: &[&str]) -> String {
        let out = self.command().args(args).output().expect("tmux runs");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// `$TMUX` and `$TMUX_PANE` of a program in its first pane.
    pub fn env(&self) -> (String, String) {
        let pid = self.output(&["display-message", "-p", "-t", self.session, "#{pid}"]);
        let pane = self.output(&["display-message", "-p", "-t", self.session, "#{pane_id}"]);
        (
            format!("{},{},0", self.socket.display(), pid.trim()),
            pane.trim().to_owned(),
        )
    }

    /// What pane `pane` shows.
    fn screen(&self, pane: &str) -> String {
        self.output(&["capture-pane", "-p", "-J", "-t", pane])
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.command().arg("kill-server").status();
    }
}

/// Polls `check` until it finds what it wants; on a timeout shows the pane
/// and what Neovim said.
async fn until<T, Fut>(
    what: &str,
    tmux: &Tmux,
    pane: &str,
    session: &Session,
    check: impl FnMut() -> Fut,
) -> T
where
    Fut: std::future::Future<Output = Option<T>>,
{
    within(what, check, || async {
        let log = std::fs::read_to_string(session.state_dir.join("nvim/pi-ide.log"));
        format!(
            "--- the pane ---\n{}\n--- the person was told ---\n{:?}\n--- the host's log ---\n{}",
            tmux.screen(pane),
            session.notifications().await,
            log.unwrap_or_default()
        )
    })
    .await
}

/// The opencode binary for this machine, chosen as opencode's own
/// postinstall script chooses (the build for CPUs without AVX2 only when
/// this one has none).
fn opencode() -> std::path::PathBuf {
    let avx2 = std::fs::read_to_string("/proc/cpuinfo").is_ok_and(|info| info.contains(" avx2"));
    let mut candidates: Vec<&str> = OPENCODE.to_vec();
    if avx2 {
        candidates.sort_by_key(|path| path.contains("baseline"));
    }
    candidates
        .iter()
        .map(|path| agents_dir().join(path))
        .find(|path| {
            std::process::Command::new(path)
                .arg("--version")
                .output()
                .is_ok_and(|out| out.status.success())
        })
        .expect("an opencode binary that runs on this machine")
}

/// What opencode's tools told its model.
fn tool_results(model: &Stub) -> Vec<String> {
    let tools = model.items("messages", |message| message["role"] == "tool");
    tools.iter().map(text_of).collect()
}

/// The texts of the user messages opencode sent its model.
fn prompts(model: &Stub) -> Vec<String> {
    let users = model.items("messages", |message| message["role"] == "user");
    users.iter().map(text_of).collect()
}

async fn ask(session: &Session, text: &str) {
    let asked = session
        .lua_with(
            "return require('pi-ide.agent.ask').ask(...)",
            vec![json!(text)],
        )
        .await;
    assert_eq!(asked, true);
}

#[tokio::test]
async fn the_real_opencode_connects_through_the_lockfile_and_its_edits_are_decided_in_neovims_review()
 {
    require_agents();
    let helpers = scratch_dir("real-opencode");
    let work = fresh_dir("real-opencode-work");
    let (a, b, c) = (work.join("a.txt"), work.join("b.txt"), work.join("c.txt"));
    std::fs::write(&a, "one\ntwo\nthree\n").unwrap();
    std::fs::write(&b, "bee\n").unwrap();
    std::fs::write(&c, "sea\n").unwrap();
    let model = stub("stub_chat.py", &helpers, &work).await;
    let home = scratch_dir("real-opencode-home");
    let config = helpers.join("opencode.json");
    std::fs::write(
        &config,
        json!({
            "$schema": "https://opencode.ai/config.json",
            "model": "stub/stub",
            "autoupdate": false,
            "share": "disabled",
            "provider": {"stub": {
                "npm": "@ai-sdk/openai-compatible",
                "name": "Stub",
                "options": {"baseURL": format!("http://127.0.0.1:{}/v1", model.port), "apiKey": "stub"},
                "models": {"stub": {"name": "Stub"}},
            }},
        })
        .to_string(),
    )
    .unwrap();
    // The port another editor announced in the terminal Neovim runs in.
    let other_editor = TcpListener::bind("127.0.0.1:0").unwrap();
    other_editor.set_nonblocking(true).unwrap();
    let other_port = other_editor.local_addr().unwrap().port().to_string();
    let claude_dir = home.join(".claude");
    let (config_home, cache_home) = (home.join(".config"), home.join(".cache"));
    let shell_env: Vec<(&str, &Path)> = vec![
        ("HOME", &home),
        // opencode reads ~/.claude/ide, whatever CLAUDE_CONFIG_DIR says.
        ("CLAUDE_CONFIG_DIR", &claude_dir),
        ("XDG_CONFIG_HOME", &config_home),
        ("XDG_CACHE_HOME", &cache_home),
        ("OPENCODE_CONFIG", &config),
        ("CLAUDE_CODE_SSE_PORT", Path::new(&other_port)),
    ];
    let tmux = Tmux::start(&helpers, &shell_env);
    let (tmux_env, tmux_pane) = tmux.env();
    let binary = opencode();
    let opts = format!(
        "{{ agent = {{ position = 'tmux', size = 0.6, opencode = {{ cmd = {{ '{}' }} }} }} }}",
        binary.display()
    );
    let mut env = shell_env.clone();
    env.extend([
        ("TMUX", Path::new(&tmux_env)),
        ("TMUX_PANE", Path::new(&tmux_pane)),
    ]);
    let session = Session::start_in(work.clone(), &env, &opts).await;
    session.lockfile().await;
    select_and_start(&session, &a, "opencode").await;
    let pane = eventually("opencode's tmux pane", || async {
        let list = session.lua("return require('pi-ide.agent').list()").await;
        list.as_array()?.first()?["pane"]
            .as_str()
            .map(str::to_owned)
    })
    .await;
    let wait = |what: &'static str| (what, &tmux, pane.as_str(), &session);
    let shows = |text: &'static str| {
        let (tmux, pane) = (&tmux, pane.clone());
        async move { tmux.screen(&pane).contains(text).then_some(()) }
    };

    // Connected through the lockfile, with its token.
    let (what, t, p, s) = wait("opencode among Neovim's clients");
    until(what, t, p, s, || async {
        let clients = session
            .lua("return require('pi-ide').status().clients")
            .await;
        clients
            .as_array()?
            .iter()
            .any(|c| c["name"] == "opencode")
            .then_some(())
    })
    .await;
    assert!(
        matches!(other_editor.accept(), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock),
        "opencode dialed the other editor's port"
    );
    // The selection it received is in its footer, and goes with a prompt.
    let (what, t, p, s) = wait("opencode to show the selection it received");
    until(what, t, p, s, || shows("a.txt#")).await;
    let (what, t, p, s) = wait("opencode's prompt");
    until(what, t, p, s, || shows("Ask anything")).await;

    ask(&session, "edit a.txt to rejected\n").await;
    let (what, t, p, s) = wait("diff 1 to open");
    let tab = diff_of(
        &until(what, t, p, s, || seen_diff(&session, 1)).await,
        "opencode",
        &a,
    );
    let prompt = prompts(&model)
        .into_iter()
        .find(|text| text.contains("edit a.txt to rejected"))
        .expect("the prompt went to the model");
    assert!(
        prompt.contains("a.txt") && prompt.contains("```two```"),
        "{prompt}"
    );
    session
        .lua_with(
            "return require('pi-ide.diff').reject(..., 'keep the three lines')",
            vec![json!(tab)],
        )
        .await;
    let (what, t, p, s) = wait("opencode to tell its model the edit was rejected");
    let told = until(what, t, p, s, || async {
        tool_results(&model)
            .into_iter()
            .find(|r| r.contains("rejected"))
    })
    .await;
    assert_eq!(
        told,
        "The user rejected permission to use this specific tool call with the following feedback: keep the three lines"
    );
    assert_eq!(std::fs::read_to_string(&a).unwrap(), "one\ntwo\nthree\n");

    ask(&session, "edit b.txt to accepted\n").await;
    let (what, t, p, s) = wait("diff 2 to open");
    let tab = diff_of(
        &until(what, t, p, s, || seen_diff(&session, 2)).await,
        "opencode",
        &b,
    );
    session
        .lua_with(
            "return require('pi-ide.diff').accept(...)",
            vec![json!(tab)],
        )
        .await;
    let (what, t, p, s) = wait("opencode to write the accepted edit");
    until(what, t, p, s, || async {
        (std::fs::read_to_string(&b).ok()? == "accepted\n").then_some(())
    })
    .await;

    ask(&session, "edit c.txt to theirs\n").await;
    let (what, t, p, s) = wait("diff 3 to open");
    let tab = diff_of(
        &until(what, t, p, s, || seen_diff(&session, 3)).await,
        "opencode",
        &c,
    );
    accept_with_line(&session, &tab, "mine").await;
    let (what, t, p, s) = wait("opencode's model to hear the person wrote their version");
    let told = until(what, t, p, s, || async {
        tool_results(&model)
            .into_iter()
            .find(|r| r.contains("changes of their own"))
    })
    .await;
    assert!(told.contains("c.txt now holds their version"), "{told}");
    assert_eq!(std::fs::read_to_string(&c).unwrap(), "theirs\nmine\n");
}
