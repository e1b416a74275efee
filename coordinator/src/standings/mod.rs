//! Standings: the table a tournament ends with.
//!
//! [`compute`] reads the entrant list, every finished [`MatchRecord`] and the
//! byes, and produces one [`StandingRow`] per entrant, sorted and ranked. It
//! is a pure function: no I/O, no clock, no randomness, and the order in
//! which matches or entrants are passed in does not change the result.
//!
//! # Points
//!
//! A match with `N` seats hands out `N / 2` points. The seats are ordered by
//! their `rank` (lower is better; only the order matters, so `[0, 1]`,
//! `[0, 0, 2, 3]` and `[0, 0, 1, 2]` are all fine). A seat whose tie group
//! covers the places `p ..= p + k - 1` (0-based) sits at their average
//! `a = p + (k - 1) / 2` and scores `(N - 1 - a) / (N - 1)`. With two seats
//! that is the usual 1 for a win, ½ for a draw, 0 for a loss; with four seats
//! the places are worth 1, ⅔, ⅓, 0. A bye is worth 1 point.
//!
//! The score of a seat equals its average *pairwise* score against its
//! co-players (1 for finishing ahead of one, ½ for tying, 0 for finishing
//! behind), which is what the tie-breaks build on.
//!
//! # Tie-breaks
//!
//! Both tie-breaks use the opponents' final totals (byes included):
//!
//! - **Buchholz**: the sum, over every match played, of the totals of every
//!   co-player in that match. A 4-seat game adds three opponents' totals.
//! - **Sonneborn–Berger**: an N-seat game is read as `N - 1` head-to-head
//!   results against each co-player, and each one adds the co-player's total
//!   times the pairwise score (1 ahead, ½ tied, 0 behind). With two seats this
//!   is the classic definition: beaten opponents' totals plus half of drawn
//!   opponents' totals. It is not divided by `N - 1`, matching Buchholz, so
//!   `SB ≤ Buchholz` holds for any seat count.
//!
//! Byes add nothing to either tie-break. An opponent met twice counts twice.
//!
//! Points and both tie-breaks are computed exactly in integers (scaled by a
//! common denominator) so that equal values compare equal; the `f64` fields
//! are those exact values divided out.
//!
//! # Rating
//!
//! Every entrant starts at the Weng-Lin defaults (μ = 25, σ = 25/3, β = 25/6,
//! via the `skillratings` crate). Matches are replayed one at a time, sorted
//! by round and then match id (whatever order they were passed in), each
//! seat as a one-player team; tied seats share an outcome. Byes do not touch
//! the rating. The conservative rating is `μ - 3σ`. σ never grows, and shrinks
//! with every game.
//!
//! # Order and rank
//!
//! Rows sort by points, Buchholz, Sonneborn–Berger and conservative rating
//! (compared as shown, to two decimals), all descending, then by entrant id
//! ascending. Entrants equal on all four share a rank, and the next rank
//! skips accordingly (1, 2, 2, 4).
//!
//! # Counters
//!
//! `wins` counts sole first places, `draws` shared first places, and `losses`
//! every other placement (for two seats: win, draw, loss). `timeouts`,
//! `malformed`, `illegal` (replies the rules refused whole),
//! `fuel_exhausted` (WebAssembly turns that ran dry) and `strikes`
//! (model-graph turns that failed) add up the seats' fault counters, and `forfeits` counts the matches the entrant left by each
//! [`Forfeit`] reason.
//!
//! # Baseline seats
//!
//! A seat played by an in-engine baseline (entrant id `baseline:NAME`, see
//! [`crate::domain::baseline_name`]) takes part in the placement and in
//! nothing else:
//!
//! - it is never a row, and the same baseline may sit in several seats;
//! - its points are credited to nobody;
//! - the entrants of a match with baselines score their own placement among
//!   *all* seats (finishing behind a baseline costs what finishing behind an
//!   entrant costs), and `wins`/`draws`/`losses` read that placement too;
//! - it is no co-player for Buchholz or Sonneborn–Berger: those sum over
//!   the other *entrant* seats only;
//! - the rating treats the match as a multi-player ranking of the entrant
//!   seats alone, in their order among themselves; a match with fewer than
//!   two entrant seats leaves ratings alone.
//!
//! # Team games
//!
//! In a game played in teams (see [`crate::teams`]) a team entrant sits on
//! every seat of its side, and the worker reports every seat.
//! [`compute_by_side`] first collapses each record into one seat per side
//! ([`Sides::collapse`]) and then runs everything above on those:
//!
//! - the side's rank is its seats' rank (teammates ranked apart are an
//!   error, naming the match and both seats), and its points are the
//!   placement points among the *sides*: with two sides win 1, draw ½,
//!   loss 0, whatever the seat count;
//! - `games`, `wins`, `draws` and `losses` count matches, not seats;
//! - `timeouts` and `malformed` add up over all of the side's seats, and a
//!   forfeit counts once per match, under the reason of the side's first
//!   forfeited seat;
//! - teammates are never co-players: Buchholz and Sonneborn–Berger sum over
//!   the other sides only, and the rating update sees one player per side.
//!
//! Placement points are exactly [`arena_engine::placement_points`], the
//! scoring every registered game reports (a test checks the two agree), kept
//! here in integers.

