//! One step of the competition ruleset, time t → t+1.
//!
//! The order of phases is the rules' order and each one is a function below:
//! builds (player 0 first), move priority, the two moves one after the other,
//! the time tick, growth or general transfer, deathtouch, outcome, turn cap.

use super::action::{Action, ActionKind};
use super::board::{Generals, Kind};
use crate::game::Outcome;

/// A move's cells, resolved once per step.
#[derive(Clone, Copy)]
struct MoveStep {
    src: usize,
    dst: usize,
    /// Moves half the army instead of all but one.
    half: bool,
}

/// What one executed move did, as the later phases need it.
#[derive(Clone, Copy, Default)]
struct MoveEffect {
    /// The move was valid when it executed and landed on the enemy general's cell.
    touched_enemy_general: bool,
    /// The move took the enemy general.
    captured_general: bool,
}

impl Generals {
    /// Applies one action per player; returns the outcome once the game is over.
    /// Stepping a finished game changes nothing.
    pub fn step_pair(&mut self, mut actions: [Action; 2]) -> Option<&Outcome> {
        if self.outcome.is_some() {
            return self.outcome.as_ref();
        }
        let t = self.time;

        // 1. Builds resolve before any move, player 0 first; a build is then a pass.
        for (player, action) in actions.iter_mut().enumerate() {
            if action.kind == ActionKind::Build {
                self.try_build(player, action);
                *action = Action::PASS;
            }
        }

        // 2-3. Moves, one after the other, in priority order on the post-build board.
        let moves = [
            self.resolve_move(&actions[0]),
            self.resolve_move(&actions[1]),
        ];
        let order = if self.player_one_moves_first(&moves) {
            [1, 0]
        } else {
            [0, 1]
        };
        let mut effects = [MoveEffect::default(); 2];
        for player in order {
            if let Some(step) = moves[player] {
                effects[player] = self.execute_move(player, step);
            }
        }

        // 4. The clock.
        self.time += 1;

        // 5. A fallen general hands its land over and suppresses growth.
        let captured = [effects[0].captured_general, effects[1].captured_general];
        match captured {
            [true, true] => self.transfer_all_to(order[1]),
            [true, false] => self.transfer_land(1, 0),
            [false, true] => self.transfer_land(0, 1),
            [false, false] => self.grow(),
        }

        // 6. Deathtouch counts only from the deathtouch turn (time before the step).
        let touched = if t >= self.params.deathtouch_turn {
            [
                effects[0].touched_enemy_general,
                effects[1].touched_enemy_general,
            ]
        } else {
            [false, false]
        };

        // 7. Outcome.
        let outcome = match (captured, touched) {
            ([true, true], _) => Some(draw("double_capture_draw")),
            (_, [true, true]) => Some(draw("double_deathtouch_draw")),
            (_, [true, false]) => Some(self.touch_win(0, captured[0])),
            (_, [false, true]) => Some(self.touch_win(1, captured[1])),
            ([true, false], _) => Some(win(0, "general_captured")),
            ([false, true], _) => Some(win(1, "general_captured")),
            // 8. The turn cap: a decision on the last step still counts as one.
            _ if self.time >= self.params.max_turns => Some(draw("turn_cap_draw")),
            _ => None,
        };
        if outcome.is_some() {
            self.outcome = outcome;
        }
        self.outcome.as_ref()
    }

    /// Turns an owned plain cell into a castle if its army covers the price.
    fn try_build(&mut self, player: usize, action: &Action) {
        let Some(cell) = self.cell_at(action.row, action.col) else {
            return;
        };
        let me = player as u8 + 1;
        if self.owner[cell] != me || self.kind[cell] != Kind::Plain {
            return;
        }
        let cost = self.build_cost(player, cell);
        if self.army[cell] < cost {
            return;
        }
        self.set_army(cell, self.army[cell] - cost);
        self.kind[cell] = Kind::Castle;
        self.structures.push(cell);
    }

    /// Base price plus the crowding surcharge from the builder's own structures.
    pub fn build_cost(&self, player: usize, cell: usize) -> u32 {
        let me = player as u8 + 1;
        let (row, col) = (cell / self.width, cell % self.width);
        let surcharge: u32 = self
            .structures
            .iter()
            .filter(|&&s| self.owner[s] == me)
            .map(|&s| {
                let distance = (s / self.width).abs_diff(row) + (s % self.width).abs_diff(col);
                14u32.saturating_sub(2 * u32::try_from(distance).unwrap_or(u32::MAX / 2))
            })
            .sum();
        self.params.build_base_cost + surcharge
    }

