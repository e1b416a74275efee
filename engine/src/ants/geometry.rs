//! The torus: squares, moves and wrapped squared distances.
//!
//! A square is its row-major index `row * cols + col`; sorting squares is
//! sorting row-major, which is what the mine order needs.

use serde::{Deserialize, Serialize};

use crate::grid;

/// One of the five orders an ant takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Dir {
    North,
    East,
    South,
    West,
    Stay,
}

impl Dir {
    /// The four moves, in the reply's letter order `N E S W`.
    pub const MOVES: [Dir; 4] = [Dir::North, Dir::East, Dir::South, Dir::West];

    /// The reply's character: `N`, `E`, `S`, `W` or `-`.
    pub fn letter(self) -> char {
        match self {
            Dir::North => 'N',
            Dir::East => 'E',
            Dir::South => 'S',
            Dir::West => 'W',
            Dir::Stay => '-',
        }
    }

    /// The inverse of [`Dir::letter`].
    pub fn from_letter(c: char) -> Option<Dir> {
        match c {
            'N' => Some(Dir::North),
            'E' => Some(Dir::East),
            'S' => Some(Dir::South),
            'W' => Some(Dir::West),
            '-' => Some(Dir::Stay),
            _ => None,
        }
    }

    /// `(d_row, d_col)`: north is row − 1, east is col + 1.
    pub fn delta(self) -> (isize, isize) {
        match self {
            Dir::North => (-1, 0),
            Dir::East => (0, 1),
            Dir::South => (1, 0),
            Dir::West => (0, -1),
            Dir::Stay => (0, 0),
        }
    }
}

/// A `rows × cols` board whose edges wrap.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Torus {
    /// Rows, `1..=200`; row 0 is the top.
    pub rows: usize,
    /// Columns, `1..=200`.
    pub cols: usize,
}

impl Torus {
    /// Squares on the board.
    pub fn len(&self) -> usize {
        self.rows * self.cols
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn square(&self, row: usize, col: usize) -> usize {
        row * self.cols + col
    }

    pub fn row_col(&self, square: usize) -> (usize, usize) {
        (square / self.cols, square % self.cols)
    }

    /// `square` moved by `(dr, dc)`, wrapping at both edges.
    pub fn offset(&self, square: usize, dr: isize, dc: isize) -> usize {
        let (r, c) = self.row_col(square);
        let r = wrap(r as isize + dr, self.rows);
        let c = wrap(c as isize + dc, self.cols);
        self.square(r, c)
    }

    /// The square one step in `dir` (the same square for `Stay`).
    pub fn step(&self, square: usize, dir: Dir) -> usize {
        let (dr, dc) = dir.delta();
        self.offset(square, dr, dc)
    }

    /// The squared distance the short way round in each axis.
    pub fn dist2(&self, a: usize, b: usize) -> u32 {
        let (ar, ac) = self.row_col(a);
        let (br, bc) = self.row_col(b);
        let dr = axis(ar.abs_diff(br), self.rows) as u64;
        let dc = axis(ac.abs_diff(bc), self.cols) as u64;
        u32::try_from(dr * dr + dc * dc).unwrap_or(u32::MAX)
    }

    /// Every distinct offset `(dr, dc)` (as residues, `0..rows` and
    /// `0..cols`) whose wrapped squared length is at most `radius2`. On a
    /// board smaller than the disc, offsets that wrap onto one square are
    /// listed once, so counting enemies over them never counts one twice.
    pub fn disc(&self, radius2: u32) -> Vec<(usize, usize)> {
        let reach = isqrt(radius2);
        let residues = |n: usize| {
            let mut v: Vec<usize> = (-(reach as isize)..=reach as isize)
                .map(|d| wrap(d, n))
                .collect();
            v.sort_unstable();
            v.dedup();
            v
        };
        let (rows, cols) = (residues(self.rows), residues(self.cols));
        let mut disc = Vec::new();
        for &dr in &rows {
            let r = axis(dr, self.rows) as u64;
            for &dc in &cols {
                let c = axis(dc, self.cols) as u64;
                if r * r + c * c <= u64::from(radius2) {
                    disc.push((dr, dc));
                }
            }
        }
        disc
    }

    /// `square` moved by a residue offset from [`Torus::disc`].
    pub fn add(&self, square: usize, (dr, dc): (usize, usize)) -> usize {
        let (r, c) = self.row_col(square);
        self.square((r + dr) % self.rows, (c + dc) % self.cols)
    }
}

/// Searches walk the torus with the shared grid code.
impl grid::Topology for Torus {
    #[inline]
    fn cells(self) -> usize {
        self.len()
    }

    #[inline]
    fn for_each_neighbour(self, square: usize, mut visit: impl FnMut(usize)) {
        for next in grid::wrapped_neighbours(self.cols, self.rows, square) {
            visit(next);
        }
    }
}

/// `x` reduced into `0..n` (`n > 0`).
fn wrap(x: isize, n: usize) -> usize {
    x.rem_euclid(n as isize) as usize
}

/// The shorter way round an axis of length `n` for a difference `d < n`.
fn axis(d: usize, n: usize) -> usize {
    d.min(n - d)
}

/// The largest `r` with `r * r <= x`.
fn isqrt(x: u32) -> usize {
    let mut r = (x as f64).sqrt() as usize;
    while r * r > x as usize {
        r -= 1;
    }
    while (r + 1) * (r + 1) <= x as usize {
        r += 1;
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn search_neighbours_are_the_four_moves() {
        for (rows, cols) in [(1, 1), (1, 4), (3, 1), (6, 8)] {
            let t = Torus { rows, cols };
            for sq in 0..t.len() {
                let moves = [Dir::North, Dir::South, Dir::West, Dir::East].map(|d| t.step(sq, d));
                assert_eq!(grid::wrapped_neighbours(cols, rows, sq), moves);
            }
        }
    }

    #[test]
    fn moves_and_distances_wrap_at_both_edges() {
        let t = Torus { rows: 6, cols: 8 };
        assert_eq!(t.step(t.square(0, 3), Dir::North), t.square(5, 3));
        assert_eq!(t.step(t.square(5, 3), Dir::South), t.square(0, 3));
        assert_eq!(t.step(t.square(2, 7), Dir::East), t.square(2, 0));
        assert_eq!(t.step(t.square(2, 0), Dir::West), t.square(2, 7));
        assert_eq!(t.dist2(t.square(0, 0), t.square(5, 7)), 2);
        assert_eq!(t.dist2(t.square(0, 0), t.square(3, 4)), 25);
    }

    #[test]
    fn discs_count_each_square_once() {
        let t = Torus { rows: 6, cols: 8 };
        assert_eq!(t.disc(5).len(), 21);
        assert_eq!(t.disc(1).len(), 5);
        // A view disc bigger than the board covers it exactly once.
        assert_eq!(t.disc(77).len(), 48);
        let tiny = Torus { rows: 3, cols: 3 };
        assert_eq!(tiny.disc(5).len(), 9);
    }
}
