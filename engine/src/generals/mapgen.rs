//! Map generation: one competition board from one `u64` seed.
//!
//! The seed is the map's name (replays and schedules store only the seed), so
//! the output depends on nothing but [`SplitMix64`] draws and integer
//! arithmetic, iterated in cell-index order. Changing the order or number of
//! draws below renames every map.
//!
//! # Algorithm
//!
//! 1. **Size.** Height, then width, each uniform in
//!    [`MIN_SIDE`]`..=`[`MAX_SIDE`].
//! 2. **Mountain count.** Mimics the reference engine: a density is drawn in
//!    240..=260 per mille of the board, then 9..=11 tiles are subtracted (the
//!    reference carves those into castle sites, which this ruleset removes
//!    again). That lands at about 20.7–23.8 % of the cells; the result is
//!    clamped into [`MIN_MOUNTAINS`]`..=`[`MAX_MOUNTAINS`] (only the 21×21,
//!    high-density corner ever needs it).
//! 3. **Scatter.** Exactly that many mountains go on uniformly chosen cells
//!    (a partial Fisher–Yates shuffle of the cell indices).
//! 4. **Connect.** Every passable cell outside the largest passable component
//!    becomes a mountain, and then just as many mountains that border the
//!    (now only) component are turned back into plains, one uniform pick at a
//!    time. Turning a mountain next to the component into a plain joins it to
//!    the component, so afterwards the mountain count is still the one drawn
//!    in step 2 and *all* passable cells are connected: no dead pockets, and
//!    any two plains — in particular the generals — are joined by a path.
//!    Scattered at ~22 % the plains percolate easily, so pockets are a few
//!    single cells at most and this step barely changes the map.
//! 5. **Generals.** A spawn candidate is drawn uniformly among the cells (a
//!    mountain just uses up the attempt, so among plains it is uniform); if
//!    it qualifies (see below) a full BFS from it lists every plain at least
//!    [`MIN_GENERAL_DISTANCE`] steps away; these are tried in shuffled order
//!    and the first that qualifies and is fair against the first spawn wins.
//!    A coin flip then decides which of the two is player 0's, so neither
//!    seat is systematically the "drawn first" spawn. Unreachable cells have
//!    distance [`UNREACHABLE`] and are never candidates.
//! 6. **Retries.** Up to [`FIRST_SPAWN_ATTEMPTS`] first spawns per layout and
//!    up to [`LAYOUT_ATTEMPTS`] layouts (steps 3–5 again, same size and
//!    count). Measured over seeds 0..100 000: the first layout fails for 2
//!    seeds, the second layout never, and the fallback is never reached.
//! 7. **Fallback.** If every attempt fails, a fixed board of the drawn size is
//!    returned: mountains where `(row + 4·col + shift) mod 9 ∈ {0, 2}`
//!    (density 2/9, 72–98 mountains; no two mountains touch, even
//!    diagonally, so the plains are connected), `shift` chosen so the board
//!    is point-symmetric, and the generals on mirrored cells two in from
//!    opposite corners, so their surroundings are identical. It depends on
//!    the seed only through the size, and the unit test
//!    `fallback_is_valid_for_every_size` checks all 16 sizes against every
//!    rule: generation always terminates with a valid board and has no panic
//!    path.
//!
//! # Spawn fairness
//!
//! A general's *reach* is the number of passable cells (its own included)
//! within [`SPAWN_RADIUS`] BFS steps over passable cells: the land it can
//! take in the opening without a long walk. A spawn qualifies when
//!
//! * its cell has at least [`MIN_SPAWN_EXITS`] passable neighbours (not a
//!   dead end that one enemy tile can seal), and
//! * its reach is at least [`MIN_SPAWN_REACH`] (not boxed into a pocket);
//!
//! and a pair of spawns is fair when the smaller reach is at least
//! [`SPAWN_FAIRNESS_PERCENT`] % of the larger. Together with the distance of
//! at least [`MIN_GENERAL_DISTANCE`] steps and the connectivity of step 4,
//! this is the whole acceptance test ([`MapStats::meets_rules`]).

