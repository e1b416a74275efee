//! The map-file format, after the 2011 one, and the checks every board
//! passes (a file's, the generator's, a test's).
//!
//! ```text
//! rows 6
//! cols 8
//! players 2
//! shift 3 4
//! m A.......
//! m *..%....
//! ...
//! ```
//!
//! `.` land, `%` water, `*` food, `0`–`7` a hill of that seat, `a`–`h` an
//! ant of seat 0–7, `A`–`H` an ant standing on its own seat's hill. The
//! `shift DR DC` line (ours; 2011 files have none) is the translation that
//! takes each seat's layout to the next seat's. It also fixes the listing
//! order of hills: seat 0's hills are listed row-major, and seat `s`'s hill
//! `k` is seat 0's hill `k` moved by `s × shift`, which every file must
//! satisfy. Blank lines and lines starting with `#` are ignored.

use super::geometry::Torus;
use super::params::{MAX_SEATS, MAX_SIDE};

/// A board before play: the file's content, checked by [`Map::check`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Map {
    /// The board's size.
    pub torus: Torus,
    /// Colonies the map is for.
    pub players: usize,
    /// Seat `s`'s layout is seat 0's moved by `s × shift` (residues).
    pub shift: (usize, usize),
    /// Per square.
    pub water: Vec<bool>,
    /// Squares holding food, increasing.
    pub food: Vec<usize>,
    /// `(square, owner)` in listing order: seat by seat, hill `k` of each
    /// seat the image of seat 0's hill `k`.
    pub hills: Vec<(usize, usize)>,
    /// `(square, owner)`, increasing by square.
    pub ants: Vec<(usize, usize)>,
}

/// Why a map file or a board was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MapError {
    #[error("line {line}: {problem}")]
    Line { line: usize, problem: String },
    #[error("missing `{0}` line")]
    Missing(&'static str),
    #[error("{got} `m` lines for {rows} rows")]
    RowCount { got: usize, rows: usize },
    #[error("rows and cols must be 1..={MAX_SIDE}")]
    Size,
    #[error("players must be 2..={MAX_SEATS}")]
    Players,
    #[error("seat {seat} has {got} hills, seat 0 has {expected}")]
    HillCount {
        seat: usize,
        got: usize,
        expected: usize,
    },
    #[error("seat {seat} has no hill where seat 0's hill {hill} moved by {seat} × shift lands")]
    HillShift { seat: usize, hill: usize },
    #[error("square ({row}, {col}): {problem}")]
    Square {
        row: usize,
        col: usize,
        problem: &'static str,
    },
    #[error("the board's lists do not match its size or seats")]
    Shape,
}

impl Map {
    /// Parses a map file: the lines, then the size, seats and shift they
    /// give, then the squares, then the hills' order and [`Map::check`].
    pub fn parse(text: &str) -> Result<Map, MapError> {
        let lines = Lines::read(text)?;
        let (torus, seats, shift) = lines.shape()?;
        if lines.squares.len() != torus.rows {
            return Err(MapError::RowCount {
                got: lines.squares.len(),
                rows: torus.rows,
            });
        }
        let squares = Squares::read(torus, seats, &lines.squares)?;
        let hills = order_hills(torus, seats, shift, &squares.hills)?;
        let map = Map {
            torus,
            players: seats,
            shift,
            water: squares.water,
            food: squares.food,
            hills,
            ants: squares.ants,
        };
        map.check()?;
        Ok(map)
    }

    /// Seat `seat`'s image of `square`: moved by `seat × shift`.
    pub fn image(&self, square: usize, seat: usize) -> usize {
        image(self.torus, self.shift, square, seat)
    }

