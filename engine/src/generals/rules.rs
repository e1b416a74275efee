//! One step of a generals ruleset, time t → t+1.
//!
//! The order of phases is the rules' order and each one is a function below:
//! builds (player 0 first), move priority, the two moves one after the other,
//! the time tick, growth or general transfer, deathtouch, outcome, turn cap.
//! The classic ruleset runs the same phases with three switches (see
//! [`Ruleset`]): no builds (`pass == 2` moves), no deathtouch, and a double
//! capture won by the second mover.

use super::action::{Action, ActionKind, Direction};
use super::board::{Generals, Kind, column_bit};
use super::ruleset::Ruleset;
use crate::game::Outcome;
use crate::grid;

/// A move's cells, resolved once per step.
#[derive(Clone, Copy)]
struct MoveStep {
    src: usize,
    dst: usize,
    /// Moves half the army instead of all but one.
    half: bool,
}

/// What one executed move did, as the later phases need it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
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
            return self.outcome.as_deref();
        }
        let t = self.time;

        // 1. Builds resolve before any move, player 0 first; a build is then a
        // pass. Without builds (classic) `pass == 2` stays as sent: it moves,
        // and its value still counts in the move order below.
        if self.ruleset.builds() {
            for (player, action) in actions.iter_mut().enumerate() {
                if action.kind == ActionKind::Build {
                    self.try_build(player, action);
                    *action = Action::PASS;
                }
            }
        }

        // 2-3. Moves, one after the other, in priority order on the post-build board.
        let moves = [
            self.resolve_move(&actions[0]),
            self.resolve_move(&actions[1]),
        ];
        let pass_fields = [actions[0].kind as u8, actions[1].kind as u8];
        let player_one_first = self.player_one_moves_first(&moves, pass_fields);
        // Moves on four distinct cells cannot affect each other, so their
        // order only matters when they share a cell; random play rarely does,
        // and this keeps the coin-flip priority from becoming a branch here.
        let [m0, m1] = moves;
        let effects = if share_a_cell(m0, m1) & player_one_first {
            let e1 = self.try_move(1, m1);
            let e0 = self.try_move(0, m0);
            [e0, e1]
        } else {
            let e0 = self.try_move(0, m0);
            let e1 = self.try_move(1, m1);
            [e0, e1]
        };
        let second_mover = usize::from(!player_one_first);

        // 4. The clock.
        self.time += 1;

        // 5. A fallen general hands its land over and suppresses growth.
        let captured = [effects[0].captured_general, effects[1].captured_general];
        match captured {
            [true, true] => self.transfer_all_to(second_mover),
            [true, false] => self.transfer_land(1, 0),
            [false, true] => self.transfer_land(0, 1),
            [false, false] => self.grow(),
        }

        // 6. Deathtouch counts only from the deathtouch turn (time before the step).
        let touched = if self.ruleset.has_deathtouch() & (t >= self.params.deathtouch_turn) {
            [
                effects[0].touched_enemy_general,
                effects[1].touched_enemy_general,
            ]
        } else {
            [false, false]
        };

        // 7-8. Outcome and turn cap, decided out of line: almost every step
        // ends undecided, and keeping the decision's code out of the step
        // keeps the hot loop small.
        let decided = captured[0] | captured[1] | touched[0] | touched[1];
        if decided | (self.time >= self.params.max_turns) {
            self.decide(captured, touched, second_mover);
        }
        self.outcome.as_deref()
    }

    /// Phase 7 (and the cap, 8) of a step that captured, touched or reached
    /// the turn cap.
    #[cold]
    #[inline(never)]
    fn decide(&mut self, captured: [bool; 2], touched: [bool; 2], second_mover: usize) {
        let outcome = match (captured, touched) {
            ([true, true], _) => double_capture(self.ruleset, second_mover),
            (_, [true, true]) => draw("double_deathtouch_draw"),
            (_, [true, false]) => self.touch_win(0, captured[0]),
            (_, [false, true]) => self.touch_win(1, captured[1]),
            ([true, false], _) => win(0, "general_captured"),
            ([false, true], _) => win(1, "general_captured"),
            // 8. The turn cap: a decision on the last step still counts as one.
            _ => draw("turn_cap_draw"),
        };
        self.outcome = Some(Box::new(outcome));
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
        self.mark_changed(cell);
        self.changed_kinds |= 1 << (self.coords(cell).0 & 63);
        self.structures.push(cell);
    }

    /// Base price plus the crowding surcharge from the builder's own structures.
    pub fn build_cost(&self, player: usize, cell: usize) -> u32 {
        let me = player as u8 + 1;
        let (row, col) = self.coords(cell);
        let surcharge: u32 = self
            .structures
            .iter()
            .filter(|&&s| self.owner[s] == me)
            .map(|&s| {
                let (s_row, s_col) = self.coords(s);
                let distance = grid::manhattan((s_row, s_col), (row, col));
                14u32.saturating_sub(2 * u32::try_from(distance).unwrap_or(u32::MAX / 2))
            })
            .sum();
        self.params.build_base_cost + surcharge
    }

    /// Move priority: chasing, then reinforcing, then the smaller army; a full
    /// tie goes to player 0. A pass never goes first, and the order only
    /// matters when both moves are valid, so moves whose cells are off the
    /// board (`None`) need no ranking.
    ///
    /// The reference adds `pass0 & !pass1 != 0`, bitwise on the pass fields
    /// as they stand after the builds. With two resolved moves that is only
    /// ever true for (2, 0), which needs a `pass == 2` move: classic only,
    /// where it puts player 1 first whatever the comparisons say.
    fn player_one_moves_first(&self, moves: &[Option<MoveStep>; 2], pass_fields: [u8; 2]) -> bool {
        let [Some(m0), Some(m1)] = moves else {
            return moves[0].is_none() && moves[1].is_some();
        };
        let bitwise = pass_fields[0] & !pass_fields[1] != 0;
        let chase = [m0.dst == m1.src, m1.dst == m0.src];
        let reinforce = [self.owner[m0.dst] == 1, self.owner[m1.dst] == 2];
        let smaller = self.army[m1.src] < self.army[m0.src];
        // The same cascade as `if`s would give, in non-short-circuit logic:
        // the rule that decides is data, so branches on it mispredict.
        let chase_decides = chase[0] != chase[1];
        let reinforce_decides = reinforce[0] != reinforce[1];
        (chase_decides & chase[1])
            | (!chase_decides & reinforce_decides & reinforce[1])
            | (!chase_decides & !reinforce_decides & smaller)
            | bitwise
    }

    /// The cells of a move action, if its source is on the board and its
    /// destination is open ground. A move into a mountain or off the board is
    /// a no-op whenever it executes, so it needs no place in the order either.
    ///
    /// Every action but a pass is read as a move: builds have become passes
    /// by now where the ruleset has them, and where it has none (classic)
    /// `pass == 2` moves exactly like `pass == 0`.
    #[inline]
    fn resolve_move(&self, action: &Action) -> Option<MoveStep> {
        if action.kind == ActionKind::Pass {
            return None;
        }
        let dir = *Direction::ALL.get(usize::try_from(action.dir).ok()?)?;
        let src = self.cell_at(action.row, action.col)?;
        let dst = self.open_step(src, dir)?;
        Some(MoveStep {
            src,
            dst,
            half: action.split == 1,
        })
    }

    /// Executes a resolved move, if there is one.
    #[inline(always)]
    fn try_move(&mut self, player: usize, step: Option<MoveStep>) -> MoveEffect {
        match step {
            Some(step) => self.execute_move(player, step),
            None => MoveEffect::default(),
        }
    }

    /// Executes one move against the board as it stands now.
    #[inline(always)]
    fn execute_move(&mut self, player: usize, step: MoveStep) -> MoveEffect {
        let MoveStep { src, dst, half } = step;
        let me = player as u8 + 1;
        if self.owner[src] != me {
            return MoveEffect::default();
        }
        let available = self.army[src];
        // `half` is a coin flip for random players: a branch on it would
        // mispredict every other time.
        let moving =
            std::hint::select_unpredictable(half, available / 2, available.saturating_sub(1));
        if moving == 0 {
            return MoveEffect::default();
        }
        let touched = dst == self.generals[1 - player];
        // The source stays ours; only its army changes.
        self.army[src] = available - moving;
        self.mark_changed(src);
        self.army_total[usize::from(me)] -= u64::from(moving);
        let holder = self.owner[dst];
        let defending = self.army[dst];
        let friendly = holder == me;
        let captured = !friendly && moving > defending;
        // Selects rather than nested branches: which case applies is data,
        // and this is the engine's hottest path.
        let army = if friendly {
            defending + moving
        } else {
            moving.abs_diff(defending)
        };
        if captured {
            self.set_cell(dst, me, army);
        } else {
            self.set_army(dst, army);
        }
        MoveEffect {
            touched_enemy_general: touched,
            captured_general: touched && captured,
        }
    }

    /// Every cell of `loser` becomes `winner`'s, armies unchanged.
    fn transfer_land(&mut self, loser: usize, winner: usize) {
        self.mark_all_changed();
        let to = winner as u8 + 1;
        let cells = std::mem::take(&mut self.owned[loser]);
        let [first, second] = &mut self.owned_rows;
        let (lost, won) = if loser == 0 {
            (first, second)
        } else {
            (second, first)
        };
        for (won, lost) in won.iter_mut().zip(lost.iter_mut()) {
            *won |= std::mem::take(lost);
        }
        for &cell in &cells {
            let cell = cell as usize;
            self.owner[cell] = to;
            self.owned_slot[cell] = self.owned[winner].len() as u32;
            self.owned[winner].push(cell as u32);
        }
        let (from, to) = (loser + 1, winner + 1);
        self.land[to] += std::mem::take(&mut self.land[from]);
        self.army_total[to] += std::mem::take(&mut self.army_total[from]);
    }

    /// After a double capture every owned cell belongs to the second mover.
    fn transfer_all_to(&mut self, player: usize) {
        self.transfer_land(1 - player, player);
    }

    /// +1 on every owned cell each 50 turns, then +1 on owned structures each 2.
    fn grow(&mut self) {
        if self.time.is_multiple_of(50) {
            self.mark_all_changed();
            for p in 0..2 {
                for &cell in &self.owned[p] {
                    self.army[cell as usize] += 1;
                }
                self.army_total[p + 1] += u64::from(self.land[p + 1]);
            }
        }
        if self.time.is_multiple_of(2) {
            // Counted in registers, not added to the totals cell by cell: a
            // read-modify-write of one memory slot per structure serialises.
            let mut grown = [0u64; 2];
            let mut rows = 0u64;
            let reciprocal = self.width_reciprocal;
            for &cell in &self.structures {
                let owner = self.owner[cell];
                // Neutral structures (classic's castles) do not grow.
                self.army[cell] += u32::from(owner != 0);
                grown[0] += u64::from(owner == 1);
                grown[1] += u64::from(owner == 2);
                let row = ((cell as u64 * reciprocal) >> 32) as usize;
                rows |= u64::from(owner != 0) << (row & 63);
                if let Some(columns) = self.changed_columns.get_mut(row) {
                    *columns |= u64::from(owner != 0) * column_bit(cell - row * self.width);
                }
            }
            self.army_total[1] += grown[0];
            self.army_total[2] += grown[1];
            self.changed_rows |= rows;
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

/// Whether two resolved moves touch a common cell (source or destination).
#[inline]
fn share_a_cell(a: Option<MoveStep>, b: Option<MoveStep>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => {
            (a.src == b.src) | (a.src == b.dst) | (a.dst == b.src) | (a.dst == b.dst)
        }
        _ => false,
    }
}

fn win(player: usize, reason: &str) -> Outcome {
    let mut ranks = vec![1, 1];
    ranks[player] = 0;
    Outcome::ranked(ranks, reason)
}

fn draw(reason: &str) -> Outcome {
    Outcome::ranked(vec![0, 0], reason)
}

/// Both generals fell in one step: a draw in the competition, a win for the
/// player whose move executed second (by the move order) in classic.
fn double_capture(ruleset: Ruleset, second_mover: usize) -> Outcome {
    if ruleset.double_capture_wins() {
        win(second_mover, "double_capture")
    } else {
        draw("double_capture_draw")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generals::Params;
    use crate::generals::random::random_legal_action;
    use crate::rng::SplitMix64;

    /// The step runs moves on four distinct cells in seat order whatever the
    /// priority says; that is only sound if such moves commute. Checked on
    /// every disjoint pair random play produces.
    #[test]
    fn moves_on_distinct_cells_commute() {
        let mut disjoint_pairs = 0;
        for seed in 0..30 {
            let mut game = Generals::from_seed(seed, Params::default());
            let mut rng = SplitMix64::new(seed);
            while !game.is_over() {
                let actions = [0, 1].map(|p| random_legal_action(&game, p, &mut rng));
                let moves = [
                    game.resolve_move(&actions[0]),
                    game.resolve_move(&actions[1]),
                ];
                if let [Some(m0), Some(m1)] = moves
                    && !share_a_cell(moves[0], moves[1])
                {
                    disjoint_pairs += 1;
                    let (mut forward, mut backward) = (game.clone(), game.clone());
                    let f = [forward.execute_move(0, m0), forward.execute_move(1, m1)];
                    let b1 = backward.execute_move(1, m1);
                    let b0 = backward.execute_move(0, m0);
                    assert_eq!(f, [b0, b1], "seed {seed}, time {}", game.time);
                    assert_eq!(forward, backward, "seed {seed}, time {}", game.time);
                    assert_eq!(forward.totals(0), backward.totals(0));
                    assert_eq!(forward.totals(1), backward.totals(1));
                }
                game.step_pair(actions);
            }
        }
        assert!(
            disjoint_pairs > 10_000,
            "only {disjoint_pairs} pairs checked"
        );
    }
}