use crate::generals::board::{Generals, Kind, Params, Setup, SetupError};
use crate::grid;
use crate::rng::SplitMix64;

/// Smallest side length.
pub const MIN_SIDE: usize = 18;
/// Largest side length.
pub const MAX_SIDE: usize = 21;
/// Fewest mountains on a start board.
pub const MIN_MOUNTAINS: usize = 66;
/// Most mountains on a start board.
pub const MAX_MOUNTAINS: usize = 105;
/// Least BFS distance between the generals, over passable cells.
pub const MIN_GENERAL_DISTANCE: u32 = 17;
/// BFS radius of a spawn's reach.
pub const SPAWN_RADIUS: u32 = 6;
/// Least reach of a spawn (cells within [`SPAWN_RADIUS`], its own included).
pub const MIN_SPAWN_REACH: usize = 30;
/// The smaller reach must be at least this percentage of the larger.
pub const SPAWN_FAIRNESS_PERCENT: usize = 85;
/// Least number of passable neighbours of a general's cell.
pub const MIN_SPAWN_EXITS: usize = 2;
/// Distance of a cell a BFS did not reach (a mountain or another component).
pub const UNREACHABLE: u32 = grid::UNREACHABLE;

/// Mountain layouts tried before the fixed fallback board.
pub const LAYOUT_ATTEMPTS: usize = 32;
/// First-spawn draws (uniform cells, so some land on mountains) tried on one
/// layout before scattering a new one.
pub const FIRST_SPAWN_ATTEMPTS: usize = 16;

/// Draws the board named by `seed`. Deterministic, total, and every board it
/// returns meets the rules in the module documentation.
pub fn generate(seed: u64, params: Params) -> Setup {
    let mut rng = SplitMix64::new(seed);
    let height = draw_side(&mut rng);
    let width = draw_side(&mut rng);
    let grid = Grid { height, width };
    let mountains = draw_mountain_count(&mut rng, grid.cells());
    let mut bfs = Bfs::new(grid.cells());
    for _ in 0..LAYOUT_ATTEMPTS {
        let kind = scatter(&mut rng, grid, mountains, &mut bfs);
        if let Some(generals) = place_generals(&mut rng, grid, &kind, &mut bfs) {
            return grid.setup(kind, generals, params);
        }
    }
    let (kind, generals) = fallback(grid);
    grid.setup(kind, generals, params)
}

impl Generals {
    /// The game on the board named by `seed`.
    ///
    /// # Panics
    ///
    /// Only if `params.max_turns` is 0, which [`Generals::new`] rejects for
    /// any board; the generated board itself is always accepted. Use
    /// [`Generals::try_from_seed`] when `params` comes from outside.
    pub fn from_seed(seed: u64, params: Params) -> Generals {
        match Generals::try_from_seed(seed, params) {
            Ok(game) => game,
            Err(err) => panic!("Generals::from_seed({seed}): {err}"),
        }
    }

    /// The game on the board named by `seed`; fails only on invalid `params`.
    pub fn try_from_seed(seed: u64, params: Params) -> Result<Generals, SetupError> {
        Generals::new(generate(seed, params))
    }
}

/// The numbers the rules are stated in, measured on a setup.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MapStats {
    pub height: usize,
    pub width: usize,
    /// Mountain cells on the board.
    pub mountains: usize,
    /// BFS steps between the generals; `None` when no path joins them.
    pub general_distance: Option<u32>,
    /// Passable cells within [`SPAWN_RADIUS`] of each general.
    pub spawn_reach: [usize; 2],
    /// Passable neighbours of each general's cell.
    pub spawn_exits: [usize; 2],
    /// Whether every passable cell is reachable from player 0's general.
    pub connected: bool,
    /// Whether the plane holds only plains and mountains.
    pub only_plains_and_mountains: bool,
}

