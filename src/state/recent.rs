//! The files the person worked in lately, newest first, with when each was
//! last the current one: what the IDE companion protocol calls open files.
//! Fed by the debounced selection events, so it costs nothing per keystroke.

use std::collections::VecDeque;
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

use crate::mutex::lock;

/// Most files remembered (Gemini CLI keeps ten).
pub const MAX_FILES: usize = 10;

/// One remembered file.
#[derive(Debug, Clone, PartialEq)]
pub struct Recent {
    pub path: String,
    /// Milliseconds since the Unix epoch when it was last current.
    pub timestamp: u64,
}

#[derive(Default)]
pub struct RecentFiles {
    files: Mutex<VecDeque<Recent>>,
}

impl RecentFiles {
    /// `path` is the current file now; whether it was not already.
    pub fn touch(&self, path: &str) -> bool {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |elapsed| elapsed.as_millis() as u64);
        let mut files = lock(&self.files);
        let was_current = files.front().is_some_and(|file| file.path == path);
        files.retain(|file| file.path != path);
        files.push_front(Recent {
            path: path.to_owned(),
            timestamp: now,
        });
        files.truncate(MAX_FILES);
        !was_current
    }

    /// Newest first.
    pub fn list(&self) -> Vec<Recent> {
        lock(&self.files).iter().cloned().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn newest_first_each_once_at_most_ten() {
        let recent = RecentFiles::default();
        assert!(recent.touch("/a"));
        assert!(!recent.touch("/a"), "still the current one");
        for i in 0..12 {
            recent.touch(&format!("/f{i}"));
        }
        assert!(recent.touch("/f5"));
        let paths: Vec<String> = recent.list().into_iter().map(|f| f.path).collect();
        assert_eq!(paths.len(), MAX_FILES);
        assert_eq!(paths[0], "/f5");
        assert_eq!(paths[1], "/f11");
        assert_eq!(paths.iter().filter(|p| *p == "/f5").count(), 1);
        assert!(!paths.contains(&"/a".to_string()), "the oldest went");
    }
}
