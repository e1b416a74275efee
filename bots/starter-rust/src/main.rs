//! Starter bot for the Generals competition ruleset, in Rust with std only.
//!
//! Layout: [`frame`] reads the runner's text (handshake and frames), [`bot`]
//! holds the strategy (the same one as the Python starter), and `main` below
//! is the loop: read a frame, choose, print exactly one line, flush.
//! End of stdin means the game is over: we return and exit with status 0.

mod bot;
mod frame;

use std::io::{self, BufWriter, Write};
use std::panic::{AssertUnwindSafe, catch_unwind};

fn main() {
    if let Err(err) = run() {
        // Broken pipes and truncated input just mean the game ended.
        if err.kind() != io::ErrorKind::BrokenPipe {
            eprintln!("starter-bot: {err}");
        }
    }
}

fn run() -> io::Result<()> {
    let mut reader = frame::Reader::new(io::stdin().lock());
    let mut out = BufWriter::new(io::stdout().lock());
    let Some(hello) = reader.handshake()? else {
        return Ok(());
    };
    let mut bot = bot::Bot::new(hello.player_id, hello.height, hello.width);
    while let Some(frame) = reader.frame(hello.height, hello.width)? {
        // A bug must not cost the game: a crash forfeits, a pass does not.
        // (The panic message still goes to stderr.)
        let action =
            catch_unwind(AssertUnwindSafe(|| bot.choose(&frame))).unwrap_or(bot::Action::Pass);
        writeln!(out, "{}", action.to_line(hello.width))?;
        out.flush()?; // the runner waits for this line: never leave it buffered
    }
    Ok(())
}
