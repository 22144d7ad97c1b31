//! One chat's life: start the agent, `initialize` with our capabilities,
//! `authenticate` when it asks, `session/new` (or `session/load`), then
//! the person's prompts, cancels, modes and options until the chat is
//! closed or the agent goes. Every request the agent sends is served in a
//! task of its own, so the protocol's dispatch loop never waits for the
//! person; an agent that exits or writes garbage ends the chat with the
//! reason shown, and the transcript stays.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    AuthenticateRequest, CancelNotification, CreateTerminalRequest, InitializeRequest,
    KillTerminalRequest, LoadSessionRequest, NewSessionRequest, PromptRequest, ReadTextFileRequest,
    ReleaseTerminalRequest, RequestPermissionRequest, SessionNotification,
    SetSessionConfigOptionRequest, SetSessionModeRequest, TerminalOutputRequest,
    WaitForTerminalExitRequest, WriteTextFileRequest,
};
use agent_client_protocol::{Agent, Client, Error, on_receive_notification, on_receive_request};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value as Json, json};
use tokio::sync::mpsc;

use super::framing::{self, Garbled};
use super::terminal::{self, Terminals};
use super::{Chat, Command, Endpoint, fs, mcp_servers, permission, spawn};
use crate::state::State;

/// How long an agent gets to exit once its stdio closed, before its exit
/// status is given up on.
const EXIT_GRACE: Duration = Duration::from_secs(2);
/// JSON-RPC error of an agent that wants `authenticate` first.
const AUTH_REQUIRED: i32 = -32000;

/// What a chat starts with.
pub struct Start {
    pub state: Arc<State>,
    pub chat: Arc<Chat>,
    pub cmd: Vec<String>,
    pub env: BTreeMap<String, String>,
    pub load: Option<String>,
    pub terminals: Arc<Terminals>,
    pub endpoint: Option<Endpoint>,
}

/// Runs chat `start.chat` until it ends; the last update Lua gets says why.
pub async fn run(start: Start, commands: mpsc::Receiver<Command>) {
    let chat = start.chat.clone();
    chat.outbox.status("starting", Some(&start.cmd.join(" ")));
    let reason = match spawn::agent(&chat.agent, &start.cmd, &start.env, &chat.cwd) {
        Err(why) => why,
        Ok(spawned) => serve(start, spawned, commands).await,
    };
    chat.cancel_waiting();
    tracing::info!("chat {} ({}) ended: {reason}", chat.id, chat.agent);
    chat.outbox.push(json!({"kind": "ended", "reason": reason}));
}

