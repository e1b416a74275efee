//! The map a seed names: ore with the rotational symmetry of the seat
//! count, bases inside the final zone, one unit on each base.
//!
//! Seat `s`'s position is seat 0's turned `s` times by `360 / seats`
//! degrees about the centre (a half turn for 2 seats, clockwise quarter
//! turns for 4): seat 0 is drawn in the top-left, seat 1 is top-right for 4
//! seats and bottom-right for 2. Only a fundamental domain is drawn (the
//! top-left quadrant for 4 seats, the top half for 2) and every cell copies
//! its domain cell, so the symmetry is exact by construction. The side must
//! be even: then no cell is its own image and the bases are distinct.
//!
//! Seat 0's base is drawn in the top-left quarter-side corner of the final
//! zone (with the defaults, one of its four corner cells), so bases are
//! inside the zone for good and at least half its side apart.
//!
//! Ore comes in deposits: a few square-ish peaks per domain that fall off
//! linearly with Chebyshev distance, over a sparse low background. Bases
//! hold no ore (a base is for banking, not mining).

use super::params::Params;
use super::state::{Cell, Layout, Placed, StateError};
use crate::rng::SplitMix64;

/// Seat counts the generator draws maps for.
pub const SEAT_COUNTS: [usize; 2] = [2, 4];

/// The cell `c` turns into after `k` steps of the seat-count rotation.
pub fn rotate(params: &Params, c: Cell, k: usize) -> Cell {
    let last = params.side - 1;
    let mut c = c;
    for _ in 0..k % params.seats {
        c = if params.seats == 2 {
            Cell {
                x: last - c.x,
                y: last - c.y,
            }
        } else {
            // A clockwise quarter turn: the top-left corner goes top-right.
            Cell {
                x: last - c.y,
                y: c.x,
            }
        };
    }
    c
}

/// Draws the layout `seed` names for `params` (2 or 4 seats, even side).
pub fn generate(seed: u64, params: &Params) -> Result<Layout, StateError> {
    if !SEAT_COUNTS.contains(&params.seats) {
        return Err(StateError::Params("maps are drawn for 2 or 4 seats"));
    }
    if !params.side.is_multiple_of(2) || params.side < 4 {
        return Err(StateError::Params(
            "a drawn map needs an even side of 4 or more",
        ));
    }
    let side = params.side;
    let half = side / 2;
    let (domain_w, domain_h) = if params.seats == 4 {
        (half, half)
    } else {
        (side, half)
    };
    let mut rng = SplitMix64::new(seed);
    let domain = draw_domain(&mut rng, domain_w, domain_h);

    // Seat 0's base: near the top-left corner of the final zone (within a
    // quarter of its side), so the bases, its turned copies, stay well apart.
    let zone = params.final_zone();
    let span = (params.min_zone / 4).max(1) as u64;
    let base0 = Cell {
        x: zone.x0 + rng.below(span) as usize,
        y: zone.y0 + rng.below(span) as usize,
    };
    let bases: Vec<Cell> = (0..params.seats)
        .map(|s| rotate(params, base0, s))
        .collect();

    let mut ore = vec![0u32; params.cells()];
    for y in 0..domain_h {
        for x in 0..domain_w {
            let value = domain[y * domain_w + x];
            for k in 0..params.seats {
                let c = rotate(params, Cell { x, y }, k);
                ore[c.y * side + c.x] = value;
            }
        }
    }
    for base in &bases {
        ore[base.y * side + base.x] = 0;
    }
    let units = bases
        .iter()
        .enumerate()
        .map(|(owner, b)| Placed {
            owner,
            x: b.x,
            y: b.y,
            cargo: 0,
        })
        .collect();
    Ok(Layout { ore, bases, units })
}

/// The ore of a `w × h` domain, row-major.
fn draw_domain(rng: &mut SplitMix64, w: usize, h: usize) -> Vec<u32> {
    struct Deposit {
        x: usize,
        y: usize,
        radius: usize,
        peak: u32,
    }
    // About one deposit per 50 cells, at least two.
    let count = (w * h / 50).max(2) + rng.below(2) as usize;
    let deposits: Vec<Deposit> = (0..count)
        .map(|_| Deposit {
            x: rng.below(w as u64) as usize,
            y: rng.below(h as u64) as usize,
            radius: rng.range_inclusive(1, 3) as usize,
            peak: rng.range_inclusive(300, 900) as u32,
        })
        .collect();
    let mut ore = Vec::with_capacity(w * h);
    for y in 0..h {
        for x in 0..w {
            let background = if rng.below(4) == 0 {
                rng.range_inclusive(1, 40) as u32
            } else {
                0
            };
            let deposit = deposits
                .iter()
                .filter_map(|d| {
                    let dist = d.x.abs_diff(x).max(d.y.abs_diff(y));
                    (dist <= d.radius).then(|| {
                        let steps = (d.radius + 1 - dist) as u32;
                        d.peak * steps / (d.radius as u32 + 1)
                    })
                })
                .max()
                .unwrap_or(0);
            ore.push(deposit.max(background));
        }
    }
    ore
}
