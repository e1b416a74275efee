//! What the worker and a platform host say to each other over the host's
//! stdin and stdout. A platform host is a program of ours that plays a seat
//! inside the seat's sandbox: the wasm host (`arena wasm-host`) and the
//! model host (`arena model-host`). Both speak the same framing:
//!
//! - worker to host: a header line of words, `WORD N... LEN\n`, then exactly
//!   `LEN` bytes of payload (a frame, a compiled module);
//! - host to worker: one answer line per turn, `WORD REST`, where `REST` is
//!   the answer's fields and perhaps the bot's reply.
//!
//! This crate is that framing and, on it, each host's messages ([`wasm`],
//! [`model`]). It depends on nothing, so the worker, which links neither
//! wasmtime nor the ONNX runtime, and each host read the very same code.

pub mod model;
pub mod wasm;

use std::io::{BufRead, Read};

/// A worker's message as read: its word, its numbers, its payload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Message {
    pub word: String,
    pub numbers: Vec<u64>,
    pub payload: Vec<u8>,
}

/// Appends `word`, `numbers` and the payload's length as a header line, then
/// the payload.
pub fn write_message(out: &mut Vec<u8>, word: &str, numbers: &[u64], payload: &[u8]) {
    out.extend_from_slice(word.as_bytes());
    for number in numbers.iter().chain([&(payload.len() as u64)]) {
        out.push(b' ');
        out.extend_from_slice(number.to_string().as_bytes());
    }
    out.push(b'\n');
    out.extend_from_slice(payload);
}

/// Reads the next message: a header line of at most `max_header` bytes and
/// a payload of at most `max_payload`. `Ok(None)` at the end of input (the
/// game is over); `InvalidData` for anything that is not a message.
pub fn read_message(
    input: &mut impl BufRead,
    max_header: u64,
    max_payload: usize,
) -> std::io::Result<Option<Message>> {
    let mut header = Vec::new();
    if input.take(max_header).read_until(b'\n', &mut header)? == 0 {
        return Ok(None);
    }
    let header = std::str::from_utf8(&header)
        .map_err(|_| invalid("the header is not text"))?
        .strip_suffix('\n')
        .ok_or_else(|| invalid("the header is too long or cut short"))?;
    let mut words = header.split(' ');
    let word = words.next().unwrap_or_default().to_owned();
    let mut numbers = words
        .map(|w| w.parse::<u64>().map_err(|_| invalid("bad number")))
        .collect::<std::io::Result<Vec<u64>>>()?;
    let len = numbers.pop().ok_or_else(|| invalid("no payload length"))?;
    let len = usize::try_from(len)
        .ok()
        .filter(|&len| len <= max_payload)
        .ok_or_else(|| invalid("payload too long"))?;
    let mut payload = vec![0; len];
    input.read_exact(&mut payload)?;
    Ok(Some(Message {
        word,
        numbers,
        payload,
    }))
}

/// An answer line's first word and the rest after its space.
pub fn split_word(line: &[u8]) -> (&[u8], &[u8]) {
    match line.iter().position(|&b| b == b' ') {
        Some(at) => (&line[..at], &line[at + 1..]),
        None => (line, &[][..]),
    }
}

/// `text` kept on one line: line breaks become spaces.
pub fn one_line(text: &str) -> String {
    text.replace(['\n', '\r'], " ")
}

/// The error for bytes that are not a message.
pub fn invalid(why: &str) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, why.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_framed_by_length() {
        let mut bytes = Vec::new();
        write_message(&mut bytes, "turn", &[7, 0], b"a\nb");
        write_message(&mut bytes, "module", &[], b"");
        assert_eq!(&bytes[..11], b"turn 7 0 3\n");
        let mut input = std::io::Cursor::new(bytes);
        let first = read_message(&mut input, 64, 16).unwrap().unwrap();
        assert_eq!(
            first,
            Message {
                word: "turn".to_owned(),
                numbers: vec![7, 0],
                payload: b"a\nb".to_vec(),
            }
        );
        let second = read_message(&mut input, 64, 16).unwrap().unwrap();
        assert_eq!((second.word.as_str(), second.payload.len()), ("module", 0));
        assert_eq!(read_message(&mut input, 64, 16).unwrap(), None);
    }

    #[test]
    fn what_is_not_a_message_is_refused() {
        for garbage in [
            &b"turn\n"[..],
            b"turn x 1\n",
            b"turn 99\nab",
            b"turn 1",
            b"turn 20\n",
            b"turn 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1\n",
        ] {
            let read = read_message(&mut std::io::Cursor::new(garbage), 32, 16);
            assert!(read.is_err(), "{:?}", String::from_utf8_lossy(garbage));
        }
    }

    #[test]
    fn answer_lines_split_at_the_first_space() {
        assert_eq!(split_word(b"ok 1 0 x y"), (&b"ok"[..], &b"1 0 x y"[..]));
        assert_eq!(split_word(b"wall"), (&b"wall"[..], &b""[..]));
        assert_eq!(one_line("a\nb\rc"), "a b c");
    }
}
