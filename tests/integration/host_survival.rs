//! The host outlives what clients do: a request cancelled while its call
//! into Neovim runs leaves the host serving; a host that dies anyway is
//! reported with its log and started again once, on the same port.

use serde_json::json;

use crate::common::{Session, eventually};
use crate::mcp_http::endpoint;
use crate::mcp_raw::{call, message, open_session, read_answer, send_post, tool_call};

/// The host's pid as `status()` reports it, once it runs.
async fn host_pid(session: &Session) -> i32 {
    eventually("the host to report its pid", || async {
        let pid = session.lua("return require('pi-ide').status().pid").await;
        pid.as_i64().map(|pid| pid as i32)
    })
    .await
}

/// Whether `pid` runs (a zombie does not).
fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            let state = stat.rsplit_once(')')?.1.trim_start().chars().next()?;
            Some(state != 'Z' && state != 'X')
        })
        .unwrap_or(false)
}

/// How a client gives up on a call.
#[derive(Clone, Copy, Debug)]
enum GiveUp {
    /// `notifications/cancelled`, as pi sends when the person presses Esc.
    Cancel,
    /// The HTTP connection of the request closes.
    Disconnect,
}

#[tokio::test]
async fn a_request_given_up_during_a_slow_lua_call_leaves_the_host_serving() {
    let session = Session::start().await;
    let (url, token) = endpoint(&session).await;
    let pid = host_pid(&session).await;
    session.write_file("next.txt", "next\n");
    // Buffer text of slow*.txt keeps Lua busy until the test has given up
    // on it (and at least 1.5 s), as a slow language server would.
    session
        .lua_with(
            "local dir = ...
             vim.cmd.edit('next.txt')
             local editors = require('pi-ide.editors')
             local text = editors.text
             editors.text = function(path)
               local name = path:match('(slow%w*)%.txt$')
               if name then
                 io.open(dir .. '/' .. name .. '.entered', 'w'):close()
                 local start = vim.uv.hrtime()
                 local function elapsed() return (vim.uv.hrtime() - start) / 1e9 end
                 local release = dir .. '/' .. name .. '.release'
                 while elapsed() < 20 and (elapsed() < 1.5 or not vim.uv.fs_stat(release)) do end
               end
               return text(path)
             end",
            vec![json!(session.work_dir.to_str().unwrap())],
        )
        .await;
    let mcp = open_session(&url, &token).await;
    for (id, how) in [(7, GiveUp::Cancel), (9, GiveUp::Disconnect)] {
        let name = format!("slow{id}");
        session.write_file(&format!("{name}.txt"), "slow\n");
        session.exec(&format!("vim.cmd.edit('{name}.txt')")).await;
        let entered = session.work_dir.join(format!("{name}.entered"));
        let call_slow = tool_call(
            id,
            "get_file_text_by_path",
            json!({"pathInProject": format!("{name}.txt")}),
        );
        let mut pending = send_post(&url, &token, Some(&mcp), &call_slow.to_string()).await;
        eventually("Lua to enter the slow call", || async {
            entered.exists().then_some(())
        })
        .await;
        match how {
            GiveUp::Cancel => {
                let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                                    "params": {"requestId": id, "reason": "Esc"}});
                let mut cancelled = send_post(&url, &token, Some(&mcp), &cancel.to_string()).await;
                let head = read_answer(&mut cancelled)
                    .await
                    .expect("the cancel answered");
                assert!(head.starts_with("HTTP/1.1 202"), "{head}");
                std::fs::write(session.work_dir.join(format!("{name}.release")), "").unwrap();
                // The cancelled call ends cleanly: an answer, an error, or a closed stream.
                let answer = read_answer(&mut pending)
                    .await
                    .expect("the cancelled call's stream ends");
                if let Some(reply) = message(&answer) {
                    assert_eq!(reply["id"], id, "{reply}");
                }
            }
            GiveUp::Disconnect => {
                drop(pending);
                std::fs::write(session.work_dir.join(format!("{name}.release")), "").unwrap();
            }
        }
        let next = tool_call(
            id + 1,
            "get_file_text_by_path",
            json!({"pathInProject": "next.txt"}),
        );
        let reply = call(&url, &token, &mcp, &next).await;
        assert_eq!(
            reply["result"]["structuredContent"]["text"], "next",
            "served after {how:?}: {reply}"
        );
        assert!(alive(pid), "the same host still runs after {how:?}");
    }
    assert_eq!(
        session.lua("return require('pi-ide').status().pid").await,
        pid
    );
    let told = session.notifications().await;
    assert!(told.is_empty(), "nothing went wrong: {told:?}");
}
