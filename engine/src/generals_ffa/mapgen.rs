//! Map generation: one four-fold symmetric board from one `u64` seed.
//!
//! The seed is the map's name, so the output depends on nothing but
//! [`SplitMix64`] draws and integer arithmetic in a fixed order; changing the
//! order or number of draws below renames every map.
//!
//! # Algorithm
//!
//! The top-left quadrant (`width / 2` × `height / 2`: 8 × 5, or 6 × 4 in
//! blitz) is drawn, then mirrored left-right, top-bottom and both, so kinds
//! and armies are exactly four-fold symmetric.
//!
//! 1. **Crown.** Row, then column, each uniform in `0..2`: the crown sits on
//!    one of the four cells of the quadrant's outer corner (offset 0 or 1
//!    from each board edge).
//! 2. **Cities**, drawn before the mountains because their constraint is the
//!    tighter one ([`CITIES_PER_QUADRANT`]): a uniform quadrant cell is kept
//!    when it is at Chebyshev distance ≥ 3 from the crown, off the
//!    quadrant's inner row and column, and (for the second) ≥ 2 from the
//!    first. Then all eight cities of the board are ≥ 2 apart: a city off
//!    the inner edges is ≥ 3 from its own mirror images, and the images of
//!    the other city are farther than the other city itself. When the first
//!    city leaves no room for a second (possible on the blitz board), the
//!    pair is drawn again.
//! 3. **Mountains** ([`MOUNTAINS_PER_QUADRANT`]): a uniform quadrant cell is
//!    kept when it is at Chebyshev distance ≥ 2 from the crown and holds
//!    neither a city nor a mountain yet.
//!
//!    Each draw is retried at most [`DRAW_ATTEMPTS`] times; after that the
//!    first eligible cell in index order is taken, and if there is none
//!    (only on boards far smaller than the rules' two) the item is skipped,
//!    so generation always terminates. On 16 × 10 and 12 × 8 every draw
//!    has eligible cells, whatever came before.
//! 4. **Citadel.** Of the quadrant's two cities, the one farther from the
//!    crown (Manhattan distance; on a tie the one drawn second) is a citadel
//!    holding [`CITADEL_ARMY`]; the other holds [`CITY_ARMY`]. Crowns hold
//!    [`CROWN_ARMY`].
//! 5. **Mirror** into the full board. Seat 0 takes the top-left crown, 1 the
//!    top-right, 2 the bottom-right, 3 the bottom-left (clockwise).
//! 6. **Repair.** While some non-mountain cell is unreachable from seat 0's
//!    crown by orthogonal steps over non-mountains, a 0-1 BFS from that
//!    crown (entering a mountain costs 1, anything else 0) finds the cheapest
//!    path to the cheapest unreachable cell (lowest index on a tie); the first
//!    mountain on that path and its three mirror images become plain. The
//!    board stays symmetric, so once everything is reachable from one crown it
//!    is reachable from all four.

use std::collections::VecDeque;

use super::board::{Board, CITADEL_ARMY, CITY_ARMY, CROWN_ARMY, Params, SEATS, mirrors};
use super::view::CellKind;
use crate::grid::{self, Grid, UNREACHABLE};
use crate::rng::SplitMix64;

/// Mountains drawn per quadrant (before repair).
pub const MOUNTAINS_PER_QUADRANT: usize = 8;
/// Cities drawn per quadrant.
pub const CITIES_PER_QUADRANT: usize = 2;
/// Least Chebyshev distance from the crown to a mountain.
pub const MOUNTAIN_CROWN_DISTANCE: usize = 2;
/// Least Chebyshev distance from the crown to a city.
pub const CITY_CROWN_DISTANCE: usize = 3;
/// Least Chebyshev distance between any two cities of the board.
pub const CITY_CITY_DISTANCE: usize = 2;
/// Rejection-sampling draws per item before the index-order scan.
pub const DRAW_ATTEMPTS: usize = 1_000;
/// Draws for a quadrant's second city before both are drawn again.
pub const PARTNER_ATTEMPTS: usize = 64;