mod export;
mod rating;
mod results;

pub use self::export::{csv_field, push_csv_record};
pub use self::results::{RESULTS_HEADER, results_csv};
mod score;

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde::{Deserialize, Serialize};
use skillratings::weng_lin::WengLinRating;

use arena_engine::Forfeit;

use crate::domain::{EntrantId, MatchRecord, baseline_name};
use crate::teams::{Sides, TeamError};
use score::Placement;

/// The final table, best first.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Standings {
    pub rows: Vec<StandingRow>,
}

impl Standings {
    /// The row of `entrant`, if it is in the table.
    pub fn row(&self, entrant: &str) -> Option<&StandingRow> {
        self.rows.iter().find(|row| row.entrant == entrant)
    }
}

/// One entrant's line of the table.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StandingRow {
    /// 1-based; entrants equal on every tie-break share a rank.
    pub rank: u32,
    pub entrant: EntrantId,
    pub name: String,
    /// Match points plus one per bye.
    pub points: f64,
    pub buchholz: f64,
    pub sonneborn_berger: f64,
    /// Weng-Lin mean.
    pub rating_mu: f64,
    /// Weng-Lin uncertainty.
    pub rating_sigma: f64,
    /// `rating_mu - 3 * rating_sigma`.
    pub rating_conservative: f64,
    /// Matches played (byes not included).
    pub games: u32,
    /// Sole first places.
    pub wins: u32,
    /// Shared first places.
    pub draws: u32,
    /// Any other placement.
    pub losses: u32,
    pub byes: u32,
    /// Moves that ran out of time, summed over all matches.
    pub timeouts: u64,
    /// Malformed replies, summed over all matches.
    pub malformed: u64,
    /// Replies the game's rules refused as a whole, summed over all matches.
    #[serde(default)]
    pub illegal: u64,
    /// WebAssembly turns that ran out of fuel, summed over all matches.
    #[serde(default)]
    pub fuel_exhausted: u64,
    /// Model-graph turns that failed (strikes), summed over all matches.
    #[serde(default)]
    pub strikes: u64,
    /// Matches forfeited, by reason; reasons that never happened are absent.
    pub forfeits: BTreeMap<Forfeit, u32>,
}

/// Why the standings could not be computed from the records given.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum StandingsError {
    #[error("entrant {entrant} is listed twice")]
    DuplicateEntrant { entrant: EntrantId },
    #[error("match {match_id} is recorded twice")]
    DuplicateMatch { match_id: String },
    #[error("match {match_id} names unknown entrant {entrant}")]
    UnknownEntrant {
        match_id: String,
        entrant: EntrantId,
    },
    #[error("match {match_id} has {seats} seat(s); a match needs at least 2")]
    TooFewSeats { match_id: String, seats: usize },
    #[error("match {match_id} seats entrant {entrant} more than once")]
    DuplicateSeat {
        match_id: String,
        entrant: EntrantId,
    },
    #[error("match {match_id} ranks a seat {rank}, but it has only {seats} seats")]
    InconsistentRanks {
        match_id: String,
        rank: u32,
        seats: usize,
    },
    #[error("round {round} gives a bye to unknown entrant {entrant}")]
    UnknownByeEntrant { round: u32, entrant: EntrantId },
    #[error("round {round} gives entrant {entrant} more than one bye")]
    DuplicateBye { round: u32, entrant: EntrantId },
    #[error("match {match_id} does not fit the game's teams")]
    Team {
        match_id: String,
        #[source]
        source: TeamError,
    },
    #[error("the scores overflow exact arithmetic (too many distinct seat counts or games)")]
    Overflow,
}

