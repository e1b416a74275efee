//! One turn, in the six steps of the 2011 game adapted to the seed:
//! moves and collisions, combat, razing, spawning, gathering, food
//! placement; then vision, the turn count, the endings ([`super::end`]).
//!
//! Spawning runs before gathering, so food gathered on a turn becomes an
//! ant on the next turn at the earliest; and after combat and razing, so a
//! defender killed on its hill is replaced in the same turn from food
//! already in the hive. Nothing inside a step depends on the order the
//! ants are listed in: every decision reads the state the previous step
//! left.

use super::geometry::Dir;
use super::orders::Orders;
use super::params::MAX_SEATS;
use super::state::{Ant, Ants, Cause, Death, Razed, Razing};
use crate::game::Outcome;

impl Ants {
    /// Plays one turn with `actions[seat]` (`None`: not due). Returns the
    /// outcome once the match is over.
    pub fn step_orders(&mut self, actions: &[Option<Orders>]) -> Option<Outcome> {
        if self.outcome.is_some() {
            return self.outcome.clone();
        }
        let turn = self.turn + 1;
        self.deaths.clear();
        self.razings.clear();
        let moved = self.move_ants(actions);
        let survivors = self.collide(moved);
        self.ants = self.battle(survivors);
        self.raze(turn);
        self.spawn(turn);
        self.gather();
        self.place_food();
        self.fold_vision();
        self.turn = turn;
        self.check_end();
        self.outcome.clone()
    }

    /// Step 1a. Every ant's destination: its order's square, unless that is
    /// water or food (a refused move is a stay). Positional: the `i`-th
    /// ant of a seat in mine order takes letter `i`.
    fn move_ants(&self, actions: &[Option<Orders>]) -> Vec<Ant> {
        let mut index = [0usize; MAX_SEATS];
        self.ants
            .iter()
            .map(|ant| {
                let i = index[ant.owner];
                index[ant.owner] += 1;
                let dir = actions
                    .get(ant.owner)
                    .and_then(Option::as_ref)
                    .map_or(Dir::Stay, |o| o.get(i));
                let target = self.torus.step(ant.square, dir);
                let refused = self.is_water(target) || self.food.binary_search(&target).is_ok();
                Ant {
                    square: if refused { ant.square } else { target },
                    owner: ant.owner,
                }
            })
            .collect()
    }

    /// Step 1b. Every square two or more ants end on kills them all,
    /// whoever owns them; swaps end on different squares and pass. The
    /// survivors come back sorted by square.
    fn collide(&mut self, mut moved: Vec<Ant>) -> Vec<Ant> {
        moved.sort_by_key(|a| (a.square, a.owner));
        let mut kept = Vec::with_capacity(moved.len());
        let mut i = 0;
        while i < moved.len() {
            let square = moved[i].square;
            let mut j = i;
            while j < moved.len() && moved[j].square == square {
                j += 1;
            }
            if j - i == 1 {
                kept.push(moved[i]);
            } else {
                let (row, col) = self.torus.row_col(square);
                for ant in &moved[i..j] {
                    self.deaths.push(Death {
                        row,
                        col,
                        owner: ant.owner,
                        cause: Cause::Collision,
                        killers: Vec::new(),
                    });
                }
            }
            i = j;
        }
        kept
    }

    /// Step 2. An ant's focus is the number of enemies within the attack
    /// radius; it dies when any of them has a focus at most its own. All
    /// foci are counted before anyone is removed, so deaths never cascade.
    fn battle(&mut self, ants: Vec<Ant>) -> Vec<Ant> {
        let disc = self.torus.disc(self.params.attack_radius2);
        let occupant = self.occupancy(&ants);
        let torus = self.torus;
        let enemies: Vec<Vec<usize>> = ants
            .iter()
            .map(|ant| {
                disc.iter()
                    .filter_map(|&d| occupant[torus.add(ant.square, d)])
                    .map(|j| j as usize)
                    .filter(|&j| ants[j].owner != ant.owner)
                    .collect()
            })
            .collect();
        let focus: Vec<usize> = enemies.iter().map(Vec::len).collect();
        let mut kept = Vec::with_capacity(ants.len());
        let mut deaths = Vec::new();
        for (i, &ant) in ants.iter().enumerate() {
            let mut killers: Vec<usize> = enemies[i]
                .iter()
                .copied()
                .filter(|&j| focus[j] <= focus[i])
                .collect();
            if killers.is_empty() {
                kept.push(ant);
                continue;
            }
            killers.sort_by_key(|&j| ants[j].square);
            let (row, col) = self.torus.row_col(ant.square);
            deaths.push(Death {
                row,
                col,
                owner: ant.owner,
                cause: Cause::Battle,
                killers: killers
                    .into_iter()
                    .map(|j| {
                        let (r, c) = self.torus.row_col(ants[j].square);
                        [r, c, ants[j].owner]
                    })
                    .collect(),
            });
        }
        self.deaths.extend(deaths);
        kept
    }

