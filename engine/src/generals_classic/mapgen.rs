//! Map generation for classic generals.io: one board from one `u64` seed.
//!
//! The seed names the map, so the output depends on nothing but
//! [`SplitMix64`] draws and integer arithmetic in a fixed order (cell-index
//! order wherever a list is built; no hash maps). Changing the order or number
//! of draws below renames every map.
//!
//! # What a board looks like
//!
//! The numbers follow the reference generator behind the classic fixtures
//! (`fixtures/generals-classic/README.md`, "The classic settings") and the
//! rules as the generals.io paper states them:
//!
//! * **Size.** Height, then width, each uniform in
//!   [`MapOptions::min_side`]`..=`[`MapOptions::max_side`] (default 15..=23,
//!   like the reference, so most boards are rectangles).
//! * **Mountains, about 20 %.** Like the reference, a density is drawn in
//!   [`MIN_DENSITY_PER_MILLE`]`..=`[`MAX_DENSITY_PER_MILLE`] (18–26 %) of the
//!   cells and the castles are carved out of that budget. On the reference's
//!   sizes (at least [`FULL_CARVE_CELLS`] = 15×15 cells) exactly one mountain
//!   per castle is carved, which leaves 13–25 % mountains, about 19 % on
//!   average (the 40 reference files show 14.9–22.7 %). On smaller boards the
//!   carve is scaled by `cells / 225` (rounded), so 8×8 to 10×10 boards keep
//!   12–22 % (17.5 % on average) instead of losing ten of a dozen mountains. Over
//!   every size in [`SIDE_LIMITS`] the fraction stays within
//!   [`MIN_MOUNTAIN_PERCENT`]`..=`[`MAX_MOUNTAIN_PERCENT`] %.
//! * **Castles.** [`MIN_CASTLES`]`..=`[`MAX_CASTLES`] neutral castles (on every
//!   board size), each with a garrison uniform in
//!   [`MIN_GARRISON`]`..=`[`MAX_GARRISON`], held in [`ClassicMap::army`].
//!   Unlike the reference, a general never lands on a castle site, so the
//!   count drawn is the count on the board.
//! * **Passable** means "not a mountain": castles and generals are walkable,
//!   and every distance below is a BFS over 4-neighbour steps through
//!   non-mountain cells (as the reference measures its 17 steps).
//! * **Connectivity: every non-mountain cell is reachable from every
//!   general**, so in particular there is a passable path between any two
//!   generals and no dead pockets.
//! * **Generals** hold army 1 and sit on cells of kind [`Kind::General`],
//!   never on a castle or a mountain. Every pair is at least
//!   [`min_general_distance`] BFS steps apart: [`MIN_GENERAL_DISTANCE`] = 17
//!   on the reference's boards, scaled down on small boards and for more
//!   players (see that function). Each general keeps at least one plain
//!   neighbour, so garrisons never wall in a spawn.
//! * **A castle near every general:** "radius 6" means at most
//!   [`CASTLE_RADIUS`] BFS steps over passable ground (castles count as
//!   passable, so a path may run through another castle), not Manhattan
//!   distance; BFS is never shorter than Manhattan, so this is the stricter
//!   reading.
//!
//! # Algorithm
//!
//! 1. **Size**, then the **density** (per mille) and the **castle count**.
//!    Mountains = round(cells · density / 1000) − carve, where carve =
//!    round(castles · min(cells, 225) / 225).
//! 2. **Scatter** exactly that many mountains on uniformly chosen cells (a
//!    partial Fisher–Yates shuffle of the cell indices).
//! 3. **Connect**, keeping the count: every plain outside the largest
//!    passable component (the first in index order on a tie) becomes a
//!    mountain, then as many mountains bordering the remaining component are
//!    turned back into plains, one uniform pick at a time. Each such plain
//!    joins the component, so afterwards all plains are connected and the
//!    mountain count is still the one from step 1.
//! 4. **Generals.** The first is uniform over the plains; each next one is
//!    uniform over the plains at least the target distance from every general
//!    placed so far. An attempt fails when no such plain is left. Castles are
//!    placed only afterwards; they are passable, so they never change a
//!    distance or the connectivity.
//! 5. **Castles.** Castles go on uniform plains, one at a time, while the
//!    count still leaves room for one more castle per general that has none
//!    within [`CASTLE_RADIUS`] yet. Then each such general, in placement
//!    order, gets one on a uniform plain within that radius (it may serve
//!    later generals too), and any room left is filled uniformly. So castles
//!    are uniform unless a general would otherwise go without one. A cell
//!    that is a general's last plain neighbour is never chosen. Then a
//!    garrison is drawn for each castle, in placement order. Because
//!    [`MAX_SEATS`] < [`MIN_CASTLES`], the forced castles always fit.
//! 6. **Seats.** The generals are shuffled into seat order, so no seat is
//!    systematically the one drawn first.
//!
//! # Retries and the fallback
//!
//! Step 4 gets [`PLACEMENT_ATTEMPTS`] attempts on a layout; after a failure
//! on all of them, steps 2–4 run again on a fresh layout (same size and
//! counts), up to [`LAYOUT_ATTEMPTS`] layouts. If all of those fail, the
//! **fallback** keeps the last layout and relaxes the distance one step at a
//! time, giving each smaller distance [`RELAX_ATTEMPTS`] attempts. At distance
//! 1 the generals need only be distinct plains, which any attempt achieves
//! (every board has far more plains than players), so generation always
//! terminates without a panic. [`MapReport`] says which path was taken; the
//! test `classic_mapgen` prints how often each was used (the fallback is not
//! reached on the default options).
//!
//! Measured: over 10,000 default seeds, and 2,000 each of 8..=10 sides and
//! of 4 and 8 players on 23×23, every board comes from its first layout.
//! While tuning [`min_general_distance`] (2,000 seeds each of sides 6..=23
//! with 3 to 8 players) 0.1–0.4 % of seeds needed the fallback, which then
//! relaxed by one or two steps.
//!
//! The near-castle rule of step 5 needs no retry. A general without a castle
//! in reach still has a plain neighbour (the plains are connected, and at a
//! distance of 2 or more no other general is adjacent), so a plain within the
//! radius exists. The castle goes on one that seals no general; only if every
//! one would seal does it take the nearest plain anyway, counted in
//! [`MapReport::sealing_castles`] (0 on every seed the tests run). At a
//! relaxed distance of 1, where generals may touch, a general boxed in by
//! other generals could in principle lack both; that would take the fallback
//! all the way down, which no measured seed comes near. About 28 % of
//! generals on default boards get a forced castle; the rest already had one
//! within reach from the uniform draws.

