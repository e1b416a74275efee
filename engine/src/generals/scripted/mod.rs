//! A scripted (rule-based) generals player: the built-in opponent the
//! training environment seats beside a learner, for curriculum and
//! evaluation.
//!
//! It sees exactly what a process bot sees, one seat's [`View`] (the numbers
//! of the text frame), and remembers across turns what fog hides again:
//! mountains, which cells it has ever seen, where enemy land was, where enemy
//! generals stand. Each turn the first of these steps that finds something
//! to do plays:
//!
//!  1. win now: a cell of ours next to a known enemy general takes it, or,
//!     once deathtouch is on, just steps onto it;
//!  2. defend: an enemy army close enough to take our general is captured,
//!     or, failing that, the armies around home fall back onto the general;
//!  3. build (competition only): a big army far from our other structures
//!     turns its cell into a castle, keeping plenty to march on with;
//!  4. in the opening, expand: spend single units on neutral cells;
//!  5. attack: the main stack (our biggest army; not the general's while an
//!     enemy is near home) sets out once it is big, and then keeps marching
//!     one step a turn towards the enemy general if it has ever been seen, or
//!     else towards the unseen cells, far enough from our general, nearest to
//!     the enemy land seen so far;
//!  6. expand: a small army takes a neutral cell next to our land, or an
//!     enemy cell (or, in classic, a neutral castle) it can beat;
//!  7. gather: the biggest other army steps over our land towards the main
//!     stack, so that it grows before it sets out;
//!  8. otherwise the biggest army walks to the nearest neutral plain.
//!
//! The plan is the starter bots' (`bots/starter-python`), ported with their
//! memory and then changed where games against them showed a gain: stacks
//! set out later and bigger, gathering comes before walking to the
//! frontier, and after the opening the general's army is neither spent on
//! expansion nor gathered away, so home holds when an enemy stack arrives.
//! Every format reads the same: teammates' cells are neither ours nor
//! enemies, every opponent is an enemy, and marches go round neutral castles
//! they cannot take.
//!
//! A turn is a handful of breadth-first searches over the board, in buffers
//! the struct keeps. Same view, same memory, same seed: same action.
//!
//! Here are the rules, the numbers and the turn ([`Scripted::choose`]);
//! `memory` reads a view into planes and keeps what fog hides, `steps`
//! holds the steps above.

mod memory;
mod steps;

use super::observe::{HeaderLayout, View};
use super::{Action, Direction};
use crate::grid::{self, UNREACHABLE};

/// What the bot needs to know about the ruleset.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScriptedRules {
    /// Castles can be built (the competition ruleset).
    pub builds: bool,
    /// From this turn on, any move onto an enemy general wins.
    pub deathtouch_turn: Option<u32>,
    /// Base castle price before the crowding surcharge.
    pub build_base_cost: u32,
}

impl ScriptedRules {
    /// The competition's rules: builds at 35, deathtouch from turn 800.
    pub const COMPETITION: ScriptedRules = ScriptedRules {
        builds: true,
        deathtouch_turn: Some(800),
        build_base_cost: 35,
    };
    /// Classic generals.io, every format: no builds, no deathtouch.
    pub const CLASSIC: ScriptedRules = ScriptedRules {
        builds: false,
        deathtouch_turn: None,
        build_base_cost: 0,
    };
}

// --- Strategy numbers (tuned in games against the starter bots) ------------

/// Before this turn we only expand, and the general's army may expand too.
const OPENING_TURNS: i64 = 24;
/// A stack sets out for the target once it is at least this big...
const LAUNCH_ARMY: i64 = 25;
/// ...and, once marching, goes on while it is at least this big.
const MARCH_ARMY: i64 = 6;
const CASTLE_FIRST_TURN: i64 = 50;
/// Later castles would not pay back their price.
const CASTLE_LAST_TURN: i64 = 600;
/// Build only where the crowding surcharge is at most this.
const CASTLE_MAX_SURCHARGE: i64 = 6;
/// Build only from an army this much bigger than the price: a castle should
/// not leave the stack too weak to go on.
const CASTLE_RESERVE: i64 = 40;
/// Castles, not counting the general.
const MAX_CASTLES: usize = 6;
/// Enemy armies this close to our general are threats...
const THREAT_RADIUS: u32 = 4;
/// ...and this close, the general's own army stays home.
const GUARD_RADIUS: u32 = 6;
/// Generals of a 1v1 start at least this many steps apart.
const DUEL_GENERAL_DISTANCE: u32 = 17;

