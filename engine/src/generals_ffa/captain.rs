//! The captain: a plan and a seat's fogged view in, at most one move out.
//!
//! Layout: this file evaluates the plan's rules in order and says what each
//! [`Condition`] means; `intents` turns each [`Intent`] into a move;
//! `board` holds the geometry and the one breadth-first search both use.
//!
//! The captain is a pure function of `(plan, view)`: no state between
//! turns, integer arithmetic only, ties broken by cell index. It never
//! panics on any view, however inconsistent, and every move it returns
//! leaves a cell the seat owns and can see, sends `1 ..= army - 1 - reserve`
//! armies, and targets an orthogonal neighbour that is on the board and not
//! a mountain. One compile is a scan of the board plus one or two searches
//! over it: four captains at 160 cells must fit 50,000 turns a second.

mod board;
mod intents;

use board::{Board, Scratch, is_enemy, is_own, is_walkable};

use super::plan::{Condition, Intent, Plan, THREAT_RADIUS};
use super::view::{CellKind, Move, View};

/// The move `plan` makes from `view` this turn: the first rule whose
/// condition holds and whose intent finds a move. `None` when no rule finds
/// one (the engine then compiles `sprawl`).
pub fn compile(plan: &Plan, view: &View) -> Option<Move> {
    let board = Board::new(view)?;
    let mut captain = Captain::new(plan, board);
    for rule in &plan.rules {
        if captain.holds(rule.when)
            && let Some(found) = captain.attempt(rule.intent)
        {
            return Some(found);
        }
    }
    None
}

/// One compile's working state.
struct Captain<'a> {
    /// The seat we move for.
    seat: usize,
    /// Armies every source keeps beyond its last one.
    reserve: u32,
    /// The plan, for the knobs the intents read.
    plan: &'a Plan,
    /// The checked view.
    board: Board<'a>,
    /// Totals of one pass over the board.
    scan: Scan,
    /// `crown_threatened`, once some rule asked.
    threatened: Option<bool>,
    /// Intents already tried without a move (bit `intent as u8`): the view
    /// does not change within a compile, so trying one again is waste.
    failed: u8,
    /// Search buffers, reused by every search of this compile.
    scratch: Scratch,
}

/// What one pass over the board finds.
struct Scan {
    /// Cells we own.
    land: u64,
    /// Armies on the cells we own.
    army: u64,
    /// Whether some enemy cell is in sight.
    enemy_visible: bool,
    /// Whether we remember the crown of a seat still alive.
    crown_known: bool,
}

impl<'a> Captain<'a> {
    fn new(plan: &'a Plan, board: Board<'a>) -> Self {
        let seat = board.view.seat;
        let mut scan = Scan {
            land: 0,
            army: 0,
            enemy_visible: false,
            crown_known: false,
        };
        for cell in &board.view.cells[..board.n] {
            if is_own(cell, seat) {
                scan.land += 1;
                scan.army += u64::from(cell.army.unwrap_or(0));
            } else if is_enemy(cell, seat) {
                scan.enemy_visible |= cell.visible;
                scan.crown_known |= is_live_crown(board.view, cell.kind, cell.owner);
            }
        }
        Captain {
            seat,
            reserve: plan.reserve,
            plan,
            board,
            scan,
            threatened: None,
            failed: 0,
            scratch: Scratch::default(),
        }
    }

    /// Whether `condition` holds on this view.
    fn holds(&mut self, condition: Condition) -> bool {
        match condition {
            Condition::Always => true,
            Condition::CrownThreatened => self.crown_threatened(),
            Condition::EnemyVisible => self.scan.enemy_visible,
            Condition::CrownKnown => self.scan.crown_known,
            // Integer form of land / cells < percent / 100.
            Condition::LandBelow(percent) => {
                self.scan.land * 100 < u64::from(percent) * self.board.n as u64
            }
            Condition::TurnAtLeast(turn) => self.board.view.turn >= turn,
        }
    }

    /// The move `intent` finds, remembering a failure for later rules.
    fn attempt(&mut self, intent: Intent) -> Option<Move> {
        let bit = 1u8 << intent as u8;
        if self.failed & bit != 0 {
            return None;
        }
        let found = match intent {
            Intent::Defend => self.defend(),
            Intent::Expand => self.expand(),
            Intent::AttackNearest => {
                let seat = self.seat;
                self.advance(|cell| cell.visible && is_enemy(cell, seat))
            }
            Intent::RaidCrown => {
                let (seat, view) = (self.seat, self.board.view);
                self.advance(|cell| {
                    is_enemy(cell, seat) && is_live_crown(view, cell.kind, cell.owner)
                })
            }
            Intent::Gather => self.gather(),
        };
        if found.is_none() {
            self.failed |= bit;
        }
        found
    }

    /// A visible enemy cell with 2 or more armies (one that can move)
    /// within [`THREAT_RADIUS`] walkable steps of our crown.
    fn crown_threatened(&mut self) -> bool {
        if let Some(known) = self.threatened {
            return known;
        }
        let found = match self.board.crown() {
            None => false,
            Some(crown) => {
                self.search_from_crown(crown);
                let (board, seat, dist) = (&self.board, self.seat, &self.scratch.dist);
                (0..board.n).any(|i| {
                    let cell = board.cell(i);
                    dist[i] <= u32::from(THREAT_RADIUS)
                        && cell.visible
                        && is_enemy(cell, seat)
                        && cell.army.is_some_and(|a| a >= 2)
                })
            }
        };
        self.threatened = Some(found);
        found
    }

    /// Distances from our crown, out to [`THREAT_RADIUS`], over walkable
    /// cells.
    fn search_from_crown(&mut self, crown: usize) {
        let board = &self.board;
        board.bfs(
            &mut self.scratch,
            [crown],
            |j| is_walkable(board.cell(j)),
            u32::from(THREAT_RADIUS),
        );
    }
}

/// A crown whose owner is still in the game: a captured crown turns into
/// the captor's city, so a remembered crown of a dead seat is stale.
fn is_live_crown(view: &View, kind: Option<CellKind>, owner: Option<usize>) -> bool {
    kind == Some(CellKind::Crown)
        && owner.is_some_and(|o| view.alive.get(o).copied().unwrap_or(true))
}

#[cfg(test)]
mod tests;