use std::ops::RangeInclusive;

use serde::{Deserialize, Serialize};

use crate::generals::Kind;
use crate::generals::mapgen::{bfs_distances, scatter_connected};
use crate::grid;
use crate::rng::SplitMix64;

/// The sides [`MapOptions::check`] accepts.
pub const SIDE_LIMITS: RangeInclusive<usize> = 6..=23;
/// Fewest generals.
pub const MIN_SEATS: usize = 2;
/// Most generals (the FFA variants); below [`MIN_CASTLES`] on purpose.
pub const MAX_SEATS: usize = 8;
/// Fewest neutral castles on a board.
pub const MIN_CASTLES: usize = 9;
/// Most neutral castles on a board.
pub const MAX_CASTLES: usize = 11;
/// Smallest castle garrison.
pub const MIN_GARRISON: u32 = 40;
/// Largest castle garrison.
pub const MAX_GARRISON: u32 = 50;
/// Lowest drawn mountain budget, per mille of the cells, before the carve.
pub const MIN_DENSITY_PER_MILLE: usize = 180;
/// Highest drawn mountain budget, per mille of the cells, before the carve.
pub const MAX_DENSITY_PER_MILLE: usize = 260;
/// Boards with at least this many cells (15×15, the reference's smallest)
/// carve one mountain per castle; smaller boards carve proportionally less.
pub const FULL_CARVE_CELLS: usize = 225;
/// Lowest mountain percentage any board in [`SIDE_LIMITS`] can get.
pub const MIN_MOUNTAIN_PERCENT: usize = 11;
/// Highest mountain percentage any board in [`SIDE_LIMITS`] can get.
pub const MAX_MOUNTAIN_PERCENT: usize = 25;
/// Least pairwise BFS distance between generals on full-size boards.
pub const MIN_GENERAL_DISTANCE: u32 = 17;
/// Every general has a castle within this many BFS steps.
pub const CASTLE_RADIUS: u32 = 6;
/// General placements tried on one mountain layout.
pub const PLACEMENT_ATTEMPTS: usize = 24;
/// Mountain layouts tried at the full distance before the fallback.
pub const LAYOUT_ATTEMPTS: usize = 8;
/// Placements tried at each relaxed distance in the fallback.
pub const RELAX_ATTEMPTS: usize = 24;

