//! Reading what the runner sends: one handshake line, then one frame per turn.
//!
//! ```text
//! <player_id> <H> <W>                                  handshake, once
//! <t> <my_land> <my_army> <opp_land> <opp_army>        frame header
//! H lines of W cell types                              0 fog, 1 plain, 2 mountain,
//!                                                      3 castle, 4 general, 5 structure in fog
//! H lines of W owners                                  0 neutral/unknown, 1 me, 2 opponent
//! H lines of W armies                                  0 where we cannot see
//! ```

use std::io::{self, BufRead};

// Cell types.
pub const FOG: u8 = 0;
pub const PLAIN: u8 = 1;
pub const MOUNTAIN: u8 = 2;
pub const CASTLE: u8 = 3;
pub const GENERAL: u8 = 4;
pub const FOG_STRUCTURE: u8 = 5;

// Owners, relative to us.
pub const NEUTRAL: u8 = 0;
pub const ME: u8 = 1;
pub const ENEMY: u8 = 2;

pub struct Handshake {
    pub player_id: u32,
    pub height: usize,
    pub width: usize,
}

/// One turn's view. Grids are flat, indexed by `row * width + col`.
pub struct Frame {
    pub turn: u32,
    pub types: Vec<u8>,
    pub owner: Vec<u8>,
    pub army: Vec<i64>,
}

/// Line-by-line reader; `Ok(None)` means end of input, i.e. the game is over.
pub struct Reader<R> {
    input: R,
    line: String,
}

impl<R: BufRead> Reader<R> {
    pub fn new(input: R) -> Self {
        Reader {
            input,
            line: String::new(),
        }
    }

    /// Reads one line and appends its integers to `out`.
    fn ints(&mut self, out: &mut Vec<i64>) -> io::Result<Option<()>> {
        self.line.clear();
        if self.input.read_line(&mut self.line)? == 0 {
            return Ok(None);
        }
        for field in self.line.split_ascii_whitespace() {
            let value = field
                .parse()
                .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "not an integer"))?;
            out.push(value);
        }
        Ok(Some(()))
    }

    pub fn handshake(&mut self) -> io::Result<Option<Handshake>> {
        let mut v = Vec::new();
        if self.ints(&mut v)?.is_none() {
            return Ok(None);
        }
        match v[..] {
            [p, h, w] => Ok(Some(Handshake {
                player_id: p as u32,
                height: h as usize,
                width: w as usize,
            })),
            _ => Err(io::Error::new(io::ErrorKind::InvalidData, "bad handshake")),
        }
    }

    pub fn frame(&mut self, height: usize, width: usize) -> io::Result<Option<Frame>> {
        let mut header = Vec::new();
        if self.ints(&mut header)?.is_none() {
            return Ok(None);
        }
        let mut grid = Vec::with_capacity(3 * height * width);
        for _ in 0..3 * height {
            if self.ints(&mut grid)?.is_none() {
                return Ok(None);
            }
        }
        let n = height * width;
        if header.len() != 5 || grid.len() != 3 * n {
            return Err(io::Error::new(io::ErrorKind::InvalidData, "bad frame"));
        }
        Ok(Some(Frame {
            turn: header[0] as u32,
            types: grid[..n].iter().map(|&v| v as u8).collect(),
            owner: grid[n..2 * n].iter().map(|&v| v as u8).collect(),
            army: grid[2 * n..].to_vec(),
        }))
    }
}
