//! The host process: `arena model-host`, run inside the seat's sandbox
//! with the bot's built directory as its working directory.
//!
//! Linear: check and load the model, say `ready` (or `refused` and stop),
//! then answer every turn in order until stdin closes. Strikes are logged
//! to the host's stderr, which the worker keeps as the bot's log.

use std::io::{BufRead, Write};
use std::path::Path;
use std::time::Duration;

use arena_engine::registry::ModelLimits;
use arena_engine::registry::model::ModelInterface;

use crate::policy::Policy;
use crate::wire::{HostMessage, read_turn};

/// Serves the model in `dir` over `input`/`output`, notes into `log`.
pub fn serve(
    dir: &Path,
    interface: &'static ModelInterface,
    limits: &ModelLimits,
    input: &mut impl BufRead,
    output: &mut impl Write,
    log: &mut impl Write,
) -> std::io::Result<()> {
    let say = |message: HostMessage, output: &mut dyn Write| -> std::io::Result<()> {
        output.write_all(&message.encode())?;
        output.flush()
    };
    let policy = match Policy::load(dir, interface, limits) {
        Ok(policy) => policy,
        Err(refusal) => {
            // A log write that fails must not hide the refusal itself.
            let _ = writeln!(log, "[arena: model refused: {refusal}]");
            return say(HostMessage::Refused(refusal.to_string()), output);
        }
    };
    say(HostMessage::Ready(policy.report().clone()), output)?;
    while let Some(turn) = read_turn(input)? {
        let deadline = Duration::from_millis(turn.deadline_ms);
        let message = match policy.answer(&turn.frame, deadline) {
            Ok(answer) => HostMessage::Ok {
                eval_us: answer.eval_us,
                reply: answer.reply,
            },
            Err(strike) => {
                let _ = writeln!(log, "[arena: strike: {strike}]");
                let text = strike.to_string();
                let reason = text
                    .split_once(": ")
                    .map_or(text.as_str(), |(_, r)| r)
                    .to_owned();
                HostMessage::Strike {
                    kind: strike.kind().to_owned(),
                    reason,
                }
            }
        };
        say(message, output)?;
    }
    Ok(())
}
