//! The state of a match: the board, the ants, hills, food, hives, scores,
//! what each colony has seen, and what the last turn did.
//!
//! [`Ants::new`] builds a match from a checked [`Map`]; a serialised state
//! (a replay's) is read back through [`check`](Ants::check), so a forged
//! replay is an error, never a panic.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::geometry::Torus;
use super::map::{Map, MapError};
use super::params::Params;
use crate::game::Outcome;
use crate::rng::SplitMix64;

/// One ant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ant {
    /// Row-major index of its square.
    pub square: usize,
    /// The seat whose colony it belongs to.
    pub owner: usize,
}

/// One hill; razed hills stay listed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hill {
    /// Row-major index of its square.
    pub square: usize,
    /// The seat whose colony spawns on it.
    pub owner: usize,
    /// The last turn it spawned or had one of its own ants on it (0: never);
    /// the hill untouched longest spawns first.
    pub touched: u32,
    /// When and by whom it was razed.
    pub razed: Option<Razed>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Razed {
    /// The turn it fell (the turn just played, counted from 1).
    pub turn: u32,
    /// The seat credited with it.
    pub by: usize,
}

/// How an ant died.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Cause {
    Collision,
    Battle,
}

/// One death of the turn just played.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Death {
    /// Where it died: its square after the moves.
    pub row: usize,
    pub col: usize,
    /// Its seat (absolute).
    pub owner: usize,
    pub cause: Cause,
    /// `[row, col, owner]` of every enemy in range whose focus was at most
    /// the dead ant's, at their squares after the moves; none for a
    /// collision.
    pub killers: Vec<[usize; 3]>,
}

/// One hill razed in the turn just played (by an ant, or credited at the
/// end to the last colony with ants).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Razing {
    /// The hill's square.
    pub row: usize,
    pub col: usize,
    /// The hill's seat, which loses 1.
    pub owner: usize,
    /// The seat that gains 2.
    pub by: usize,
}

/// Counters reported with the result.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeatStats {
    /// Ants born on the seat's hills.
    pub ants_spawned: u64,
    /// Food brought into its hive.
    pub food_gathered: u64,
    /// Enemy hills razed or credited to it.
    pub hills_razed: u64,
}

/// A per-square flag plane, serialised as one string of `0` and `1`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mask(pub Vec<bool>);

impl Serialize for Mask {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let text: String = self.0.iter().map(|&b| if b { '1' } else { '0' }).collect();
        s.serialize_str(&text)
    }
}

impl<'de> Deserialize<'de> for Mask {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Mask, D::Error> {
        let text = String::deserialize(d)?;
        text.chars()
            .map(|c| match c {
                '0' => Ok(false),
                '1' => Ok(true),
                _ => Err(serde::de::Error::custom("a mask holds only 0 and 1")),
            })
            .collect::<Result<Vec<bool>, _>>()
            .map(Mask)
    }
}

/// A match of Ants.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "State")]
pub struct Ants {
    pub(crate) params: Params,
    pub(crate) torus: Torus,
    /// Seat `s`'s layout is seat 0's moved by `s × shift`.
    pub(crate) shift: (usize, usize),
    pub(crate) water: Mask,
    /// Steps applied so far; the next turn to play is `turn + 1`.
    pub(crate) turn: u32,
    /// Every ant, sorted by square (one ant a square).
    pub(crate) ants: Vec<Ant>,
    /// Squares holding food, increasing.
    pub(crate) food: Vec<usize>,
    /// In map-file listing order.
    pub(crate) hills: Vec<Hill>,
    /// `hives[seat]`: food gathered and not yet spawned.
    pub(crate) hives: Vec<u32>,
    /// `scores[seat]`.
    pub(crate) scores: Vec<i64>,
    /// `forfeited[seat]`.
    pub(crate) forfeited: Vec<bool>,
    /// `seen[seat]`: every square the colony has ever seen.
    pub(crate) seen: Vec<Mask>,
    /// Draws the random food.
    pub(crate) rng: SplitMix64,
    /// Deaths of the turn just played.
    pub(crate) deaths: Vec<Death>,
    /// Hills razed in the turn just played.
    pub(crate) razings: Vec<Razing>,
    pub(crate) stats: Vec<SeatStats>,
    pub(crate) outcome: Option<Outcome>,
}