/// One validated entrant seat of a match, with the entrant as an index.
struct GameSeat {
    entrant: usize,
    rank: u32,
    /// Among every seat of the match, baselines included.
    placement: Placement,
    /// Among the match's entrant seats only: how many finished ahead.
    entrants_ahead: usize,
    forfeit: Option<Forfeit>,
    timeouts: u32,
    malformed: u32,
    illegal: u64,
    fuel_exhausted: u64,
    strikes: u64,
}

/// One validated match.
struct Game {
    /// Every seat, baselines included: what the placement points are out of.
    size: usize,
    /// The entrant seats, in seat order; baseline seats are left out.
    seats: Vec<GameSeat>,
}

/// Running totals for one entrant, exact where it matters for ordering.
#[derive(Default)]
struct Tally {
    /// Points × `denominator`.
    points: u128,
    /// Buchholz × `denominator`.
    buchholz: u128,
    /// Sonneborn–Berger × 2 × `denominator`.
    sb: u128,
    games: u32,
    wins: u32,
    draws: u32,
    losses: u32,
    byes: u32,
    timeouts: u64,
    malformed: u64,
    illegal: u64,
    fuel_exhausted: u64,
    strikes: u64,
    forfeits: BTreeMap<Forfeit, u32>,
}

/// [`compute`] for a game played by `sides`: every record (one seat per
/// seat of the match, as reported) is collapsed into one seat per side
/// first; see "Team games" in the [module docs](self). Without teams this is
/// exactly [`compute`].
pub fn compute_by_side(
    entrants: &[(EntrantId, String)],
    matches: &[MatchRecord],
    byes: &[(u32, EntrantId)],
    sides: &Sides,
) -> Result<Standings, StandingsError> {
    if !sides.is_team_game() {
        return compute(entrants, matches, byes);
    }
    let collapsed = matches
        .iter()
        .map(|record| {
            sides
                .collapse(record)
                .map_err(|source| StandingsError::Team {
                    match_id: record.match_id.clone(),
                    source,
                })
        })
        .collect::<Result<Vec<_>, _>>()?;
    compute(entrants, &collapsed, byes)
}

/// Builds the standings; see the [module docs](self) for every formula.
///
/// Every entrant in `entrants` gets a row, played or not. `matches` are the
/// finished matches in any order; `byes` are `(round, entrant)` pairs.
pub fn compute(
    entrants: &[(EntrantId, String)],
    matches: &[MatchRecord],
    byes: &[(u32, EntrantId)],
) -> Result<Standings, StandingsError> {
    let index = entrant_index(entrants)?;
    let games = ordered_games(matches, &index)?;
    let mut tallies: Vec<Tally> = entrants.iter().map(|_| Tally::default()).collect();
    count_byes(byes, &index, &mut tallies)?;
    let denominator = common_denominator(&games)?;
    tally_games(&games, denominator, &mut tallies)?;
    add_tie_breaks(&games, &mut tallies)?;
    let ratings = rating::rate(&games, entrants.len());
    let rows = ranked_rows(entrants, tallies, &ratings, denominator);
    Ok(Standings { rows })
}

/// Each entrant's index in `entrants`, refusing an entrant listed twice.
fn entrant_index(entrants: &[(EntrantId, String)]) -> Result<HashMap<&str, usize>, StandingsError> {
    let mut index: HashMap<&str, usize> = HashMap::with_capacity(entrants.len());
    for (i, (id, _)) in entrants.iter().enumerate() {
        if index.insert(id.as_str(), i).is_some() {
            return Err(StandingsError::DuplicateEntrant {
                entrant: id.clone(),
            });
        }
    }
    Ok(index)
}

/// The matches validated, by round then match id: one documented order
/// for everything that depends on order (the rating).
fn ordered_games(
    matches: &[MatchRecord],
    index: &HashMap<&str, usize>,
) -> Result<Vec<Game>, StandingsError> {
    let mut ordered: Vec<&MatchRecord> = matches.iter().collect();
    ordered.sort_by(|a, b| (a.round, &a.match_id).cmp(&(b.round, &b.match_id)));
    let mut seen = BTreeSet::new();
    let mut games = Vec::with_capacity(ordered.len());
    for record in ordered {
        if !seen.insert(record.match_id.as_str()) {
            return Err(StandingsError::DuplicateMatch {
                match_id: record.match_id.clone(),
            });
        }
        games.push(validate(record, index)?);
    }
    Ok(games)
}

