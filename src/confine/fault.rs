//! The steps of a write, named, where a test build stops the host so a
//! test can kill it there. With the feature `fault-injection` in a debug
//! build, `PI_IDE_FAULT_STOP=<step>` makes the host stop itself (SIGSTOP)
//! when a write reaches that step; in any other build a step is nothing.
//! A release build never has it, whatever its features: the test harness
//! turns the feature on for the benches too, which build with the
//! release profile.

/// The host's environment variable naming the step to stop at.
pub const STOP_AT: &str = "PI_IDE_FAULT_STOP";

#[cfg(all(feature = "fault-injection", debug_assertions))]
pub(super) fn step(name: &str) {
    use std::sync::OnceLock;
    static WANTED: OnceLock<Option<String>> = OnceLock::new();
    let wanted = WANTED.get_or_init(|| std::env::var(STOP_AT).ok());
    if wanted.as_deref() == Some(name) {
        tracing::warn!("fault injection: stopped at {name}");
        // SAFETY: raising a signal at our own process.
        unsafe { libc::raise(libc::SIGSTOP) };
    }
}

#[cfg(not(all(feature = "fault-injection", debug_assertions)))]
#[inline(always)]
pub(super) fn step(_name: &str) {}
