//! Handing memory back to the OS after large diffs. glibc keeps what a
//! 4 MB diff freed (tens of thousands of line strings, copies of the text)
//! in the main heap and in an arena per diffing thread, so the host stayed
//! 45–65 MiB above idle after a few of them.

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

/// Returns freed memory to the OS shortly, once a large diff is over.
pub fn release_soon() {
    #[cfg(target_env = "gnu")]
    crate::task::spawn(async {
        tokio::time::sleep(TRIM_DELAY).await;
        // SAFETY: malloc_trim only hands free pages back to the OS.
        unsafe { libc::malloc_trim(0) };
    });
}