    /// Every rule the engine relies on: sizes, seats, one thing a square,
    /// nothing on water, every seat as many hills as seat 0, each the image
    /// of seat 0's.
    pub fn check(&self) -> Result<(), MapError> {
        let t = self.torus;
        if !(1..=MAX_SIDE).contains(&t.rows) || !(1..=MAX_SIDE).contains(&t.cols) {
            return Err(MapError::Size);
        }
        if !(2..=MAX_SEATS).contains(&self.players) {
            return Err(MapError::Players);
        }
        if self.water.len() != t.len() || self.shift.0 >= t.rows || self.shift.1 >= t.cols {
            return Err(MapError::Shape);
        }
        let at = |sq: usize, problem| {
            let (row, col) = t.row_col(sq);
            MapError::Square { row, col, problem }
        };
        let mut used = vec![0u8; t.len()];
        for &sq in &self.food {
            if sq >= t.len() {
                return Err(MapError::Shape);
            }
            used[sq] |= 1;
        }
        for &(sq, owner) in &self.hills {
            if sq >= t.len() || owner >= self.players {
                return Err(MapError::Shape);
            }
            if used[sq] != 0 {
                return Err(at(sq, "holds two things"));
            }
            used[sq] |= 2;
        }
        for &(sq, owner) in &self.ants {
            if sq >= t.len() || owner >= self.players {
                return Err(MapError::Shape);
            }
            if used[sq] & 5 != 0 {
                return Err(at(sq, "holds two things"));
            }
            if used[sq] & 2 != 0 && !self.hills.contains(&(sq, owner)) {
                return Err(at(sq, "an ant stands on an enemy hill"));
            }
            used[sq] |= 4;
        }
        for (sq, &w) in self.water.iter().enumerate() {
            if w && used[sq] != 0 {
                return Err(at(sq, "is water and holds something"));
            }
        }
        let expected = order_hills(t, self.players, self.shift, &self.hills)?;
        if expected != self.hills {
            return Err(MapError::Shape);
        }
        Ok(())
    }

    /// The map file of this board (hills with an ant on them as `A`–`H`).
    pub fn to_text(&self) -> String {
        let t = self.torus;
        let mut grid: Vec<char> = self
            .water
            .iter()
            .map(|&w| if w { '%' } else { '.' })
            .collect();
        for &sq in &self.food {
            grid[sq] = '*';
        }
        for &(sq, owner) in &self.hills {
            grid[sq] = char::from(b'0' + owner as u8);
        }
        for &(sq, owner) in &self.ants {
            let on_hill = self.hills.contains(&(sq, owner));
            grid[sq] = char::from(if on_hill { b'A' } else { b'a' } + owner as u8);
        }
        let mut text = format!(
            "rows {}\ncols {}\nplayers {}\nshift {} {}\n",
            t.rows, t.cols, self.players, self.shift.0, self.shift.1
        );
        for row in grid.chunks(t.cols) {
            text.push_str("m ");
            text.extend(row.iter());
            text.push('\n');
        }
        text
    }
}

/// A map file's lines, each read on its own: the numbers of the header
/// lines, not yet checked, and the `m` lines with their line numbers.
struct Lines<'a> {
    rows: Option<i64>,
    cols: Option<i64>,
    /// The `players` line: the seats the map is for.
    seats: Option<i64>,
    shift: Option<(i64, i64)>,
    squares: Vec<(usize, &'a str)>,
}

