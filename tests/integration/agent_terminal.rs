//! `:PiIde agent`: the agent runs in a terminal of this Neovim, wired to it.
//! A shell script stands in for claude and pi and records what it sees.

use std::collections::HashMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::common::{Scratch, Session, eventually, scratch_dir};

/// A stand-in agent writing its environment, cwd and pid into `dir` (each
/// file renamed into place, `child` last), then waiting on a child process
/// as real agents have them.
fn stand_in(dir: &Path) -> PathBuf {
    let script = dir.join("agent.sh");
    std::fs::write(
        &script,
        format!(
            r#"#!/bin/sh
out='{}'
env > "$out/env.tmp" && mv "$out/env.tmp" "$out/env"
pwd > "$out/pwd.tmp" && mv "$out/pwd.tmp" "$out/pwd"
echo $$ >> "$out/starts"
sleep 60 &
echo $! > "$out/child.tmp" && mv "$out/child.tmp" "$out/child"
wait
"#,
            dir.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    script
}

/// What the stand-in recorded once it is up: environment, cwd, its pid and
/// its child's pid.
struct Seen {
    env: HashMap<String, String>,
    cwd: PathBuf,
    pid: u32,
    child: u32,
}

async fn seen(dir: &Path) -> Seen {
    let child = eventually("the stand-in agent to start", || async {
        std::fs::read_to_string(dir.join("child")).ok()
    })
    .await;
    let env = std::fs::read_to_string(dir.join("env")).unwrap();
    let starts = std::fs::read_to_string(dir.join("starts")).unwrap();
    Seen {
        env: env
            .lines()
            .filter_map(|line| line.split_once('='))
            .map(|(key, value)| (key.to_owned(), value.to_owned()))
            .collect(),
        cwd: PathBuf::from(std::fs::read_to_string(dir.join("pwd")).unwrap().trim()),
        pid: starts.trim().parse().expect("one start"),
        child: child.trim().parse().unwrap(),
    }
}

/// Whether `pid` is a live process (a zombie waiting for its reaper is not).
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit_once(')')
            .is_some_and(|(_, rest)| !rest.trim_start().starts_with('Z'))
    })
}

/// Neovim with the stand-in as agent `name`'s command, plus more options
/// (Lua table fields, each ending in a comma): `top` for the whole table,
/// `agent` for the `agent` table.
async fn session_with(name: &str, dir: &Scratch, top: &str, agent: &str) -> Session {
    let script = stand_in(dir);
    Session::start_with(&format!(
        "{{ {top} agent = {{ {agent} {name} = {{ cmd = {{ '{}' }} }} }} }}",
        script.display()
    ))
    .await
}

async fn agent_status(session: &Session) -> Value {
    session.lua("return require('pi-ide.agent').status()").await
}

/// Waits until the agent runs and returns its status.
async fn running(session: &Session) -> Value {
    eventually("the agent terminal", || async {
        let status = agent_status(session).await;
        status.is_object().then_some(status)
    })
    .await
}

async fn window_count(session: &Session) -> u64 {
    session
        .lua("return #vim.api.nvim_list_wins()")
        .await
        .as_u64()
        .unwrap()
}

#[tokio::test]
async fn claude_gets_the_port_the_proxy_exceptions_and_the_cwd_even_before_the_host_runs() {
    let dir = scratch_dir("agent-env");
    // The host is not running when the agent is asked for: Claude waits for it.
    let session = session_with("claude", &dir, "auto_start = false,", "").await;
    session
        .exec("vim.env.no_proxy = 'corp.example'; vim.env.NO_PROXY = 'intra.example,localhost'")
        .await;
    session.exec("vim.cmd('PiIde agent claude')").await;
    let seen = seen(&dir).await;
    let (port, _) = session.lockfile().await;
    assert_eq!(seen.env["CLAUDE_CODE_SSE_PORT"], port.to_string());
    // What Claude reads the token from for that port.
    let claude_lock = Path::new(&seen.env["CLAUDE_CONFIG_DIR"]).join(format!("ide/{port}.lock"));
    assert!(claude_lock.exists(), "no {}", claude_lock.display());
    assert_eq!(seen.env["ENABLE_IDE_INTEGRATION"], "true");
    assert_eq!(seen.env["FORCE_CODE_TERMINAL"], "true");
    let no_proxy = "corp.example,intra.example,localhost,127.0.0.1,::1";
    assert_eq!(seen.env["no_proxy"], no_proxy);
    assert_eq!(seen.env["NO_PROXY"], no_proxy);
    assert_eq!(seen.cwd, session.work_dir.canonicalize().unwrap());
    let status = running(&session).await;
    assert_eq!(status["name"], "claude");
    assert_eq!(status["pid"], seen.pid);
    assert!(session.notifications().await.is_empty());
    // `:PiIde agent claude` enters the terminal, in terminal mode.
    eventually("terminal mode in the agent's window", || async {
        let state = session
            .lua("return { mode = vim.api.nvim_get_mode().mode, agent = vim.b.pi_ide_agent }")
            .await;
        (state == json!({"mode": "t", "agent": "claude"})).then_some(())
    })
    .await;
}

