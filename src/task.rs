//! Spawning through one boxed future type per output type: tokio compiles
//! its task machinery (cell, harness, join handle) once per future type, and
//! the host spawns over a hundred kinds of future, most with output `()`.
//! One allocation more per task buys a much smaller, faster-to-build binary.

use std::future::Future;
use std::pin::Pin;

use tokio::task::JoinHandle;

type Boxed<T> = Pin<Box<dyn Future<Output = T> + Send>>;
type BoxedWork<T> = Box<dyn FnOnce() -> T + Send>;

/// `tokio::spawn`, with the future boxed.
pub fn spawn<T: Send + 'static>(future: impl Future<Output = T> + Send + 'static) -> JoinHandle<T> {
    let future: Boxed<T> = Box::pin(future);
    tokio::spawn(future)
}

/// `tokio::task::spawn_blocking`, with the closure boxed.
pub fn spawn_blocking<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> JoinHandle<T> {
    let work: BoxedWork<T> = Box::new(work);
    tokio::task::spawn_blocking(work)
}
