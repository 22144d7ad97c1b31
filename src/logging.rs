//! Logging to a file. stdout carries msgpack-RPC, so nothing may print there.

use tracing_appender::non_blocking::WorkerGuard;
use tracing_subscriber::filter::LevelFilter;

use crate::config::Config;

/// Starts file logging; the guard flushes the log when dropped at exit.
pub fn init(config: &Config) -> Option<WorkerGuard> {
    let path = config.log_file.as_ref()?;
    let dir = path.parent()?;
    let name = path.file_name()?;
    if std::fs::create_dir_all(dir).is_err() {
        return None;
    }
    let (writer, guard) =
        tracing_appender::non_blocking(tracing_appender::rolling::never(dir, name));
    let level: LevelFilter = config.log_level.parse().unwrap_or(LevelFilter::INFO);
    tracing_subscriber::fmt()
        .with_writer(writer)
        .with_ansi(false)
        .with_max_level(level)
        .with_target(false)
        .init();
    Some(guard)
}