impl MapStats {
    /// Measures `setup`. Returns `None` if the setup is malformed (plane
    /// length, generals off the board or on a mountain), which
    /// [`Generals::new`] would reject anyway.
    pub fn of(setup: &Setup) -> Option<MapStats> {
        let grid = Grid {
            height: setup.height,
            width: setup.width,
        };
        if setup.height.checked_mul(setup.width) != Some(setup.kind.len()) {
            return None;
        }
        let mut cells = [0usize; 2];
        for (slot, &[row, col]) in cells.iter_mut().zip(&setup.generals) {
            if row >= grid.height || col >= grid.width {
                return None;
            }
            *slot = row * grid.width + col;
            if setup.kind[*slot] == Kind::Mountain {
                return None;
            }
        }
        let kind = &setup.kind;
        let mut bfs = Bfs::new(grid.cells());
        let mut spawn_reach = [0usize; 2];
        let mut spawn_exits = [0usize; 2];
        for player in 0..2 {
            spawn_exits[player] = grid.exits(kind, cells[player]);
            spawn_reach[player] = bfs.run(grid, kind, cells[player], SPAWN_RADIUS);
        }
        let reached = bfs.run(grid, kind, cells[0], UNREACHABLE);
        let distance = bfs.dist[cells[1]];
        let mountains = kind.iter().filter(|&&k| k == Kind::Mountain).count();
        Some(MapStats {
            height: grid.height,
            width: grid.width,
            mountains,
            general_distance: (distance != UNREACHABLE).then_some(distance),
            spawn_reach,
            spawn_exits,
            connected: reached + mountains == grid.cells(),
            only_plains_and_mountains: kind
                .iter()
                .all(|&k| matches!(k, Kind::Plain | Kind::Mountain)),
        })
    }

    /// Whether these numbers satisfy every rule the generator promises.
    pub fn meets_rules(&self) -> bool {
        let side = MIN_SIDE..=MAX_SIDE;
        side.contains(&self.height)
            && side.contains(&self.width)
            && (MIN_MOUNTAINS..=MAX_MOUNTAINS).contains(&self.mountains)
            && self.only_plains_and_mountains
            && self.connected
            && self
                .general_distance
                .is_some_and(|d| d >= MIN_GENERAL_DISTANCE)
            && self.spawn_exits.iter().all(|&e| e >= MIN_SPAWN_EXITS)
            && self.spawn_reach.iter().all(|&r| r >= MIN_SPAWN_REACH)
            && fair(self.spawn_reach[0], self.spawn_reach[1])
    }
}

/// BFS distances from `start = [row, col]` over passable (non-mountain)
/// cells, 4-neighbour moves, row-major. Cells not reached — mountains,
/// other components, everything when `start` is off the board or a
/// mountain, or when `kind` is not `height * width` long — are
/// [`UNREACHABLE`].
pub fn bfs_distances(height: usize, width: usize, kind: &[Kind], start: [usize; 2]) -> Vec<u32> {
    let grid = Grid { height, width };
    let cells = height.saturating_mul(width);
    let mut bfs = Bfs::new(kind.len());
    let [row, col] = start;
    if kind.len() == cells && row < height && col < width {
        bfs.run(grid, kind, row * width + col, UNREACHABLE);
    }
    bfs.dist
}

/// Whether two reaches are within [`SPAWN_FAIRNESS_PERCENT`] of each other.
fn fair(a: usize, b: usize) -> bool {
    let (small, large) = if a <= b { (a, b) } else { (b, a) };
    // Wide enough for any `usize`, since `MapStats` fields are public.
    small as u128 * 100 >= large as u128 * SPAWN_FAIRNESS_PERCENT as u128
}

fn draw_side(rng: &mut SplitMix64) -> usize {
    rng.range_inclusive(MIN_SIDE as u64, MAX_SIDE as u64) as usize
}

