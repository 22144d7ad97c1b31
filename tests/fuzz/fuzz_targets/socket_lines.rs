//! The context/review socket: bytes cut into reads at fuzzed places →
//! lines with a cap → messages. Nothing may panic, no line over the cap
//! gets through, the framing never holds more than one line, and a review
//! request is accepted only with a non-empty list of paths.

#![no_main]

use libfuzzer_sys::fuzz_target;
use pi_ide::fuzzing::{Incoming, socket_lines};

fuzz_target!(|data: &[u8]| {
    // The first bytes choose the read sizes; the cap is small so that it
    // is met often.
    let (cuts, bytes) = data.split_at(data.len().min(4));
    for message in socket_lines(bytes, cuts, 256) {
        if let Incoming::Review(Ok(files)) = message {
            assert!(!files.is_empty(), "a review of no files");
        }
    }
});