#[tokio::test]
async fn toggling_hides_and_shows_the_same_terminal_and_process() {
    let dir = scratch_dir("agent-toggle");
    let session = session_with("claude", &dir, "", "").await;
    session.lockfile().await;
    session.exec("vim.cmd('PiIde agent')").await;
    let first = running(&session).await;
    seen(&dir).await;
    assert_eq!(first["visible"], true);
    assert_eq!(window_count(&session).await, 2);

    session.exec("vim.cmd('PiIde agent')").await;
    let hidden = agent_status(&session).await;
    assert_eq!(hidden["visible"], false);
    assert_eq!(window_count(&session).await, 1);
    assert_eq!(
        (&hidden["job"], &hidden["buf"], &hidden["pid"]),
        (&first["job"], &first["buf"], &first["pid"])
    );
    let listed = session
        .lua_with(
            "return vim.api.nvim_buf_is_valid(...) and vim.b[...].pi_ide_agent",
            vec![first["buf"].clone()],
        )
        .await;
    assert_eq!(listed, "claude", "the hidden terminal's buffer stays");

    session.exec("vim.cmd('PiIde agent')").await;
    // Asking by name, and the <Plug> map, show the same one too.
    session.exec("vim.cmd('PiIde agent claude')").await;
    session
        .exec("vim.fn.maparg('<Plug>(PiIdeAgentFocus)', 'n', false, true).callback()")
        .await;
    let shown = agent_status(&session).await;
    assert_eq!(shown["visible"], true);
    assert_eq!(window_count(&session).await, 2);
    assert_eq!(
        (&shown["job"], &shown["buf"], &shown["pid"]),
        (&first["job"], &first["buf"], &first["pid"])
    );
    let starts = std::fs::read_to_string(dir.join("starts")).unwrap();
    assert_eq!(starts.lines().count(), 1, "one process: {starts}");
    assert_eq!(
        session.lua("return require('pi-ide.agent').job()").await,
        first["job"]
    );

    // pi beside it, not installed here: told, and claude is still the one.
    session.exec("require('pi-ide.agent').show('pi')").await;
    let told = session.notifications().await;
    assert!(
        told.iter().any(|m| m.contains("`pi` is not executable")),
        "{told:?}"
    );
    assert_eq!(agent_status(&session).await["name"], "claude");

    session.exec("vim.cmd('PiIde status')").await;
    let told = session.notifications().await;
    let wanted = format!("agent terminal: claude (pid {})", first["pid"]);
    assert!(told.last().unwrap().contains(&wanted), "{told:?}");
}

#[tokio::test]
async fn quitting_neovim_stops_the_agent_and_its_children() {
    let dir = scratch_dir("agent-quit");
    let mut session = session_with("claude", &dir, "", "").await;
    session.lockfile().await;
    session.exec("require('pi-ide.agent').show()").await;
    let seen = seen(&dir).await;
    assert!(alive(seen.pid) && alive(seen.child));
    // Hidden, it still runs and still stops with Neovim.
    session.exec("require('pi-ide.agent').hide()").await;
    let _ = session.nvim.command("qa").await;
    let exit = session.child.wait().await.unwrap();
    assert!(exit.success(), "`:qa` quits with the agent running: {exit}");
    eventually("the agent and its child to be gone", || async {
        (!alive(seen.pid) && !alive(seen.child)).then_some(())
    })
    .await;
}

#[tokio::test]
async fn an_agent_that_exits_closes_its_terminal_and_reports_a_failure() {
    for (code, message) in [(0, None), (3, Some("claude exited with code 3"))] {
        let session = Session::start_with(&format!(
            "{{ agent = {{ claude = {{ cmd = {{ 'sh', '-c', 'exit {code}' }} }} }} }}"
        ))
        .await;
        // Host running: the agent starts right away.
        session.wait_clients(0).await;
        let started = session
            .lua("return require('pi-ide.agent').focus() and require('pi-ide.agent').job() ~= nil")
            .await;
        assert_eq!(started, true, "exit {code}");
        eventually(&format!("the terminal of `exit {code}` to close"), || async {
            let state = session
                .lua(
                    "return { job = require('pi-ide.agent').job(), wins = #vim.api.nvim_list_wins(),
                              terminals = #vim.tbl_filter(function(b)
                                return vim.api.nvim_buf_is_valid(b) and vim.bo[b].buftype == 'terminal'
                              end, vim.api.nvim_list_bufs()) }",
                )
                .await;
            (state == json!({"wins": 1, "terminals": 0})).then_some(())
        })
        .await;
        let told = session.notifications().await;
        assert_eq!(
            told,
            message
                .map(|m| vec![format!("pi-ide: {m}")])
                .unwrap_or_default(),
            "exit {code}"
        );
        assert_eq!(agent_status(&session).await, Value::Null);
    }
}