/// Counts each entrant's byes, refusing a bye of an unknown entrant or
/// two of one entrant in the same round.
fn count_byes(
    byes: &[(u32, EntrantId)],
    index: &HashMap<&str, usize>,
    tallies: &mut [Tally],
) -> Result<(), StandingsError> {
    let mut bye_seen = BTreeSet::new();
    for (round, entrant) in byes {
        let Some(&i) = index.get(entrant.as_str()) else {
            return Err(StandingsError::UnknownByeEntrant {
                round: *round,
                entrant: entrant.clone(),
            });
        };
        if !bye_seen.insert((*round, i)) {
            return Err(StandingsError::DuplicateBye {
                round: *round,
                entrant: entrant.clone(),
            });
        }
        tallies[i].byes += 1;
    }
    Ok(())
}

/// A common denominator for every match's points: lcm of 2 (N - 1).
fn common_denominator(games: &[Game]) -> Result<u128, StandingsError> {
    let mut denominator: u64 = 2;
    for game in games {
        let scale = 2 * (game.size as u64 - 1);
        denominator = score::lcm(denominator, scale).ok_or(StandingsError::Overflow)?;
    }
    Ok(u128::from(denominator))
}

/// Adds up each entrant's points (byes included) in units of
/// `1 / denominator`, and its games, results and misconduct counts.
fn tally_games(
    games: &[Game],
    denominator: u128,
    tallies: &mut [Tally],
) -> Result<(), StandingsError> {
    for tally in tallies.iter_mut() {
        tally.points = u128::from(tally.byes) * denominator;
    }
    for game in games {
        let n = game.size;
        let factor = denominator / (2 * (n as u128 - 1));
        for seat in &game.seats {
            let tally = &mut tallies[seat.entrant];
            let scaled = u128::from(seat.placement.scaled_points(n));
            let points = scaled.checked_mul(factor).ok_or(StandingsError::Overflow)?;
            tally.points = checked_add(tally.points, points)?;
            tally.games += 1;
            if seat.placement.is_win() {
                tally.wins += 1;
            } else if seat.placement.is_shared_first() {
                tally.draws += 1;
            } else {
                tally.losses += 1;
            }
            tally.timeouts += u64::from(seat.timeouts);
            tally.malformed += u64::from(seat.malformed);
            tally.illegal = tally.illegal.saturating_add(seat.illegal);
            tally.fuel_exhausted = tally.fuel_exhausted.saturating_add(seat.fuel_exhausted);
            tally.strikes = tally.strikes.saturating_add(seat.strikes);
            if let Some(reason) = seat.forfeit {
                *tally.forfeits.entry(reason).or_default() += 1;
            }
        }
    }
    Ok(())
}

/// Buchholz and Sonneborn–Berger from the opponents' final points.
fn add_tie_breaks(games: &[Game], tallies: &mut [Tally]) -> Result<(), StandingsError> {
    // Tie-breaks need every final total, so they come in a second pass.
    let totals: Vec<u128> = tallies.iter().map(|t| t.points).collect();
    for game in games {
        for seat in &game.seats {
            let mut buchholz = tallies[seat.entrant].buchholz;
            let mut sb = tallies[seat.entrant].sb;
            for other in &game.seats {
                if other.entrant == seat.entrant {
                    continue;
                }
                let total = totals[other.entrant];
                buchholz = checked_add(buchholz, total)?;
                let doubled = score::doubled_pair_score(seat.rank, other.rank);
                let weighted = total.checked_mul(doubled).ok_or(StandingsError::Overflow)?;
                sb = checked_add(sb, weighted)?;
            }
            tallies[seat.entrant].buchholz = buchholz;
            tallies[seat.entrant].sb = sb;
        }
    }
    Ok(())
}

/// The conservative rating as it is shown (two decimals), which is what
/// ranks: two rows that read the same share a rank, rather than being
/// told apart by a difference nobody can see.
fn shown_rating(conservative: f64) -> f64 {
    (conservative * 100.0).round() / 100.0
}

