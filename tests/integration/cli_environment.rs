//! What every process Neovim starts inherits so that Gemini CLI and Qwen
//! Code connect to this Neovim: `GEMINI_CLI_IDE_PID`,
//! `GEMINI_CLI_IDE_SERVER_PORT` and `QWEN_CODE_IDE_SERVER_PORT` in Neovim's
//! own environment while the host serves them, following a restart, given
//! back as they were when it stops; never a token, never
//! `CLAUDE_CODE_SSE_PORT`. (The real CLIs picking this Neovim over a decoy
//! are in `real_clis.rs`.)

use std::collections::HashMap;
use std::path::Path;

use serde_json::Value;

use crate::common::{Session, eventually, fresh_dir};

/// `env` output as a map.
fn parse_env(text: &str) -> HashMap<String, String> {
    text.lines()
        .filter_map(|line| line.split_once('='))
        .map(|(name, value)| (name.to_owned(), value.to_owned()))
        .collect()
}

/// What `env` prints when run each way Neovim starts a process, by way.
async fn environments(session: &Session) -> Vec<(&'static str, HashMap<String, String>)> {
    let mut seen = vec![];
    let system = session.lua("return vim.fn.system({ 'env' })").await;
    seen.push(("system()", parse_env(system.as_str().unwrap())));
    let vim_system = session
        .lua("return vim.system({ 'env' }, { text = true }):wait().stdout")
        .await;
    seen.push(("vim.system()", parse_env(vim_system.as_str().unwrap())));
    let bang = session.lua("return vim.fn.execute('!env')").await;
    seen.push((":!", parse_env(bang.as_str().unwrap())));
    session
        .exec(
            "_G.job_env = nil
             vim.fn.jobstart({ 'env' }, { stdout_buffered = true, on_stdout = function(_, data)
               _G.job_env = table.concat(data, '\\n')
             end })",
        )
        .await;
    let job = eventually("jobstart()'s env output", || async {
        session
            .lua("return _G.job_env")
            .await
            .as_str()
            .map(str::to_owned)
    })
    .await;
    seen.push(("jobstart()", parse_env(&job)));
    // One name a line, so the terminal's width cuts nothing.
    session
        .exec(
            "vim.cmd.tabnew()
             vim.fn.jobstart({ 'sh', '-c', 'env | cut -c1-60' }, { term = true })
             _G.term_buf = vim.api.nvim_get_current_buf()",
        )
        .await;
    let term = eventually(":terminal's env output", || async {
        let lines = session
            .lua(
                "local chan = vim.bo[_G.term_buf].channel
                 if vim.fn.jobwait({ chan }, 0)[1] == -1 then return nil end
                 return table.concat(vim.api.nvim_buf_get_lines(_G.term_buf, 0, -1, false), '\\n')",
            )
            .await;
        lines.as_str().map(str::to_owned)
    })
    .await;
    session.exec("vim.cmd.tabclose()").await;
    seen.push((":terminal", parse_env(&term)));
    seen
}

/// The companion ports of the running host, by CLI.
async fn companion_ports(
    session: &Session,
    other_than: &HashMap<String, String>,
) -> HashMap<String, String> {
    eventually("the host serving both CLIs", || async {
        let status = session.lua("return require('pi-ide').status()").await;
        if status["running"] != true {
            return None;
        }
        let ports: HashMap<String, String> = status["companions"]
            .as_array()?
            .iter()
            .map(|c| {
                (
                    c["client"].as_str().unwrap().to_owned(),
                    c["port"].to_string(),
                )
            })
            .collect();
        (ports.len() == 2 && &ports != other_than).then_some(ports)
    })
    .await
}

fn secrets(session: &Session) -> Vec<String> {
    let mut tokens = vec![];
    for dir in [
        session.lock_dir.clone(),
        session.state_dir.join("tmp/gemini/ide"),
        session.state_dir.join("qwen/ide"),
    ] {
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let json: Value =
                serde_json::from_slice(&std::fs::read(entry.path()).unwrap()).unwrap();
            tokens.extend(json["authToken"].as_str().map(str::to_owned));
        }
    }
    assert!(!tokens.is_empty(), "no token found to look for");
    tokens
}

