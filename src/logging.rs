//! Logging to a file. stdout carries msgpack-RPC, so nothing may print there.
//!
//! tracing-appender writes the lines on a thread of its own through a
//! bounded queue, so a slow disk never stalls the runtime thread (lines
//! are dropped while the queue is full). The file rolls over daily and
//! only the newest few are kept; `pi-ide.log` links to the current one,
//! which is what `:PiIde log` opens.

use std::path::Path;

use tracing_appender::non_blocking::{NonBlockingBuilder, WorkerGuard};
use tracing_appender::rolling::{RollingFileAppender, Rotation};
use tracing_subscriber::filter::LevelFilter;

use crate::config::Config;

/// Lines the writer thread may fall behind by before lines are dropped.
const QUEUE_LINES: usize = 8192;

/// Daily files kept, the current one among them.
pub const KEPT_FILES: usize = 5;

/// Flushes the log when dropped at exit.
pub type LogGuard = WorkerGuard;

/// Starts file logging; the guard flushes the log when dropped at exit.
pub fn init(config: &Config) -> Option<LogGuard> {
    let path = config.log_file.as_ref()?;
    let appender = appender(path).ok()?;
    let (writer, guard) = NonBlockingBuilder::default()
        .lossy(true)
        .buffered_lines_limit(QUEUE_LINES)
        .thread_name("pi-ide-log")
        .finish(appender);
    let level: LevelFilter = config.log_level.parse().unwrap_or(LevelFilter::INFO);
    tracing_subscriber::fmt()
        .with_writer(writer)
        .with_ansi(false)
        .with_max_level(level)
        .with_target(false)
        .init();
    Some(guard)
}

/// Daily files beside `path`, named after it (`pi-ide.log` →
/// `pi-ide.2026-12-03.log`), with `path` itself a link to the current one.
fn appender(path: &Path) -> Result<RollingFileAppender, tracing_appender::rolling::InitError> {
    let directory = path.parent().unwrap_or(Path::new("."));
    RollingFileAppender::builder()
        .rotation(Rotation::DAILY)
        .filename_prefix(name(path.file_stem()))
        .filename_suffix(name(path.extension()))
        .latest_symlink(name(path.file_name()))
        .max_log_files(KEPT_FILES)
        .build(directory)
}

fn name(part: Option<&std::ffi::OsStr>) -> &str {
    part.and_then(|p| p.to_str()).unwrap_or("")
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    fn log_path(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("pi-ide-log-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir.join("nested/pi-ide.log")
    }

    #[test]
    fn lines_reach_the_dated_file_through_the_link_by_the_time_the_guard_is_dropped() {
        let path = log_path("flush");
        for run in 0..2 {
            let (mut writer, guard) = NonBlockingBuilder::default()
                .lossy(false)
                .finish(appender(&path).unwrap());
            for n in 0..100 {
                writer
                    .write_all(format!("run {run} line {n}\n").as_bytes())
                    .unwrap();
            }
            drop(guard);
        }
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text.lines().count(), 200, "appended, not replaced");
        assert_eq!(text.lines().last(), Some("run 1 line 99"));
        let link = std::fs::read_link(&path).unwrap();
        let file = link.file_name().unwrap().to_str().unwrap();
        assert!(
            file.starts_with("pi-ide.") && file.ends_with(".log") && file != "pi-ide.log",
            "{file}"
        );
    }

    #[test]
    fn only_the_newest_files_are_kept() {
        let path = log_path("kept");
        let dir = path.parent().unwrap();
        std::fs::create_dir_all(dir).unwrap();
        for day in 1..=KEPT_FILES + 3 {
            let old = dir.join(format!("pi-ide.2020-01-{day:02}.log"));
            std::fs::write(&old, "old\n").unwrap();
            let time = std::time::SystemTime::UNIX_EPOCH
                + std::time::Duration::from_secs(1_577_836_800 + 86_400 * day as u64);
            std::fs::File::options()
                .write(true)
                .open(&old)
                .unwrap()
                .set_modified(time)
                .unwrap();
        }
        let mut appender = appender(&path).unwrap();
        appender.write_all(b"now\n").unwrap();
        drop(appender);
        let logs = std::fs::read_dir(dir)
            .unwrap()
            .flatten()
            .filter(|entry| entry.file_type().is_ok_and(|t| t.is_file()))
            .count();
        assert_eq!(logs, KEPT_FILES);
    }
}
