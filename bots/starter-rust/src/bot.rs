//! The strategy. It is the Python starter's strategy, step for step, so the
//! two starters answer the same frames with the same moves.
//!
//! Every turn we try, in order (see [`Bot::choose`]):
//!  1. win now: a cell next to the enemy general can take it (or, from turn
//!     800, touch it: any move onto it wins);
//!  2. defend: capture enemy armies that threaten our general, or pull armies
//!     back home if we cannot;
//!  3. build a castle where a big army stands far from our other structures;
//!  4. attack: march our biggest army (the "main stack") towards the enemy
//!     general if we have ever seen it (we remember it: fog hides it later),
//!     otherwise towards where it most likely is;
//!  5. expand: capture a neutral plain (or a weak enemy cell) next to our land;
//!  6. gather: move an army one step towards the main stack.
//!
//! Each step is a few breadth-first searches over at most 21x21 cells.

use crate::frame::{
    CASTLE, ENEMY, FOG, FOG_STRUCTURE, Frame, GENERAL, ME, MOUNTAIN, NEUTRAL, PLAIN,
};

// --- Strategy knobs (tweak these first) ---------------------------------------

/// From this turn any move onto the enemy general wins.
const DEATHTOUCH_TURN: u32 = 800;
/// Generals start at least this many steps apart.
const MIN_GENERAL_DISTANCE: u32 = 17;
/// Before this turn we only expand.
const OPENING_TURNS: u32 = 24;
/// The main stack marches once it is at least this big.
const PUSH_MIN_ARMY: i64 = 12;
/// Only build where the crowding surcharge is small.
const CASTLE_MAX_PRICE: i64 = 41;
const CASTLE_FIRST_TURN: u32 = 50;
/// Later castles would not pay back their price.
const CASTLE_LAST_TURN: u32 = 600;
const MAX_CASTLES: usize = 6;
/// Enemy armies this close to our general are threats...
const THREAT_RADIUS: u32 = 4;
/// ...and this close, the general's own army stays home.
const GUARD_RADIUS: u32 = 6;
const UNREACHABLE: u32 = 1_000_000;

/// Directions, indexed by the protocol's `dir` field: up, down, left, right.
const DELTAS: [(isize, isize); 4] = [(-1, 0), (1, 0), (0, -1), (0, 1)];

/// What we answer, before it becomes a line of text.
pub enum Action {
    Pass,
    /// Move from `cell` in direction `dir`, all but one unit (or half if `half`).
    Move {
        cell: usize,
        dir: usize,
        half: bool,
    },
    /// Build a castle on `cell`.
    Build {
        cell: usize,
    },
}

impl Action {
    pub fn to_line(&self, width: usize) -> String {
        match *self {
            Action::Pass => "1 0 0 0 0".to_owned(),
            Action::Move { cell, dir, half } => {
                format!(
                    "0 {} {} {} {}",
                    cell / width,
                    cell % width,
                    dir,
                    u8::from(half)
                )
            }
            Action::Build { cell } => format!("2 {} {} 0 0", cell / width, cell % width),
        }
    }
}

fn step(cell: usize, dir: usize) -> Action {
    Action::Move {
        cell,
        dir,
        half: false,
    }
}

/// The opposite direction: up <-> down, left <-> right.
fn flip(dir: usize) -> usize {
    dir ^ 1
}

pub struct Bot {
    width: usize,
    /// `neighbours[i]`: `(dir, j)` for every in-bounds cell `j` next to `i`.
    neighbours: Vec<Vec<(usize, usize)>>,

    // What we remember between turns (a frame only shows what we see now).
    /// Mountains, and fogged structures we never saw open.
    blocked: Vec<bool>,
    /// Cells we have seen at least once.
    ever_seen: Vec<bool>,
    /// Cells we have seen as plain, castle or general at least once.
    seen_open: Vec<bool>,
    /// Cells we last saw owned by the enemy.
    enemy_seen: Vec<bool>,
    my_general: Option<usize>,
    /// Once seen, kept: generals never move.
    enemy_general: Option<usize>,
    /// BFS distance from our general, computed on the first frame.
    home_dist: Option<Vec<u32>>,

    // Recomputed every turn.
    mine: Vec<usize>,
    structures: Vec<usize>,
}

impl Bot {
    pub fn new(_player_id: u32, height: usize, width: usize) -> Self {
        let n = height * width;
        let mut neighbours = Vec::with_capacity(n);
        for i in 0..n {
            let (r, c) = ((i / width) as isize, (i % width) as isize);
            let mut list = Vec::with_capacity(4);
            for (d, (dr, dc)) in DELTAS.iter().enumerate() {
                let (rr, cc) = (r + dr, c + dc);
                if rr >= 0 && cc >= 0 && (rr as usize) < height && (cc as usize) < width {
                    list.push((d, rr as usize * width + cc as usize));
                }
            }
            neighbours.push(list);
        }
        Bot {
            width,
            neighbours,
            blocked: vec![false; n],
            ever_seen: vec![false; n],
            seen_open: vec![false; n],
            enemy_seen: vec![false; n],
            my_general: None,
            enemy_general: None,
            home_dist: None,
            mine: Vec::new(),
            structures: Vec::new(),
        }
    }

