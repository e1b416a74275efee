//! The wasm host's messages. The guest's own stdio never touches these
//! pipes; its stderr is the host's stderr, which the worker keeps as the
//! bot's log.
//!
//! Worker to host: `module LEN\n` and the compiled module (once, first),
//! then per turn `turn BUDGET REFILL WALL_MS LEN\n` and the frame.
//! Host to worker: one line per turn, [`HostMessage`].

use std::io::BufRead;

use crate::{invalid, read_message, split_word, write_message};

/// A turn as the worker asks for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TurnRequest {
    pub budget: u64,
    pub refill: u64,
    pub wall_ms: u64,
    pub frame: Vec<u8>,
}

/// The most bytes one message from the worker may carry.
const MAX_PAYLOAD: usize = 256 << 20;
/// The longest header line, in bytes.
const MAX_HEADER: u64 = 256;

/// Appends the `module` message.
pub fn write_module(artifact: &[u8], out: &mut Vec<u8>) {
    write_message(out, "module", &[], artifact);
}

/// Appends a `turn` message.
pub fn write_turn(turn: &TurnRequest, out: &mut Vec<u8>) {
    write_message(
        out,
        "turn",
        &[turn.budget, turn.refill, turn.wall_ms],
        &turn.frame,
    );
}

/// A message from the worker.
#[derive(Debug, PartialEq, Eq)]
pub enum WorkerMessage {
    Module(Vec<u8>),
    Turn(TurnRequest),
}

/// Reads the next message; `Ok(None)` at end of input (the game is over).
pub fn read_worker_message(input: &mut impl BufRead) -> std::io::Result<Option<WorkerMessage>> {
    let Some(message) = read_message(input, MAX_HEADER, MAX_PAYLOAD)? else {
        return Ok(None);
    };
    match (message.word.as_str(), &message.numbers[..]) {
        ("module", []) => Ok(Some(WorkerMessage::Module(message.payload))),
        ("turn", &[budget, refill, wall_ms]) => Ok(Some(WorkerMessage::Turn(TurnRequest {
            budget,
            refill,
            wall_ms,
            frame: message.payload,
        }))),
        _ => Err(invalid("unknown message")),
    }
}

/// How the host says a turn ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HostMessage {
    Reply {
        fuel: u64,
        stray: u32,
        line: Vec<u8>,
    },
    Overlong {
        fuel: u64,
        stray: u32,
    },
    NoReply {
        fuel: u64,
        stray: u32,
    },
    Exhausted {
        fuel: u64,
    },
    WallBackstop,
    /// The guest trapped; the message is in the log.
    Trap,
    Exit {
        code: i32,
    },
    /// The host itself failed (not the guest's doing).
    Error {
        message: String,
    },
}

impl HostMessage {
    /// The message as one line, with its newline.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = match self {
            HostMessage::Reply { fuel, stray, line } => {
                let mut out = format!("reply {fuel} {stray} ").into_bytes();
                out.extend_from_slice(line);
                out
            }
            HostMessage::Overlong { fuel, stray } => {
                format!("overlong {fuel} {stray}").into_bytes()
            }
            HostMessage::NoReply { fuel, stray } => format!("noreply {fuel} {stray}").into_bytes(),
            HostMessage::Exhausted { fuel } => format!("exhausted {fuel}").into_bytes(),
            HostMessage::WallBackstop => b"wall".to_vec(),
            HostMessage::Trap => b"trap".to_vec(),
            HostMessage::Exit { code } => format!("exit {code}").into_bytes(),
            HostMessage::Error { message } => {
                format!("error {}", crate::one_line(message)).into_bytes()
            }
        };
        out.push(b'\n');
        out
    }

    /// Parses one line (without its newline); `None` if it is not a message.
    pub fn parse(line: &[u8]) -> Option<HostMessage> {
        let (word, rest) = split_word(line);
        let text = || std::str::from_utf8(rest).ok();
        let numbers = || -> Option<(u64, u32)> {
            let (fuel, stray) = text()?.split_once(' ')?;
            Some((fuel.parse().ok()?, stray.parse().ok()?))
        };
        Some(match word {
            b"reply" => {
                let mut parts = rest.splitn(3, |&b| b == b' ');
                let fuel = std::str::from_utf8(parts.next()?).ok()?.parse().ok()?;
                let stray = std::str::from_utf8(parts.next()?).ok()?.parse().ok()?;
                let line = parts.next().unwrap_or_default().to_vec();
                HostMessage::Reply { fuel, stray, line }
            }
            b"overlong" => {
                let (fuel, stray) = numbers()?;
                HostMessage::Overlong { fuel, stray }
            }
            b"noreply" => {
                let (fuel, stray) = numbers()?;
                HostMessage::NoReply { fuel, stray }
            }
            b"exhausted" => HostMessage::Exhausted {
                fuel: text()?.parse().ok()?,
            },
            b"wall" if rest.is_empty() => HostMessage::WallBackstop,
            b"trap" if rest.is_empty() => HostMessage::Trap,
            b"exit" => HostMessage::Exit {
                code: text()?.parse().ok()?,
            },
            b"error" => HostMessage::Error {
                message: text()?.to_owned(),
            },
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_survive_a_round_trip() {
        for message in [
            HostMessage::Reply {
                fuel: 12,
                stray: 1,
                line: b"{\"orders\": [], \"spawn\": true}".to_vec(),
            },
            HostMessage::Reply {
                fuel: 0,
                stray: 0,
                line: Vec::new(),
            },
            HostMessage::Overlong { fuel: 3, stray: 0 },
            HostMessage::NoReply { fuel: 9, stray: 2 },
            HostMessage::Exhausted { fuel: 5_000_000 },
            HostMessage::WallBackstop,
            HostMessage::Trap,
            HostMessage::Exit { code: -3 },
            HostMessage::Error {
                message: "bad artifact".to_owned(),
            },
        ] {
            let encoded = message.encode();
            assert_eq!(encoded.last(), Some(&b'\n'));
            let parsed = HostMessage::parse(&encoded[..encoded.len() - 1]);
            assert_eq!(parsed, Some(message));
        }
        assert_eq!(HostMessage::parse(b"reply x 0 {}"), None);
        assert_eq!(HostMessage::parse(b"hello"), None);
    }

    #[test]
    fn worker_messages_are_framed_by_length() {
        let mut bytes = Vec::new();
        write_module(b"\0asm\n\n", &mut bytes);
        let turn = TurnRequest {
            budget: 10,
            refill: 5,
            wall_ms: 2000,
            frame: b"{\"turn\": 1}\n".to_vec(),
        };
        write_turn(&turn, &mut bytes);
        let mut input = std::io::Cursor::new(bytes);
        assert_eq!(
            read_worker_message(&mut input).unwrap(),
            Some(WorkerMessage::Module(b"\0asm\n\n".to_vec()))
        );
        assert_eq!(
            read_worker_message(&mut input).unwrap(),
            Some(WorkerMessage::Turn(turn))
        );
        assert_eq!(read_worker_message(&mut input).unwrap(), None);
        let mut garbage = std::io::Cursor::new(b"launch 1\n".to_vec());
        assert!(read_worker_message(&mut garbage).is_err());
    }
}