/// Speaks ACP with the spawned agent; why it ended.
async fn serve(start: Start, spawned: spawn::Spawned, commands: mpsc::Receiver<Command>) -> String {
    let spawn::Spawned {
        mut child,
        stdin,
        stdout,
        stderr,
    } = spawned;
    let garbled = Garbled::default();
    let transport = framing::transport(stdin, stdout, garbled.clone());
    let Start {
        state,
        chat,
        load,
        terminals,
        endpoint,
        ..
    } = start;
    let (s1, c1) = (state.clone(), chat.clone());
    let (s2, c2) = (state.clone(), chat.clone());
    let (s3, c3) = (state.clone(), chat.clone());
    let (s4, c4, t4) = (state.clone(), chat.clone(), terminals.clone());
    let (s5, c5, t5) = (state.clone(), chat.clone(), terminals.clone());
    let (c6, t6) = (chat.clone(), terminals.clone());
    let (s7, c7, t7) = (state.clone(), chat.clone(), terminals.clone());
    let (s8, c8, t8) = (state.clone(), chat.clone(), terminals.clone());
    let c0 = chat.clone();
    let driver = Driver {
        chat: chat.clone(),
        load,
        endpoint,
    };
    let ended =
        Client
            .v1()
            .name("pi-ide.nvim")
            .on_receive_notification(
                async move |notification: SessionNotification, _cx| {
                    let update = to_json(&notification.update);
                    if let Some(row) = super::updates::from_session_update(&update) {
                        c0.outbox.push_in_turn(row).await;
                    }
                    Ok(())
                },
                on_receive_notification!(),
            )
            .on_receive_request(
                async move |request: ReadTextFileRequest, responder, _cx| {
                    let (state, chat) = (s1.clone(), c1.clone());
                    serve_request(
                        async move { fs::read(&state, &chat, &to_json(&request)).await },
                        move |r| responder.respond_with_result(r),
                    );
                    Ok(())
                },
                on_receive_request!(),
            )
            .on_receive_request(
                async move |request: WriteTextFileRequest, responder, _cx| {
                    let (state, chat) = (s2.clone(), c2.clone());
                    serve_request(
                        async move { fs::write(&state, &chat, &to_json(&request)).await },
                        move |r| responder.respond_with_result(r),
                    );
                    Ok(())
                },
                on_receive_request!(),
            )
            .on_receive_request(
                async move |request: RequestPermissionRequest, responder, _cx| {
                    let (state, chat) = (s3.clone(), c3.clone());
                    serve_request(
                        async move { Ok(permission::ask(state, chat, to_json(&request)).await) },
                        move |r| responder.respond_with_result(r),
                    );
                    Ok(())
                },
                on_receive_request!(),
            )
            .on_receive_request(
                async move |request: CreateTerminalRequest, responder, _cx| {
                    let (state, chat, terminals) = (s4.clone(), c4.clone(), t4.clone());
                    serve_request(
                        async move {
                            terminal::create(&state, &chat, &terminals, &to_json(&request)).await
                        },
                        move |r| responder.respond_with_result(r),
                    );
                    Ok(())
                },
                on_receive_request!(),
            )
            .on_receive_request(
                async move |request: TerminalOutputRequest, responder, _cx| {
                    let (state, chat, terminals) = (s5.clone(), c5.clone(), t5.clone());
                    serve_request(
                        async move {
                            terminal::output(&state, &chat, &terminals, &to_json(&request)).await
                        },
                        move |r| responder.respond_with_result(r),
                    );
                    Ok(())
                },
                on_receive_request!(),
            )
            .on_receive_request(
                async move |request: WaitForTerminalExitRequest, responder, _cx| {
                    let (chat, terminals) = (c6.clone(), t6.clone());
                    serve_request(
                        async move {
                            terminal::wait_for_exit(&chat, &terminals, &to_json(&request)).await
                        },
                        move |r| responder.respond_with_result(r),
                    );
                    Ok(())
                },
                on_receive_request!(),
            )
            .on_receive_request(
                async move |request: KillTerminalRequest, responder, _cx| {
                    let (state, chat, terminals) = (s7.clone(), c7.clone(), t7.clone());
                    serve_request(
                        async move {
                            terminal::kill(&state, &chat, &terminals, &to_json(&request), false)
                                .await
                        },
                        move |r| responder.respond_with_result(r),
                    );
                    Ok(())
                },
                on_receive_request!(),
            )
            .on_receive_request(
                async move |request: ReleaseTerminalRequest, responder, _cx| {
                    let (state, chat, terminals) = (s8.clone(), c8.clone(), t8.clone());
                    serve_request(
                        async move {
                            terminal::kill(&state, &chat, &terminals, &to_json(&request), true)
                                .await
                        },
                        move |r| responder.respond_with_result(r),
                    );
                    Ok(())
                },
                on_receive_request!(),
            )
            .connect_with(transport, async move |cx: ConnectionTo<Agent>| {
                Ok(driver.drive(cx, commands).await)
            })
            .await;
    terminal::forget_chat(&terminals, chat.id);
    let reason = match ended {
        Ok(Ended::Closed) => {
            let _ = child.start_kill();
            let _ = child.wait().await;
            return "closed".into();
        }
        Ok(Ended::Failed(why)) => Some(why),
        Ok(Ended::Gone) => None,
        Err(error) => Some(error.message.clone()),
    };
    if let Some(why) = garbled.take() {
        let _ = child.start_kill();
        return why;
    }
    let status = match tokio::time::timeout(EXIT_GRACE, child.wait()).await {
        Ok(Ok(status)) => Some(status),
        _ => {
            let _ = child.start_kill();
            None
        }
    };
    let mut why = match (status, reason) {
        (Some(status), _) if !status.success() => format!("the agent exited ({status})"),
        (Some(_), None) => "the agent exited".to_owned(),
        (_, Some(reason)) => reason,
        (None, None) => "the agent closed its output".to_owned(),
    };
    let tail = stderr.lines();
    if !tail.is_empty() && !why.contains("exited normally") {
        why.push_str(&format!("; its last words: {}", tail.join(" / ")));
    }
    why
}

/// How the session's own loop ended.
enum Ended {
    /// The person closed the chat.
    Closed,
    /// The agent's side went away (its output closed).
    Gone,
    /// A step failed: why.
    Failed(String),
}

/// The person's side of the session.
struct Driver {
    chat: Arc<Chat>,
    load: Option<String>,
    endpoint: Option<Endpoint>,
}

