//! One thread owns every mirrored buffer. Lines events and context requests
//! reach it through one queue, so a request always sees every edit Neovim
//! sent before it, and parsing never runs on the async runtime's thread.

use std::collections::HashMap;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use tokio::sync::oneshot;

use super::document::Document;
use super::{Context, REPARSE_BUDGET};

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
    /// Context around a cursor.
    Context {
        buf: i64,
        row: usize,
        col: usize,
        filetype: String,
        outline_bytes: usize,
        reply: oneshot::Sender<Lookup>,
    },
}

/// The answer to a context request.
#[derive(Debug)]
pub enum Lookup {
    /// Mirrored; `None` when the filetype has no grammar.
    Ready(Option<Context>),
    /// Not mirrored: the asker must attach the buffer and send `Load`.
    Attach,
    /// Someone else is attaching it right now.
    Pending,
}

/// What the worker holds for one buffer.
enum Entry {
    /// Attach requested; lines events are kept until `Load` arrives.
    Attaching(Vec<(u64, i64, i64, Vec<String>)>),
    Mirrored(Mirror),
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

    /// Asks for the context around a cursor.
    pub async fn context(
        &self,
        buf: i64,
        row: usize,
        col: usize,
        filetype: &str,
        outline_bytes: usize,
    ) -> Lookup {
        let (reply, answer) = oneshot::channel();
        self.send(Command::Context {
            buf,
            row,
            col,
            filetype: filetype.to_owned(),
            outline_bytes,
            reply,
        });
        answer.await.unwrap_or(Lookup::Pending)
    }
}

/// A slice of background parsing between two looks at the queue.
const IDLE_SLICE: Duration = Duration::from_millis(2);
/// Background parsing a document may use after each edit; a file whose
/// parse takes longer (pathological syntax errors) waits for requests.
const IDLE_BUDGET: Duration = Duration::from_secs(2);

/// A mirrored document and the idle time it may still use to reparse.
struct Mirror {
    document: Document,
    idle_left: Duration,
}

impl Mirror {
    fn new(document: Document) -> Self {
        Mirror {
            document,
            idle_left: IDLE_BUDGET,
        }
    }

    fn wants_idle_time(&self) -> bool {
        self.document.needs_parse() && !self.idle_left.is_zero()
    }
}

fn run(queue: mpsc::Receiver<Command>) {
    let mut buffers: HashMap<i64, Entry> = HashMap::new();
    loop {
        let idle_work = buffers.values_mut().find_map(|entry| match entry {
            Entry::Mirrored(mirror) if mirror.wants_idle_time() => Some(mirror),
            _ => None,
        });
        let command = match idle_work {
            Some(mirror) => match queue.try_recv() {
                Ok(command) => command,
                Err(mpsc::TryRecvError::Empty) => {
                    let started = Instant::now();
                    mirror.document.parse(IDLE_SLICE);
                    mirror.idle_left = mirror.idle_left.saturating_sub(started.elapsed());
                    continue;
                }
                Err(mpsc::TryRecvError::Disconnected) => break,
            },
            None => match queue.recv() {
                Ok(command) => command,
                Err(_) => break,
            },
        };
        handle(command, &mut buffers);
    }
}

fn handle(command: Command, buffers: &mut HashMap<i64, Entry>) {
    match command {
        Command::Load {
            buf,
            tick,
            filetype,
            lines,
        } => {
            let mut document = Document::new(lines, tick, &filetype);
            // Changes that raced the initial read; older ones are in `lines`.
            if let Some(Entry::Attaching(early)) = buffers.remove(&buf) {
                for (tick, first, last, lines) in early {
                    apply(&mut document, tick, first, last, lines);
                }
            }
            buffers.insert(buf, Entry::Mirrored(Mirror::new(document)));
        }
        Command::Lines {
            buf,
            tick,
            first,
            last,
            lines,
        } => match buffers.get_mut(&buf) {
            Some(Entry::Mirrored(mirror)) => {
                apply(&mut mirror.document, tick, first, last, lines);
                mirror.idle_left = IDLE_BUDGET;
            }
            Some(Entry::Attaching(early)) => early.push((tick, first, last, lines)),
            None => {}
        },
        Command::Detach { buf } => {
            buffers.remove(&buf);
        }
        Command::Context {
            buf,
            row,
            col,
            filetype,
            outline_bytes,
            reply,
        } => {
            let lookup = match buffers.get_mut(&buf) {
                Some(Entry::Mirrored(mirror)) => {
                    let document = &mut mirror.document;
                    document.set_filetype(&filetype);
                    // A first parse runs to the end (edits would keep restarting
                    // it); its size is bounded by the parse window.
                    let budget = if document.parsed().0.is_some() {
                        REPARSE_BUDGET
                    } else {
                        Duration::MAX
                    };
                    Lookup::Ready(super::context(document, row, col, outline_bytes, budget))
                }
                Some(Entry::Attaching(_)) => Lookup::Pending,
                None => {
                    buffers.insert(buf, Entry::Attaching(Vec::new()));
                    Lookup::Attach
                }
            };
            let _ = reply.send(lookup);
        }
    }
}

fn apply(document: &mut Document, tick: u64, first: i64, last: i64, lines: Vec<String>) {
    document.apply(
        tick,
        usize::try_from(first).unwrap_or(0),
        usize::try_from(last).ok(),
        lines,
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn edits_that_race_the_initial_read_are_applied_once() {
        let worker = Worker::spawn().unwrap();
        let limits = crate::outline::OUTLINE_BYTES;
        assert!(matches!(
            worker.context(1, 0, 0, "rust", limits).await,
            Lookup::Attach
        ));
        assert!(
            matches!(
                worker.context(1, 0, 0, "rust", limits).await,
                Lookup::Pending
            ),
            "one attacher at a time"
        );
        // Tick 3 is already in the loaded text, tick 4 came after it.
        worker.send(Command::Lines {
            buf: 1,
            tick: 3,
            first: 0,
            last: 1,
            lines: vec!["fn a() {}".into()],
        });
        worker.send(Command::Lines {
            buf: 1,
            tick: 4,
            first: 1,
            last: 1,
            lines: vec!["fn b() {}".into()],
        });
        worker.send(Command::Load {
            buf: 1,
            tick: 3,
            filetype: "rust".into(),
            lines: vec!["fn a() {}".into()],
        });
        let Lookup::Ready(Some(context)) = worker.context(1, 1, 9, "rust", limits).await else {
            panic!("not mirrored")
        };
        assert_eq!(context.outline, "1: fn a()\n2: fn b()");
        assert_eq!(context.enclosing_scope, "2: fn b()");
        worker.send(Command::Detach { buf: 1 });
        assert!(matches!(
            worker.context(1, 0, 0, "rust", limits).await,
            Lookup::Attach
        ));
    }
}
