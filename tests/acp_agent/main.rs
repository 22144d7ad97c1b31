//! A scriptable ACP agent for the chat's tests, on the protocol crate's
//! agent side over stdio. The first word of a prompt says what it does:
//!
//! * `hello` – a thought, a plan, a tool call with a location, a message.
//! * `stream N` / `flood N` – N message chunks (lines / single characters).
//! * `big BYTES CHUNK` – BYTES of Markdown prose in CHUNK-byte chunks.
//! * `read PATH [LINE LIMIT]` – `fs/read_text_file`, answered as `READ:…`.
//! * `write PATH TEXT…` – `fs/write_text_file`, answered `WRITE OK` or `WRITE ERROR: …`.
//! * `permission` – `session/request_permission` without a diff.
//! * `permdiff PATH TEXT…` – a permission whose tool call carries a diff,
//!   then (when allowed) the write of that text.
//! * `terminal CMD ARGS…` – `terminal/create`, wait, output, release.
//! * `kill CMD ARGS…` – `terminal/create`, kill, wait.
//! * `wait` – waits for `session/cancel`.
//! * `crash` – a chunk, then exits 3 mid-prompt.
//! * `garbage` – a line that is not JSON on stdout.
//! * `mcp` – says which MCP servers `session/new` gave it.
//!
//! `MOCK_ACP_AUTH=1`: `session/new` wants `authenticate` first;
//! `MOCK_ACP_HTTP_MCP=1`: it takes HTTP MCP servers.

use std::io::Write;
use std::sync::{Arc, Mutex};

use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    AuthenticateRequest, CancelNotification, CreateTerminalRequest, InitializeRequest,
    KillTerminalRequest, LoadSessionRequest, NewSessionRequest, PromptRequest, ReadTextFileRequest,
    ReleaseTerminalRequest, RequestPermissionRequest, SessionNotification,
    SetSessionConfigOptionRequest, SetSessionModeRequest, TerminalOutputRequest,
    WaitForTerminalExitRequest, WriteTextFileRequest,
};
use agent_client_protocol::{
    ByteStreams, Client, Error, JsonRpcRequest, on_receive_notification, on_receive_request,
};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value as Json, json};
use tokio::sync::Notify;
use tokio_util::compat::{TokioAsyncReadCompatExt, TokioAsyncWriteCompatExt};

#[derive(Default)]
struct Agent {
    mcp_servers: Mutex<Json>,
    authenticated: Mutex<bool>,
    cancelled: Notify,
}

fn typed<T: DeserializeOwned>(value: Json) -> T {
    serde_json::from_value(value).expect("a well-formed message")
}

fn to_json(value: &impl Serialize) -> Json {
    serde_json::to_value(value).unwrap()
}

fn say(cx: &ConnectionTo<Client>, session: &str, text: &str) {
    update(
        cx,
        session,
        json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}),
    );
}

fn update(cx: &ConnectionTo<Client>, session: &str, update: Json) {
    let notification: SessionNotification = typed(json!({"sessionId": session, "update": update}));
    let _ = cx.send_notification(notification);
}

async fn ask<R>(cx: &ConnectionTo<Client>, params: Json) -> Result<Json, String>
where
    R: JsonRpcRequest + DeserializeOwned,
    R::Response: Serialize + Send + 'static,
{
    let request: R = typed(params);
    cx.send_request(request)
        .block_task()
        .await
        .map(|answer| to_json(&answer))
        .map_err(|error| error.message)
}

/// The mock's one session option: its model, `fast` or `smart`.
fn model_option(current: &str) -> Json {
    json!({"type": "select", "id": "model", "name": "Model", "currentValue": current,
        "options": [{"value": "fast", "name": "Fast"}, {"value": "smart", "name": "Smart"}]})
}