/// How a board came about, for tests and tuning.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MapStats {
    /// Repair rounds (each opened four mirrored mountains).
    pub repairs: usize,
    /// Mountains on the board after repair.
    pub mountains: usize,
}

/// Draws the board named by `seed`; `params` must have passed
/// [`Params::check`].
pub fn generate(seed: u64, params: &Params) -> Board {
    generate_with_stats(seed, params).0
}

/// [`generate`], with what the repair did.
pub fn generate_with_stats(seed: u64, params: &Params) -> (Board, MapStats) {
    let mut rng = SplitMix64::new(seed);
    let quadrant = Quadrant {
        width: params.width / 2,
        height: params.height / 2,
    };
    let crown = (rng.below(2) as usize, rng.below(2) as usize);
    let mut kind = vec![CellKind::Plain; quadrant.width * quadrant.height];
    let mut army = vec![0u32; kind.len()];
    let crown_cell = quadrant.cell(crown);
    kind[crown_cell] = CellKind::Crown;
    army[crown_cell] = CROWN_ARMY;

    let cities = draw_cities(&mut rng, &quadrant, crown_cell);
    for &city in &cities {
        kind[city] = CellKind::City;
    }
    for _ in 0..MOUNTAINS_PER_QUADRANT {
        let ok = |cell: usize, kind: &[CellKind]| {
            kind[cell] == CellKind::Plain
                && quadrant.chebyshev(cell, crown_cell) >= MOUNTAIN_CROWN_DISTANCE
        };
        if let Some(cell) = quadrant.draw(&mut rng, |c| ok(c, &kind)) {
            kind[cell] = CellKind::Mountain;
        }
    }
    // The farther city is the citadel; `max_by_key` keeps the last maximum,
    // so a tie goes to the city drawn second.
    let citadel = cities
        .iter()
        .copied()
        .max_by_key(|&c| quadrant.manhattan(c, crown_cell));
    for &city in &cities {
        army[city] = if Some(city) == citadel {
            CITADEL_ARMY
        } else {
            CITY_ARMY
        };
    }

    let mut board = mirror(params, &quadrant, &kind, &army, crown);
    let repairs = repair(params, &mut board);
    let mountains = board
        .kind
        .iter()
        .filter(|&&k| k == CellKind::Mountain)
        .count();
    (board, MapStats { repairs, mountains })
}

/// The top-left quadrant's geometry.
struct Quadrant {
    width: usize,
    height: usize,
}

impl Quadrant {
    fn cell(&self, (row, col): (usize, usize)) -> usize {
        row * self.width + col
    }

    fn chebyshev(&self, a: usize, b: usize) -> usize {
        let (ar, ac) = (a / self.width, a % self.width);
        let (br, bc) = (b / self.width, b % self.width);
        ar.abs_diff(br).max(ac.abs_diff(bc))
    }

    fn manhattan(&self, a: usize, b: usize) -> usize {
        Grid::new(self.width, self.height).manhattan(a, b)
    }

    /// Whether a city may stand on `cell`: far enough from the crown, and
    /// off the quadrant's inner row and column (where it would touch its
    /// own mirror image).
    fn city_site(&self, cell: usize, crown: usize) -> bool {
        let (row, col) = (cell / self.width, cell % self.width);
        row + 1 < self.height
            && col + 1 < self.width
            && self.chebyshev(cell, crown) >= CITY_CROWN_DISTANCE
    }

    /// Rejection sampling with a bounded number of draws, then the first
    /// eligible cell in index order; `None` when no cell is eligible.
    fn draw(&self, rng: &mut SplitMix64, ok: impl Fn(usize) -> bool) -> Option<usize> {
        let cells = self.width * self.height;
        for _ in 0..DRAW_ATTEMPTS {
            let cell = rng.below(cells as u64) as usize;
            if ok(cell) {
                return Some(cell);
            }
        }
        (0..cells).find(|&c| ok(c))
    }
}

