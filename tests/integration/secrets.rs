//! The bearer token never reaches editor state: nothing the plugin prints,
//! notifies, copies, reports or logs contains it. `:PiIde mcp` gives
//! commands that read it when they run, and those commands work.

use std::process::Command;

use crate::common::{Session, eventually};
use crate::health::health_report;
use crate::mcp_http::{endpoint, status_of};
use crate::mcp_lasting::{free_port, token_file, wait_mcp_url};

/// A clipboard provider that keeps what is copied, so `+` and `*` are real
/// registers; and notifications that also go to `:messages`, as
/// `vim.notify`'s own do.
const CLIPBOARD_AND_MESSAGES: &str = "
    _G.clip = {}
    vim.g.clipboard = {
      name = 'test',
      copy = {
        ['+'] = function(lines, regtype) _G.clip['+'] = { lines, regtype } end,
        ['*'] = function(lines, regtype) _G.clip['*'] = { lines, regtype } end,
      },
      paste = {
        ['+'] = function() return _G.clip['+'] or { {}, 'v' } end,
        ['*'] = function() return _G.clip['*'] or { {}, 'v' } end,
      },
    }
    local record = vim.notify
    vim.notify = function(msg, level, opts)
      record(msg, level, opts)
      vim.api.nvim_echo({ { msg } }, true, {})
    end";

/// Everything a person (or a plugin reading registers, ShaDa or the
/// clipboard history) could see.
const EDITOR_STATE: &str = "
    local seen = { messages = vim.fn.execute('messages') }
    for _, name in ipairs(vim.split('\"0123456789abcdefghijklmnopqrstuvwxyz-:.%#/*+', '')) do
      seen['register ' .. name] = vim.fn.getreg(name)
    end
    seen.clipboard = vim.inspect(_G.clip)
    seen.notified = vim.inspect(_G.notified)
    seen.status = vim.inspect(require('pi-ide').status())
    return seen";

/// The command between `$(` and `)` in `claude`, run by sh: what Claude
/// Code's header gets.
fn substituted(claude: &str) -> String {
    let start = claude.find("$(").expect("a command substitution") + 2;
    let end = claude[start..].find(")\"").expect("its end") + start;
    let out = Command::new("sh")
        .args(["-c", &claude[start..end]])
        .output()
        .expect("run sh");
    assert!(out.status.success(), "{claude}: {out:?}");
    String::from_utf8(out.stdout).unwrap().trim_end().to_owned()
}

async fn token_stays_out_of_editor_state(session: Session, kept: bool) {
    let (url, token) = endpoint(&session).await;
    wait_mcp_url(&session).await;
    session.exec(CLIPBOARD_AND_MESSAGES).await;
    for command in ["PiIde mcp", "PiIde mcp copy", "PiIde status", "PiIde"] {
        session.exec(&format!("vim.cmd('{command}')")).await;
    }
    // A refused client, as an attacker's would be.
    let authority = url.trim_start_matches("http://").trim_end_matches("/mcp");
    let wrong = format!("Host: {authority}\r\nAuthorization: Bearer wrong\r\n");
    assert_eq!(status_of(&url, &wrong).await, 401);
    let health = health_report(&session).await;

    let told = session.notifications().await.join("\n");
    assert!(told.contains(&format!("/nvim connect {url}")), "{told}");
    let claude = told
        .lines()
        .find(|l| l.starts_with("claude mcp add"))
        .unwrap_or_else(|| panic!("no claude command in {told}"))
        .to_owned();
    assert_eq!(substituted(&claude), token, "the command reads the token");
    let reads = if kept {
        format!("cat '{}'", token_file(&session.state_dir).display())
    } else {
        "jq -r .authToken".to_owned()
    };
    assert!(claude.contains(&reads), "{claude}");
    let copied = session.lua("return vim.fn.getreg('+')").await;
    assert_eq!(copied.as_str(), Some(claude.as_str()), "copied to +");

    let state = session.lua(EDITOR_STATE).await;
    for (place, text) in state.as_object().unwrap() {
        let text = text.as_str().unwrap_or_default();
        assert!(!text.contains(&token), "the token is in {place}: {text}");
    }
    assert!(!health.contains(&token), "the token is in :checkhealth");
    let log = eventually("the host's log", || async {
        std::fs::read_to_string(session.state_dir.join("nvim/pi-ide.log")).ok()
    })
    .await;
    assert!(!log.contains(&token), "the token is in the host's log");
}

#[tokio::test]
async fn the_token_is_in_no_message_register_notification_or_log() {
    token_stays_out_of_editor_state(Session::start().await, false).await;
}

#[tokio::test]
async fn a_kept_token_is_in_no_message_register_notification_or_log() {
    let port = free_port();
    let session = Session::start_with(&format!("{{ mcp = {{ port = {port} }} }}")).await;
    token_stays_out_of_editor_state(session, true).await;
}