/// Runs one prompt; its stop reason.
async fn prompt(
    agent: Arc<Agent>,
    cx: ConnectionTo<Client>,
    session: String,
    text: String,
) -> &'static str {
    let words: Vec<&str> = text.split_whitespace().collect();
    let rest = |from: usize| words.get(from..).unwrap_or_default().join(" ");
    let cwd_file = |path: &str| path.to_owned();
    match words.first().copied().unwrap_or_default() {
        "hello" => {
            update(
                &cx,
                &session,
                json!({"sessionUpdate": "agent_thought_chunk", "content": {"type": "text", "text": "Thinking it over"}}),
            );
            update(
                &cx,
                &session,
                json!({"sessionUpdate": "plan", "entries": [
                {"content": "Look around", "priority": "high", "status": "completed"},
                {"content": "Answer", "priority": "high", "status": "in_progress"}]}),
            );
            update(
                &cx,
                &session,
                json!({"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "Read notes",
                "kind": "read", "status": "pending", "locations": [{"path": words.get(1).copied().unwrap_or("/tmp/x"), "line": 2}]}),
            );
            update(
                &cx,
                &session,
                json!({"sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "completed"}),
            );
            for part in ["Hello ", "from ", "the mock", " agent."] {
                say(&cx, &session, part);
            }
        }
        "stream" | "flood" => {
            let count: usize = words.get(1).and_then(|n| n.parse().ok()).unwrap_or(10);
            for i in 0..count {
                let text = match words[0] {
                    "stream" => format!("line {i}\n"),
                    _ => "x".to_owned(),
                };
                say(&cx, &session, &text);
                if words[0] == "stream" && i % 50 == 49 {
                    tokio::time::sleep(std::time::Duration::from_millis(2)).await;
                }
            }
            say(&cx, &session, "\nDONE");
        }
        "big" => {
            let bytes: usize = words.get(1).and_then(|n| n.parse().ok()).unwrap_or(1 << 20);
            let chunk: usize = words.get(2).and_then(|n| n.parse().ok()).unwrap_or(16);
            let line = "Some **Markdown** prose with `code` in it, as an agent writes.\n";
            let text: String = line.repeat(bytes / line.len() + 1)[..bytes].to_owned();
            for (i, piece) in text.as_bytes().chunks(chunk).enumerate() {
                say(&cx, &session, std::str::from_utf8(piece).unwrap_or("?"));
                if i % 256 == 255 {
                    tokio::task::yield_now().await;
                }
            }
            say(&cx, &session, "\nDONE");
        }
        "read" => {
            let mut params = json!({"sessionId": session, "path": cwd_file(words.get(1).copied().unwrap_or_default())});
            if let (Some(line), Some(limit)) = (words.get(2), words.get(3)) {
                params["line"] = json!(line.parse::<u32>().unwrap());
                params["limit"] = json!(limit.parse::<u32>().unwrap());
            }
            match ask::<ReadTextFileRequest>(&cx, params).await {
                Ok(answer) => say(
                    &cx,
                    &session,
                    &format!("READ:{}", answer["content"].as_str().unwrap_or_default()),
                ),
                Err(error) => say(&cx, &session, &format!("READ ERROR: {error}")),
            }
        }
        "write" => {
            let params = json!({"sessionId": session, "path": words.get(1).copied().unwrap_or_default(), "content": rest(2) + "\n"});
            match ask::<WriteTextFileRequest>(&cx, params).await {
                Ok(_) => say(&cx, &session, "WRITE OK"),
                Err(error) => say(&cx, &session, &format!("WRITE ERROR: {error}")),
            }
        }
        "permission" | "permdiff" => {
            let path = words.get(1).copied().unwrap_or_default().to_owned();
            let new_text = rest(2) + "\n";
            let mut tool_call =
                json!({"toolCallId": "p1", "title": "Run the build", "kind": "execute"});
            if words[0] == "permdiff" {
                tool_call = json!({"toolCallId": "p1", "title": "Edit the file", "kind": "edit",
                    "content": [{"type": "diff", "path": path, "oldText": null, "newText": new_text}]});
            }
            let params = json!({"sessionId": session, "toolCall": tool_call, "options": [
                {"optionId": "yes", "name": "Allow once", "kind": "allow_once"},
                {"optionId": "always", "name": "Always allow", "kind": "allow_always"},
                {"optionId": "no", "name": "Reject", "kind": "reject_once"}]});
            let outcome = match ask::<RequestPermissionRequest>(&cx, params).await {
                Ok(answer) => answer["outcome"].clone(),
                Err(error) => json!(error),
            };
            let chosen = outcome["optionId"]
                .as_str()
                .unwrap_or(outcome["outcome"].as_str().unwrap_or("?"))
                .to_owned();
            say(&cx, &session, &format!("PERMISSION: {chosen}\n"));
            if words[0] == "permdiff" && chosen == "yes" {
                let params = json!({"sessionId": session, "path": path, "content": new_text});
                match ask::<WriteTextFileRequest>(&cx, params).await {
                    Ok(_) => say(&cx, &session, "WRITE OK"),
                    Err(error) => say(&cx, &session, &format!("WRITE ERROR: {error}")),
                }
            }
            if outcome["outcome"] == "cancelled" {
                return "cancelled";
            }
        }
        "terminal" | "kill" => {
            let params = json!({"sessionId": session, "command": words.get(1).copied().unwrap_or("true"),
                "args": words.get(2..).unwrap_or_default(), "outputByteLimit": 200});
            let created = match ask::<CreateTerminalRequest>(&cx, params).await {
                Ok(created) => created,
                Err(error) => {
                    say(&cx, &session, &format!("TERMINAL ERROR: {error}"));
                    return "end_turn";
                }
            };
            let id = json!({"sessionId": session, "terminalId": created["terminalId"]});
            if words[0] == "kill" {
                let _ = ask::<KillTerminalRequest>(&cx, id.clone()).await;
            }
            let exit = ask::<WaitForTerminalExitRequest>(&cx, id.clone())
                .await
                .unwrap_or_default();
            let output = ask::<TerminalOutputRequest>(&cx, id.clone())
                .await
                .unwrap_or_default();
            let _ = ask::<ReleaseTerminalRequest>(&cx, id).await;
            say(
                &cx,
                &session,
                &format!(
                    "TERMINAL exit={} signal={} truncated={} output={}",
                    exit["exitCode"],
                    exit["signal"],
                    output["truncated"],
                    output["output"]
                        .as_str()
                        .unwrap_or_default()
                        .replace('\n', "|")
                ),
            );
        }
        "wait" => {
            say(&cx, &session, "WAITING\n");
            agent.cancelled.notified().await;
            say(&cx, &session, "CANCELLED");
            return "cancelled";
        }
        "crash" => {
            say(&cx, &session, "about to crash");
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            eprintln!("mock: crashing on purpose");
            std::process::exit(3);
        }
        "garbage" => {
            let mut stdout = std::io::stdout();
            let _ = stdout.write_all(b"this is not json\n");
            let _ = stdout.flush();
        }
        "mcp" => {
            let servers = agent.mcp_servers.lock().unwrap().clone();
            let shown: Vec<String> = servers
                .as_array()
                .into_iter()
                .flatten()
                .map(|server| match server["type"].as_str() {
                    Some("http") => format!(
                        "http {} {}",
                        server["name"].as_str().unwrap_or_default(),
                        server["url"].as_str().unwrap_or_default()
                    ),
                    _ => format!(
                        "stdio {} {} {}",
                        server["name"].as_str().unwrap_or_default(),
                        server["command"].as_str().unwrap_or_default(),
                        server["args"]
                    ),
                })
                .collect();
            say(&cx, &session, &format!("MCP: {}", shown.join("; ")));
        }
        other => say(&cx, &session, &format!("unknown prompt {other}")),
    }
    "end_turn"
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Error> {
    let agent = Arc::new(Agent::default());
    let wants_auth = std::env::var("MOCK_ACP_AUTH").is_ok_and(|v| v == "1");
    let http_mcp = std::env::var("MOCK_ACP_HTTP_MCP").is_ok_and(|v| v == "1");
    let (a1, a2, a3, a4) = (agent.clone(), agent.clone(), agent.clone(), agent.clone());
    let transport = ByteStreams::new(
        tokio::io::stdout().compat_write(),
        tokio::io::stdin().compat(),
    );
    agent_client_protocol::Agent
        .v1()
        .name("mock-acp-agent")
        .on_receive_request(
            async move |request: InitializeRequest, responder, _cx| {
                let auth = match wants_auth {
                    true => json!([{"id": "mock-login", "name": "Mock login"}]),
                    false => json!([]),
                };
                responder.respond(typed(json!({
                    "protocolVersion": to_json(&request.protocol_version),
                    "agentCapabilities": {"loadSession": true,
                        "promptCapabilities": {"embeddedContext": true},
                        "mcpCapabilities": {"http": http_mcp}},
                    "agentInfo": {"name": "mock", "version": "1.0.0"},
                    "authMethods": auth,
                })))
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |_request: AuthenticateRequest, responder, _cx| {
                *a3.authenticated.lock().unwrap() = true;
                responder.respond(typed(json!({})))
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |request: NewSessionRequest, responder, cx| {
                if wants_auth && !*a1.authenticated.lock().unwrap() {
                    return responder.respond_with_error(Error::auth_required());
                }
                *a1.mcp_servers.lock().unwrap() = to_json(&request.mcp_servers);
                responder.respond(typed(json!({"sessionId": "mock-session",
                    "modes": {"currentModeId": "ask", "availableModes": [
                        {"id": "ask", "name": "Ask"}, {"id": "code", "name": "Code"}]},
                    "configOptions": [model_option("fast")]})))?;
                update(&cx, "mock-session", json!({"sessionUpdate": "available_commands_update",
                    "availableCommands": [{"name": "review", "description": "Review the code"}]}));
                Ok(())
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |request: LoadSessionRequest, responder, cx| {
                let session = to_json(&request.session_id);
                let session = session.as_str().unwrap_or_default();
                update(&cx, session, json!({"sessionUpdate": "user_message_chunk", "content": {"type": "text", "text": "an earlier question"}}));
                say(&cx, session, "an earlier answer");
                responder.respond(typed(json!({})))
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |request: SetSessionModeRequest, responder, cx| {
                let mode = to_json(&request.mode_id);
                responder.respond(typed(json!({})))?;
                update(&cx, "mock-session", json!({"sessionUpdate": "current_mode_update", "currentModeId": mode}));
                Ok(())
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |request: SetSessionConfigOptionRequest, responder, _cx| {
                let value = to_json(&request)["value"].as_str().unwrap_or_default().to_owned();
                responder.respond(typed(json!({"configOptions": [model_option(&value)]})))
            },
            on_receive_request!(),
        )
        .on_receive_notification(
            async move |_cancel: CancelNotification, _cx| {
                a4.cancelled.notify_waiters();
                Ok(())
            },
            on_receive_notification!(),
        )
        .on_receive_request(
            async move |request: PromptRequest, responder, cx: ConnectionTo<Client>| {
                let session = to_json(&request.session_id).as_str().unwrap_or_default().to_owned();
                let text: String = request
                    .prompt
                    .iter()
                    .map(to_json)
                    .filter(|block| block["type"] == "text")
                    .map(|block| block["text"].as_str().unwrap_or_default().to_owned())
                    .collect();
                let agent = a2.clone();
                tokio::spawn(async move {
                    let reason = prompt(agent, cx, session, text).await;
                    let _ = responder.respond(typed(json!({"stopReason": reason})));
                });
                Ok(())
            },
            on_receive_request!(),
        )
        .connect_to(transport)
        .await
}