    // --- Memory ---------------------------------------------------------------

    fn observe(&mut self, f: &Frame) {
        for (i, &ty) in f.types.iter().enumerate() {
            match ty {
                FOG => {}
                MOUNTAIN => self.blocked[i] = true,
                // A mountain or a castle in fog. If we once saw the cell open,
                // the enemy built a castle there: passable (if costly).
                FOG_STRUCTURE => self.blocked[i] = !self.seen_open[i],
                _ => {
                    // Plain, castle or general: visible right now.
                    self.ever_seen[i] = true;
                    self.seen_open[i] = true;
                    self.blocked[i] = false;
                    self.enemy_seen[i] = f.owner[i] == ENEMY;
                    if ty == GENERAL {
                        match f.owner[i] {
                            ME => self.my_general = Some(i),
                            ENEMY => self.enemy_general = Some(i),
                            _ => {}
                        }
                    }
                }
            }
        }
        if self.home_dist.is_none()
            && let Some(home) = self.my_general
        {
            self.home_dist = Some(self.passable_dist(&[home]));
        }
    }

    /// Distances (in moves) from the nearest source over cells where `allowed`.
    fn bfs(&self, sources: &[usize], allowed: impl Fn(usize) -> bool) -> Vec<u32> {
        let mut dist = vec![UNREACHABLE; self.neighbours.len()];
        let mut queue = std::collections::VecDeque::new();
        for &s in sources {
            dist[s] = 0;
            queue.push_back(s);
        }
        while let Some(i) = queue.pop_front() {
            let nd = dist[i] + 1;
            for &(_, j) in &self.neighbours[i] {
                if dist[j] > nd && allowed(j) {
                    dist[j] = nd;
                    queue.push_back(j);
                }
            }
        }
        dist
    }

    fn passable_dist(&self, sources: &[usize]) -> Vec<u32> {
        self.bfs(sources, |i| !self.blocked[i])
    }

    fn own_land_dist(&self, f: &Frame, sources: &[usize]) -> Vec<u32> {
        self.bfs(sources, |i| f.owner[i] == ME)
    }

    /// 35 plus a surcharge for every structure of ours within 6 steps.
    fn castle_price(&self, cell: usize) -> i64 {
        let (r, c) = ((cell / self.width) as i64, (cell % self.width) as i64);
        let mut price = 35;
        for &s in &self.structures {
            let (rr, cc) = ((s / self.width) as i64, (s % self.width) as i64);
            price += (14 - 2 * ((rr - r).abs() + (cc - c).abs())).max(0);
        }
        price
    }

    // --- Decision -------------------------------------------------------------

    pub fn choose(&mut self, f: &Frame) -> Action {
        self.observe(f);
        self.mine = (0..f.owner.len()).filter(|&i| f.owner[i] == ME).collect();
        self.structures = self
            .mine
            .iter()
            .copied()
            .filter(|&i| f.types[i] == CASTLE || f.types[i] == GENERAL)
            .collect();
        if self.mine.is_empty() {
            return Action::Pass;
        }
        self.win_now(f)
            .or_else(|| self.defend(f))
            .or_else(|| self.build_castle(f))
            .or_else(|| self.attack(f))
            .or_else(|| self.expand(f))
            .or_else(|| self.gather_to_main(f))
            .unwrap_or(Action::Pass)
    }

    /// Take the enemy general if a neighbouring cell of ours can.
    fn win_now(&self, f: &Frame) -> Option<Action> {
        let eg = self.enemy_general?;
        let visible = f.types[eg] == GENERAL;
        for &(d, j) in &self.neighbours[eg] {
            if f.owner[j] != ME || f.army[j] < 2 {
                continue;
            }
            let sent = f.army[j] - 1;
            if f.turn >= DEATHTOUCH_TURN || (visible && sent > f.army[eg]) {
                return Some(step(j, flip(d)));
            }
        }
        None
    }

