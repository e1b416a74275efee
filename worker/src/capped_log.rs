//! A per-bot stderr log that keeps the most recent bytes within a fixed cap.
//!
//! The end of a log is what a participant needs (the traceback before a
//! crash), so older bytes are dropped first and counted.

/// The last `cap` bytes written, plus how many were dropped before them.
#[derive(Debug, Clone)]
pub struct CappedLog {
    /// Ring storage; once full, `start` marks the oldest byte.
    buf: Vec<u8>,
    start: usize,
    cap: usize,
    dropped: u64,
}

impl CappedLog {
    pub fn new(cap: usize) -> Self {
        Self {
            buf: Vec::new(),
            start: 0,
            cap,
            dropped: 0,
        }
    }

    pub fn write(&mut self, mut bytes: &[u8]) {
        if self.cap == 0 {
            self.dropped += bytes.len() as u64;
            return;
        }
        if bytes.len() > self.cap {
            let skip = bytes.len() - self.cap;
            self.dropped += skip as u64;
            bytes = &bytes[skip..];
        }
        for &b in bytes {
            if self.buf.len() < self.cap {
                self.buf.push(b);
            } else {
                self.buf[self.start] = b;
                self.start = (self.start + 1) % self.cap;
                self.dropped += 1;
            }
        }
    }

    /// Bytes dropped because the log was full.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    /// The kept bytes, oldest first, preceded by a note when some were dropped.
    pub fn contents(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.buf.len() + 64);
        if self.dropped > 0 {
            out.extend_from_slice(
                format!(
                    "[arena: {} earlier bytes of stderr dropped]\n",
                    self.dropped
                )
                .as_bytes(),
            );
        }
        out.extend_from_slice(&self.buf[self.start..]);
        out.extend_from_slice(&self.buf[..self.start]);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_everything_under_the_cap() {
        let mut log = CappedLog::new(10);
        log.write(b"abc");
        log.write(b"def");
        assert_eq!(log.contents(), b"abcdef");
        assert_eq!(log.dropped(), 0);
    }

    #[test]
    fn keeps_the_newest_bytes_over_the_cap() {
        let mut log = CappedLog::new(4);
        log.write(b"abc");
        log.write(b"defgh");
        assert_eq!(log.dropped(), 4);
        assert!(log.contents().ends_with(b"efgh"));
        log.write(&[b'z'; 100]);
        assert!(log.contents().ends_with(b"zzzz"));
        assert_eq!(log.dropped(), 104);
    }
}
