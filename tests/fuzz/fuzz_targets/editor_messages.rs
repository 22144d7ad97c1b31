//! What Neovim's side of the RPC channel sends: msgpack-RPC messages as
//! nvim-rs decodes them, each notification parsed into an editor event as
//! the host's handler does. Nothing may panic.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    pi_ide::fuzzing::editor_messages(data);
});