    /// Deal with enemy armies close to our general.
    fn defend(&self, f: &Frame) -> Option<Action> {
        let home = self.my_general?;
        let threats = self.threats(f, home);
        if threats.is_empty() {
            return None;
        }
        // First choice: capture the threatening cell. Capturing the cell an
        // attack starts from also cancels that attack (a "chase" goes first).
        // Our general may strike too, but not from turn 800: there a touch
        // onto our general beats a counter-attack from it.
        for &(_, e) in &threats {
            let mut best: Option<(usize, usize)> = None;
            for &(d, j) in &self.neighbours[e] {
                if f.owner[j] != ME || f.army[j] - 1 <= f.army[e] {
                    continue;
                }
                if j == home && f.turn + 1 >= DEATHTOUCH_TURN {
                    continue;
                }
                if best.is_none_or(|(_, b)| f.army[j] > f.army[b]) {
                    best = Some((flip(d), j));
                }
            }
            if let Some((d, j)) = best {
                return Some(step(j, d));
            }
        }
        // Otherwise bring armies home, unless we are about to win elsewhere.
        if f.turn >= DEATHTOUCH_TURN && self.enemy_general.is_some() {
            return None;
        }
        self.gather_to(f, home, 2 * THREAT_RADIUS)
    }

    /// Enemy cells that could take our general soon, most dangerous first.
    fn threats(&self, f: &Frame, home: usize) -> Vec<(i64, usize)> {
        let near = self.passable_dist(&[home]);
        let mut found = Vec::new();
        for (i, &d) in near.iter().enumerate() {
            if f.owner[i] != ENEMY || d > THREAT_RADIUS || f.army[i] < 2 {
                continue;
            }
            if f.turn + 1 >= DEATHTOUCH_TURN && d == 1 {
                // From turn 800 any army of 2+ next to our general can touch it.
                found.push((i64::from(UNREACHABLE), i));
            } else if f.army[i] - i64::from(d) >= f.army[home] {
                // Roughly: it loses one unit per step on the way in.
                found.push((f.army[i], i));
            }
        }
        found.sort_by(|a, b| b.cmp(a));
        found
    }

    /// Turn a big army far from our other structures into a castle.
    fn build_castle(&self, f: &Frame) -> Option<Action> {
        if !(CASTLE_FIRST_TURN..=CASTLE_LAST_TURN).contains(&f.turn) {
            return None;
        }
        // `structures` holds our general and our castles.
        if self.structures.len() > MAX_CASTLES {
            return None;
        }
        let mut best: Option<usize> = None;
        for &i in &self.mine {
            if f.types[i] != PLAIN || f.army[i] < 35 {
                continue;
            }
            // Keep castles off the front line: no enemy cell in sight around it.
            if self.neighbours[i].iter().any(|&(_, j)| f.owner[j] == ENEMY) {
                continue;
            }
            let price = self.castle_price(i);
            // Keep enough left over for the army to go on marching.
            if price > CASTLE_MAX_PRICE || f.army[i] < price + PUSH_MIN_ARMY {
                continue;
            }
            if best.is_none_or(|b| f.army[i] > f.army[b]) {
                best = Some(i);
            }
        }
        best.map(|cell| Action::Build { cell })
    }

    /// Cells the main stack should walk towards.
    fn targets(&self) -> Vec<usize> {
        if let Some(eg) = self.enemy_general {
            return vec![eg];
        }
        // The general is on a cell we have never seen, at least 17 steps from ours.
        let n = self.blocked.len();
        let unseen = |i: usize| !self.ever_seen[i] && !self.blocked[i];
        let mut candidates: Vec<usize> = match &self.home_dist {
            Some(hd) => (0..n)
                .filter(|&i| unseen(i) && (MIN_GENERAL_DISTANCE..UNREACHABLE).contains(&hd[i]))
                .collect(),
            None => Vec::new(),
        };
        if candidates.is_empty() {
            candidates = (0..n).filter(|&i| unseen(i)).collect();
        }
        if candidates.is_empty() || !self.enemy_seen.contains(&true) {
            return candidates;
        }
        // Enemy land grows out of its general: look next to what we saw.
        let seen: Vec<usize> = (0..n).filter(|&i| self.enemy_seen[i]).collect();
        let de = self.passable_dist(&seen);
        let best = candidates
            .iter()
            .map(|&i| de[i])
            .min()
            .unwrap_or(UNREACHABLE);
        candidates.into_iter().filter(|&i| de[i] == best).collect()
    }

    /// Our biggest army. The general's own army stays home while enemy armies
    /// are around it (its army is what defends it).
    fn main_stack(&self, f: &Frame) -> usize {
        let guard = match self.my_general {
            Some(home) => f.turn < DEATHTOUCH_TURN && self.home_watched(f, home),
            None => false,
        };
        let mut best: Option<usize> = None;
        for &i in &self.mine {
            if guard && Some(i) == self.my_general {
                continue;
            }
            if best.is_none_or(|b| f.army[i] > f.army[b]) {
                best = Some(i);
            }
        }
        best.unwrap_or(self.mine[0])
    }

    /// Is an enemy army of some size within GUARD_RADIUS of our general?
    fn home_watched(&self, f: &Frame, home: usize) -> bool {
        let near = self.passable_dist(&[home]);
        (0..f.owner.len()).any(|i| f.owner[i] == ENEMY && f.army[i] >= 3 && near[i] <= GUARD_RADIUS)
    }

