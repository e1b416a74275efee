//! What the scripted player sees and remembers: this turn's view read
//! into planes on the true board, the memory of what fog hides again, and
//! the searches the steps share.

use super::{ALLY, Ctx, ENEMY, Grid, ME, NEUTRAL, Scripted, UNREACHABLE, bfs};
use crate::generals::observe::{HeaderLayout, View, tile};

impl Scripted {
    /// Copies the view's true board into this turn's planes.
    pub(super) fn read(&mut self, view: &View<'_>) {
        let Grid { h, w } = self.grid;
        self.kind.clear();
        self.own.clear();
        self.army.clear();
        for r in 0..h {
            for c in 0..w {
                let at = r * view.side + c;
                self.kind.push(match view.tile[at] {
                    code @ 0..=5 => code,
                    // Garbage: an obstacle is the safe reading.
                    _ => tile::MOUNTAIN,
                });
                let code = view.owner[at];
                self.own.push(match (view.layout, code) {
                    (_, 0) => NEUTRAL,
                    (_, 1) => ME,
                    (HeaderLayout::Duel, _) => ENEMY,
                    (HeaderLayout::Seats, 2) => ALLY,
                    (HeaderLayout::Seats, _) => {
                        let seat = usize::from(code - 3);
                        if seat < 32 && view.allies >> seat & 1 == 1 {
                            ALLY
                        } else {
                            ENEMY
                        }
                    }
                });
                self.army.push(i64::from(view.army[at]));
            }
        }
    }

    /// Updates the memory from this turn's planes.
    pub(super) fn observe(&mut self) {
        self.mine.clear();
        self.structures.clear();
        for i in 0..self.grid.len() {
            let (kind, own) = (self.kind[i], self.own[i]);
            match kind {
                tile::FOG => {}
                tile::MOUNTAIN => self.blocked[i] = true,
                // A mountain or a castle in fog: once seen open, it is a
                // castle (built, or neutral in classic), which is passable.
                tile::FOG_STRUCTURE => self.blocked[i] = !self.seen_open[i],
                _ => {
                    self.ever_seen[i] = true;
                    self.seen_open[i] = true;
                    self.blocked[i] = false;
                    self.enemy_seen[i] = own == ENEMY;
                    self.garrison[i] = if kind == tile::CASTLE && own == NEUTRAL {
                        self.army[i].max(1)
                    } else {
                        0
                    };
                    if kind == tile::GENERAL && own == ME {
                        self.my_general = Some(i);
                    }
                    let known = self.enemy_generals.iter().position(|&g| g == i);
                    match (kind == tile::GENERAL && own == ENEMY, known) {
                        (true, None) => self.enemy_generals.push(i),
                        // Seen, and no longer an enemy general (captured).
                        (false, Some(k)) => {
                            self.enemy_generals.swap_remove(k);
                        }
                        _ => {}
                    }
                }
            }
            if own == ME {
                self.mine.push(i);
                if matches!(kind, tile::CASTLE | tile::GENERAL) {
                    self.structures.push(i);
                }
            }
        }
        if self.home_dist.is_empty()
            && let Some(home) = self.my_general
        {
            let blocked = &self.blocked;
            bfs(
                self.grid,
                &[home],
                |i| !blocked[i],
                &mut self.home_dist,
                &mut self.queue,
            );
        }
    }

    /// The per-turn searches several steps share: distances from home and
    /// towards the target.
    pub(super) fn prepare(&mut self, ctx: &Ctx) {
        let grid = self.grid;
        let blocked = &self.blocked;
        match self.my_general {
            Some(home) => bfs(
                grid,
                &[home],
                |i| !blocked[i],
                &mut self.near_home,
                &mut self.queue,
            ),
            None => {
                self.near_home.clear();
                self.near_home.resize(grid.len(), UNREACHABLE);
            }
        }
        self.targets(ctx);
        // Marching paths go round neutral castles: their garrison would eat
        // the stack.
        let (blocked, garrison) = (&self.blocked, &self.garrison);
        bfs(
            grid,
            &self.goal,
            |i| !blocked[i] && garrison[i] == 0,
            &mut self.goal_dist,
            &mut self.queue,
        );
    }

    /// Fills `goal` with the cells the main stack should walk towards: the
    /// enemy generals when known, else the unseen cells where one most
    /// likely stands.
    pub(super) fn targets(&mut self, ctx: &Ctx) {
        self.goal.clear();
        if !self.enemy_generals.is_empty() {
            self.goal.extend_from_slice(&self.enemy_generals);
            return;
        }
        let n = self.grid.len();
        let unseen = |i: usize| !self.ever_seen[i] && !self.blocked[i];
        if !self.home_dist.is_empty() {
            let far = ctx.general_distance..UNREACHABLE;
            self.goal
                .extend((0..n).filter(|&i| unseen(i) && far.contains(&self.home_dist[i])));
        }
        if self.goal.is_empty() {
            self.goal.extend((0..n).filter(|&i| unseen(i)));
        }
        self.sources.clear();
        self.sources.extend((0..n).filter(|&i| self.enemy_seen[i]));
        if self.goal.is_empty() || self.sources.is_empty() {
            return;
        }
        // Enemy land grows out of its general: look next to what we saw.
        let blocked = &self.blocked;
        bfs(
            self.grid,
            &self.sources,
            |i| !blocked[i],
            &mut self.dist,
            &mut self.queue,
        );
        let dist = &self.dist;
        let best = self
            .goal
            .iter()
            .map(|&i| dist[i])
            .min()
            .unwrap_or(UNREACHABLE);
        self.goal.retain(|&i| dist[i] == best);
    }
}