impl Driver {
    async fn drive(self, cx: ConnectionTo<Agent>, mut commands: mpsc::Receiver<Command>) -> Ended {
        let outbox = &self.chat.outbox;
        let init = json!({
            "protocolVersion": ProtocolVersion::V1,
            "clientCapabilities": {
                "fs": {"readTextFile": true, "writeTextFile": true},
                "terminal": true,
            },
            "clientInfo": {"name": "pi-ide.nvim", "title": "Neovim (pi-ide.nvim)", "version": env!("CARGO_PKG_VERSION")},
        });
        let initialized = match request::<InitializeRequest, _>(&cx, init).await {
            Ok(answer) => answer,
            Err(why) => return self.failed_or_gone(&cx, format!("initialize failed: {why}")),
        };
        let capabilities = initialized["agentCapabilities"].clone();
        outbox.push(json!({
            "kind": "agent",
            "info": initialized["agentInfo"],
            "load_session": capabilities["loadSession"] == true,
            "prompt": capabilities["promptCapabilities"],
            "auth_methods": initialized["authMethods"],
        }));
        let servers = mcp_servers::servers(self.endpoint.as_ref(), &capabilities);
        let session = match self
            .open_session(&cx, &capabilities, &initialized, servers, &mut commands)
            .await
        {
            Ok(session) => session,
            Err(ended) => return ended,
        };
        let Some(session_id) = session["sessionId"].as_str().map(str::to_owned) else {
            return Ended::Failed("the agent named no session".into());
        };
        outbox.push(json!({
            "kind": "session",
            "session_id": session_id,
            "modes": session["modes"],
            "config_options": session["configOptions"],
        }));
        outbox.status("ready", None);
        loop {
            let command = tokio::select! {
                command = commands.recv() => command,
                _ = cx.incoming_closed() => return Ended::Gone,
            };
            let Some(command) = command else {
                return Ended::Closed;
            };
            match command {
                Command::Close => return Ended::Closed,
                Command::Prompt(blocks) => self.prompt(&cx, &session_id, blocks),
                Command::Cancel => {
                    let cancel = json!({"sessionId": session_id});
                    if let Err(why) = notify::<CancelNotification>(&cx, cancel) {
                        outbox.notice("error", format!("cancel failed: {why}"));
                    }
                }
                Command::Mode(mode) => {
                    let set = json!({"sessionId": session_id, "modeId": mode});
                    let chat = self.chat.clone();
                    let cx = cx.clone();
                    crate::task::spawn(async move {
                        match request::<SetSessionModeRequest, _>(&cx, set).await {
                            Ok(_) => chat.outbox.push(json!({"kind": "mode", "mode": mode})),
                            Err(why) => chat.outbox.notice("error", format!("mode not set: {why}")),
                        }
                    });
                }
                Command::Config { option, value } => {
                    let set = json!({"sessionId": session_id, "configId": option, "value": value});
                    let chat = self.chat.clone();
                    let cx = cx.clone();
                    crate::task::spawn(async move {
                        match request::<SetSessionConfigOptionRequest, _>(&cx, set).await {
                            Ok(answer) => chat.outbox.push(
                                json!({"kind": "config", "options": answer["configOptions"]}),
                            ),
                            Err(why) => chat
                                .outbox
                                .notice("error", format!("option not set: {why}")),
                        }
                    });
                }
                Command::Auth(_) => outbox.notice("info", "already signed in"),
            }
        }
    }