    /// March the main stack one step towards the target.
    fn attack(&self, f: &Frame) -> Option<Action> {
        if f.turn < OPENING_TURNS {
            return None;
        }
        let goal = self.targets();
        if goal.is_empty() {
            return None;
        }
        let main = self.main_stack(f);
        let sent = f.army[main] - 1;
        if f.army[main] < PUSH_MIN_ARMY && f.turn < DEATHTOUCH_TURN {
            return None;
        }
        let dist = self.passable_dist(&goal);
        if dist[main] >= UNREACHABLE {
            return None;
        }
        // Step to a neighbour closer to the goal; prefer our own cells (free),
        // then neutral ones, then the weakest enemy cell.
        let mut best: Option<(i64, usize, usize)> = None;
        for &(d, j) in &self.neighbours[main] {
            if dist[j] >= dist[main] {
                continue;
            }
            let cost = match f.owner[j] {
                ME => 0,
                NEUTRAL => 1,
                _ => 2 + f.army[j],
            };
            if best.is_none_or(|(c, _, _)| cost < c) {
                best = Some((cost, d, j));
            }
        }
        let (_, d, j) = best?;
        if f.owner[j] == ENEMY && sent <= f.army[j] {
            return None; // too weak to break through: gather first
        }
        Some(step(main, d))
    }

    /// Capture a neutral plain (or a weak enemy cell) next to our land.
    fn expand(&self, f: &Frame) -> Option<Action> {
        let goal = self.targets();
        let dist = if goal.is_empty() {
            None
        } else {
            Some(self.passable_dist(&goal))
        };
        let mut best: Option<(i64, usize, usize)> = None;
        for &i in &self.mine {
            let a = f.army[i];
            if a < 2 {
                continue;
            }
            for &(d, j) in &self.neighbours[i] {
                if f.owner[j] == ME || f.types[j] == MOUNTAIN || f.types[j] == FOG_STRUCTURE {
                    continue;
                }
                // Scores are in tenths so that they stay integers.
                let mut score = if f.owner[j] == ENEMY {
                    if a - 1 <= f.army[j] {
                        continue;
                    }
                    200 + 10 * f.army[j] // shrinking the enemy is worth more
                } else {
                    100
                };
                // Open ground (more neutral neighbours) keeps the frontier growing.
                let open = self.neighbours[j]
                    .iter()
                    .filter(|&&(_, k)| f.owner[k] == NEUTRAL && f.types[k] == PLAIN)
                    .count() as i64;
                score += 10 * open;
                if let Some(dist) = &dist
                    && dist[j] < dist[i]
                {
                    score += 30; // towards the target
                }
                // Prefer moving small armies: they have nothing better to do.
                score -= a;
                if best.is_none_or(|(s, _, _)| score > s) {
                    best = Some((score, i, d));
                }
            }
        }
        if let Some((_, i, d)) = best {
            return Some(step(i, d));
        }
        // Nothing can capture right now: walk the biggest army towards the
        // nearest neutral plain, over our own land.
        let frontier: Vec<usize> = (0..f.owner.len())
            .filter(|&j| f.owner[j] == NEUTRAL && f.types[j] == PLAIN)
            .collect();
        if frontier.is_empty() {
            return None;
        }
        let dist = self.own_land_dist(f, &frontier);
        let mut walker: Option<usize> = None;
        for &i in &self.mine {
            if f.army[i] < 2 || dist[i] >= UNREACHABLE {
                continue;
            }
            // Biggest army first; among equals the one closest to the frontier.
            if walker.is_none_or(|w| (f.army[i], dist[w]) > (f.army[w], dist[i])) {
                walker = Some(i);
            }
        }
        let walker = walker?;
        self.neighbours[walker]
            .iter()
            .find(|&&(_, j)| dist[j] + 1 == dist[walker])
            .map(|&(d, _)| step(walker, d))
    }

    fn gather_to_main(&self, f: &Frame) -> Option<Action> {
        self.gather_to(f, self.main_stack(f), UNREACHABLE)
    }

    /// Move the biggest army (other than root's) one step towards root, over our land.
    fn gather_to(&self, f: &Frame, root: usize, radius: u32) -> Option<Action> {
        let dist = self.own_land_dist(f, &[root]);
        let mut best: Option<usize> = None;
        for &i in &self.mine {
            if i == root || f.army[i] < 2 || dist[i] > radius || dist[i] >= UNREACHABLE {
                continue;
            }
            if best.is_none_or(|b| f.army[i] > f.army[b]) {
                best = Some(i);
            }
        }
        let best = best?;
        self.neighbours[best]
            .iter()
            .find(|&&(_, j)| dist[j] + 1 == dist[best])
            .map(|&(d, _)| step(best, d))
    }
}
