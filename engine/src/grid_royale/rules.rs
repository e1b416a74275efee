//! One turn, in the seed's six phases. Each phase reads the state the
//! previous one left, and inside a phase no effect depends on unit order
//! (see the note on each phase for why).
//!
//! Turn `t` is the `t`-th step (counted from 1): the observation before it
//! says `"turn": t`, and the border looks at `t`.

use super::orders::{Action, Dir, Illegal, Orders};
use super::params::MAX_SEATS;
use super::state::{GridRoyale, Unit};
use crate::game::Outcome;

/// The stable words for how a match ended.
pub mod reason {
    /// `max_turns` turns were played.
    pub const TURN_LIMIT: &str = "turn_limit";
    /// At most one player is not eliminated.
    pub const LAST_STANDING: &str = "last_standing";
    /// Forfeits left at most one player in the match.
    pub const FORFEIT: &str = "forfeit";
}

impl GridRoyale {
    /// Whether `orders` is a legal batch for `seat` now: every named unit is
    /// alive and the seat's, and none is named twice. (The five words and the
    /// shape were already checked by the parser, or by serde for a replay.)
    pub fn check_orders(&self, seat: usize, orders: &Orders) -> Result<(), Illegal> {
        let mut ids = Vec::with_capacity(orders.orders.len());
        for order in &orders.orders {
            match self.unit(order.unit) {
                Some(u) if u.owner == seat => ids.push(order.unit),
                _ => return Err(Illegal::NotYours(u64::from(order.unit))),
            }
        }
        ids.sort_unstable();
        match ids.windows(2).find(|w| w[0] == w[1]) {
            Some(w) => Err(Illegal::Twice(w[0])),
            None => Ok(()),
        }
    }

    /// Plays one turn with `actions[seat]` (`None`: not due, or a no-action
    /// turn). Returns the outcome once the match is over.
    pub fn step_orders(&mut self, actions: &[Option<Action>]) -> Option<Outcome> {
        if self.outcome.is_some() {
            return self.outcome.clone();
        }
        let turn = self.turn + 1;
        let n = self.units.len();
        self.scratch.orders.clear();
        self.scratch.orders.resize(n, None);
        let mut spawns = [false; MAX_SEATS];
        for (seat, spawn) in spawns.iter_mut().enumerate().take(self.params.seats) {
            if let Some(Some(Action(Some(orders)))) = actions.get(seat)
                && self.install(seat, orders)
            {
                *spawn = orders.spawn;
            }
        }
        self.move_phase();
        self.collision_phase();
        self.harvest_phase();
        self.bank_phase(turn);
        self.spawn_phase(turn, &spawns);
        self.border_phase(turn);
        self.turn = turn;
        if turn >= self.params.max_turns {
            self.finish(reason::TURN_LIMIT);
        } else if self.seats_in() <= 1 {
            self.finish(reason::LAST_STANDING);
        }
        self.outcome.clone()
    }

    /// Takes `seats` out: their units vanish with their cargo (nobody
    /// commands them any more) and they rank below every other seat.
    pub fn forfeit_seats(&mut self, seats: &[usize]) -> Option<Outcome> {
        if self.outcome.is_some() {
            return self.outcome.clone();
        }
        for &seat in seats {
            if let Some(flag) = self.forfeited.get_mut(seat) {
                *flag = true;
            }
        }
        let forfeited = &self.forfeited;
        self.units.retain(|u| !forfeited[u.owner]);
        if self.seats_in() <= 1 {
            self.finish(reason::FORFEIT);
        }
        self.outcome.clone()
    }

    /// Seats not eliminated.
    pub fn seats_in(&self) -> usize {
        (0..self.params.seats)
            .filter(|&s| !self.is_eliminated(s))
            .count()
    }

    /// Writes `seat`'s batch into the per-unit orders; `false` (and nothing
    /// written) when the batch is illegal, which makes it a no-action turn.
    fn install(&mut self, seat: usize, orders: &Orders) -> bool {
        for order in &orders.orders {
            let slot = match self.index_of(order.unit) {
                Some(i) if self.units[i].owner == seat && self.scratch.orders[i].is_none() => i,
                _ => {
                    // Undo what this batch wrote: only this seat's units.
                    for (i, unit) in self.units.iter().enumerate() {
                        if unit.owner == seat {
                            self.scratch.orders[i] = None;
                        }
                    }
                    return false;
                }
            };
            self.scratch.orders[slot] = Some(order.dir);
        }
        true
    }

    /// Phase 1. A move pays `floor(source ore / move_cost_divisor)` from
    /// cargo; a unit that cannot pay, or would leave the grid, stays put and
    /// will not harvest. Only cargo and positions change, and each unit's
    /// cost reads its own source cell, which no move alters.
    fn move_phase(&mut self) {
        let side = self.params.side;
        let divisor = self.params.move_cost_divisor;
        self.scratch.harvests.clear();
        for (i, unit) in self.units.iter_mut().enumerate() {
            let dir = self.scratch.orders[i].unwrap_or(Dir::Stay);
            if dir == Dir::Stay {
                self.scratch.harvests.push(true);
                continue;
            }
            self.scratch.harvests.push(false);
            let (dx, dy) = dir.delta();
            let (Some(x), Some(y)) = (
                unit.x.checked_add_signed(dx).filter(|&x| x < side),
                unit.y.checked_add_signed(dy).filter(|&y| y < side),
            ) else {
                continue;
            };
            let cost = self.ore[unit.y * side + unit.x] / divisor;
            if let Some(left) = unit.cargo.checked_sub(cost) {
                unit.cargo = left;
                unit.x = x;
                unit.y = y;
            }
        }
    }

