//! One thread owns every mirrored buffer. Lines events and context requests
//! reach it through one queue, so a request always sees every edit Neovim
//! sent before it, and parsing never runs on the async runtime's thread.

use std::collections::HashMap;
use std::sync::mpsc;

use tokio::sync::oneshot;

use super::document::Document;
use super::{Context, Limits};

pub enum Command {
    /// A buffer's full contents right after `nvim_buf_attach`.
    Load {
        buf: i64,
        tick: u64,
        filetype: String,
        lines: Vec<String>,
    },
    /// `nvim_buf_lines_event`: lines `first..last` (`last = -1`: to the end) replaced.
    Lines {
        buf: i64,
        tick: u64,
        first: i64,
        last: i64,
        lines: Vec<String>,
    },
    /// `nvim_buf_detach_event` or a wiped buffer.
    Detach { buf: i64 },
    /// Context around a cursor; `None` when the buffer is not mirrored yet.
    Context {
        buf: i64,
        row: usize,
        col: usize,
        filetype: String,
        limits: Limits,
        reply: oneshot::Sender<Option<Context>>,
    },
}

/// Handle for sending commands; cheap to clone.
#[derive(Clone)]
pub struct Worker {
    commands: mpsc::Sender<Command>,
}

impl Worker {
    pub fn spawn() -> std::io::Result<Worker> {
        let (commands, queue) = mpsc::channel();
        std::thread::Builder::new()
            .name("pi-ide-outline".into())
            .spawn(move || run(queue))?;
        Ok(Worker { commands })
    }

    pub fn send(&self, command: Command) {
        let _ = self.commands.send(command);
    }

    /// Asks for the context; `None` when the buffer is not mirrored.
    pub async fn context(
        &self,
        buf: i64,
        row: usize,
        col: usize,
        filetype: &str,
        limits: Limits,
    ) -> Option<Context> {
        let (reply, answer) = oneshot::channel();
        self.send(Command::Context {
            buf,
            row,
            col,
            filetype: filetype.to_owned(),
            limits,
            reply,
        });
        answer.await.ok().flatten()
    }
}

fn run(queue: mpsc::Receiver<Command>) {
    let mut documents: HashMap<i64, Document> = HashMap::new();
    for command in queue {
        match command {
            Command::Load {
                buf,
                tick,
                filetype,
                lines,
            } => {
                documents.insert(buf, Document::new(lines, tick, &filetype));
            }
            Command::Lines {
                buf,
                tick,
                first,
                last,
                lines,
            } => {
                if let Some(document) = documents.get_mut(&buf) {
                    let last = usize::try_from(last).ok();
                    document.apply(tick, usize::try_from(first).unwrap_or(0), last, lines);
                }
            }
            Command::Detach { buf } => {
                documents.remove(&buf);
            }
            Command::Context {
                buf,
                row,
                col,
                filetype,
                limits,
                reply,
            } => {
                let context = documents.get_mut(&buf).map(|document| {
                    document.set_filetype(&filetype);
                    super::context(document, row, col, limits)
                });
                let _ = reply.send(context);
            }
        }
    }
}
