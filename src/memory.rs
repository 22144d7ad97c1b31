//! Handing memory back to the OS after large diffs. glibc keeps what a
//! 4 MB diff freed (tens of thousands of line strings, copies of the text)
//! in the main heap and in an arena per diffing thread, so the host stayed
//! 45–65 MiB above idle after a few of them.

#[cfg(target_env = "gnu")]
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Proposals larger than this are followed by a trim.
pub const LARGE_TEXT_BYTES: usize = 128 * 1024;

/// How long a trim waits for the reply and the request's copies to go.
const TRIM_DELAY: Duration = Duration::from_millis(500);

/// Blocks of this size and more are mapped on their own and unmapped when
/// freed. glibc's default threshold rises to the largest block freed (up to
/// 32 MiB), after which a proposal's megabyte buffers come from the heap
/// and stay there, fragmented, after they are freed.
const MMAP_THRESHOLD: i32 = 256 * 1024;

/// One malloc arena for every thread, so what the diffing threads free
/// lands where `malloc_trim` can return it, and large blocks mapped on
/// their own. Call before any thread starts.
pub fn one_arena() {
    #[cfg(target_env = "gnu")]
    // SAFETY: mallopt only changes allocator settings; no other thread
    // exists yet to allocate concurrently.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 1);
        libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD);
    }
}

/// Returns freed memory to the OS shortly, once a large diff is over. Calls
/// while a trim is pending join it: one trim, TRIM_DELAY after the first.
pub fn release_soon() {
    #[cfg(target_env = "gnu")]
    if !TRIM_PENDING.swap(true, Ordering::AcqRel) {
        crate::task::spawn(async {
            tokio::time::sleep(TRIM_DELAY).await;
            // Cleared before the trim: what is freed after it gets one of its own.
            TRIM_PENDING.store(false, Ordering::Release);
            // SAFETY: malloc_trim only hands free pages back to the OS.
            unsafe { libc::malloc_trim(0) };
        });
    }
}

/// Whether a trim is scheduled and has not started yet.
#[cfg(target_env = "gnu")]
static TRIM_PENDING: AtomicBool = AtomicBool::new(false);

#[cfg(all(test, target_env = "gnu"))]
mod tests {
    #[tokio::test(start_paused = true)]
    async fn releases_asked_for_together_share_one_pending_trim() {
        for _ in 0..100 {
            super::release_soon();
        }
        let tasks = tokio::runtime::Handle::current()
            .metrics()
            .num_alive_tasks();
        assert!(tasks <= 1, "{tasks} trims pending");
    }
}