    /// Phase 2. Every cell with two or more units destroys them all and
    /// their cargo spills there as ore, unless they all belong to the owner
    /// of the base they stand on. Decided from the counts of the whole
    /// board, so unit order cannot matter.
    fn collision_phase(&mut self) {
        let side = self.params.side;
        let cells = self.params.cells();
        let scratch = &mut self.scratch;
        if scratch.count.len() != cells {
            scratch.count = vec![0; cells];
            scratch.owners = vec![0; cells];
        }
        let mut crowded = false;
        for unit in &self.units {
            let c = unit.y * side + unit.x;
            scratch.count[c] = scratch.count[c].saturating_add(1);
            scratch.owners[c] |= 1 << unit.owner;
            crowded |= scratch.count[c] > 1;
        }
        if crowded {
            let bases = &self.bases;
            let dies = |u: &Unit, count: u8, owners: u8| {
                count > 1
                    && !(owners == 1 << u.owner
                        && bases[u.owner].x == u.x
                        && bases[u.owner].y == u.y)
            };
            let mut kept = 0;
            for i in 0..self.units.len() {
                let unit = self.units[i];
                let c = unit.y * side + unit.x;
                if dies(&unit, scratch.count[c], scratch.owners[c]) {
                    self.ore[c] = self.ore[c].saturating_add(unit.cargo);
                } else {
                    self.units[kept] = unit;
                    scratch.harvests[kept] = scratch.harvests[i];
                    kept += 1;
                }
            }
            // Clear the dead units' cells too: they were counted above.
            for c in 0..cells {
                scratch.count[c] = 0;
                scratch.owners[c] = 0;
            }
            self.units.truncate(kept);
            scratch.harvests.truncate(kept);
        } else {
            for unit in &self.units {
                let c = unit.y * side + unit.x;
                scratch.count[c] = 0;
                scratch.owners[c] = 0;
            }
        }
    }

    /// Phase 3. A unit that stayed (by order or by default) and is not on
    /// its own base takes `floor(ore / harvest_divisor)`, capped by its free
    /// cargo. After the collisions, the only cells holding more than one
    /// unit are bases with their owner's units, which do not harvest, so no
    /// cell is harvested twice and reading the updated ore is reading the
    /// ore from before the phase.
    fn harvest_phase(&mut self) {
        let side = self.params.side;
        let (divisor, cap) = (self.params.harvest_divisor, self.params.cargo_cap);
        for (unit, &harvests) in self.units.iter_mut().zip(&self.scratch.harvests) {
            let base = self.bases[unit.owner];
            if !harvests || (base.x == unit.x && base.y == unit.y) {
                continue;
            }
            let c = unit.y * side + unit.x;
            let take = (self.ore[c] / divisor).min(cap.saturating_sub(unit.cargo));
            self.ore[c] -= take;
            unit.cargo += take;
        }
    }

    /// Phase 4. Units on their own base hand over all their cargo.
    fn bank_phase(&mut self, turn: u32) {
        for unit in &mut self.units {
            let base = self.bases[unit.owner];
            if unit.cargo > 0 && base.x == unit.x && base.y == unit.y {
                self.banks[unit.owner] =
                    self.banks[unit.owner].saturating_add(u64::from(unit.cargo));
                self.bank_turns[unit.owner] = turn;
                unit.cargo = 0;
            }
        }
    }

    /// Phase 5. A spawn needs the bank, room under the cap and a base no
    /// unit stands on (any unit: an enemy blocks it too); a blocked spawn
    /// costs nothing. Seats spawn in seat order, so ids grow by seat.
    fn spawn_phase(&mut self, turn: u32, spawns: &[bool; MAX_SEATS]) {
        let cost = u64::from(self.params.spawn_cost);
        for (seat, &spawn) in spawns.iter().enumerate().take(self.params.seats) {
            if !spawn || self.banks[seat] < cost {
                continue;
            }
            let base = self.bases[seat];
            let mut own = 0;
            let mut occupied = false;
            for unit in &self.units {
                own += usize::from(unit.owner == seat);
                occupied |= unit.x == base.x && unit.y == base.y;
            }
            if occupied || own >= self.params.units_cap as usize {
                continue;
            }
            self.banks[seat] -= cost;
            if cost > 0 {
                self.bank_turns[seat] = turn;
            }
            // Ids only grow, so `units` stays sorted by id.
            self.units.push(Unit {
                id: self.next_id,
                owner: seat,
                x: base.x,
                y: base.y,
                cargo: 0,
            });
            self.next_id = self.next_id.saturating_add(1);
        }
    }

    /// Phase 6, every turn. On a multiple of `shrink_interval` the zone
    /// first loses a ring while it is wider than `min_zone`; then every unit
    /// outside it is destroyed, cargo and all (the border spills nothing).
    fn border_phase(&mut self, turn: u32) {
        if turn.is_multiple_of(self.params.shrink_interval)
            && self.zone.side() > self.params.min_zone
        {
            self.zone = self.zone.shrunk();
        }
        let zone = self.zone;
        self.units.retain(|u| zone.contains(u.x, u.y));
    }
}