/// What to generate: unvalidated; [`MapOptions::check`] says whether it is
/// usable and [`try_generate`] refuses it otherwise.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MapOptions {
    /// Smallest height or width; each side is drawn independently.
    pub min_side: usize,
    /// Largest height or width.
    pub max_side: usize,
    /// Number of generals on the board.
    pub players: usize,
}

impl Default for MapOptions {
    /// The reference's classic 1v1 boards: sides 15..=23, two players.
    fn default() -> Self {
        Self {
            min_side: 15,
            max_side: 23,
            players: 2,
        }
    }
}

/// Why a [`MapOptions`] was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MapError {
    #[error("side {side} is outside {}..={}", SIDE_LIMITS.start(), SIDE_LIMITS.end())]
    SideOutOfRange { side: usize },
    #[error("min_side {min_side} is larger than max_side {max_side}")]
    SidesReversed { min_side: usize, max_side: usize },
    #[error("{players} players; the generator supports {MIN_SEATS}..={MAX_SEATS}")]
    Players { players: usize },
}

impl MapOptions {
    /// Whether these options can be generated from.
    pub fn check(&self) -> Result<(), MapError> {
        for side in [self.min_side, self.max_side] {
            if !SIDE_LIMITS.contains(&side) {
                return Err(MapError::SideOutOfRange { side });
            }
        }
        if self.min_side > self.max_side {
            return Err(MapError::SidesReversed {
                min_side: self.min_side,
                max_side: self.max_side,
            });
        }
        if !(MIN_SEATS..=MAX_SEATS).contains(&self.players) {
            return Err(MapError::Players {
                players: self.players,
            });
        }
        Ok(())
    }

    /// The nearest valid options: each side clamped into [`SIDE_LIMITS`],
    /// the two swapped if reversed, the players clamped into
    /// [`MIN_SEATS`]`..=`[`MAX_SEATS`]. Valid options map to themselves.
    pub fn clamped(&self) -> MapOptions {
        let clamp = |side: usize| side.clamp(*SIDE_LIMITS.start(), *SIDE_LIMITS.end());
        let (a, b) = (clamp(self.min_side), clamp(self.max_side));
        MapOptions {
            min_side: a.min(b),
            max_side: a.max(b),
            players: self.players.clamp(MIN_SEATS, MAX_SEATS),
        }
    }
}

/// A generated classic board: plain data, checked by the engine when a game
/// is made from it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClassicMap {
    pub height: usize,
    pub width: usize,
    /// Row-major; plains, mountains, castles and the generals' cells.
    pub kind: Vec<Kind>,
    /// Row-major; castles hold their neutral garrison, generals 1, the rest 0.
    pub army: Vec<u32>,
    /// `[row, col]` of each player's general.
    pub generals: Vec<[usize; 2]>,
}

/// How one board came about, for tests and tuning.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MapReport {
    /// [`min_general_distance`] for this board's size and player count.
    pub target_distance: u32,
    /// The distance the generals were placed at: the target, or less when
    /// the fallback relaxed it.
    pub placed_distance: u32,
    /// Mountain layouts drawn (1 when the first one worked).
    pub layouts: usize,
    /// Whether the fallback (relaxing the distance) was used.
    pub relaxed: bool,
    /// Castles placed to give a general one within [`CASTLE_RADIUS`].
    pub forced_castles: usize,
    /// Castles that had to ignore the "last plain neighbour" rule (module
    /// doc, last paragraph); expected to stay 0.
    pub sealing_castles: usize,
}