/// The quadrant's two cities (step 2 of the module docs): the first by
/// rejection sampling, then the second; when the first leaves no room for
/// a second within [`PARTNER_ATTEMPTS`] draws, both are drawn again. After
/// [`DRAW_ATTEMPTS`] rounds the first valid pair in index order is taken.
fn draw_cities(rng: &mut SplitMix64, quadrant: &Quadrant, crown: usize) -> Vec<usize> {
    let cells = quadrant.width * quadrant.height;
    let site = |c: usize| quadrant.city_site(c, crown);
    let apart = |a: usize, b: usize| quadrant.chebyshev(a, b) >= CITY_CITY_DISTANCE;
    for _ in 0..DRAW_ATTEMPTS {
        let Some(first) = quadrant.draw(rng, site) else {
            return Vec::new();
        };
        for _ in 0..PARTNER_ATTEMPTS {
            let second = rng.below(cells as u64) as usize;
            if site(second) && apart(first, second) {
                return vec![first, second];
            }
        }
    }
    (0..cells)
        .flat_map(|a| (a + 1..cells).map(move |b| (a, b)))
        .find(|&(a, b)| site(a) && site(b) && apart(a, b))
        .map_or_else(Vec::new, |(a, b)| vec![a, b])
}

/// The full board from the quadrant, owners set on the crowns.
fn mirror(
    params: &Params,
    quadrant: &Quadrant,
    kind: &[CellKind],
    army: &[u32],
    crown: (usize, usize),
) -> Board {
    let (width, height) = (params.width, params.height);
    let crown_images = mirrors(width, height, crown.0 * width + crown.1);
    // Clockwise from the top-left: identity, left-right, both, top-bottom.
    let crowns = [
        crown_images[0],
        crown_images[1],
        crown_images[3],
        crown_images[2],
    ];
    let mut board = Board::blank(params, crowns);
    for row in 0..quadrant.height {
        for col in 0..quadrant.width {
            let q = quadrant.cell((row, col));
            for image in mirrors(width, height, row * width + col) {
                board.kind[image] = kind[q];
                board.army[image] = army[q];
            }
        }
    }
    for (seat, &cell) in crowns.iter().enumerate() {
        board.owner[cell] = Some(seat as u8);
    }
    debug_assert_eq!(crowns.len(), SEATS);
    board
}

/// The connectivity repair (step 6 of the module docs); returns the rounds.
fn repair(params: &Params, board: &mut Board) -> usize {
    let (width, height) = (params.width, params.height);
    let start = board.crowns[0];
    let mut rounds = 0;
    loop {
        let reached = reachable(width, height, &board.kind, start);
        let sealed = (0..board.kind.len())
            .filter(|&c| board.kind[c] != CellKind::Mountain && !reached[c])
            .collect::<Vec<_>>();
        if sealed.is_empty() {
            return rounds;
        }
        let (cost, pred) = zero_one_bfs(width, height, &board.kind, start);
        let Some(&target) = sealed.iter().min_by_key(|&&c| (cost[c], c)) else {
            return rounds;
        };
        // Walk back to the crown; the last mountain met is the first on the path.
        let mut first_mountain = None;
        let mut cell = target;
        while cell != start {
            if board.kind[cell] == CellKind::Mountain {
                first_mountain = Some(cell);
            }
            cell = pred[cell];
        }
        let Some(mountain) = first_mountain else {
            // Unreachable at cost 0 yet no mountain on the path: impossible,
            // but never loop forever on it.
            return rounds;
        };
        for image in mirrors(width, height, mountain) {
            board.kind[image] = CellKind::Plain;
            board.army[image] = 0;
        }
        rounds += 1;
    }
}