/// Step 2 of the module doc: the reference's density minus its castle sites.
fn draw_mountain_count(rng: &mut SplitMix64, cells: usize) -> usize {
    let per_mille = rng.range_inclusive(240, 260) as usize;
    let carved = rng.range_inclusive(9, 11) as usize;
    let sampled = (cells * per_mille + 500) / 1000;
    sampled
        .saturating_sub(carved)
        .clamp(MIN_MOUNTAINS, MAX_MOUNTAINS)
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

    /// The shared geometry of this board.
    #[inline]
    fn board(self) -> grid::Grid {
        grid::Grid::new(self.width, self.height)
    }

    /// The up to four orthogonal neighbours of `cell`.
    #[inline]
    fn neighbours(self, cell: usize) -> impl Iterator<Item = usize> {
        self.board().neighbours(cell).into_iter().flatten()
    }

    fn exits(self, kind: &[Kind], cell: usize) -> usize {
        let mut count = 0;
        for n in self.neighbours(cell) {
            if !matches!(kind[n], Kind::Mountain) {
                count += 1;
            }
        }
        count
    }

    fn setup(self, kind: Vec<Kind>, generals: [usize; 2], params: Params) -> Setup {
        let at = |cell: usize| [cell / self.width, cell % self.width];
        Setup {
            height: self.height,
            width: self.width,
            kind,
            generals: [at(generals[0]), at(generals[1])],
            params,
        }
    }
}

/// Reusable BFS buffers. Only the cells the previous search reached are
/// reset, so a radius-6 search costs about its ball, not the whole board.
struct Bfs {
    /// Steps from the last start; [`UNREACHABLE`] where it did not get.
    dist: Vec<u32>,
    /// The cells the last search reached, in BFS order, are the first
    /// `reached` entries (each cell enters at most once, so `cells` entries
    /// always suffice).
    queue: Vec<usize>,
    reached: usize,
}

impl Bfs {
    fn new(cells: usize) -> Bfs {
        Bfs {
            dist: vec![UNREACHABLE; cells],
            queue: vec![0; cells],
            reached: 0,
        }
    }

    /// The cells the last search reached, in BFS order.
    fn reached(&self) -> &[usize] {
        &self.queue[..self.reached]
    }

    /// Searches from `start` out to `limit` steps over passable cells and
    /// returns how many cells it reached (0 if `start` is a mountain).
    /// `kind` must be `grid.cells()` long and `start` on the board.
    fn run(&mut self, grid: Grid, kind: &[Kind], start: usize, limit: u32) -> usize {
        for &cell in &self.queue[..self.reached] {
            self.dist[cell] = UNREACHABLE;
        }
        let passable = move |cell: usize| !matches!(kind[cell], Kind::Mountain);
        let start = passable(start).then_some(start);
        let (dist, queue) = (&mut self.dist, &mut self.queue);
        self.reached = grid::search(grid.board(), start, passable, limit, dist, queue);
        self.reached
    }
}

/// `mountains` mountains on a `height` × `width` board, every other cell a
/// plain and all plains connected (steps 3 and 4 of [`generate`]); the
/// classic generator draws its layouts with it too.
pub(crate) fn scatter_connected(
    rng: &mut SplitMix64,
    height: usize,
    width: usize,
    mountains: usize,
) -> Vec<Kind> {
    let grid = Grid { height, width };
    let mut bfs = Bfs::new(grid.cells());
    scatter(rng, grid, mountains, &mut bfs)
}

/// Steps 3 and 4: exactly `mountains` mountains, all plains connected.
fn scatter(rng: &mut SplitMix64, grid: Grid, mountains: usize, bfs: &mut Bfs) -> Vec<Kind> {
    let cells = grid.cells();
    let mut order: Vec<usize> = (0..cells).collect();
    // Partial Fisher–Yates: the first `mountains` entries are a uniform sample.
    for i in 0..mountains {
        let j = i + rng.below((cells - i) as u64) as usize;
        order.swap(i, j);
    }
    let mut kind = vec![Kind::Plain; cells];
    for &cell in &order[..mountains] {
        kind[cell] = Kind::Mountain;
    }
    connect(rng, grid, &mut kind, mountains, bfs);
    kind
}

