//! Every message this program writes to a person on stderr goes through
//! [`say!`]: the command's own notes, warnings and errors (library crates
//! log through `tracing` instead, see [`crate::telemetry`]). One place
//! decides how they are written: a line at a time, and a closed stderr is
//! never a reason to fail.

use std::io::Write;

/// Writes one message line to stderr, as `eprintln!` would.
macro_rules! say {
    ($($arg:tt)*) => {
        $crate::messages::line(format_args!($($arg)*))
    };
}
pub(crate) use say;

/// Writes `message` and a newline to stderr in one go.
pub fn line(message: std::fmt::Arguments<'_>) {
    let mut text = message.to_string();
    text.push('\n');
    let _ = std::io::stderr().lock().write_all(text.as_bytes());
}