/// The orthogonal neighbours of `cell` in the order the repair's search
/// walks them, up, left, right, down: it decides which of equally cheap
/// paths the repair opens, so it is part of the map.
fn neighbours(width: usize, height: usize, cell: usize) -> impl Iterator<Item = usize> {
    let [up, down, left, right] = Grid::new(width, height).neighbours(cell);
    [up, left, right, down].into_iter().flatten()
}

/// Which cells are reachable from `start` over non-mountains (`kind` is
/// the board's `width × height` plane).
pub fn reachable(width: usize, height: usize, kind: &[CellKind], start: usize) -> Vec<bool> {
    let passable = |cell: usize| kind[cell] != CellKind::Mountain;
    let start = (start < kind.len() && passable(start)).then_some(start);
    let (mut dist, mut queue) = (vec![UNREACHABLE; kind.len()], Vec::new());
    let board = Grid::new(width, height);
    grid::search(board, start, passable, UNREACHABLE, &mut dist, &mut queue);
    dist.iter().map(|&d| d != UNREACHABLE).collect()
}

/// Cheapest path costs from `start` (entering a mountain costs 1) and each
/// cell's predecessor on one cheapest path.
fn zero_one_bfs(
    width: usize,
    height: usize,
    kind: &[CellKind],
    start: usize,
) -> (Vec<u32>, Vec<usize>) {
    let mut cost = vec![u32::MAX; kind.len()];
    let mut pred = vec![start; kind.len()];
    let mut deque = VecDeque::new();
    cost[start] = 0;
    deque.push_back(start);
    while let Some(cell) = deque.pop_front() {
        for next in neighbours(width, height, cell) {
            let step = u32::from(kind[next] == CellKind::Mountain);
            let through = cost[cell] + step;
            if through < cost[next] {
                cost[next] = through;
                pred[next] = cell;
                if step == 0 {
                    deque.push_front(next);
                } else {
                    deque.push_back(next);
                }
            }
        }
    }
    (cost, pred)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Mountains in every mirror image of `cells` (quadrant coordinates).
    fn walled(params: &Params, cells: &[(usize, usize)]) -> Board {
        let m = mirrors(params.width, params.height, params.width + 1);
        let mut board = Board::blank(params, [m[0], m[1], m[3], m[2]]);
        for &(row, col) in cells {
            for image in mirrors(params.width, params.height, row * params.width + col) {
                board.kind[image] = CellKind::Mountain;
            }
        }
        board
    }

    fn all_reachable(params: &Params, board: &Board) -> bool {
        board.crowns.iter().all(|&crown| {
            let reached = reachable(params.width, params.height, &board.kind, crown);
            (0..board.kind.len()).all(|c| reached[c] || board.kind[c] == CellKind::Mountain)
        })
    }

    #[test]
    fn repair_opens_one_mirrored_gap_per_wall_layer() {
        let params = Params::STANDARD;
        let ring: Vec<(usize, usize)> = (0..3)
            .flat_map(|r| (0..3).map(move |c| (r, c)))
            .filter(|&cell| cell != (1, 1))
            .collect();
        let mut board = walled(&params, &ring);
        assert!(!all_reachable(&params, &board));
        assert_eq!(repair(&params, &mut board), 1);
        assert!(all_reachable(&params, &board));
        let mountains = board
            .kind
            .iter()
            .filter(|&&k| k == CellKind::Mountain)
            .count();
        assert_eq!(mountains, 4 * (ring.len() - 1));

        // A second wall around the first needs a second round.
        let mut outer: Vec<(usize, usize)> = ring.clone();
        outer.extend((0..4).map(|r| (r, 3)).chain((0..3).map(|c| (3, c))));
        let mut board = walled(&params, &outer);
        assert_eq!(repair(&params, &mut board), 2);
        assert!(all_reachable(&params, &board));
    }

    #[test]
    fn a_connected_board_is_left_alone() {
        let params = Params::BLITZ;
        let mut board = walled(&params, &[(3, 3)]);
        let before = board.clone();
        assert_eq!(repair(&params, &mut board), 0);
        assert_eq!(board, before);
    }
}