    /// Move priority: chasing, then reinforcing, then the smaller army; a full
    /// tie goes to player 0. A pass never goes first, and the order only
    /// matters when both moves are valid, so moves whose cells are off the
    /// board (`None`) need no ranking.
    fn player_one_moves_first(&self, moves: &[Option<MoveStep>; 2]) -> bool {
        let [Some(m0), Some(m1)] = moves else {
            return moves[0].is_none() && moves[1].is_some();
        };
        let chase = [m0.dst == m1.src, m1.dst == m0.src];
        if chase[1] != chase[0] {
            return chase[1];
        }
        let reinforce = [self.owner[m0.dst] == 1, self.owner[m1.dst] == 2];
        if reinforce[1] != reinforce[0] {
            return reinforce[1];
        }
        self.army[m1.src] < self.army[m0.src]
    }

    /// The cells of a move action, if both are on the board.
    fn resolve_move(&self, action: &Action) -> Option<MoveStep> {
        let (dr, dc) = action.direction()?.delta();
        let src = self.cell_at(action.row, action.col)?;
        let dst = self.cell_at(action.row.checked_add(dr)?, action.col.checked_add(dc)?)?;
        Some(MoveStep {
            src,
            dst,
            half: action.split == 1,
        })
    }

    /// Executes one move against the board as it stands now.
    fn execute_move(&mut self, player: usize, step: MoveStep) -> MoveEffect {
        let MoveStep { src, dst, half } = step;
        let me = player as u8 + 1;
        if self.owner[src] != me || self.kind[dst] == Kind::Mountain {
            return MoveEffect::default();
        }
        let available = self.army[src];
        let moving = if half {
            available / 2
        } else {
            available.saturating_sub(1)
        };
        if moving == 0 {
            return MoveEffect::default();
        }
        let touched = dst == self.generals[1 - player];
        self.set_army(src, available - moving);
        if self.owner[dst] == me {
            self.set_army(dst, self.army[dst] + moving);
            return MoveEffect {
                touched_enemy_general: touched,
                captured_general: false,
            };
        }
        let defending = self.army[dst];
        if moving > defending {
            self.set_cell(dst, me, moving - defending);
            MoveEffect {
                touched_enemy_general: touched,
                captured_general: touched,
            }
        } else {
            self.set_army(dst, defending - moving);
            MoveEffect {
                touched_enemy_general: touched,
                captured_general: false,
            }
        }
    }

    /// Every cell of `loser` becomes `winner`'s, armies unchanged.
    fn transfer_land(&mut self, loser: usize, winner: usize) {
        let to = winner as u8 + 1;
        let cells = std::mem::take(&mut self.owned[loser]);
        for &cell in &cells {
            let cell = cell as usize;
            self.owner[cell] = to;
            self.owned_slot[cell] = self.owned[winner].len() as u32;
            self.owned[winner].push(cell as u32);
        }
        self.land[winner] += self.land[loser];
        self.army_total[winner] += self.army_total[loser];
        self.land[loser] = 0;
        self.army_total[loser] = 0;
    }

    /// After a double capture every owned cell belongs to the second mover.
    fn transfer_all_to(&mut self, player: usize) {
        self.transfer_land(1 - player, player);
    }

    /// +1 on every owned cell each 50 turns, then +1 on owned structures each 2.
    fn grow(&mut self) {
        if self.time % 50 == 0 {
            for p in 0..2 {
                for &cell in &self.owned[p] {
                    self.army[cell as usize] += 1;
                }
            }
            for p in 0..2 {
                self.army_total[p] += u64::from(self.land[p]);
            }
        }
        if self.time % 2 == 0 {
            for i in 0..self.structures.len() {
                let cell = self.structures[i];
                let owner = self.owner[cell];
                if owner != 0 {
                    self.army[cell] += 1;
                    self.army_total[usize::from(owner - 1)] += 1;
                }
            }
        }
    }

    /// A lone touch wins; without a capture the loser's land changes hands now.
    fn touch_win(&mut self, player: usize, captured: bool) -> Outcome {
        if captured {
            return win(player, "general_captured");
        }
        self.transfer_land(1 - player, player);
        win(player, "deathtouch")
    }

    /// The cell index of `(row, col)`, if it is on the board.
    #[inline]
    pub(crate) fn cell_at(&self, row: i64, col: i64) -> Option<usize> {
        let row = usize::try_from(row).ok().filter(|r| *r < self.height)?;
        let col = usize::try_from(col).ok().filter(|c| *c < self.width)?;
        Some(row * self.width + col)
    }
}

fn win(player: usize, reason: &str) -> Outcome {
    let mut ranks = vec![1, 1];
    ranks[player] = 0;
    Outcome {
        ranks,
        reason: reason.to_owned(),
    }
}

fn draw(reason: &str) -> Outcome {
    Outcome {
        ranks: vec![0, 0],
        reason: reason.to_owned(),
    }
}
