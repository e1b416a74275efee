//! The scripted player's steps, in the order [`Scripted`] tries them (see
//! the module documentation of `scripted`): each finds something to do or
//! gives way to the next.

use super::{
    ALLY, CASTLE_FIRST_TURN, CASTLE_LAST_TURN, CASTLE_MAX_SURCHARGE, CASTLE_RESERVE, Choice, Ctx,
    ENEMY, GUARD_RADIUS, LAUNCH_ARMY, MARCH_ARMY, MAX_CASTLES, ME, NEUTRAL, OPENING_TURNS,
    Scripted, THREAT_RADIUS, UNREACHABLE, bfs, flip,
};
use crate::generals::observe::tile;

impl Scripted {
    /// Takes an enemy general from a neighbouring cell, if one can.
    pub(super) fn win_now(&self, ctx: &Ctx) -> Option<Choice> {
        let mut best: Option<(i64, usize, usize)> = None;
        for &eg in &self.enemy_generals {
            let visible = self.kind[eg] == tile::GENERAL;
            for (d, j) in self.grid.neighbours(eg) {
                if self.own[j] != ME || self.army[j] < 2 {
                    continue;
                }
                let sent = self.army[j] - 1;
                let wins = ctx.turn >= ctx.deathtouch || (visible && sent > self.army[eg]);
                if wins && best.is_none_or(|(a, _, _)| sent > a) {
                    best = Some((sent, j, flip(d)));
                }
            }
        }
        best.map(|(_, j, d)| Choice::Move(j, d))
    }

    /// Deals with enemy armies close to our general.
    pub(super) fn defend(&mut self, ctx: &Ctx) -> Option<Choice> {
        let home = self.my_general?;
        self.find_threats(ctx, home);
        // First choice: capture the threatening cell. Capturing the cell an
        // attack starts from also cancels the attack (a chase goes first).
        // The general may strike too, but not once deathtouch is on: a touch
        // onto it beats a counter-attack from it.
        for &(_, e) in &self.threats {
            let mut best: Option<(usize, usize)> = None;
            for (d, j) in self.grid.neighbours(e) {
                if self.own[j] != ME || self.army[j] - 1 <= self.army[e] {
                    continue;
                }
                if j == home && ctx.turn + 1 >= ctx.deathtouch {
                    continue;
                }
                if best.is_none_or(|(_, b)| self.army[j] > self.army[b]) {
                    best = Some((flip(d), j));
                }
            }
            if let Some((d, j)) = best {
                return Some(Choice::Move(j, d));
            }
        }
        if self.threats.is_empty() {
            return None;
        }
        // Otherwise bring armies home, unless we are about to win elsewhere.
        if ctx.turn >= ctx.deathtouch && !self.enemy_generals.is_empty() {
            return None;
        }
        self.gather_to(home, 2 * THREAT_RADIUS, None)
    }

    /// Fills `threats`: enemy cells that could take our general soon, most
    /// dangerous first.
    pub(super) fn find_threats(&mut self, ctx: &Ctx, home: usize) {
        self.threats.clear();
        for i in 0..self.grid.len() {
            let d = self.near_home[i];
            if self.own[i] != ENEMY || d > THREAT_RADIUS || self.army[i] < 2 {
                continue;
            }
            if ctx.turn + 1 >= ctx.deathtouch && d == 1 {
                // With deathtouch any army of 2+ next to our general can touch it.
                self.threats.push((i64::MAX, i));
            } else if self.army[i] - i64::from(d) >= self.army[home] {
                // Roughly: it loses one unit per step on the way in.
                self.threats.push((self.army[i], i));
            }
        }
        self.threats.sort_unstable_by(|a, b| b.cmp(a));
    }

    /// The price of a castle on `cell`: the base plus the crowding surcharge
    /// of each of our structures within six steps.
    pub(super) fn castle_price(&self, ctx: &Ctx, cell: usize) -> i64 {
        ctx.build_base_cost
            + self
                .structures
                .iter()
                .map(|&s| (14 - 2 * self.grid.manhattan(s, cell)).max(0))
                .sum::<i64>()
    }