    /// Per square: the index in `ants` of the ant on it.
    pub(crate) fn occupancy(&self, ants: &[Ant]) -> Vec<Option<u32>> {
        let mut occupant = vec![None; self.torus.len()];
        for (i, ant) in ants.iter().enumerate() {
            occupant[ant.square] = u32::try_from(i).ok();
        }
        occupant
    }

    /// Step 3. A surviving enemy on a standing hill razes it: +2 to the
    /// razer's owner, −1 to the hill's. An own ant on it touches it instead.
    fn raze(&mut self, turn: u32) {
        let occupant = self.occupancy(&self.ants);
        for h in 0..self.hills.len() {
            let hill = self.hills[h];
            if hill.razed.is_some() {
                continue;
            }
            let Some(i) = occupant[hill.square] else {
                continue;
            };
            let by = self.ants[i as usize].owner;
            if by == hill.owner {
                self.hills[h].touched = turn;
            } else {
                self.razed(h, by, turn);
            }
        }
    }

    /// Records hill `h` razed by `by` on `turn`, with its points.
    pub(crate) fn razed(&mut self, h: usize, by: usize, turn: u32) {
        let hill = &mut self.hills[h];
        hill.razed = Some(Razed { turn, by });
        let (row, col) = self.torus.row_col(hill.square);
        let owner = hill.owner;
        self.scores[by] = self.scores[by].saturating_add(2);
        self.scores[owner] = self.scores[owner].saturating_sub(1);
        self.stats[by].hills_razed = self.stats[by].hills_razed.saturating_add(1);
        self.razings.push(Razing {
            row,
            col,
            owner,
            by,
        });
    }

    /// Step 4. Each stored food becomes one ant on a free standing hill of
    /// its colony, the hill untouched longest first (listing order breaks
    /// ties); one ant a hill, since the new ant then occupies it.
    fn spawn(&mut self, turn: u32) {
        let occupant = self.occupancy(&self.ants);
        let mut born = Vec::new();
        for seat in 0..self.params.players {
            if self.forfeited[seat] || self.hives[seat] == 0 {
                continue;
            }
            let mut free: Vec<usize> = (0..self.hills.len())
                .filter(|&h| {
                    let hill = &self.hills[h];
                    hill.owner == seat && hill.razed.is_none() && occupant[hill.square].is_none()
                })
                .collect();
            free.sort_by_key(|&h| (self.hills[h].touched, h));
            for h in free.into_iter().take(self.hives[seat] as usize) {
                self.hives[seat] -= 1;
                self.hills[h].touched = turn;
                self.stats[seat].ants_spawned = self.stats[seat].ants_spawned.saturating_add(1);
                born.push(Ant {
                    square: self.hills[h].square,
                    owner: seat,
                });
            }
        }
        if !born.is_empty() {
            self.ants.extend(born);
            self.ants.sort_by_key(|a| a.square);
        }
    }

    /// Step 5. Food with ants of one colony alone within the gathering
    /// radius goes to that colony's hive; food several colonies reach is
    /// destroyed; food nobody reaches stays.
    fn gather(&mut self) {
        let disc = self.torus.disc(self.params.gather_radius2);
        let occupant = self.occupancy(&self.ants);
        let mut left = Vec::with_capacity(self.food.len());
        for &f in &self.food {
            let mut colonies = 0u16;
            for &d in &disc {
                if let Some(i) = occupant[self.torus.add(f, d)] {
                    colonies |= 1 << self.ants[i as usize].owner;
                }
            }
            match colonies.count_ones() {
                0 => left.push(f),
                1 => {
                    let seat = colonies.trailing_zeros() as usize;
                    self.hives[seat] = self.hives[seat].saturating_add(1);
                    self.stats[seat].food_gathered =
                        self.stats[seat].food_gathered.saturating_add(1);
                }
                _ => {}
            }
        }
        self.food = left;
    }

    /// Takes `seats` out: their ants vanish; their hills stay standing and
    /// can be razed. Forfeits that leave at most one colony with ants end
    /// the match as a step would, with the reason `forfeit`.
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
        self.ants.retain(|a| !forfeited[a.owner]);
        self.check_end_after_forfeit();
        self.outcome.clone()
    }
}
