//! The host's mutexes guard plain maps and are never held across an await;
//! a panic in one task must not wedge every other, so poisoning is ignored.

use std::sync::{Mutex, MutexGuard};

pub fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}
