//! The model host's messages.
//!
//! Worker to host, per turn: `turn <deadline_ms> <len>\n` and exactly
//! `len` bytes, the frame.
//! Host to worker, exactly one line per turn, in order: `ok <eval_us>
//! <overridden> <reply>` (`overridden` 1 when the head's best entry was
//! illegal and the best legal one is the reply, else 0) or `strike <kind>:
//! <reason>`; or, as the answer to the first
//! turn only, `refused <reason>` when the check refused the model (the host
//! then exits).
//! End of the host's stdin ends the game; the host exits 0.

use std::io::BufRead;

use crate::{invalid, one_line, read_message, split_word, write_message};

/// A turn as the worker sends it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TurnRequest {
    /// The per-turn deadline, in milliseconds.
    pub deadline_ms: u64,
    /// The frame line, with its newline.
    pub frame: Vec<u8>,
}

/// The longest frame accepted, in bytes.
pub const MAX_FRAME: usize = 64 << 20;
/// The longest header line, in bytes.
const MAX_HEADER: u64 = 128;

/// Appends a `turn` message.
pub fn write_turn(turn: &TurnRequest, out: &mut Vec<u8>) {
    write_message(out, "turn", &[turn.deadline_ms], &turn.frame);
}

/// Reads the next turn; `Ok(None)` at end of input (the game is over).
pub fn read_turn(input: &mut impl BufRead) -> std::io::Result<Option<TurnRequest>> {
    let Some(message) = read_message(input, MAX_HEADER, MAX_FRAME)? else {
        return Ok(None);
    };
    match (message.word.as_str(), &message.numbers[..]) {
        ("turn", &[deadline_ms]) => Ok(Some(TurnRequest {
            deadline_ms,
            frame: message.payload,
        })),
        _ => Err(invalid("unknown message")),
    }
}

/// A line from the host.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HostMessage {
    /// The model cannot play (the reason is the check's).
    Refused(String),
    /// A turn's reply line, how long adapters and evaluation took, and
    /// whether the head's best entry was illegal.
    Ok {
        eval_us: u64,
        overridden: bool,
        reply: Vec<u8>,
    },
    /// A turn that counts as a strike: its kind (`adapter`, `evaluation`,
    /// `head_shape`, `not_finite`, `late`) and reason.
    Strike { kind: String, reason: String },
}

impl HostMessage {
    /// The message as one line, with its newline.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = match self {
            HostMessage::Refused(reason) => format!("refused {}", one_line(reason)).into_bytes(),
            HostMessage::Ok {
                eval_us,
                overridden,
                reply,
            } => {
                let mut out = format!("ok {eval_us} {} ", u8::from(*overridden)).into_bytes();
                out.extend(reply.iter().filter(|&&b| b != b'\n' && b != b'\r'));
                out
            }
            HostMessage::Strike { kind, reason } => {
                format!("strike {}: {}", one_line(kind), one_line(reason)).into_bytes()
            }
        };
        out.push(b'\n');
        out
    }

    /// Parses one line (without its newline); `None` if it is not a message.
    pub fn parse(line: &[u8]) -> Option<HostMessage> {
        let (word, rest) = split_word(line);
        let text = || std::str::from_utf8(rest).ok();
        Some(match word {
            b"refused" => HostMessage::Refused(text()?.to_owned()),
            b"ok" => {
                let at = rest.iter().position(|&b| b == b' ')?;
                let eval_us = std::str::from_utf8(&rest[..at]).ok()?.parse().ok()?;
                let overridden = match rest.get(at + 1..at + 3)? {
                    b"0 " => false,
                    b"1 " => true,
                    _ => return None,
                };
                HostMessage::Ok {
                    eval_us,
                    overridden,
                    reply: rest[at + 3..].to_vec(),
                }
            }
            b"strike" => {
                let (kind, reason) = text()?.split_once(": ")?;
                HostMessage::Strike {
                    kind: kind.to_owned(),
                    reason: reason.to_owned(),
                }
            }
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
            HostMessage::Refused("unsupported operator Det\nsecond line".to_owned()),
            HostMessage::Ok {
                eval_us: 120,
                overridden: false,
                reply: br#"{"orders":"N-"}"#.to_vec(),
            },
            HostMessage::Ok {
                eval_us: 0,
                overridden: true,
                reply: Vec::new(),
            },
            HostMessage::Ok {
                eval_us: 7,
                overridden: true,
                reply: b"0 3 4 1 1".to_vec(),
            },
            HostMessage::Strike {
                kind: "late".to_owned(),
                reason: "took 9 ms: more".to_owned(),
            },
        ] {
            let encoded = message.encode();
            assert_eq!(encoded.iter().filter(|&&b| b == b'\n').count(), 1);
            let parsed = HostMessage::parse(&encoded[..encoded.len() - 1]).unwrap();
            match (&message, &parsed) {
                (HostMessage::Refused(a), HostMessage::Refused(b)) => {
                    assert_eq!(a.replace('\n', " "), *b)
                }
                _ => assert_eq!(parsed, message),
            }
        }
        assert_eq!(HostMessage::parse(b"ok x {}"), None);
        assert_eq!(HostMessage::parse(b"ok 1 2 {}"), None);
        assert_eq!(HostMessage::parse(b"ok 1 {}"), None);
        assert_eq!(HostMessage::parse(b"hello"), None);
    }

    #[test]
    fn turns_are_framed_by_length() {
        let mut bytes = Vec::new();
        let turn = TurnRequest {
            deadline_ms: 200,
            frame: b"{\"turn\":1}\n".to_vec(),
        };
        write_turn(&turn, &mut bytes);
        write_turn(&turn, &mut bytes);
        let mut input = std::io::Cursor::new(bytes);
        assert_eq!(read_turn(&mut input).unwrap(), Some(turn.clone()));
        assert_eq!(read_turn(&mut input).unwrap(), Some(turn));
        assert_eq!(read_turn(&mut input).unwrap(), None);
        for garbage in [
            &b"turn 1\n"[..],
            b"turn 1 x\n",
            b"turn 1 99\nab",
            b"move 1 2\n",
        ] {
            assert!(read_turn(&mut std::io::Cursor::new(garbage)).is_err());
        }
        let long = vec![b'9'; 4096];
        assert!(read_turn(&mut std::io::Cursor::new(long)).is_err());
    }
}