/// Step 4: fills every passable component but the largest (the first in
/// index order on a tie), then gives the same number of mountains back from
/// the border of the remaining component. `mountains` is the number of
/// mountains in `kind`.
fn connect(rng: &mut SplitMix64, grid: Grid, kind: &mut [Kind], mountains: usize, bfs: &mut Bfs) {
    let cells = grid.cells();
    let plains = cells - mountains;
    // Search component after component until one holds a majority of the
    // plains (then it is the largest; in practice the first search finds it).
    let mut searched = vec![false; cells];
    let (mut best_size, mut best_seed) = (0, 0);
    for seed in 0..cells {
        if matches!(kind[seed], Kind::Mountain) || searched[seed] {
            continue;
        }
        let size = bfs.run(grid, kind, seed, UNREACHABLE);
        if size == plains {
            return;
        }
        if size > best_size {
            (best_size, best_seed) = (size, seed);
        }
        if 2 * size > plains {
            break;
        }
        for &cell in bfs.reached() {
            searched[cell] = true;
        }
    }
    if best_size == 0 {
        return;
    }
    // Keep what a search from `best_seed` reaches (the last search already
    // is one when the loop stopped at a majority).
    if bfs.reached().first() != Some(&best_seed) {
        bfs.run(grid, kind, best_seed, UNREACHABLE);
    }
    let mut filled = 0;
    for (k, &dist) in kind.iter_mut().zip(&bfs.dist) {
        if !matches!(k, Kind::Mountain) && dist == UNREACHABLE {
            *k = Kind::Mountain;
            filled += 1;
        }
    }
    // Every plain now belongs to the one component, so a mountain with a
    // plain neighbour borders it and turning it into a plain keeps the plains
    // connected. With fewer mountains than cells and at least one mountain
    // (`filled` > 0) on a connected grid, such a mountain always exists.
    let mut in_frontier = vec![false; cells];
    let mut frontier = Vec::new();
    for cell in 0..cells {
        if matches!(kind[cell], Kind::Mountain) && grid.exits(kind, cell) > 0 {
            in_frontier[cell] = true;
            frontier.push(cell);
        }
    }
    for _ in 0..filled {
        if frontier.is_empty() {
            break;
        }
        let pick = frontier.swap_remove(rng.below(frontier.len() as u64) as usize);
        kind[pick] = Kind::Plain;
        // Its mountain neighbours now border the component too; the rest of
        // the frontier still does, since plains only ever get added.
        for n in grid.neighbours(pick) {
            if matches!(kind[n], Kind::Mountain) && !in_frontier[n] {
                in_frontier[n] = true;
                frontier.push(n);
            }
        }
    }
}

/// Marks a cell whose reach has not been measured yet.
const UNMEASURED: usize = usize::MAX;

/// The reach of `cell` if it qualifies as a spawn (module doc, "Spawn
/// fairness"), else `None`. `memo` holds earlier answers on this layout
/// (0 for "does not qualify"), so retries never measure a cell twice.
fn spawn_reach(
    grid: Grid,
    kind: &[Kind],
    cell: usize,
    bfs: &mut Bfs,
    memo: &mut [usize],
) -> Option<usize> {
    if memo[cell] == UNMEASURED {
        memo[cell] =
            if matches!(kind[cell], Kind::Mountain) || grid.exits(kind, cell) < MIN_SPAWN_EXITS {
                0
            } else {
                bfs.run(grid, kind, cell, SPAWN_RADIUS)
            };
    }
    let reach = memo[cell];
    (reach >= MIN_SPAWN_REACH).then_some(reach)
}