    /// Turns a big army far from our other structures into a castle.
    pub(super) fn build_castle(&self, ctx: &Ctx) -> Option<Choice> {
        if !ctx.builds || !(CASTLE_FIRST_TURN..=CASTLE_LAST_TURN).contains(&ctx.turn) {
            return None;
        }
        // `structures` holds our general as well as our castles.
        if self.structures.len() > MAX_CASTLES {
            return None;
        }
        let mut best: Option<usize> = None;
        for &i in &self.mine {
            if self.kind[i] != tile::PLAIN || self.army[i] < ctx.build_base_cost {
                continue;
            }
            // Keep castles off the front line.
            if self.grid.neighbours(i).any(|(_, j)| self.own[j] == ENEMY) {
                continue;
            }
            let price = self.castle_price(ctx, i);
            // Keep enough left over for the army to go on marching.
            if price > ctx.build_base_cost + CASTLE_MAX_SURCHARGE
                || self.army[i] < price + CASTLE_RESERVE
            {
                continue;
            }
            if best.is_none_or(|b| self.army[i] > self.army[b]) {
                best = Some(i);
            }
        }
        best.map(Choice::Build)
    }

    /// Our biggest army. The general's own army stays home while enemy
    /// armies are around it: its army is what defends it.
    pub(super) fn main_stack(&self, ctx: &Ctx) -> usize {
        let guard = match self.my_general {
            Some(_) => ctx.turn < ctx.deathtouch && self.home_watched(),
            None => false,
        };
        let mut best: Option<usize> = None;
        for &i in &self.mine {
            if guard && Some(i) == self.my_general {
                continue;
            }
            if best.is_none_or(|b| self.army[i] > self.army[b]) {
                best = Some(i);
            }
        }
        best.unwrap_or(self.mine[0])
    }

    /// Is an enemy army of some size within GUARD_RADIUS of our general?
    pub(super) fn home_watched(&self) -> bool {
        (0..self.grid.len())
            .any(|i| self.own[i] == ENEMY && self.army[i] >= 3 && self.near_home[i] <= GUARD_RADIUS)
    }

    /// Marches the main stack one step towards the target.
    pub(super) fn attack(&self, ctx: &Ctx, main: usize, marching: bool) -> Option<Choice> {
        if self.goal.is_empty() {
            return None;
        }
        let army = self.army[main];
        let sent = army - 1;
        // Once deathtouch is on, any army next to the general wins: go.
        let go = if marching { MARCH_ARMY } else { LAUNCH_ARMY };
        if army < go && ctx.turn < ctx.deathtouch {
            return None;
        }
        let dist = &self.goal_dist;
        if dist[main] == UNREACHABLE {
            return None;
        }
        // Step to a neighbour closer to the goal; prefer our own cells (free),
        // then neutral ones, then the weakest enemy cell.
        let mut best: Option<(i64, usize, usize)> = None;
        for (d, j) in self.grid.neighbours(main) {
            if dist[j] >= dist[main] {
                continue;
            }
            let cost = match self.own[j] {
                ME | ALLY => 0,
                NEUTRAL => 1 + self.garrison[j],
                _ => 2 + self.army[j],
            };
            if best.is_none_or(|(c, _, _)| cost < c) {
                best = Some((cost, d, j));
            }
        }
        let (_, d, j) = best?;
        if matches!(self.own[j], ENEMY | NEUTRAL) && sent <= self.army[j] {
            return None; // too weak to break through: gather first
        }
        Some(Choice::Move(main, d))
    }