// Owners relative to us, whatever the format.
const NEUTRAL: u8 = 0;
const ME: u8 = 1;
const ENEMY: u8 = 2;
const ALLY: u8 = 3;

/// The board's shape; cells are indexed `row * w + col` on the true board.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Grid {
    h: usize,
    w: usize,
}

impl Grid {
    fn len(self) -> usize {
        self.h * self.w
    }

    /// The shared geometry of this board.
    #[inline]
    fn board(self) -> grid::Grid {
        grid::Grid::new(self.w, self.h)
    }

    /// `(dir, cell)` for each in-bounds neighbour, in the protocol's order.
    #[inline]
    fn neighbours(self, i: usize) -> impl Iterator<Item = (usize, usize)> {
        let around = self.board().neighbours(i).into_iter().enumerate();
        around.filter_map(|(d, j)| j.map(|j| (d, j)))
    }

    /// The cell one step from `i` in direction `dir`, if on the board.
    fn step(self, i: usize, dir: usize) -> Option<usize> {
        self.board().step(i, dir)
    }

    fn manhattan(self, a: usize, b: usize) -> i64 {
        self.board().manhattan(a, b) as i64
    }
}

/// Breadth-first distances from the sources over cells where `allowed` holds
/// (sources are at 0 whatever `allowed` says), into reused buffers.
fn bfs(
    grid: Grid,
    sources: &[usize],
    allowed: impl Fn(usize) -> bool,
    dist: &mut Vec<u32>,
    queue: &mut Vec<usize>,
) {
    let sources = sources.iter().copied();
    grid::bfs(grid.board(), sources, allowed, UNREACHABLE, dist, queue);
}

/// The opposite direction: up and down, left and right.
fn flip(dir: usize) -> usize {
    dir ^ 1
}

/// The rules as numbers for one turn.
#[derive(Clone, Copy)]
struct Ctx {
    turn: i64,
    /// The first turn a touch wins; `i64::MAX` without deathtouch.
    deathtouch: i64,
    builds: bool,
    build_base_cost: i64,
    /// Enemy generals start at least this far from ours.
    general_distance: u32,
}

/// A scripted player with its memory of one game.
pub struct Scripted {
    seed: u64,
    grid: Grid,
    last_turn: i64,

    // What we remember between turns (a view only shows what we see now).
    /// Mountains, and structures in fog we never saw open.
    blocked: Vec<bool>,
    /// Cells seen at least once.
    ever_seen: Vec<bool>,
    /// Cells seen as plain, castle or general at least once.
    seen_open: Vec<bool>,
    /// Cells last seen owned by an enemy.
    enemy_seen: Vec<bool>,
    /// Neutral castles (classic), with the garrison last seen; 0 elsewhere.
    garrison: Vec<i64>,
    my_general: Option<usize>,
    /// Enemy generals seen (they never move; dropped once seen gone).
    enemy_generals: Vec<usize>,
    /// Distance from our general, computed once it is known; empty before.
    home_dist: Vec<u32>,
    /// Where the stack we moved last turn landed.
    stack: Option<usize>,

    // This turn's view, on the true board, owners relative to us.
    kind: Vec<u8>,
    own: Vec<u8>,
    army: Vec<i64>,
    mine: Vec<usize>,
    structures: Vec<usize>,

    // Scratch, reused every turn.
    goal: Vec<usize>,
    goal_dist: Vec<u32>,
    near_home: Vec<u32>,
    dist: Vec<u32>,
    sources: Vec<usize>,
    queue: Vec<usize>,
    threats: Vec<(i64, usize)>,
}

impl Scripted {
    pub fn new(seed: u64) -> Scripted {
        Scripted {
            seed,
            grid: Grid::default(),
            last_turn: -1,
            blocked: Vec::new(),
            ever_seen: Vec::new(),
            seen_open: Vec::new(),
            enemy_seen: Vec::new(),
            garrison: Vec::new(),
            my_general: None,
            enemy_generals: Vec::new(),
            home_dist: Vec::new(),
            stack: None,
            kind: Vec::new(),
            own: Vec::new(),
            army: Vec::new(),
            mine: Vec::new(),
            structures: Vec::new(),
            goal: Vec::new(),
            goal_dist: Vec::new(),
            near_home: Vec::new(),
            dist: Vec::new(),
            sources: Vec::new(),
            queue: Vec::new(),
            threats: Vec::new(),
        }
    }