/// Step 5: two qualifying, fair spawns at least [`MIN_GENERAL_DISTANCE`]
/// apart, as cell indices in seat order.
fn place_generals(
    rng: &mut SplitMix64,
    grid: Grid,
    kind: &[Kind],
    bfs: &mut Bfs,
) -> Option<[usize; 2]> {
    let cells = grid.cells();
    let mut far = Vec::new();
    let mut memo = vec![UNMEASURED; cells];
    for _ in 0..FIRST_SPAWN_ATTEMPTS {
        // A uniform cell; landing on a mountain just uses up the attempt,
        // which keeps the draw uniform over plains without listing them.
        let first = rng.below(cells as u64) as usize;
        let Some(first_reach) = spawn_reach(grid, kind, first, bfs, &mut memo) else {
            continue;
        };
        bfs.run(grid, kind, first, UNREACHABLE);
        far.clear();
        // Only cells the search reached are listed, so an unreachable cell
        // can never count as "far".
        for &cell in bfs.reached() {
            if bfs.dist[cell] >= MIN_GENERAL_DISTANCE {
                far.push(cell);
            }
        }
        // Fisher–Yates one step at a time: the candidates come out in
        // uniformly random order, and the usual early hit leaves the rest
        // unshuffled.
        for i in 0..far.len() {
            let j = i + rng.below((far.len() - i) as u64) as usize;
            far.swap(i, j);
            let second = far[i];
            let Some(second_reach) = spawn_reach(grid, kind, second, bfs, &mut memo) else {
                continue;
            };
            if fair(first_reach, second_reach) {
                let pair = if rng.below(2) == 0 {
                    [first, second]
                } else {
                    [second, first]
                };
                return Some(pair);
            }
        }
    }
    None
}