#[tokio::test]
async fn a_missing_command_names_its_install_command_and_opens_nothing() {
    let session = Session::start_with(
        "{ agent = { claude = { cmd = { 'pi-ide-no-such-claude' } }, pi = { cmd = 'pi-ide-no-such-pi --flag' } } }",
    )
    .await;
    session.lockfile().await;
    let before = session.lua("return #vim.api.nvim_list_bufs()").await;
    // pi: today's package, then the one pi 0.x was published as.
    let pi_install = "`npm install -g @earendil-works/pi-coding-agent` \
                      (or `npm install -g @mariozechner/pi-coding-agent`)";
    for (command, install) in [
        ("PiIde agent", "`npm install -g @anthropic-ai/claude-code`"),
        ("PiIde agent pi", pi_install),
    ] {
        session.exec("_G.notified = {}").await;
        session.lua_with("vim.cmd(...)", vec![json!(command)]).await;
        let told = session.notifications().await;
        assert_eq!(told.len(), 1, "{command}: {told:?}");
        assert!(told[0].contains(install), "{command}: {told:?}");
        assert_eq!(window_count(&session).await, 1, "{command}");
        assert_eq!(
            session.lua("return #vim.api.nvim_list_bufs()").await,
            before
        );
        assert_eq!(agent_status(&session).await, Value::Null);
    }
    // :checkhealth says the same, as a warning for the default agent and a
    // note for the other, never an error.
    session.exec("vim.cmd('checkhealth pi-ide')").await;
    let report = session
        .lua("return table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\\n')")
        .await;
    let report = report.as_str().unwrap();
    let line = |needle: &str| {
        report
            .lines()
            .find(|line| line.contains(needle))
            .unwrap_or_else(|| panic!("no {needle:?} in:\n{report}"))
            .to_owned()
    };
    assert!(line("`pi-ide-no-such-claude` is not executable").contains("WARNING"));
    let pi = line("`pi-ide-no-such-pi` is not executable");
    assert!(pi.contains(pi_install), "{pi}");
    assert!(!report.contains("ERROR"), "{report}");
}

#[tokio::test]
async fn pi_starts_in_the_cwd_with_the_lock_dir_and_is_told_to_run_ide() {
    let dir = scratch_dir("agent-pi");
    let locks = dir.join("locks");
    let session = session_with(
        "pi",
        &dir,
        &format!("lock_dir = '{}',", locks.display()),
        "",
    )
    .await;
    eventually(
        "the lockfile in the lock_dir option's directory",
        || async {
            std::fs::read_dir(&locks)
                .ok()?
                .flatten()
                .any(|e| e.path().extension().is_some_and(|x| x == "lock"))
                .then_some(())
        },
    )
    .await;
    session.exec("vim.cmd('PiIde agent pi')").await;
    let seen = seen(&dir).await;
    assert_eq!(seen.env["PI_IDE_LOCK_DIR"], locks.to_str().unwrap());
    assert_eq!(seen.cwd, session.work_dir.canonicalize().unwrap());
    assert!(!seen.env.contains_key("CLAUDE_CODE_SSE_PORT"));
    let told = session.notifications().await;
    assert!(
        told.iter().any(|m| m.contains("/ide")),
        "pi is not told about /ide: {told:?}"
    );
    assert_eq!(running(&session).await["name"], "pi");
}