    /// Starts a new game: forgets everything, keeps the buffers.
    pub fn reset(&mut self, seed: u64) {
        self.seed = seed;
        self.forget(Grid::default());
    }

    fn forget(&mut self, grid: Grid) {
        let n = grid.len();
        self.grid = grid;
        self.last_turn = -1;
        for plane in [
            &mut self.blocked,
            &mut self.ever_seen,
            &mut self.seen_open,
            &mut self.enemy_seen,
        ] {
            plane.clear();
            plane.resize(n, false);
        }
        self.garrison.clear();
        self.garrison.resize(n, 0);
        self.my_general = None;
        self.enemy_generals.clear();
        self.home_dist.clear();
        self.stack = None;
    }

    /// The action for this view. Never panics: a view it cannot read (or a
    /// seat with nothing left) gets a pass.
    pub fn choose(&mut self, view: &View<'_>, rules: &ScriptedRules) -> Action {
        let Some(grid) = Self::check(view) else {
            return Action::PASS;
        };
        let turn = view.turn().clamp(0, i64::from(u32::MAX));
        // A new board, or time running backwards, is a new game.
        if grid != self.grid || turn < self.last_turn {
            self.forget(grid);
        }
        self.last_turn = turn;
        let ctx = Ctx {
            turn,
            deathtouch: rules.deathtouch_turn.map_or(i64::MAX, i64::from),
            builds: rules.builds,
            build_base_cost: i64::from(rules.build_base_cost),
            general_distance: match view.layout {
                HeaderLayout::Duel => DUEL_GENERAL_DISTANCE,
                HeaderLayout::Seats => crate::generals_classic::mapgen::min_general_distance(
                    grid.h,
                    grid.w,
                    view.seats(),
                ),
            },
        };
        self.read(view);
        self.observe();
        if self.mine.is_empty() {
            return Action::PASS;
        }
        self.prepare(&ctx);
        let choice = self.decide(&ctx);
        match choice {
            Some(Choice::Move(i, d)) => self.movement(i, d),
            Some(Choice::Build(i)) => {
                let w = self.grid.w;
                Action::build((i / w) as i64, (i % w) as i64)
            }
            None => Action::PASS,
        }
    }

    /// The steps, in order; the first that finds something to do plays.
    fn decide(&mut self, ctx: &Ctx) -> Option<Choice> {
        let marched = self.stack.take();
        if let Some(c) = self.win_now(ctx).or_else(|| self.defend(ctx)) {
            return Some(c);
        }
        if let Some(c) = self.build_castle(ctx) {
            return Some(c);
        }
        if ctx.turn < OPENING_TURNS {
            return self.expand(ctx).or_else(|| self.walk_to_frontier());
        }
        let main = self.main_stack(ctx);
        if let Some(c @ Choice::Move(i, d)) = self.attack(ctx, main, marched == Some(main)) {
            // Remember where the stack lands, to keep it marching.
            self.stack = self.grid.step(i, d);
            return Some(c);
        }
        // Gathering comes before walking to the frontier: one big stack
        // breaks through where many small ones die, and the general's army
        // stays home to defend it.
        self.expand(ctx)
            .or_else(|| self.gather_to(main, UNREACHABLE, self.my_general))
            .or_else(|| self.walk_to_frontier())
    }

    /// The true board's grid when the view is consistent enough to read.
    fn check(view: &View<'_>) -> Option<Grid> {
        let side = view.side;
        let cells = side.checked_mul(side)?;
        let (h, w) = (view.height, view.width);
        let fits = h > 0
            && w > 0
            && h <= side
            && w <= side
            && view.tile.len() >= cells
            && view.owner.len() >= cells
            && view.army.len() >= cells
            && !view.header.is_empty();
        fits.then_some(Grid { h, w })
    }

    fn movement(&self, cell: usize, dir: usize) -> Action {
        let w = self.grid.w;
        Action::movement(
            (cell / w) as i64,
            (cell % w) as i64,
            Direction::ALL[dir & 3],
            false,
        )
    }