/// Step 7: the fixed board of this size (module doc). Its validity for every
/// size is checked by `fallback_is_valid_for_every_size`.
fn fallback(grid: Grid) -> (Vec<Kind>, [usize; 2]) {
    let (height, width) = (grid.height, grid.width);
    // Mountains where (row + 4·col + shift) mod 9 is 0 or 2. A king step
    // changes row + 4·col by ±1, ±3, ±4 or ±5, never by 0 or ±2 mod 9, so no
    // two mountains touch, even diagonally: the plains stay connected, and
    // every plain but a corner keeps two or more plain neighbours (of its
    // four, only the pair above and below can both be mountains). Turning the board half
    // way round maps residue x to k + 2·shift − x, with k the residue of the
    // far corner; the shift makes that {0, 2} ↦ {2, 0}, so the board is
    // point-symmetric and mirrored spawns get identical surroundings.
    let k = (height - 1 + 4 * (width - 1)) % 9;
    // 5 is the inverse of 2 mod 9: 2·shift ≡ 2 − k.
    let shift = (5 * (11 - k)) % 9;
    let kind: Vec<Kind> = (0..grid.cells())
        .map(|cell| {
            let (row, col) = (cell / width, cell % width);
            if matches!((row + 4 * col + shift) % 9, 0 | 2) {
                Kind::Mountain
            } else {
                Kind::Plain
            }
        })
        .collect();
    // (2, 2) and (2, 3) differ by 4 in residue, so at most one is a mountain.
    // Two cells in from the corner the spawn sees enough ground; the mirrored
    // spawn is still at least (h − 5) + (w − 7) ≥ 24 steps away.
    let near = 2 * width + 2;
    let first = if kind[near] == Kind::Mountain {
        near + 1
    } else {
        near
    };
    // The half-turn of row-major index i is cells − 1 − i.
    (kind, [first, grid.cells() - 1 - first])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(rows: &[&str]) -> (usize, usize, Vec<Kind>) {
        let kind = rows
            .iter()
            .flat_map(|row| row.bytes())
            .map(|b| {
                if b == b'#' {
                    Kind::Mountain
                } else {
                    Kind::Plain
                }
            })
            .collect();
        (rows.len(), rows[0].len(), kind)
    }

    #[test]
    fn bfs_counts_steps_around_mountains() {
        let (h, w, kind) = parse(&["..#..", ".##..", "....."]);
        let dist = bfs_distances(h, w, &kind, [0, 0]);
        let at = |r: usize, c: usize| dist[r * w + c];
        assert_eq!(at(0, 0), 0);
        assert_eq!(at(0, 1), 1);
        assert_eq!(at(2, 0), 2);
        assert_eq!(at(2, 2), 4);
        // Around the wall: down, along the bottom, up the right side.
        assert_eq!(at(1, 3), 6);
        assert_eq!(at(0, 3), 7);
        assert_eq!(at(0, 4), 8);
        assert_eq!(at(0, 2), UNREACHABLE);
        assert_eq!(at(1, 1), UNREACHABLE);
    }

    #[test]
    fn bfs_leaves_other_components_unreachable() {
        let (h, w, kind) = parse(&[".#...", "##...", "....."]);
        let dist = bfs_distances(h, w, &kind, [0, 0]);
        assert_eq!(dist[0], 0);
        assert!(dist[1..].iter().all(|&d| d == UNREACHABLE));
        let dist = bfs_distances(h, w, &kind, [2, 4]);
        assert_eq!(dist[0], UNREACHABLE);
        assert_eq!(dist[2], 4);
    }

    #[test]
    fn bfs_rejects_bad_starts_without_panicking() {
        let (h, w, kind) = parse(&["#.", ".."]);
        assert!(
            bfs_distances(h, w, &kind, [0, 0])
                .iter()
                .all(|&d| d == UNREACHABLE)
        );
        assert!(
            bfs_distances(h, w, &kind, [5, 0])
                .iter()
                .all(|&d| d == UNREACHABLE)
        );
        assert!(
            bfs_distances(3, 3, &kind, [0, 1])
                .iter()
                .all(|&d| d == UNREACHABLE)
        );
    }

    #[test]
    fn bounded_bfs_stops_at_its_radius_and_resets() {
        let (h, w, kind) = parse(&[".......", ".......", "......."]);
        let grid = Grid {
            height: h,
            width: w,
        };
        let mut bfs = Bfs::new(grid.cells());
        // From the middle of the top row, radius 1: itself and 3 neighbours.
        assert_eq!(bfs.run(grid, &kind, 3, 1), 4);
        assert_eq!(bfs.run(grid, &kind, 0, 2), 6);
        // Cells from the earlier search must not leak into this one.
        assert_eq!(bfs.dist[4], UNREACHABLE);
        assert_eq!(bfs.run(grid, &kind, 0, UNREACHABLE), 21);
        assert_eq!(bfs.dist[20], 8);
    }

    #[test]
    fn fairness_is_symmetric_and_uses_the_percentage() {
        let edge = SPAWN_FAIRNESS_PERCENT;
        assert!(fair(edge, 100) && fair(100, edge));
        assert!(!fair(edge - 1, 100) && !fair(100, edge - 1));
        assert!(fair(37, 37));
    }

    #[test]
    fn connect_keeps_the_count_and_joins_the_plains() {
        // A walled-off corner pocket and a lone enclosed cell.
        let (h, w, mut kind) = parse(&[".#....", "##.#..", "..#.#.", "...#..", "......"]);
        let grid = Grid {
            height: h,
            width: w,
        };
        let before = kind.iter().filter(|&&k| k == Kind::Mountain).count();
        connect(
            &mut SplitMix64::new(3),
            grid,
            &mut kind,
            before,
            &mut Bfs::new(grid.cells()),
        );
        let after = kind.iter().filter(|&&k| k == Kind::Mountain).count();
        assert_eq!(before, after);
        let start = kind.iter().position(|&k| k == Kind::Plain).unwrap();
        let reached = Bfs::new(grid.cells()).run(grid, &kind, start, UNREACHABLE);
        assert_eq!(reached + after, grid.cells());
    }

    #[test]
    fn fallback_is_valid_for_every_size() {
        for height in MIN_SIDE..=MAX_SIDE {
            for width in MIN_SIDE..=MAX_SIDE {
                let grid = Grid { height, width };
                let (kind, generals) = fallback(grid);
                let setup = grid.setup(kind, generals, Params::default());
                let stats = MapStats::of(&setup).expect("fallback setup is well formed");
                assert!(stats.meets_rules(), "fallback {height}x{width}: {stats:?}");
                assert!(Generals::new(setup).is_ok());
            }
        }
    }

    #[test]
    fn mountain_count_stays_in_range_for_every_size() {
        let mut rng = SplitMix64::new(11);
        for cells in [18 * 18, 18 * 21, 21 * 21] {
            for _ in 0..2000 {
                let m = draw_mountain_count(&mut rng, cells);
                assert!((MIN_MOUNTAINS..=MAX_MOUNTAINS).contains(&m), "{cells}: {m}");
            }
        }
    }
}