    /// Captures a neutral cell (or a weak enemy cell) next to our land.
    /// After the opening the general's army stays home.
    pub(super) fn expand(&self, ctx: &Ctx) -> Option<Choice> {
        let has_goal = !self.goal.is_empty();
        let spare_home = ctx.turn < OPENING_TURNS;
        let mut best: Option<(i64, u64, usize, usize)> = None;
        for &i in &self.mine {
            let a = self.army[i];
            if a < 2 || (!spare_home && Some(i) == self.my_general) {
                continue;
            }
            for (d, j) in self.grid.neighbours(i) {
                if matches!(self.own[j], ME | ALLY)
                    || matches!(self.kind[j], tile::MOUNTAIN | tile::FOG_STRUCTURE)
                {
                    continue;
                }
                // Scores are in tenths so that they stay integers.
                let mut score = if self.own[j] == ENEMY {
                    if a - 1 <= self.army[j] {
                        continue;
                    }
                    200 + 10 * self.army[j] // shrinking the enemy is worth more
                } else if self.kind[j] == tile::CASTLE {
                    // A neutral castle produces for whoever takes it.
                    if a - 1 <= self.army[j] {
                        continue;
                    }
                    1000
                } else {
                    100
                };
                // Open ground (more neutral neighbours) keeps the frontier growing.
                let open = self
                    .grid
                    .neighbours(j)
                    .filter(|&(_, k)| self.own[k] == NEUTRAL && self.kind[k] == tile::PLAIN)
                    .count() as i64;
                score += 10 * open;
                if has_goal && self.goal_dist[j] < self.goal_dist[i] {
                    score += 30; // towards the target
                }
                // Prefer moving small armies: they have nothing better to do.
                score -= a;
                let tie = self.jitter(ctx.turn, i * 4 + d);
                if best.is_none_or(|(s, t, _, _)| (score, tie) > (s, t)) {
                    best = Some((score, tie, i, d));
                }
            }
        }
        best.map(|(_, _, i, d)| Choice::Move(i, d))
    }

    /// Nothing can capture right now: walks the biggest army towards the
    /// nearest neutral plain, over our own land.
    pub(super) fn walk_to_frontier(&mut self) -> Option<Choice> {
        let n = self.grid.len();
        self.sources.clear();
        self.sources
            .extend((0..n).filter(|&j| self.own[j] == NEUTRAL && self.kind[j] == tile::PLAIN));
        if self.sources.is_empty() {
            return None;
        }
        let own = &self.own;
        bfs(
            self.grid,
            &self.sources,
            |i| own[i] == ME,
            &mut self.dist,
            &mut self.queue,
        );
        let dist = &self.dist;
        let mut walker: Option<usize> = None;
        for &i in &self.mine {
            if self.army[i] < 2 || dist[i] == UNREACHABLE {
                continue;
            }
            // Biggest army first; among equals the one closest to the frontier.
            if walker.is_none_or(|w| (self.army[i], dist[w]) > (self.army[w], dist[i])) {
                walker = Some(i);
            }
        }
        let walker = walker?;
        self.grid
            .neighbours(walker)
            .find(|&(_, j)| dist[j] != UNREACHABLE && dist[j] + 1 == dist[walker])
            .map(|(d, _)| Choice::Move(walker, d))
    }

    /// Moves the biggest army within `radius` of `root` (other than root's
    /// and `spare`'s) one step towards `root`, over our land.
    pub(super) fn gather_to(
        &mut self,
        root: usize,
        radius: u32,
        spare: Option<usize>,
    ) -> Option<Choice> {
        let own = &self.own;
        bfs(
            self.grid,
            &[root],
            |i| own[i] == ME,
            &mut self.dist,
            &mut self.queue,
        );
        let dist = &self.dist;
        let mut best: Option<usize> = None;
        for &i in &self.mine {
            if i == root
                || Some(i) == spare
                || self.army[i] < 2
                || dist[i] > radius
                || dist[i] == UNREACHABLE
            {
                continue;
            }
            if best.is_none_or(|b| self.army[i] > self.army[b]) {
                best = Some(i);
            }
        }
        let best = best?;
        // Towards the strongest cell on the way, so that streams merge.
        self.grid
            .neighbours(best)
            .filter(|&(_, j)| dist[j] != UNREACHABLE && dist[j] + 1 == dist[best])
            .max_by_key(|&(_, j)| (self.army[j], std::cmp::Reverse(j)))
            .map(|(d, _)| Choice::Move(best, d))
    }
}