/// The least pairwise BFS distance between generals on an
/// `height`×`width` board with `seats` generals:
///
/// `min(17, (height + width) · 8 / (3 · (seats + 2)))`, rounded down.
///
/// For two players that is `min(17, (height + width) · 2 / 3)`. Every
/// reference board has `height + width` ≥ 30, so it is always 17 there (the
/// formula reaches 17 from `height + width` = 26). Below that it keeps the
/// proportion 17 has on a 13×13 board, about two thirds of the Manhattan
/// diameter `height + width − 2`: 10 on 8×8, 13 on 10×10, 8 on 6×6.
///
/// More players crowd the board, so the factor `4 / (seats + 2)` (1 for
/// two players) shrinks it. It was fitted so that the uniform placement of
/// step 4 nearly always succeeds without the fallback: on 23×23, 17 for up to
/// 4 players, 15 for 6 and 12 for 8; on 15×15, 13 for 4 and 8 for 8
/// players. The result is at least 1.
pub fn min_general_distance(height: usize, width: usize, seats: usize) -> u32 {
    let seats = seats.max(MIN_SEATS);
    let scaled = (height + width) * 8 / (3 * (seats + 2));
    scaled.clamp(1, MIN_GENERAL_DISTANCE as usize) as u32
}

/// Draws the board named by `seed` for `options`, which are first
/// [`clamped`](MapOptions::clamped) into range, so this never fails and never
/// panics. Use [`try_generate`] to refuse invalid options instead.
pub fn generate(seed: u64, options: &MapOptions) -> ClassicMap {
    generate_with_report(seed, options).0
}

/// [`generate`], refusing options that fail [`MapOptions::check`].
pub fn try_generate(seed: u64, options: &MapOptions) -> Result<ClassicMap, MapError> {
    options.check()?;
    Ok(generate(seed, options))
}

/// [`generate`], plus how the board came about.
pub fn generate_with_report(seed: u64, options: &MapOptions) -> (ClassicMap, MapReport) {
    let options = options.clamped();
    let mut rng = SplitMix64::new(seed);
    let height = draw(&mut rng, options.min_side, options.max_side);
    let width = draw(&mut rng, options.min_side, options.max_side);
    let grid = Grid { height, width };
    let cells = grid.cells();
    let density = draw(&mut rng, MIN_DENSITY_PER_MILLE, MAX_DENSITY_PER_MILLE);
    let castles = draw(&mut rng, MIN_CASTLES, MAX_CASTLES);
    let mountains = mountain_count(cells, density, castles);
    let target = min_general_distance(height, width, options.players);
    let mut report = MapReport {
        target_distance: target,
        placed_distance: target,
        layouts: 0,
        relaxed: false,
        forced_castles: 0,
        sealing_castles: 0,
    };

    let mut kind = Vec::new();
    let mut generals = None;
    while generals.is_none() && report.layouts < LAYOUT_ATTEMPTS {
        // Steps 2 and 3, shared with the competition's generator.
        kind = scatter_connected(&mut rng, grid.height, grid.width, mountains);
        report.layouts += 1;
        generals = (0..PLACEMENT_ATTEMPTS)
            .find_map(|_| place_generals(&mut rng, grid, &kind, options.players, target));
    }
    // Fallback: relax the distance on the last layout. At distance 1 any
    // attempt succeeds, so the loop ends with `Some`.
    let mut distance = target;
    while generals.is_none() && distance > 1 {
        distance -= 1;
        report.relaxed = true;
        report.placed_distance = distance;
        generals = (0..RELAX_ATTEMPTS)
            .find_map(|_| place_generals(&mut rng, grid, &kind, options.players, distance));
    }
    // Unreachable (see above), but a fixed answer beats a panic: the first
    // plains in index order.
    let mut generals = generals.unwrap_or_else(|| {
        (0..cells)
            .filter(|&c| kind[c] == Kind::Plain)
            .take(options.players)
            .collect()
    });
    for &g in &generals {
        kind[g] = Kind::General;
    }

    let mut army = vec![0u32; cells];
    let sites = place_castles(&mut rng, grid, &mut kind, &generals, castles, &mut report);
    for site in sites {
        army[site] = draw(&mut rng, MIN_GARRISON as usize, MAX_GARRISON as usize) as u32;
    }
    for &g in &generals {
        army[g] = 1;
    }
    rng.shuffle(&mut generals);
    let map = ClassicMap {
        height,
        width,
        kind,
        army,
        generals: generals.iter().map(|&g| grid.at(g)).collect(),
    };
    (map, report)
}