    /// `session/load` when asked and offered, else `session/new`,
    /// authenticating first when the agent wants it.
    async fn open_session(
        &self,
        cx: &ConnectionTo<Agent>,
        capabilities: &Json,
        initialized: &Json,
        servers: Json,
        commands: &mut mpsc::Receiver<Command>,
    ) -> Result<Json, Ended> {
        let outbox = &self.chat.outbox;
        let cwd = self.chat.cwd.clone();
        let mut authenticated = false;
        loop {
            let opened = match &self.load {
                Some(id) if capabilities["loadSession"] == true => {
                    let load = json!({"sessionId": id, "cwd": cwd, "mcpServers": servers});
                    request::<LoadSessionRequest, _>(cx, load)
                        .await
                        .map(|mut answer| {
                            answer["sessionId"] = json!(id);
                            answer
                        })
                }
                _ => {
                    let new = json!({"cwd": cwd, "mcpServers": servers});
                    request::<NewSessionRequest, _>(cx, new).await
                }
            };
            let error = match opened {
                Ok(session) => return Ok(session),
                Err(error) => error,
            };
            let methods = &initialized["authMethods"];
            let wants_auth = error.code == AUTH_REQUIRED
                && methods.as_array().is_some_and(|m| !m.is_empty())
                && !authenticated;
            if !wants_auth {
                return Err(self.failed_or_gone(
                    cx,
                    format!("the session could not start: {}", error.message),
                ));
            }
            outbox.push(json!({"kind": "auth", "methods": methods}));
            let method = loop {
                let command = tokio::select! {
                    command = commands.recv() => command,
                    _ = cx.incoming_closed() => return Err(Ended::Gone),
                };
                match command {
                    None | Some(Command::Close) => return Err(Ended::Closed),
                    Some(Command::Auth(method)) => break method,
                    Some(_) => outbox.notice("warn", "sign in first (:PiIde chat auth)"),
                }
            };
            if let Err(error) =
                request::<AuthenticateRequest, _>(cx, json!({"methodId": method})).await
            {
                return Err(Ended::Failed(format!(
                    "authentication failed: {}",
                    error.message
                )));
            }
            authenticated = true;
        }
    }

    /// Sends a prompt in a task of its own: cancels and modes keep flowing.
    fn prompt(&self, cx: &ConnectionTo<Agent>, session_id: &str, blocks: Json) {
        let prompt = json!({"sessionId": session_id, "prompt": blocks});
        let chat = self.chat.clone();
        let cx = cx.clone();
        chat.outbox.status("working", None);
        crate::task::spawn(async move {
            match request::<PromptRequest, _>(&cx, prompt).await {
                Ok(answer) => {
                    let reason = answer["stopReason"]
                        .as_str()
                        .unwrap_or("end_turn")
                        .to_owned();
                    chat.outbox.status("idle", Some(&reason));
                }
                Err(error) if cx.is_incoming_closed() => {
                    tracing::info!(
                        "chat {}: prompt ended with the agent: {}",
                        chat.id,
                        error.message
                    );
                }
                Err(error) => {
                    chat.outbox
                        .notice("error", format!("the prompt failed: {}", error.message));
                    chat.outbox.status("idle", Some("error"));
                }
            }
        });
    }

    /// A failed step: the agent may simply have gone.
    fn failed_or_gone(&self, cx: &ConnectionTo<Agent>, why: String) -> Ended {
        match cx.is_incoming_closed() {
            true => Ended::Gone,
            false => Ended::Failed(why),
        }
    }
}

/// An error the agent returned (or the connection's own).
struct Refusal {
    code: i32,
    message: String,
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// Sends request `R` built from `params`; its answer as JSON.
async fn request<R, T>(cx: &ConnectionTo<Agent>, params: Json) -> Result<Json, Refusal>
where
    R: agent_client_protocol::JsonRpcRequest<Response = T> + DeserializeOwned,
    T: Serialize + Send + 'static,
{
    let request: R = serde_json::from_value(params).map_err(|e| Refusal {
        code: -32602,
        message: e.to_string(),
    })?;
    match cx.send_request(request).block_task().await {
        Ok(answer) => Ok(to_json(&answer)),
        Err(error) => Err(Refusal {
            code: i32::from(error.code),
            message: match &error.data {
                Some(data) => format!("{} ({data})", error.message),
                None => error.message,
            },
        }),
    }
}

fn notify<N>(cx: &ConnectionTo<Agent>, params: Json) -> Result<(), String>
where
    N: agent_client_protocol::JsonRpcNotification + DeserializeOwned,
{
    let notification: N = serde_json::from_value(params).map_err(|e| e.to_string())?;
    cx.send_notification(notification).map_err(|e| e.message)
}

fn to_json(value: &impl Serialize) -> Json {
    serde_json::to_value(value).unwrap_or(Json::Null)
}

/// Serves one request of the agent's in a task of its own and answers it
/// with `respond`: a JSON answer read as the response type, or an error
/// with the message for the agent.
fn serve_request<T, F>(
    work: impl std::future::Future<Output = Result<Json, String>> + Send + 'static,
    respond: F,
) where
    T: DeserializeOwned,
    F: FnOnce(Result<T, Error>) -> Result<(), Error> + Send + 'static,
{
    crate::task::spawn(async move {
        let answer = match work.await {
            Ok(json) => serde_json::from_value::<T>(json).map_err(Error::from),
            Err(message) => Err(Error::new(-32603, message)),
        };
        if let Err(error) = respond(answer) {
            tracing::info!("an answer to the agent was not sent: {}", error.message);
        }
    });
}
