//! What each intent does. Every intent scores the moves it could make with
//! an integer key and keeps the greatest; each key ends in the cell indices
//! (reversed, so the lowest index wins a tie), which makes the choice
//! independent of iteration order.

use std::cmp::Reverse;

use super::Captain;
use super::board::{Board, FAR, amount, is_enemy, is_enterable, is_own, is_walkable};
use crate::generals_ffa::plan::{Cities, PLAN_EVERY, THREAT_RADIUS};
use crate::generals_ffa::view::{CellKind, CellView, Move};

/// Keeps the move with the greatest key.
fn keep<K: Ord, T>(best: &mut Option<(K, T)>, key: K, candidate: T) {
    if best.as_ref().is_none_or(|(k, _)| key > *k) {
        *best = Some((key, candidate));
    }
}

/// Whether `j` is one step nearer the search's sources than `i`.
fn one_closer(dist: &[u32], j: usize, i: usize) -> bool {
    dist[i] != FAR && dist[i] > 0 && dist[j] == dist[i] - 1
}

/// `from`'s whole movable army, one step down the distance field `dist`
/// (the lowest-index neighbour on a tie).
fn step_down(
    board: &Board<'_>,
    dist: &[u32],
    from: usize,
    seat: usize,
    reserve: u32,
) -> Option<Move> {
    let to = board
        .neighbours(from)
        .filter(|&j| one_closer(dist, j, from))
        .min()?;
    Some(Move {
        from,
        to,
        amount: amount(board.cell(from), seat, reserve),
    })
}