/// Why parameters, a map or a serialised state were refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum StateError {
    #[error("params out of range: {0}")]
    Params(&'static str),
    #[error(transparent)]
    Map(#[from] MapError),
    #[error("map {name:?} is for {map} players, not {seats}")]
    Players {
        name: String,
        map: usize,
        seats: usize,
    },
    #[error("state: {0}")]
    Invalid(&'static str),
}

impl Ants {
    /// A fresh match on `map`: scores one point a hill, hives empty, each
    /// colony knowing its hills and what its ants see. `seed` drives the
    /// random food.
    pub fn new(params: Params, map: Map, seed: u64) -> Result<Ants, StateError> {
        params.check()?;
        map.check()?;
        if map.players != params.players {
            return Err(StateError::Params(
                "the map's players differ from the seats",
            ));
        }
        let seats = params.players;
        let hills: Vec<Hill> = map
            .hills
            .iter()
            .map(|&(square, owner)| Hill {
                square,
                owner,
                touched: 0,
                razed: None,
            })
            .collect();
        let mut scores = vec![0i64; seats];
        let mut seen = vec![Mask(vec![false; map.torus.len()]); seats];
        for h in &hills {
            scores[h.owner] += 1;
            seen[h.owner].0[h.square] = true;
        }
        let mut ants: Vec<Ant> = map
            .ants
            .iter()
            .map(|&(square, owner)| Ant { square, owner })
            .collect();
        ants.sort_by_key(|a| a.square);
        let mut food = map.food.clone();
        food.sort_unstable();
        let mut game = Ants {
            params,
            torus: map.torus,
            shift: map.shift,
            water: Mask(map.water),
            turn: 0,
            ants,
            food,
            hills,
            hives: vec![0; seats],
            scores,
            forfeited: vec![false; seats],
            seen,
            rng: SplitMix64::new(seed),
            deaths: Vec::new(),
            razings: Vec::new(),
            stats: vec![SeatStats::default(); seats],
            outcome: None,
        };
        game.fold_vision();
        game.check()?;
        Ok(game)
    }

    pub fn params(&self) -> &Params {
        &self.params
    }

    pub fn torus(&self) -> Torus {
        self.torus
    }

    /// Every ant, by square.
    pub fn ants(&self) -> &[Ant] {
        &self.ants
    }

    /// Food squares, increasing.
    pub fn food(&self) -> &[usize] {
        &self.food
    }

    /// Every hill, razed ones included, in listing order.
    pub fn hills(&self) -> &[Hill] {
        &self.hills
    }

    pub fn hives(&self) -> &[u32] {
        &self.hives
    }

    pub fn scores(&self) -> &[i64] {
        &self.scores
    }

    /// Deaths of the turn just played.
    pub fn deaths(&self) -> &[Death] {
        &self.deaths
    }

    /// Razings of the turn just played.
    pub fn razings(&self) -> &[Razing] {
        &self.razings
    }

    pub fn is_water(&self, square: usize) -> bool {
        self.water.0.get(square).copied().unwrap_or(false)
    }

    /// `seat`'s ants in mine order (row-major by square).
    pub fn mine(&self, seat: usize) -> impl Iterator<Item = usize> + '_ {
        self.ants
            .iter()
            .filter(move |a| a.owner == seat)
            .map(|a| a.square)
    }

    pub fn ant_count(&self, seat: usize) -> usize {
        self.ants.iter().filter(|a| a.owner == seat).count()
    }

    /// Still playing: not forfeited and with ants. A colony without ants
    /// at the end of a turn can never have any again (spawning runs before
    /// gathering, so it gathers nothing more).
    pub fn is_alive(&self, seat: usize) -> bool {
        !self.forfeited.get(seat).is_none_or(|&f| f) && self.ants.iter().any(|a| a.owner == seat)
    }

    /// Every invariant the rules index with.
    pub(crate) fn check(&self) -> Result<(), StateError> {
        let bad = StateError::Invalid;
        self.params.check()?;
        let t = self.torus;
        let seats = self.params.players;
        if !(1..=super::params::MAX_SIDE).contains(&t.rows)
            || !(1..=super::params::MAX_SIDE).contains(&t.cols)
        {
            return Err(bad("board size out of range"));
        }
        if self.water.0.len() != t.len() || self.shift.0 >= t.rows || self.shift.1 >= t.cols {
            return Err(bad("board planes do not match its size"));
        }
        if [
            self.hives.len(),
            self.scores.len(),
            self.forfeited.len(),
            self.seen.len(),
            self.stats.len(),
        ]
        .iter()
        .any(|&n| n != seats)
            || self.seen.iter().any(|m| m.0.len() != t.len())
        {
            return Err(bad("per-seat lists do not match the players"));
        }
        let mut last = None;
        for a in &self.ants {
            if a.square >= t.len() || a.owner >= seats || self.water.0[a.square] {
                return Err(bad("an ant is off the board, on water or has no seat"));
            }
            if last.is_some_and(|l| a.square <= l) {
                return Err(bad("ants are not sorted one a square"));
            }
            last = Some(a.square);
        }
        let mut last = None;
        for &f in &self.food {
            if f >= t.len() || self.water.0[f] || last.is_some_and(|l| f <= l) {
                return Err(bad("food is off the board, on water or unsorted"));
            }
            last = Some(f);
        }
        for h in &self.hills {
            if h.square >= t.len() || h.owner >= seats || h.razed.is_some_and(|r| r.by >= seats) {
                return Err(bad("a hill is off the board or has no seat"));
            }
        }
        if self.hills.is_empty() || self.turn > self.params.max_turns {
            return Err(bad("no hills, or past max_turns"));
        }
        if let Some(o) = &self.outcome
            && (o.ranks.len() != seats || o.scores.len() != seats)
        {
            return Err(bad("the outcome must rank every seat"));
        }
        Ok(())
    }
}

/// The fields of an [`Ants`] exactly as serialised; unchecked.
#[derive(Deserialize)]
pub(crate) struct State {
    params: Params,
    torus: Torus,
    shift: (usize, usize),
    water: Mask,
    turn: u32,
    ants: Vec<Ant>,
    food: Vec<usize>,
    hills: Vec<Hill>,
    hives: Vec<u32>,
    scores: Vec<i64>,
    forfeited: Vec<bool>,
    seen: Vec<Mask>,
    rng: SplitMix64,
    deaths: Vec<Death>,
    razings: Vec<Razing>,
    stats: Vec<SeatStats>,
    outcome: Option<Outcome>,
}

impl TryFrom<State> for Ants {
    type Error = StateError;

    fn try_from(s: State) -> Result<Ants, StateError> {
        let game = Ants {
            params: s.params,
            torus: s.torus,
            shift: s.shift,
            water: s.water,
            turn: s.turn,
            ants: s.ants,
            food: s.food,
            hills: s.hills,
            hives: s.hives,
            scores: s.scores,
            forfeited: s.forfeited,
            seen: s.seen,
            rng: s.rng,
            deaths: s.deaths,
            razings: s.razings,
            stats: s.stats,
            outcome: s.outcome,
        };
        game.check()?;
        Ok(game)
    }
}
