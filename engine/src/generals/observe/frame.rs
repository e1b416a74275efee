//! A seat's view read back from the text the referee sends it.
//!
//! A seat that only has the text (a model graph's host, a test) gets the
//! same planes [`super::compact`] writes from the state: the board's cells
//! are the frame's numbers, and the padding is filled by the same rule,
//! from the sight the seat's own (and, in 2v2, its teammates') cells give.

use super::{HeaderLayout, MAX_SIDE, ObserveError, check_len, owner, tile};

/// What a handshake says about the frames that follow.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FrameShape {
    pub seat: usize,
    pub height: usize,
    pub width: usize,
    pub seats: usize,
    pub layout: HeaderLayout,
    /// Bit `s` set for every other seat on this seat's team.
    pub allies: u32,
}

/// Why a handshake or frame could not be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    #[error("line {line}: {reason}")]
    Line { line: usize, reason: String },
    #[error(transparent)]
    View(#[from] ObserveError),
}

fn bad(line: usize, reason: impl Into<String>) -> FrameError {
    FrameError::Line {
        line,
        reason: reason.into(),
    }
}

fn numbers(text: &str, line: usize) -> Result<Vec<i64>, FrameError> {
    text.split_ascii_whitespace()
        .map(|word| {
            word.parse::<i64>()
                .map_err(|_| bad(line, format!("{word:?} is not an integer")))
        })
        .collect()
}

/// Reads a handshake: `<seat> <H> <W>` (a duel) or `<seat> <H> <W> <N>
/// <team_0> ... <team_{N-1}>` (2v2 and free-for-all).
pub fn parse_handshake(text: &[u8]) -> Result<FrameShape, FrameError> {
    let text = std::str::from_utf8(text).map_err(|_| bad(1, "not UTF-8"))?;
    let values = numbers(text.lines().next().unwrap_or(""), 1)?;
    let as_size = |v: i64| usize::try_from(v).map_err(|_| bad(1, format!("{v} is negative")));
    match values.as_slice() {
        [seat, h, w] => Ok(FrameShape {
            seat: as_size(*seat)?,
            height: as_size(*h)?,
            width: as_size(*w)?,
            seats: 2,
            layout: HeaderLayout::Duel,
            allies: 0,
        }),
        [seat, h, w, n, teams @ ..] if usize::try_from(*n).ok() == Some(teams.len()) => {
            let seat = as_size(*seat)?;
            let mine = teams
                .get(seat)
                .ok_or_else(|| bad(1, format!("seat {seat} of {n}")))?;
            let allies = teams
                .iter()
                .enumerate()
                .filter(|&(s, t)| s != seat && t == mine && s < 32)
                .fold(0u32, |bits, (s, _)| bits | 1 << s);
            Ok(FrameShape {
                seat,
                height: as_size(*h)?,
                width: as_size(*w)?,
                seats: teams.len(),
                layout: HeaderLayout::Seats,
                allies,
            })
        }
        _ => Err(bad(1, "expected <seat> <H> <W> [<N> <teams...>]")),
    }
}

/// Reads one frame into `side × side` planes and the header line.
pub fn parse_frame(
    text: &[u8],
    shape: &FrameShape,
    side: usize,
    out_tile: &mut [u8],
    out_owner: &mut [u8],
    out_army: &mut [i32],
    header: &mut [i64],
) -> Result<(), FrameError> {
    let (h, w) = (shape.height, shape.width);
    if side == 0 || side > MAX_SIDE {
        return Err(ObserveError::Side { side }.into());
    }
    if h > side || w > side {
        return Err(ObserveError::BoardTooLarge {
            height: h,
            width: w,
            side,
        }
        .into());
    }
    let cells = side * side;
    check_len("tile", out_tile.len(), cells)?;
    check_len("owner", out_owner.len(), cells)?;
    check_len("army", out_army.len(), cells)?;
    check_len("header", header.len(), 1 + 2 * shape.seats)?;

    let text = std::str::from_utf8(text).map_err(|_| bad(1, "not UTF-8"))?;
    let mut lines = text.lines();
    let first = numbers(lines.next().unwrap_or(""), 1)?;
    if first.len() != header.len() {
        return Err(bad(
            1,
            format!("{} header numbers, expected {}", first.len(), header.len()),
        ));
    }
    header.copy_from_slice(&first);

    let mut grids = [vec![0i64; h * w], vec![0i64; h * w], vec![0i64; h * w]];
    for (g, grid) in grids.iter_mut().enumerate() {
        for row in 0..h {
            let line = 2 + g * h + row;
            let values = numbers(lines.next().unwrap_or(""), line)?;
            if values.len() != w {
                return Err(bad(line, format!("{} values, expected {w}", values.len())));
            }
            grid[row * w..(row + 1) * w].copy_from_slice(&values);
        }
    }
    let [tiles, owners, armies] = grids;

    // Sight over the padded square, from the seat's own cells (and its
    // teammates' in 2v2, whose code is 2 only in that layout).
    let team = |code: i64| {
        code == i64::from(owner::ME)
            || (shape.layout == HeaderLayout::Seats && code == i64::from(owner::SECOND))
    };
    let mut seen = vec![false; cells];
    for row in 0..h {
        for col in 0..w {
            if team(owners[row * w + col]) {
                for r in row.saturating_sub(1)..=(row + 1).min(side - 1) {
                    for c in col.saturating_sub(1)..=(col + 1).min(side - 1) {
                        seen[r * side + c] = true;
                    }
                }
            }
        }
    }

    let narrow = |v: i64, what: &str, line: usize| {
        u8::try_from(v).map_err(|_| bad(line, format!("{what} {v} out of range")))
    };
    for row in 0..side {
        for col in 0..side {
            let at = row * side + col;
            if row < h && col < w {
                let cell = row * w + col;
                out_tile[at] = narrow(tiles[cell], "tile", 2 + row)?;
                out_owner[at] = narrow(owners[cell], "owner", 2 + h + row)?;
                out_army[at] = i32::try_from(armies[cell])
                    .map_err(|_| bad(2 + 2 * h + row, "army out of range"))?;
            } else {
                out_tile[at] = if seen[at] {
                    tile::MOUNTAIN
                } else {
                    tile::FOG_STRUCTURE
                };
                out_owner[at] = owner::NEUTRAL;
                out_army[at] = 0;
            }
        }
    }
    Ok(())
}
