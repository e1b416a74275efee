//! What every test of the `arena` binary needs.

use std::process::{Child, Command};

pub fn arena() -> Command {
    Command::new(env!("CARGO_BIN_EXE_arena"))
}

/// Kills and reaps a child process on drop, so a failing test leaves nothing running.
// Not every test binary that shares this module starts a long-lived child.
#[allow(dead_code)]
pub struct Reaped(pub Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}