impl Captain<'_> {
    /// Take the nearest enemy cell within [`THREAT_RADIUS`] of the crown
    /// (the strongest first among equally near ones) from the neighbour of
    /// ours that sends the most; if none can take one, [`Self::gather`].
    pub(super) fn defend(&mut self) -> Option<Move> {
        let crown = self.board.crown()?;
        self.search_from_crown(crown);
        let (board, seat, reserve) = (&self.board, self.seat, self.reserve);
        let dist = &self.scratch.dist;
        let mut best = None;
        for (t, &near) in dist.iter().enumerate() {
            let target = board.cell(t);
            let Some(garrison) = target.army else {
                continue;
            };
            if near > u32::from(THREAT_RADIUS)
                || !target.visible
                || !is_enemy(target, seat)
                || !is_enterable(target)
            {
                continue;
            }
            for s in board.neighbours(t) {
                let sent = amount(board.cell(s), seat, reserve);
                if sent > garrison {
                    let key = (Reverse(near), garrison, Reverse(t), sent, Reverse(s));
                    keep(
                        &mut best,
                        key,
                        Move {
                            from: s,
                            to: t,
                            amount: sent,
                        },
                    );
                }
            }
        }
        match best {
            Some((_, found)) => Some(found),
            None => self.gather(),
        }
    }

    /// Move our largest army other than the crown's (the nearest first
    /// among equals) one step home over our own land.
    pub(super) fn gather(&mut self) -> Option<Move> {
        let crown = self.board.crown()?;
        let (board, seat, reserve) = (&self.board, self.seat, self.reserve);
        board.bfs(
            &mut self.scratch,
            [crown],
            |j| is_own(board.cell(j), seat),
            FAR - 1,
        );
        let dist = &self.scratch.dist;
        let mut best = None;
        for (s, &home) in dist.iter().enumerate() {
            let sent = amount(board.cell(s), seat, reserve);
            if s == crown || sent == 0 || home == FAR {
                continue;
            }
            keep(&mut best, (sent, Reverse(home), Reverse(s)), s);
        }
        let (_, from) = best?;
        step_down(board, dist, from, seat, reserve)
    }

    /// Take a neutral plain, or a neutral city the plan allows, next to our
    /// land. On scout turns (the first `scouts` of each plan window) prefer
    /// the plain that uncovers the most never-seen cells and send only what
    /// takes it. Otherwise the city first, then the largest margin, then
    /// the target nearest our crown. With nothing to take, walk our largest
    /// army one step over our land towards the nearest takeable cell.
    pub(super) fn expand(&mut self) -> Option<Move> {
        let (board, seat, reserve) = (&self.board, self.seat, self.reserve);
        let scouting = board.view.turn % PLAN_EVERY < self.plan.scouts;
        let crown = board.crown();
        let mut scout = None;
        let mut best = None;
        for s in 0..board.n {
            let sent = amount(board.cell(s), seat, reserve);
            if sent == 0 {
                continue;
            }
            for t in board.neighbours(s) {
                let target = board.cell(t);
                let Some(garrison) = self.takeable(target) else {
                    continue;
                };
                if !target.visible || sent <= garrison {
                    continue;
                }
                let city = target.kind == Some(CellKind::City);
                if scouting && !city {
                    let unseen = board.unseen_around(t);
                    if unseen > 0 {
                        let minimal = Move {
                            from: s,
                            to: t,
                            amount: garrison + 1,
                        };
                        keep(&mut scout, (unseen, Reverse(t), Reverse(s)), minimal);
                    }
                }
                let near = Reverse(crown.map_or(0, |c| board.manhattan(t, c)));
                let key = (city, sent - garrison, near, Reverse(t), Reverse(s));
                keep(
                    &mut best,
                    key,
                    Move {
                        from: s,
                        to: t,
                        amount: sent,
                    },
                );
            }
        }
        if let Some((_, found)) = scout {
            return Some(found);
        }
        if let Some((_, found)) = best {
            return Some(found);
        }
        self.walk_to_frontier()
    }

    /// The garrison of a neutral cell `expand` may take (a plain, or a city
    /// the plan's [`Cities`] allows), if known.
    fn takeable(&self, cell: &CellView) -> Option<u32> {
        takeable(cell, self.plan.cities, self.scan.army)
    }

    /// [`Self::expand`] with nothing to take next to a cell that can send:
    /// the largest army two or more steps from a takeable cell (the nearest
    /// first among equals) steps towards it over our own land.
    fn walk_to_frontier(&mut self) -> Option<Move> {
        let (board, seat, reserve) = (&self.board, self.seat, self.reserve);
        let (cities, own_army) = (self.plan.cities, self.scan.army);
        let goals = (0..board.n).filter(|&i| takeable(board.cell(i), cities, own_army).is_some());
        board.bfs(
            &mut self.scratch,
            goals,
            |j| is_own(board.cell(j), seat),
            FAR - 1,
        );
        let dist = &self.scratch.dist;
        let mut best = None;
        for (s, &away) in dist.iter().enumerate() {
            let sent = amount(board.cell(s), seat, reserve);
            // At distance 1 the goal is next door and too strong to take:
            // stay and let others join rather than wander off.
            if sent == 0 || away < 2 || away == FAR {
                continue;
            }
            keep(&mut best, (sent, Reverse(away), Reverse(s)), s);
        }
        let (_, from) = best?;
        step_down(board, dist, from, seat, reserve)
    }

    /// Step our largest army one step along a shortest walkable path towards
    /// the nearest cell `is_target` picks: onto our own land first, else
    /// onto the weakest cell it can take; a step it cannot win is not made.
    pub(super) fn advance(&mut self, is_target: impl Fn(&CellView) -> bool) -> Option<Move> {
        let (board, seat, reserve) = (&self.board, self.seat, self.reserve);
        let targets = (0..board.n).filter(|&i| is_target(board.cell(i)));
        board.bfs(
            &mut self.scratch,
            targets,
            |j| is_walkable(board.cell(j)),
            FAR - 1,
        );
        let dist = &self.scratch.dist;
        let mut best = None;
        for s in 0..board.n {
            let sent = amount(board.cell(s), seat, reserve);
            if sent == 0 || dist[s] == 0 || dist[s] == FAR {
                continue;
            }
            for t in board.neighbours(s) {
                let target = board.cell(t);
                if !one_closer(dist, t, s) || !is_enterable(target) {
                    continue;
                }
                // Moving onto our own cell is free; anything else costs its
                // garrison and needs one known to beat.
                let cost = if is_own(target, seat) {
                    0
                } else {
                    match target.army {
                        Some(g) if target.visible && sent > g => u64::from(g) + 1,
                        _ => continue,
                    }
                };
                let key = (
                    sent,
                    Reverse(dist[s]),
                    Reverse(cost),
                    Reverse(t),
                    Reverse(s),
                );
                keep(
                    &mut best,
                    key,
                    Move {
                        from: s,
                        to: t,
                        amount: sent,
                    },
                );
            }
        }
        best.map(|(_, found)| found)
    }
}

/// The garrison of `cell` if `expand` may take it: a neutral plain, or a
/// neutral city `cities` allows given the `own_army` we hold in total.
fn takeable(cell: &CellView, cities: Cities, own_army: u64) -> Option<u32> {
    if cell.owner.is_some() {
        return None;
    }
    let garrison = cell.army;
    match cell.kind? {
        CellKind::Plain => Some(garrison.unwrap_or(0)),
        CellKind::City => match cities {
            Cities::Never => None,
            // Cheap: spend at most half of everything we own on it.
            Cities::Cheap => garrison.filter(|&g| u64::from(g) * 2 <= own_army),
            // A city out of sight is still worth walking to.
            Cities::Always => Some(garrison.unwrap_or(0)),
        },
        CellKind::Mountain | CellKind::Crown => None,
    }
}