#[tokio::test]
async fn the_terminal_opens_where_the_options_say() {
    let dir = scratch_dir("agent-layout");
    let session = session_with("claude", &dir, "", "position = 'bottom', size = 7,").await;
    session.lockfile().await;
    session.exec("require('pi-ide.agent').show()").await;
    running(&session).await;
    // Where the agent's window is and how large, against the editor's size.
    let layout = "local agent = require('pi-ide.agent')
        local buf = agent.status().buf
        local win = vim.fn.win_findbuf(buf)[1]
        local config = vim.api.nvim_win_get_config(win)
        return { relative = config.relative, width = vim.api.nvim_win_get_width(win),
                 height = vim.api.nvim_win_get_height(win), columns = vim.o.columns,
                 row = vim.fn.win_screenpos(win)[1], col = vim.fn.win_screenpos(win)[2],
                 current = vim.api.nvim_get_current_win() == win }";
    let bottom = session.lua(layout).await;
    assert_eq!(bottom["height"], 7, "{bottom}");
    assert_eq!(bottom["width"], bottom["columns"], "{bottom}");
    assert!(bottom["row"].as_u64().unwrap() > 1, "{bottom}");
    assert_eq!(
        bottom["current"], false,
        "show() keeps the cursor where it was"
    );

    // Options are read each time the window opens.
    for (position, size) in [("left", "0.25"), ("float", "0.5")] {
        session
            .exec(&format!(
                "local agent = require('pi-ide.agent'); agent.hide()
                 local values = require('pi-ide.config').values.agent
                 values.position, values.size = '{position}', {size}
                 agent.focus()"
            ))
            .await;
        let layout = session.lua(layout).await;
        let columns = layout["columns"].as_f64().unwrap();
        let wanted = (columns * size.parse::<f64>().unwrap()).round();
        assert_eq!(
            layout["width"].as_f64(),
            Some(wanted),
            "{position}: {layout}"
        );
        assert_eq!(layout["current"], true, "{position}: {layout}");
        if position == "left" {
            assert_eq!(layout["col"], 1, "{layout}");
        } else {
            assert_eq!(layout["relative"], "editor", "{layout}");
        }
    }
}

#[tokio::test]
async fn claude_is_told_it_cannot_connect_when_claude_code_is_off() {
    let dir = scratch_dir("agent-no-claude-lock");
    let session = session_with("claude", &dir, "claude_code = false,", "").await;
    session.wait_clients(0).await;
    session.exec("require('pi-ide.agent').show()").await;
    seen(&dir).await;
    let told = session.notifications().await;
    assert!(
        told.iter().any(|m| m.contains("claude_code = false")),
        "{told:?}"
    );
}

#[tokio::test]
async fn claude_without_a_host_is_not_started_and_the_person_is_told() {
    let dir = scratch_dir("agent-no-host");
    let session = session_with(
        "claude",
        &dir,
        "auto_start = false, bin = '/nonexistent/pi-ide',",
        "",
    )
    .await;
    session.exec("vim.cmd('PiIde agent claude')").await;
    let told = session.notifications().await;
    assert!(
        told.iter().any(|m| m.contains("claude not started")),
        "{told:?}"
    );
    assert_eq!(window_count(&session).await, 1);
    assert_eq!(agent_status(&session).await, Value::Null);
    assert!(!dir.join("starts").exists());
}

#[tokio::test]
async fn gemini_and_qwen_are_told_which_neovim_and_port_to_connect_to() {
    for cli in ["gemini", "qwen"] {
        let dir = scratch_dir("agent-companion");
        let session = session_with(cli, &dir, "", "").await;
        session.lockfile().await;
        session
            .lua_with("vim.cmd(...)", vec![json!(format!("PiIde agent {cli}"))])
            .await;
        let seen = seen(&dir).await;
        let companions = session
            .lua("return require('pi-ide').status().companions")
            .await;
        let port = |client: &str| {
            companions
                .as_array()
                .unwrap()
                .iter()
                .find(|c| c["client"] == client)
                .map(|c| c["port"].to_string())
                .unwrap()
        };
        let nvim_pid = session.lua("return vim.fn.getpid()").await.to_string();
        // Each gets its own, and the other's as every process Neovim starts.
        assert_eq!(seen.env["GEMINI_CLI_IDE_PID"], nvim_pid, "{cli}");
        assert_eq!(
            seen.env["GEMINI_CLI_IDE_SERVER_PORT"],
            port("gemini"),
            "{cli}"
        );
        assert_eq!(seen.env["QWEN_CODE_IDE_SERVER_PORT"], port("qwen"), "{cli}");
        assert!(seen.env["no_proxy"].contains("127.0.0.1"));
        let told = session.notifications().await;
        assert!(
            told.iter().any(|m| m.contains("/ide enable")),
            "{cli}: {told:?}"
        );
        assert_eq!(running(&session).await["name"], cli);
    }
}

#[tokio::test]
async fn a_missing_gemini_or_qwen_names_its_npm_package() {
    let session = Session::start_with(
        "{ agent = { gemini = { cmd = { 'pi-ide-no-such-gemini' } }, qwen = { cmd = { 'pi-ide-no-such-qwen' } } } }",
    )
    .await;
    session.lockfile().await;
    for (command, install) in [
        ("PiIde agent gemini", "npm install -g @google/gemini-cli"),
        ("PiIde agent qwen", "npm install -g @qwen-code/qwen-code"),
    ] {
        session.exec("_G.notified = {}").await;
        session.lua_with("vim.cmd(...)", vec![json!(command)]).await;
        let told = session.notifications().await;
        assert!(
            told.iter().any(|m| m.contains(install)),
            "{command}: {told:?}"
        );
        assert_eq!(agent_status(&session).await, Value::Null);
    }
}