    /// A small deterministic number per seed, turn and cell, to break ties.
    fn jitter(&self, turn: i64, cell: usize) -> u64 {
        let mut z = self.seed ^ (turn as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ cell as u64;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// A step's decision, before it becomes an [`Action`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Choice {
    /// Move all but one from the cell in the direction.
    Move(usize, usize),
    Build(usize),
}

#[cfg(test)]
mod tests {
    use super::{Scripted, ScriptedRules};
    use crate::Game;
    use crate::generals::observe::testing::Views;
    use crate::generals::observe::{HeaderLayout, View};
    use crate::generals::random::random_legal_action;
    use crate::generals::{Action, ActionKind, Generals, Params};
    use crate::generals_classic::{self, GeneralsClassic, GeneralsClassicMulti, Mode};
    use crate::rng::SplitMix64;

    /// Who plays a seat of a duel.
    #[derive(Clone, Copy, PartialEq)]
    enum Player {
        Scripted,
        Random,
    }

    /// Plays a competition game; returns the winner (`None` for a draw)
    /// and every action sent, in order.
    fn competition(seed: u64, players: [Player; 2]) -> (Option<usize>, Vec<Action>) {
        let mut game = Generals::from_seed(seed, Params::default());
        let mut bots = [Scripted::new(seed), Scripted::new(seed ^ 1)];
        let mut rng = SplitMix64::new(seed);
        let mut views = Views::new(2, 21);
        let mut log = Vec::new();
        let rules = ScriptedRules::COMPETITION;
        while !game.is_over() {
            views.update(&game);
            let mut actions = [Action::PASS; 2];
            for seat in 0..2 {
                actions[seat] = match players[seat] {
                    Player::Scripted => bots[seat].choose(&views.view(&game, seat), &rules),
                    Player::Random => random_legal_action(&game, seat, &mut rng),
                };
            }
            log.extend(actions);
            game.step_pair(actions);
        }
        let winner = game.outcome().and_then(|o| o.winner());
        (winner, log)
    }

    /// Plays a classic 1v1 game, scripted against scripted or random.
    fn classic(seed: u64, players: [Player; 2]) -> Option<usize> {
        let mut game =
            GeneralsClassic::from_seed(seed, generals_classic::Params::default()).unwrap();
        let mut bots = [Scripted::new(seed), Scripted::new(seed + 1)];
        let mut rng = SplitMix64::new(seed);
        let mut views = Views::new(2, 23);
        let rules = ScriptedRules::CLASSIC;
        while !game.is_over() {
            views.update(&game);
            let mut actions = [Action::PASS; 2];
            for seat in 0..2 {
                actions[seat] = match players[seat] {
                    Player::Scripted => bots[seat].choose(&views.view(&game, seat), &rules),
                    Player::Random => random_legal_action(&game, seat, &mut rng),
                };
            }
            game.step_pair(actions);
        }
        game.outcome().and_then(|o| o.winner())
    }

    fn multi(seed: u64, seats: usize, mode: Mode) -> GeneralsClassicMulti {
        let options = generals_classic::mapgen::MapOptions {
            players: seats,
            ..Default::default()
        };
        let map = generals_classic::mapgen::generate(seed, &options);
        GeneralsClassicMulti::from_map(map, mode, 500).unwrap()
    }

    #[test]
    fn scripted_beats_random_in_the_competition() {
        let mut wins = 0;
        for seed in 0..20u64 {
            // Seats alternate so neither side of the board is favoured.
            let seat = (seed % 2) as usize;
            let mut players = [Player::Random; 2];
            players[seat] = Player::Scripted;
            let (winner, _) = competition(seed, players);
            wins += usize::from(winner == Some(seat));
        }
        assert!(wins >= 16, "scripted won only {wins} of 20 against random");
    }

    #[test]
    fn scripted_plays_itself_in_the_competition() {
        for seed in 100..103u64 {
            let (_, log) = competition(seed, [Player::Scripted; 2]);
            assert!(log.iter().any(|a| a.kind == ActionKind::Move));
        }
    }

    #[test]
    fn scripted_is_deterministic() {
        let players = [Player::Scripted, Player::Random];
        assert_eq!(competition(7, players), competition(7, players));
        // A reset bot plays exactly as a new one.
        let mut game = Generals::from_seed(8, Params::default());
        let mut views = Views::new(2, 21);
        let rules = ScriptedRules::COMPETITION;
        let mut used = Scripted::new(3);
        for _ in 0..200 {
            views.update(&game);
            let a = used.choose(&views.view(&game, 0), &rules);
            game.step_pair([a, Action::PASS]);
        }
        used.reset(5);
        let mut fresh = Scripted::new(5);
        let mut game = Generals::from_seed(9, Params::default());
        while !game.is_over() && game.time() < 300 {
            views.update(&game);
            let view = views.view(&game, 0);
            let a = used.choose(&view, &rules);
            assert_eq!(a, fresh.choose(&view, &rules));
            game.step_pair([a, Action::PASS]);
        }
    }

    #[test]
    fn scripted_plays_and_wins_classic_duels() {
        let mut wins = 0;
        for seed in 0..6u64 {
            let seat = (seed % 2) as usize;
            let mut players = [Player::Random; 2];
            players[seat] = Player::Scripted;
            wins += usize::from(classic(seed, players) == Some(seat));
        }
        assert!(
            wins >= 5,
            "scripted won only {wins} of 6 classic games against random"
        );
        classic(50, [Player::Scripted; 2]);
    }

    #[test]
    fn scripted_plays_classic_free_for_all_and_teams() {
        for (seed, seats, mode) in [
            (1u64, 4usize, Mode::Teams),
            (2, 4, Mode::Teams),
            (3, 3, Mode::Ffa),
            (4, 8, Mode::Ffa),
            (5, 2, Mode::Ffa),
        ] {
            let mut game = multi(seed, seats, mode);
            let mut bots: Vec<Scripted> = (0..seats as u64).map(Scripted::new).collect();
            let mut views = Views::new(seats, 23);
            let mut moved = vec![false; seats];
            while game.outcome().is_none() {
                views.update(&game);
                let actions: Vec<Option<Action>> = (0..seats)
                    .map(|s| {
                        let view = views.view(&game, s);
                        assert_eq!(view.layout, HeaderLayout::Seats);
                        let a = bots[s].choose(&view, &ScriptedRules::CLASSIC);
                        moved[s] |= a.kind == ActionKind::Move;
                        Some(a)
                    })
                    .collect();
                game.step(&actions);
            }
            assert!(moved.iter().all(|&m| m), "seed {seed}: a seat never moved");
        }
    }

    #[test]
    fn odd_views_get_a_pass_not_a_panic() {
        let rules = ScriptedRules::COMPETITION;
        let mut bot = Scripted::new(0);
        let tile = vec![1u8; 16];
        let owner = vec![0u8; 16];
        let army = vec![0i32; 16];
        let header = [3i64, 0, 0, 1, 1];
        let view = View {
            side: 4,
            height: 4,
            width: 4,
            tile: &tile,
            owner: &owner,
            army: &army,
            header: &header,
            layout: HeaderLayout::Duel,
            seat: 0,
            allies: 0,
        };
        // Nothing of ours on the board (an eliminated seat).
        assert_eq!(bot.choose(&view, &rules), Action::PASS);
        // Sizes that do not fit the planes.
        for (side, height, width) in [(4, 5, 4), (5, 4, 4), (0, 0, 0), (4, 0, 4)] {
            let odd = View {
                side,
                height,
                width,
                ..view
            };
            assert_eq!(bot.choose(&odd, &rules), Action::PASS);
        }
        assert_eq!(
            bot.choose(
                &View {
                    header: &[],
                    ..view
                },
                &rules
            ),
            Action::PASS
        );
        // Garbage numbers everywhere: any action, but no panic.
        let mut rng = SplitMix64::new(42);
        for round in 0..300 {
            let tile: Vec<u8> = (0..16).map(|_| rng.next_u64() as u8 % 8).collect();
            let owner: Vec<u8> = (0..16).map(|_| rng.next_u64() as u8 % 12).collect();
            let army: Vec<i32> = (0..16).map(|_| rng.next_u64() as i32).collect();
            let header = [rng.next_u64() as i64 % 2000, -5, i64::MAX, 7, i64::MIN];
            let layout = if round % 2 == 0 {
                HeaderLayout::Duel
            } else {
                HeaderLayout::Seats
            };
            let garbage = View {
                tile: &tile,
                owner: &owner,
                army: &army,
                header: &header,
                layout,
                allies: rng.next_u64() as u32,
                ..view
            };
            for rules in [ScriptedRules::COMPETITION, ScriptedRules::CLASSIC] {
                bot.choose(&garbage, &rules);
            }
        }
    }
}