impl<'a> Lines<'a> {
    /// Reads every line; fails on the first that is not well formed.
    fn read(text: &'a str) -> Result<Lines<'a>, MapError> {
        let mut lines = Lines {
            rows: None,
            cols: None,
            seats: None,
            shift: None,
            squares: Vec::new(),
        };
        for (i, raw) in text.lines().enumerate() {
            let line_no = i + 1;
            let line = raw.trim_end();
            if line.trim().is_empty() || line.starts_with('#') {
                continue;
            }
            let bad = |problem: String| MapError::Line {
                line: line_no,
                problem,
            };
            let (key, rest) = line.split_once(' ').unwrap_or((line, ""));
            let number = |s: &str| {
                s.trim()
                    .parse::<i64>()
                    .map_err(|_| bad(format!("{s:?} is not an integer")))
            };
            match key {
                "rows" => lines.rows = Some(number(rest)?),
                "cols" => lines.cols = Some(number(rest)?),
                "players" => lines.seats = Some(number(rest)?),
                "shift" => {
                    let mut parts = rest.split_whitespace();
                    let (Some(dr), Some(dc), None) = (parts.next(), parts.next(), parts.next())
                    else {
                        return Err(bad("shift takes two integers".to_owned()));
                    };
                    lines.shift = Some((number(dr)?, number(dc)?));
                }
                "m" => lines.squares.push((line_no, rest)),
                other => return Err(bad(format!("unknown key {other:?}"))),
            }
        }
        Ok(lines)
    }

    /// The board's size, seats and shift (as residues), each present and
    /// in range.
    fn shape(&self) -> Result<(Torus, usize, (usize, usize)), MapError> {
        let side = |v: Option<i64>, what| {
            let v = v.ok_or(MapError::Missing(what))?;
            usize::try_from(v)
                .ok()
                .filter(|v| (1..=MAX_SIDE).contains(v))
                .ok_or(MapError::Size)
        };
        let torus = Torus {
            rows: side(self.rows, "rows")?,
            cols: side(self.cols, "cols")?,
        };
        let seats = usize::try_from(self.seats.ok_or(MapError::Missing("players"))?)
            .ok()
            .filter(|p| (2..=MAX_SEATS).contains(p))
            .ok_or(MapError::Players)?;
        let (dr, dc) = self.shift.ok_or(MapError::Missing("shift"))?;
        let shift = (
            dr.rem_euclid(torus.rows as i64) as usize,
            dc.rem_euclid(torus.cols as i64) as usize,
        );
        Ok((torus, seats, shift))
    }
}

/// What the `m` lines put on the board; hills in the order found.
struct Squares {
    water: Vec<bool>,
    food: Vec<usize>,
    hills: Vec<(usize, usize)>,
    ants: Vec<(usize, usize)>,
}

impl Squares {
    /// Reads one `m` line per row of `torus`, each `cols` squares long, with
    /// hills and ants of seats below `seats` only.
    fn read(torus: Torus, seats: usize, lines: &[(usize, &str)]) -> Result<Squares, MapError> {
        let mut water = vec![false; torus.len()];
        let mut food = Vec::new();
        let mut hills_found = Vec::new();
        let mut ants = Vec::new();
        for (row, (line_no, chars)) in lines.iter().enumerate() {
            let bad = |problem: String| MapError::Line {
                line: *line_no,
                problem,
            };
            let count = chars.chars().count();
            if count != torus.cols {
                return Err(bad(format!("{count} squares for {} cols", torus.cols)));
            }
            for (col, ch) in chars.chars().enumerate() {
                let sq = torus.square(row, col);
                let seat_of = |base: u8| usize::from(ch as u8 - base);
                match ch {
                    '.' => {}
                    '%' => water[sq] = true,
                    '*' => food.push(sq),
                    '0'..='7' => hills_found.push((sq, seat_of(b'0'))),
                    'a'..='h' => ants.push((sq, seat_of(b'a'))),
                    'A'..='H' => {
                        hills_found.push((sq, seat_of(b'A')));
                        ants.push((sq, seat_of(b'A')));
                    }
                    other => return Err(bad(format!("unknown square {other:?}"))),
                }
                if let Some(&(_, seat)) = hills_found.last().filter(|h| h.0 == sq)
                    && seat >= seats
                {
                    return Err(bad(format!("a hill of seat {seat} with {seats} players")));
                }
                if let Some(&(_, seat)) = ants.last().filter(|a| a.0 == sq)
                    && seat >= seats
                {
                    return Err(bad(format!("an ant of seat {seat} with {seats} players")));
                }
            }
        }
        Ok(Squares {
            water,
            food,
            hills: hills_found,
            ants,
        })
    }
}

/// `square` moved by `seat × shift`.
pub fn image(torus: Torus, shift: (usize, usize), square: usize, seat: usize) -> usize {
    let (r, c) = torus.row_col(square);
    let r = (r + seat * shift.0) % torus.rows;
    let c = (c + seat * shift.1) % torus.cols;
    torus.square(r, c)
}

/// The hills in listing order: seat 0's row-major, then each seat's in the
/// order of seat 0's images; refuses hills that are not images.
fn order_hills(
    torus: Torus,
    seats: usize,
    shift: (usize, usize),
    hills: &[(usize, usize)],
) -> Result<Vec<(usize, usize)>, MapError> {
    let mut first: Vec<usize> = hills.iter().filter(|h| h.1 == 0).map(|h| h.0).collect();
    first.sort_unstable();
    let mut ordered = Vec::with_capacity(hills.len());
    for seat in 0..seats {
        let got = hills.iter().filter(|h| h.1 == seat).count();
        if got != first.len() || got == 0 {
            return Err(MapError::HillCount {
                seat,
                got,
                expected: first.len(),
            });
        }
        for (k, &sq) in first.iter().enumerate() {
            let target = image(torus, shift, sq, seat);
            if !hills.contains(&(target, seat)) {
                return Err(MapError::HillShift { seat, hill: k });
            }
            ordered.push((target, seat));
        }
    }
    Ok(ordered)
}