/// The rows, best first: by points, Buchholz, Sonneborn–Berger and
/// conservative rating (to two decimals); entrants equal on all four share
/// a rank and are listed by id.
fn ranked_rows(
    entrants: &[(EntrantId, String)],
    mut tallies: Vec<Tally>,
    ratings: &[WengLinRating],
    denominator: u128,
) -> Vec<StandingRow> {
    let mut order: Vec<usize> = (0..entrants.len()).collect();
    let keys: Vec<(u128, u128, u128, f64)> = tallies
        .iter()
        .zip(ratings)
        .map(|(t, r)| {
            (
                t.points,
                t.buchholz,
                t.sb,
                shown_rating(r.rating - 3.0 * r.uncertainty),
            )
        })
        .collect();
    let compare_keys = |a: usize, b: usize| {
        let (ka, kb) = (keys[a], keys[b]);
        kb.0.cmp(&ka.0)
            .then(kb.1.cmp(&ka.1))
            .then(kb.2.cmp(&ka.2))
            .then(kb.3.total_cmp(&ka.3))
    };
    order.sort_by(|&a, &b| compare_keys(a, b).then_with(|| entrants[a].0.cmp(&entrants[b].0)));

    let scale = denominator as f64;
    let mut rows = Vec::with_capacity(order.len());
    let mut rank = 0;
    for (position, &i) in order.iter().enumerate() {
        let shares_rank = position > 0 && compare_keys(order[position - 1], i) == Ordering::Equal;
        if !shares_rank {
            rank = position as u32 + 1;
        }
        let tally = std::mem::take(&mut tallies[i]);
        let rating = ratings[i];
        rows.push(StandingRow {
            rank,
            entrant: entrants[i].0.clone(),
            name: entrants[i].1.clone(),
            points: tally.points as f64 / scale,
            buchholz: tally.buchholz as f64 / scale,
            sonneborn_berger: tally.sb as f64 / (2.0 * scale),
            rating_mu: rating.rating,
            rating_sigma: rating.uncertainty,
            rating_conservative: rating.rating - 3.0 * rating.uncertainty,
            games: tally.games,
            wins: tally.wins,
            draws: tally.draws,
            losses: tally.losses,
            byes: tally.byes,
            timeouts: tally.timeouts,
            malformed: tally.malformed,
            illegal: tally.illegal,
            fuel_exhausted: tally.fuel_exhausted,
            strikes: tally.strikes,
            forfeits: tally.forfeits,
        });
    }
    rows
}

fn checked_add(a: u128, b: u128) -> Result<u128, StandingsError> {
    a.checked_add(b).ok_or(StandingsError::Overflow)
}

/// Checks one record against the entrant list and reads its placements.
fn validate(record: &MatchRecord, index: &HashMap<&str, usize>) -> Result<Game, StandingsError> {
    let n = record.seats.len();
    if n < 2 {
        return Err(StandingsError::TooFewSeats {
            match_id: record.match_id.clone(),
            seats: n,
        });
    }
    // `None` for a baseline seat.
    let mut seated: Vec<Option<usize>> = Vec::with_capacity(n);
    for seat in &record.seats {
        if seat.rank as usize >= n {
            return Err(StandingsError::InconsistentRanks {
                match_id: record.match_id.clone(),
                rank: seat.rank,
                seats: n,
            });
        }
        if baseline_name(&seat.entrant).is_some() {
            seated.push(None);
            continue;
        }
        let Some(&entrant) = index.get(seat.entrant.as_str()) else {
            return Err(StandingsError::UnknownEntrant {
                match_id: record.match_id.clone(),
                entrant: seat.entrant.clone(),
            });
        };
        if seated.contains(&Some(entrant)) {
            return Err(StandingsError::DuplicateSeat {
                match_id: record.match_id.clone(),
                entrant: seat.entrant.clone(),
            });
        }
        seated.push(Some(entrant));
    }
    let ranks: Vec<u32> = record.seats.iter().map(|seat| seat.rank).collect();
    let entrant_ranks: Vec<u32> = record
        .seats
        .iter()
        .zip(&seated)
        .filter(|(_, entrant)| entrant.is_some())
        .map(|(seat, _)| seat.rank)
        .collect();
    let seats = record
        .seats
        .iter()
        .zip(seated)
        .zip(score::placements(&ranks))
        .filter_map(|((seat, entrant), placement)| {
            Some(GameSeat {
                entrant: entrant?,
                rank: seat.rank,
                placement,
                entrants_ahead: entrant_ranks.iter().filter(|r| **r < seat.rank).count(),
                forfeit: seat.forfeit,
                timeouts: seat.timeouts,
                malformed: seat.malformed,
                illegal: seat.illegal(),
                fuel_exhausted: seat.fuel_exhausted(),
                strikes: seat.strikes(),
            })
        })
        .collect();
    Ok(Game { size: n, seats })
}