#[tokio::test]
async fn every_process_neovim_starts_is_pointed_at_this_neovim_while_the_host_serves_the_clis() {
    let work = fresh_dir("cli-env");
    // As if Neovim ran in another editor's terminal, which set this.
    let inherited = Path::new("1");
    let session = Session::start_in(work, &[("GEMINI_CLI_IDE_SERVER_PORT", inherited)], "{}").await;
    session.lockfile().await;
    let nvim_pid = session.lua("return vim.fn.getpid()").await.to_string();
    let mut ports = companion_ports(&session, &HashMap::new()).await;
    for round in ["started", "restarted"] {
        let tokens = secrets(&session);
        for (way, env) in environments(&session).await {
            let what = format!("{round}, {way}");
            assert_eq!(env.get("GEMINI_CLI_IDE_PID"), Some(&nvim_pid), "{what}");
            assert_eq!(
                env.get("GEMINI_CLI_IDE_SERVER_PORT"),
                ports.get("gemini"),
                "{what}"
            );
            assert_eq!(
                env.get("QWEN_CODE_IDE_SERVER_PORT"),
                ports.get("qwen"),
                "{what}"
            );
            assert_eq!(env.get("CLAUDE_CODE_SSE_PORT"), None, "{what}");
            for (name, value) in &env {
                assert!(
                    !tokens.iter().any(|token| value.contains(token.as_str())),
                    "{what}: a token in ${name}"
                );
            }
        }
        if round == "started" {
            session.exec("vim.cmd('PiIde restart')").await;
            ports = companion_ports(&session, &ports).await;
        }
    }

    session.exec("vim.cmd('PiIde stop')").await;
    session.wait_stopped().await;
    for (way, env) in environments(&session).await {
        assert_eq!(env.get("GEMINI_CLI_IDE_PID"), None, "stopped, {way}");
        assert_eq!(
            env.get("GEMINI_CLI_IDE_SERVER_PORT").map(String::as_str),
            Some("1"),
            "stopped, {way}: what Neovim inherited is back"
        );
        assert_eq!(env.get("QWEN_CODE_IDE_SERVER_PORT"), None, "stopped, {way}");
    }
}

#[tokio::test]
async fn a_cli_turned_off_gets_nothing_and_the_agent_terminal_reads_the_same_variables() {
    let session = Session::start_with("{ qwen = false }").await;
    session.lockfile().await;
    let status = eventually("the host serving Gemini CLI", || async {
        let status = session.lua("return require('pi-ide').status()").await;
        (status["companions"].as_array()?.len() == 1).then_some(status)
    })
    .await;
    let gemini_port = status["companions"][0]["port"].to_string();
    let (_, env) = environments(&session).await.remove(0);
    assert_eq!(env.get("GEMINI_CLI_IDE_SERVER_PORT"), Some(&gemini_port));
    assert_eq!(env.get("QWEN_CODE_IDE_SERVER_PORT"), None);
    // The agent terminal's Gemini CLI (a tmux pane does not inherit
    // Neovim's environment) gets the same ones, from the same place.
    let agent = session
        .lua(
            "local specs = require('pi-ide.agent.specs')
             local env = specs.environment(specs.get('gemini'), require('pi-ide').status())
             return { env.GEMINI_CLI_IDE_PID, env.GEMINI_CLI_IDE_SERVER_PORT }",
        )
        .await;
    assert_eq!(agent[0], Value::from(env["GEMINI_CLI_IDE_PID"].clone()));
    assert_eq!(agent[1], Value::from(gemini_port));
}

/// opencode dials `CLAUDE_CODE_SSE_PORT` (or `OPENCODE_EDITOR_SSE_PORT`)
/// without a token when either is set, and only a lockfile gives it one:
/// while Neovim is in Claude Code's lockfiles, no process it starts sees
/// them (an editor whose terminal Neovim runs in may have set them), and
/// they are back once the host stops; opencode's agent terminal gets them
/// empty.
#[tokio::test]
async fn an_inherited_claude_port_is_withheld_while_neovim_is_announced_to_claude() {
    let work = fresh_dir("cli-env-claude");
    let other = Path::new("4242");
    let session = Session::start_in(
        work,
        &[
            ("CLAUDE_CODE_SSE_PORT", other),
            ("OPENCODE_EDITOR_SSE_PORT", other),
        ],
        "{}",
    )
    .await;
    session.lockfile().await;
    eventually("Neovim in Claude Code's lockfiles", || async {
        let status = session.lua("return require('pi-ide').status()").await;
        status["claude_lockfile"].as_str().map(|_| ())
    })
    .await;
    for (way, env) in environments(&session).await {
        assert_eq!(env.get("CLAUDE_CODE_SSE_PORT"), None, "served, {way}");
        assert_eq!(env.get("OPENCODE_EDITOR_SSE_PORT"), None, "served, {way}");
    }
    let agent = session
        .lua(
            "local specs = require('pi-ide.agent.specs')
             local env = specs.environment(specs.get('opencode'), require('pi-ide').status(), {})
             return { env.CLAUDE_CODE_SSE_PORT, env.OPENCODE_EDITOR_SSE_PORT }",
        )
        .await;
    assert_eq!(agent, serde_json::json!(["", ""]));
    session.exec("vim.cmd('PiIde stop')").await;
    session.wait_stopped().await;
    for (way, env) in environments(&session).await {
        let port = |name: &str| env.get(name).map(String::as_str);
        assert_eq!(port("CLAUDE_CODE_SSE_PORT"), Some("4242"), "stopped, {way}");
        assert_eq!(
            port("OPENCODE_EDITOR_SSE_PORT"),
            Some("4242"),
            "stopped, {way}"
        );
    }
}