/// Uniform in `low..=high`.
fn draw(rng: &mut SplitMix64, low: usize, high: usize) -> usize {
    rng.range_inclusive(low as u64, high as u64) as usize
}

/// Step 1: the density's share of the cells minus the (scaled) carve.
fn mountain_count(cells: usize, density: usize, castles: usize) -> usize {
    let budget = (cells * density + 500) / 1000;
    let scale = cells.min(FULL_CARVE_CELLS);
    let carve = (castles * scale + FULL_CARVE_CELLS / 2) / FULL_CARVE_CELLS;
    budget.saturating_sub(carve)
}

/// Board dimensions and 4-neighbour geometry on row-major cell indices.
#[derive(Clone, Copy, Debug)]
struct Grid {
    height: usize,
    width: usize,
}

impl Grid {
    fn cells(self) -> usize {
        self.height * self.width
    }

    fn at(self, cell: usize) -> [usize; 2] {
        [cell / self.width, cell % self.width]
    }

    /// BFS steps from `cell` over non-mountain cells
    /// ([`UNREACHABLE`](grid::UNREACHABLE) where not reached).
    fn distances(self, kind: &[Kind], cell: usize) -> Vec<u32> {
        bfs_distances(self.height, self.width, kind, self.at(cell))
    }

    /// The up to four orthogonal neighbours of `cell`, in a fixed order.
    fn neighbours(self, cell: usize) -> impl Iterator<Item = usize> {
        let board = grid::Grid::new(self.width, self.height);
        board.neighbours(cell).into_iter().flatten()
    }
}

/// Step 4: `seats` plains pairwise at least `distance` BFS steps apart, in
/// placement order, or `None` when this attempt ran out of candidates.
fn place_generals(
    rng: &mut SplitMix64,
    grid: Grid,
    kind: &[Kind],
    seats: usize,
    distance: u32,
) -> Option<Vec<usize>> {
    let plains: Vec<usize> = (0..grid.cells())
        .filter(|&c| kind[c] == Kind::Plain)
        .collect();
    if plains.is_empty() {
        return None;
    }
    let first = plains[rng.below(plains.len() as u64) as usize];
    let mut nearest = grid.distances(kind, first);
    let mut chosen = vec![first];
    let mut candidates = Vec::new();
    while chosen.len() < seats {
        candidates.clear();
        // `nearest` is 0 on chosen cells, so `distance` ≥ 1 excludes them.
        candidates.extend(plains.iter().copied().filter(|&c| nearest[c] >= distance));
        if candidates.is_empty() {
            return None;
        }
        let next = candidates[rng.below(candidates.len() as u64) as usize];
        for (n, d) in nearest.iter_mut().zip(grid.distances(kind, next)) {
            *n = (*n).min(d);
        }
        chosen.push(next);
    }
    Some(chosen)
}

