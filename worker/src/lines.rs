//! Splits a bot's stdout into reply lines, with a hard cap on line length.
//!
//! The splitter owns a fixed-size buffer: a line longer than the cap is
//! reported once as [`Line::TooLong`] and the rest of it is discarded as it
//! arrives, so a bot that never writes a newline costs no memory.

/// One complete line from a bot.
#[derive(Debug, PartialEq, Eq)]
pub enum Line<'a> {
    /// A line within the cap, without its `\n`.
    Complete(&'a [u8]),
    /// A line that went over the cap; its content is gone.
    TooLong,
}

/// Incremental line splitter with a length cap.
#[derive(Debug)]
pub struct LineSplitter {
    /// Bytes of the line being assembled; never longer than `cap`.
    partial: Vec<u8>,
    /// The longest line accepted, excluding its newline.
    cap: usize,
    /// Set once the current line went over the cap: bytes are dropped until the next newline.
    discarding: bool,
}

impl LineSplitter {
    pub fn new(cap: usize) -> Self {
        Self {
            partial: Vec::with_capacity(cap.min(4096)),
            cap,
            discarding: false,
        }
    }

    /// Feeds bytes read from the bot and calls `on_line` for each line they
    /// complete. Bytes after the last newline wait for the next call.
    pub fn feed(&mut self, mut bytes: &[u8], mut on_line: impl FnMut(Line<'_>)) {
        while !bytes.is_empty() {
            let newline = bytes.iter().position(|b| *b == b'\n');
            let chunk = &bytes[..newline.unwrap_or(bytes.len())];
            if !self.discarding {
                if self.partial.len() + chunk.len() > self.cap {
                    self.partial.clear();
                    self.discarding = true;
                } else {
                    self.partial.extend_from_slice(chunk);
                }
            }
            let Some(at) = newline else { return };
            if self.discarding {
                on_line(Line::TooLong);
            } else {
                on_line(Line::Complete(&self.partial));
            }
            self.partial.clear();
            self.discarding = false;
            bytes = &bytes[at + 1..];
        }
    }

    /// Whether an unfinished line is waiting for its newline.
    pub fn has_partial(&self) -> bool {
        self.discarding || !self.partial.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn lines(splitter: &mut LineSplitter, bytes: &[u8]) -> Vec<Option<Vec<u8>>> {
        let mut out = Vec::new();
        splitter.feed(bytes, |line| {
            out.push(match line {
                Line::Complete(l) => Some(l.to_vec()),
                Line::TooLong => None,
            })
        });
        out
    }

    #[test]
    fn joins_lines_across_reads() {
        let mut s = LineSplitter::new(16);
        assert!(lines(&mut s, b"1 2").is_empty());
        assert!(s.has_partial());
        assert_eq!(
            lines(&mut s, b" 3\n4\n\n5"),
            vec![Some(b"1 2 3".to_vec()), Some(b"4".to_vec()), Some(vec![])]
        );
        assert_eq!(lines(&mut s, b"\n"), vec![Some(b"5".to_vec())]);
    }

    #[test]
    fn an_overlong_line_is_one_fault_and_its_tail_is_dropped() {
        let mut s = LineSplitter::new(4);
        assert!(lines(&mut s, b"12345").is_empty());
        assert!(lines(&mut s, &[b'x'; 10_000]).is_empty());
        assert_eq!(lines(&mut s, b"xx\nok\n"), vec![None, Some(b"ok".to_vec())]);
        assert!(s.partial.capacity() <= 4096);
    }

    #[test]
    fn a_line_exactly_at_the_cap_is_accepted() {
        let mut s = LineSplitter::new(4);
        assert_eq!(lines(&mut s, b"1234\n"), vec![Some(b"1234".to_vec())]);
    }

    proptest! {
        #[test]
        fn chunking_never_changes_the_lines(data in proptest::collection::vec(prop_oneof![Just(b'\n'), any::<u8>()], 0..300), cut in 0usize..300) {
            let cut = cut.min(data.len());
            let mut whole = LineSplitter::new(8);
            let mut split = LineSplitter::new(8);
            let a = lines(&mut whole, &data);
            let mut b = lines(&mut split, &data[..cut]);
            b.extend(lines(&mut split, &data[cut..]));
            prop_assert_eq!(a, b);
        }
    }
}
