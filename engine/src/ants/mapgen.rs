//! The map a seed names, for any seat count: shift-symmetric on the torus.
//!
//! With `P` seats the board is `P·h` rows by `P·w` columns and the shift is
//! `(h, m·w)` for an `m` coprime to `P`, so the `P` images of a square are
//! distinct and `P × shift` wraps to zero. The band of the first `h` rows
//! meets every orbit exactly once, so the generator draws water, hills and
//! initial food for seat 0 in terms of that band and every other square
//! copies its band square: the symmetry is exact by construction.
//!
//! Land no hill can reach is turned to water (reachability from all hills
//! is itself shift-invariant), so every colony has the same room.

use super::geometry::Torus;
use super::map::{Map, image};
use crate::grid;
use crate::rng::SplitMix64;

/// Area each colony gets, roughly (a 2011 map gave about 500–2000).
const AREA_PER_SEAT: usize = 512;
/// Initial food placements, each one food per colony near its first hill.
const INITIAL_FOOD: usize = 3;

/// Draws the map `seed` names for `seats` seats (2..=8).
pub fn generate(seed: u64, seats: usize) -> Map {
    let seats = seats.clamp(2, 8);
    let mut rng = SplitMix64::new(seed ^ 0xA275_0000_0000_0000);
    let base = isqrt(AREA_PER_SEAT / seats).max(5);
    let mut dim = || base - 2 + rng.below(5) as usize;
    let (h, w) = (dim(), dim());
    let torus = Torus {
        rows: seats * h,
        cols: seats * w,
    };
    let coprime: Vec<usize> = (1..seats).filter(|&m| gcd(m, seats) == 1).collect();
    let m = coprime[rng.below(coprime.len() as u64) as usize];
    let shift = (h, (m * w) % torus.cols);
    let orbit = Orbit { torus, shift, h };

    // Water: a few blobs drawn on the band's squares.
    let mut band_water = vec![false; torus.len()];
    let blobs = h * torus.cols / 60 + rng.below(4) as usize;
    for _ in 0..blobs {
        let centre = rng.below(torus.len() as u64) as usize;
        let radius2 = rng.range_inclusive(2, 8) as u32;
        for d in torus.disc(radius2) {
            band_water[orbit.rep(torus.add(centre, d))] = true;
        }
    }
    // Seat 0's hills: one, sometimes two, with clear ground around them.
    let hill_count = 1 + usize::from(rng.below(3) == 0);
    let mut first: Vec<usize> = Vec::new();
    // Bounded: a crowded band may keep a single hill.
    for _ in 0..64 {
        if first.len() == hill_count {
            break;
        }
        let sq = orbit.rep(rng.below(torus.len() as u64) as usize);
        let far = first
            .iter()
            .all(|&o| (0..seats).all(|s| torus.dist2(image(torus, shift, o, s), sq) > 25));
        if far {
            first.push(sq);
        }
    }
    for &hill in &first {
        for d in torus.disc(8) {
            band_water[orbit.rep(torus.add(hill, d))] = false;
        }
    }
    let mut water: Vec<bool> = (0..torus.len())
        .map(|sq| band_water[orbit.rep(sq)])
        .collect();
    first.sort_unstable();
    let hills: Vec<(usize, usize)> = (0..seats)
        .flat_map(|s| first.iter().map(move |&sq| (image(torus, shift, sq, s), s)))
        .collect();
    fill_unreachable(torus, &mut water, &hills);

    // Initial food near seat 0's first hill, and its images.
    let mut food = Vec::new();
    let near = torus.disc(20);
    let mut placed = 0;
    for _ in 0..4 * INITIAL_FOOD {
        if placed == INITIAL_FOOD {
            break;
        }
        let d = near[rng.below(near.len() as u64) as usize];
        let sq = torus.add(first[0], d);
        let images: Vec<usize> = (0..seats).map(|s| image(torus, shift, sq, s)).collect();
        if images
            .iter()
            .all(|&q| !water[q] && !food.contains(&q) && !hills.iter().any(|h| h.0 == q))
        {
            food.extend(images);
            placed += 1;
        }
    }
    food.sort_unstable();
    let ants = {
        let mut ants = hills.clone();
        ants.sort_unstable();
        ants
    };
    Map {
        torus,
        players: seats,
        shift,
        water,
        food,
        hills,
        ants,
    }
}

/// The band of the first `h` rows and the shift that moves it.
struct Orbit {
    torus: Torus,
    shift: (usize, usize),
    h: usize,
}

impl Orbit {
    /// The band square in `square`'s orbit.
    fn rep(&self, square: usize) -> usize {
        let t = self.torus;
        let (r, c) = t.row_col(square);
        let s = r / self.h;
        let back = (c + t.cols * s - (s * self.shift.1) % t.cols) % t.cols;
        t.square(r - s * self.h, back)
    }
}

/// Turns land that no hill can walk to into water.
fn fill_unreachable(torus: Torus, water: &mut [bool], hills: &[(usize, usize)]) {
    let (mut dist, mut queue) = (Vec::new(), Vec::new());
    let hills = hills.iter().map(|h| h.0);
    let land = |sq: usize| !water[sq];
    grid::bfs(torus, hills, land, grid::UNREACHABLE, &mut dist, &mut queue);
    for (w, &d) in water.iter_mut().zip(&dist) {
        *w |= d == grid::UNREACHABLE;
    }
}

fn gcd(a: usize, b: usize) -> usize {
    if b == 0 { a } else { gcd(b, a % b) }
}

fn isqrt(x: usize) -> usize {
    let mut r = 0;
    while (r + 1) * (r + 1) <= x {
        r += 1;
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_band_meets_every_orbit_once() {
        let map = generate(3, 3);
        let t = map.torus;
        let orbit = Orbit {
            torus: t,
            shift: map.shift,
            h: t.rows / 3,
        };
        for sq in 0..t.len() {
            let rep = orbit.rep(sq);
            assert!(t.row_col(rep).0 < orbit.h);
            assert!((0..3).any(|s| image(t, map.shift, rep, s) == sq));
        }
    }
}