/// Step 5: marks `count` castles in `kind` (generals already placed) and
/// returns their cells in placement order.
fn place_castles(
    rng: &mut SplitMix64,
    grid: Grid,
    kind: &mut [Kind],
    generals: &[usize],
    count: usize,
    report: &mut MapReport,
) -> Vec<usize> {
    let cells = grid.cells();
    let mut castles = Castles {
        // Castles are passable, so these stay exact while castles go down.
        reach: generals.iter().map(|&g| grid.distances(kind, g)).collect(),
        served: vec![false; generals.len()],
        sites: Vec::with_capacity(count),
    };
    let mut open: Vec<usize> = (0..cells).filter(|&c| kind[c] == Kind::Plain).collect();
    // Uniform castles while the count leaves room for one forced castle per
    // general still without a castle in reach.
    castles.scatter(rng, grid, kind, &mut open, |c| {
        c.sites.len() + c.served.iter().filter(|&&s| !s).count() < count
    });
    // One castle in reach of each general still without one, in placement
    // order; it may serve later generals too.
    for player in 0..generals.len() {
        if castles.served[player] {
            continue;
        }
        let dist = &castles.reach[player];
        let safe: Vec<usize> = (0..cells)
            .filter(|&c| kind[c] == Kind::Plain && dist[c] <= CASTLE_RADIUS)
            .filter(|&c| !seals(grid, kind, c))
            .collect();
        let site = if !safe.is_empty() {
            safe[rng.below(safe.len() as u64) as usize]
        } else {
            // Module doc, last paragraph: the nearest plain (lowest index on a
            // tie), which may seal a general; measured never to happen.
            let Some(site) = (0..cells)
                .filter(|&c| kind[c] == Kind::Plain)
                .min_by_key(|&c| dist[c])
            else {
                continue;
            };
            report.sealing_castles += 1;
            site
        };
        castles.put(kind, site);
        report.forced_castles += 1;
    }
    // A forced castle that served two generals left room: fill up uniformly.
    castles.scatter(rng, grid, kind, &mut open, |c| c.sites.len() < count);
    castles.sites
}

/// Step 5's bookkeeping.
struct Castles {
    /// BFS distances from each general, in placement order.
    reach: Vec<Vec<u32>>,
    /// Whether each general has a castle within [`CASTLE_RADIUS`] yet.
    served: Vec<bool>,
    /// Castle cells in placement order.
    sites: Vec<usize>,
}

impl Castles {
    fn put(&mut self, kind: &mut [Kind], site: usize) {
        kind[site] = Kind::Castle;
        self.sites.push(site);
        for (served, dist) in self.served.iter_mut().zip(&self.reach) {
            *served |= dist[site] <= CASTLE_RADIUS;
        }
    }

    /// Castles on uniform cells of `open` while `more` holds. A cell that is
    /// no longer a plain, or would seal a general, is dropped for good: it
    /// keeps sealing, since plains only ever disappear.
    fn scatter(
        &mut self,
        rng: &mut SplitMix64,
        grid: Grid,
        kind: &mut [Kind],
        open: &mut Vec<usize>,
        more: impl Fn(&Castles) -> bool,
    ) {
        while more(self) && !open.is_empty() {
            let site = open.swap_remove(rng.below(open.len() as u64) as usize);
            if kind[site] == Kind::Plain && !seals(grid, kind, site) {
                self.put(kind, site);
            }
        }
    }
}

/// Whether a castle on `cell` would take the last plain neighbour of an
/// adjacent general.
fn seals(grid: Grid, kind: &[Kind], cell: usize) -> bool {
    grid.neighbours(cell).any(|g| {
        kind[g] == Kind::General
            && !grid
                .neighbours(g)
                .any(|n| n != cell && kind[n] == Kind::Plain)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distance_formula() {
        assert_eq!(min_general_distance(15, 15, 2), 17);
        assert_eq!(min_general_distance(13, 13, 2), 17);
        assert_eq!(min_general_distance(8, 8, 2), 10);
        assert_eq!(min_general_distance(6, 6, 2), 8);
        assert_eq!(min_general_distance(23, 23, 4), 17);
        assert_eq!(min_general_distance(23, 23, 6), 15);
        assert_eq!(min_general_distance(23, 23, 8), 12);
        assert_eq!(min_general_distance(15, 15, 4), 13);
        assert_eq!(min_general_distance(15, 15, 8), 8);
        assert_eq!(min_general_distance(6, 6, 8), 3);
    }

    #[test]
    fn mountain_band_holds_for_every_size() {
        for h in SIDE_LIMITS {
            for w in SIDE_LIMITS {
                let cells = h * w;
                for density in [MIN_DENSITY_PER_MILLE, MAX_DENSITY_PER_MILLE] {
                    for castles in [MIN_CASTLES, MAX_CASTLES] {
                        let m = mountain_count(cells, density, castles);
                        assert!(
                            m * 100 >= MIN_MOUNTAIN_PERCENT * cells
                                && m * 100 <= MAX_MOUNTAIN_PERCENT * cells,
                            "{h}x{w} {density} {castles}: {m}"
                        );
                    }
                }
            }
        }
    }
}
