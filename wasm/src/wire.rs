//! What the worker and the host process say to each other over the host's
//! stdin and stdout. The guest's own stdio never touches these pipes; its
//! stderr is the host's stderr, which the worker keeps as the bot's log.
//!
//! Worker to host: `module LEN\n` and the compiled module (once, first),
//! then per turn `turn BUDGET REFILL WALL_MS LEN\n` and the frame.
//! Host to worker: one line per turn, [`HostMessage`].

use std::io::{BufRead, Read};

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

/// Appends the `module` message.
pub fn write_module(artifact: &[u8], out: &mut Vec<u8>) {
    out.extend_from_slice(format!("module {}\n", artifact.len()).as_bytes());
    out.extend_from_slice(artifact);
}

/// Appends a `turn` message.
pub fn write_turn(turn: &TurnRequest, out: &mut Vec<u8>) {
    out.extend_from_slice(
        format!(
            "turn {} {} {} {}\n",
            turn.budget,
            turn.refill,
            turn.wall_ms,
            turn.frame.len()
        )
        .as_bytes(),
    );
    out.extend_from_slice(&turn.frame);
}

/// A message from the worker.
#[derive(Debug, PartialEq, Eq)]
pub enum WorkerMessage {
    Module(Vec<u8>),
    Turn(TurnRequest),
}

/// Reads the next message; `Ok(None)` at end of input (the game is over).
pub fn read_worker_message(input: &mut impl BufRead) -> std::io::Result<Option<WorkerMessage>> {
    let mut header = Vec::new();
    if input.take(256).read_until(b'\n', &mut header)? == 0 {
        return Ok(None);
    }
    let bad = |why: &str| std::io::Error::new(std::io::ErrorKind::InvalidData, why.to_owned());
    let header = std::str::from_utf8(&header)
        .map_err(|_| bad("header is not text"))?
        .trim_end();
    let words: Vec<&str> = header.split(' ').collect();
    let number = |word: &str| word.parse::<u64>().map_err(|_| bad("bad number"));
    let payload = |input: &mut dyn Read, len: u64| -> std::io::Result<Vec<u8>> {
        let len = usize::try_from(len).map_err(|_| bad("payload too long"))?;
        if len > MAX_PAYLOAD {
            return Err(bad("payload too long"));
        }
        let mut bytes = vec![0; len];
        input.read_exact(&mut bytes)?;
        Ok(bytes)
    };
    match words.as_slice() {
        ["module", len] => Ok(Some(WorkerMessage::Module(payload(input, number(len)?)?))),
        ["turn", budget, refill, wall_ms, len] => Ok(Some(WorkerMessage::Turn(TurnRequest {
            budget: number(budget)?,
            refill: number(refill)?,
            wall_ms: number(wall_ms)?,
            frame: payload(input, number(len)?)?,
        }))),
        _ => Err(bad("unknown message")),
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
                format!("error {}", message.replace(['\n', '\r'], " ")).into_bytes()
            }
        };
        out.push(b'\n');
        out
    }

    /// Parses one line (without its newline); `None` if it is not a message.
    pub fn parse(line: &[u8]) -> Option<HostMessage> {
        let (word, rest) = match line.iter().position(|&b| b == b' ') {
            Some(at) => (&line[..at], &line[at + 1..]),
            None => (line, &[][..]),
        };
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
