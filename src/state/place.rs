//! Where the person last was in a file: its path, the cursor or selection
//! (0-based lines, UTF-16 characters) and the selected text, kept from the
//! debounced selection events so that an agent asking for the editor's
//! context (Codex's `ide-context`, once per prompt) is answered without a
//! call into Neovim. Kept only once such an agent has come: until then a
//! selection costs Neovim nothing for it.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::mutex::lock;

/// A position: 0-based line, UTF-16 character (a bare cursor's is its byte
/// column: nobody shows a cursor's column).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct At {
    pub line: u32,
    pub character: u32,
}

/// The person's place in one file.
#[derive(Debug, Clone, PartialEq)]
pub struct Place {
    /// Absolute, as Neovim names the buffer.
    pub path: String,
    pub start: At,
    pub end: At,
    /// `None` for a bare cursor.
    pub selected: Option<String>,
}

#[derive(Default)]
pub struct LastPlace {
    place: Mutex<Option<Place>>,
    /// An agent that asks for the place has connected.
    wanted: AtomicBool,
}

impl LastPlace {
    /// An agent that asks for the place connected: true the first time.
    pub fn want(&self) -> bool {
        !self.wanted.swap(true, Ordering::Relaxed)
    }

    /// Whether the place is kept: an agent has asked for it.
    pub fn wanted(&self) -> bool {
        self.wanted.load(Ordering::Relaxed)
    }

    pub fn set(&self, place: Place) {
        *lock(&self.place) = Some(place);
    }

    pub fn get(&self) -> Option<Place> {
        lock(&self.place).clone()
    }
}
