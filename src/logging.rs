//! Logging to a file. stdout carries msgpack-RPC, so nothing may print there.
//!
//! Lines are handed to a writer thread through a bounded queue, so a slow
//! disk never stalls the runtime thread; when the queue is full a line is
//! dropped and counted, and the count is written once there is room.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender, TrySendError};
use std::time::Duration;

use tracing_subscriber::filter::LevelFilter;

use crate::config::Config;

/// Lines the writer thread may fall behind by before lines are dropped.
const QUEUE_LINES: usize = 8192;

/// How long the guard waits at exit for queued lines to reach the file.
const FLUSH_TIMEOUT: Duration = Duration::from_secs(1);

enum Message {
    Line(Vec<u8>),
    /// Everything sent before has been written when the reply comes.
    Flush(SyncSender<()>),
}

/// What each log event writes to: a handle on the queue.
#[derive(Clone)]
struct QueueWriter {
    queue: SyncSender<Message>,
    /// Lines dropped because the queue was full, not yet reported.
    dropped: Arc<AtomicU64>,
}

impl Write for QueueWriter {
    fn write(&mut self, line: &[u8]) -> io::Result<usize> {
        match self.queue.try_send(Message::Line(line.to_vec())) {
            Ok(()) => {}
            Err(TrySendError::Full(_)) => {
                self.dropped.fetch_add(1, Ordering::Relaxed);
            }
            // The writer thread is gone (the file failed): nothing to do.
            Err(TrySendError::Disconnected(_)) => {}
        }
        Ok(line.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Flushes the log when dropped at exit.
pub struct LogGuard {
    queue: SyncSender<Message>,
}

impl Drop for LogGuard {
    fn drop(&mut self) {
        let (done_tx, done_rx) = mpsc::sync_channel(1);
        if self.queue.send(Message::Flush(done_tx)).is_ok() {
            let _ = done_rx.recv_timeout(FLUSH_TIMEOUT);
        }
    }
}

/// Starts file logging; the guard flushes the log when dropped at exit.
pub fn init(config: &Config) -> Option<LogGuard> {
    let path = config.log_file.as_ref()?;
    let (writer, guard) = open(path).ok()?;
    let level: LevelFilter = config.log_level.parse().unwrap_or(LevelFilter::INFO);
    tracing_subscriber::fmt()
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .with_max_level(level)
        .with_target(false)
        .init();
    Some(guard)
}

/// Opens `path` for appending (creating its directory) and starts the
/// thread that writes to it.
fn open(path: &Path) -> io::Result<(QueueWriter, LogGuard)> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let file = OpenOptions::new().create(true).append(true).open(path)?;
    let (queue, lines) = mpsc::sync_channel(QUEUE_LINES);
    let dropped = Arc::new(AtomicU64::new(0));
    std::thread::Builder::new()
        .name("pi-ide-log".into())
        .spawn({
            let dropped = dropped.clone();
            move || write_lines(file, lines, &dropped)
        })?;
    let writer = QueueWriter {
        queue: queue.clone(),
        dropped,
    };
    Ok((writer, LogGuard { queue }))
}

fn write_lines(mut file: File, lines: Receiver<Message>, dropped: &AtomicU64) {
    for message in lines {
        let lost = dropped.swap(0, Ordering::Relaxed);
        if lost > 0 {
            let note = format!("({lost} log lines dropped: the log file could not keep up)\n");
            if file.write_all(note.as_bytes()).is_err() {
                return;
            }
        }
        match message {
            Message::Line(line) => {
                if file.write_all(&line).is_err() {
                    return;
                }
            }
            Message::Flush(done) => {
                let _ = done.send(());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn log_path(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("pi-ide-log-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir.join("nested/pi-ide.log")
    }

    #[test]
    fn lines_reach_the_file_by_the_time_the_guard_is_dropped() {
        let path = log_path("flush");
        let (mut writer, guard) = open(&path).unwrap();
        for n in 0..100 {
            writer.write_all(format!("line {n}\n").as_bytes()).unwrap();
        }
        drop(guard);
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text.lines().count(), 100);
        assert_eq!(text.lines().last(), Some("line 99"));
    }

    #[test]
    fn the_file_is_appended_to() {
        let path = log_path("append");
        for run in 0..2 {
            let (mut writer, guard) = open(&path).unwrap();
            writer.write_all(format!("run {run}\n").as_bytes()).unwrap();
            drop(guard);
        }
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "run 0\nrun 1\n");
    }

    #[test]
    fn a_full_queue_drops_lines_and_says_how_many() {
        let path = log_path("full");
        let (queue, lines) = mpsc::sync_channel(2);
        let dropped = Arc::new(AtomicU64::new(0));
        let mut writer = QueueWriter {
            queue,
            dropped: dropped.clone(),
        };
        // Nobody drains the queue yet: two lines fit, three are dropped.
        for n in 0..5 {
            writer.write_all(format!("line {n}\n").as_bytes()).unwrap();
        }
        assert_eq!(dropped.load(Ordering::Relaxed), 3);
        drop(writer);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let file = File::create(&path).unwrap();
        write_lines(file, lines, &dropped);
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(
            text,
            "(3 log lines dropped: the log file could not keep up)\nline 0\nline 1\n"
        );
    }
}
