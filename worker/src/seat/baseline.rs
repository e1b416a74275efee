//! An in-engine baseline seat: the game computes its reply from the seat's
//! own view, and the reply goes through the same parser and validator as a
//! bot's line.

use std::time::Instant;

use super::{Answer, Offer, SeatRuntime};
use crate::fd::Interest;
use crate::runner::RunnerError;

/// A seat played by the game's baseline `name`.
pub struct BaselineSeat {
    name: String,
    reply: Option<Vec<u8>>,
}

impl BaselineSeat {
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            reply: None,
        }
    }
}

impl SeatRuntime for BaselineSeat {
    fn offer(&mut self, offer: Offer<'_>) -> Result<(), RunnerError> {
        let mut line = Vec::new();
        if !offer
            .game
            .write_baseline_reply(&self.name, offer.seat, &mut line)
        {
            return Err(RunnerError::UnknownBaseline {
                seat: offer.seat,
                name: self.name.clone(),
            });
        }
        // The reply is a line like a bot's: the parser sees it without its newline.
        while line.last().is_some_and(|b| *b == b'\n') {
            line.pop();
        }
        self.reply = Some(line);
        Ok(())
    }

    fn poll(&mut self) -> Result<Option<Answer>, RunnerError> {
        Ok(self.reply.take().map(Answer::Reply))
    }

    fn deadline(&self) -> Option<Instant> {
        // Answered at once: the referee never needs to sleep for it.
        self.reply.as_ref().map(|_| Instant::now())
    }

    fn wait_on(&self, _interests: &mut Vec<Interest>) {}

    fn take_stray_lines(&mut self) -> u32 {
        0
    }

    fn close_input(&mut self) {}

    fn stop(&mut self, _grace_until: Instant) {}

    fn log(&mut self) -> Vec<u8> {
        Vec::new()
    }

    fn latencies(&self) -> &[u64] {
        &[]
    }
}
