//! The entry points that pair a Swiss round, and how a two-seat round is
//! read off a perfect matching of its pairing graph.

use super::graph::{PairingGraph, balance, pairing_graph, seating_cost};
use super::groups::group_many_seats;
use super::{Field, build_field};
use crate::domain::{EntrantId, MatchRecord, Pairing, Round, baseline_id};
use crate::schedule::banded::{self, BandedReport};
use crate::schedule::matching::max_weight_matching;
use crate::schedule::{
    JITTER_TAG, ScheduleError, fnv1a, mix_seed, swiss_seed, validate_field, validate_filled_field,
};

/// Pairs round `round` (0-based) of a Swiss tournament, given the records of
/// all earlier rounds.
///
/// Every entrant appears exactly once: in one pairing or in `byes`. With two
/// seats, an odd field gives exactly one bye; with `seats` = N > 2, `n mod N`
/// entrants get byes. All pairings carry the round's seed
/// ([`crate::schedule::swiss_seed`]). Ties in score are broken by position in
/// `entrants`, so pass the field in seeding order (and in the same order every
/// round). See the module docs of `schedule` for the weights and grouping.
pub fn swiss_round(
    round: u32,
    entrants: &[EntrantId],
    history: &[MatchRecord],
    seats: usize,
    base_seed: u64,
) -> Result<Round, ScheduleError> {
    validate_field(entrants, seats)?;
    pair_round(round, entrants, history, seats, base_seed, None)
}

/// [`swiss_round`] for a game with baselines: where the field does not
/// divide into groups of `seats`, the short group (the lowest in score
/// order, after the swaps) is filled with seats of `baseline` (written as
/// [`baseline_id`]) instead of giving byes, so nobody sits out and `byes` is
/// always empty. The field may then be smaller than `seats` (at least one
/// entrant).
pub fn swiss_round_with_baseline(
    round: u32,
    entrants: &[EntrantId],
    history: &[MatchRecord],
    seats: usize,
    base_seed: u64,
    baseline: &str,
) -> Result<Round, ScheduleError> {
    validate_filled_field(entrants, seats)?;
    pair_round(round, entrants, history, seats, base_seed, Some(baseline))
}

fn pair_round(
    round: u32,
    entrants: &[EntrantId],
    history: &[MatchRecord],
    seats: usize,
    base_seed: u64,
    baseline: Option<&str>,
) -> Result<Round, ScheduleError> {
    let field = build_field(round, entrants, history, seats);
    let seed = swiss_seed(base_seed, round);
    if seats == 2 {
        let graph = pairing_graph(&field, round, base_seed)?;
        let mate = perfect(banded::perfect_matching(&graph)?)?;
        let mut paired = round_from_matching(&field, &graph, &mate, round, base_seed, seed);
        if let Some(baseline) = baseline {
            // The ghost's partner plays the baseline instead of sitting out,
            // in the seat that evens out its balance.
            for bye in std::mem::take(&mut paired.byes) {
                let ahead = field
                    .standings
                    .iter()
                    .find(|s| s.entrant == bye)
                    .is_some_and(|s| balance(s) > 0);
                let seats = if ahead {
                    vec![baseline_id(baseline), bye]
                } else {
                    vec![bye, baseline_id(baseline)]
                };
                paired.pairings.push(Pairing { seats, seed });
            }
        }
        Ok(paired)
    } else {
        Ok(group_many_seats(&field, seats, seed, baseline))
    }
}

/// The two-seat pairing graph of round `round` (see [`PairingGraph`]).
pub fn swiss_graph(
    round: u32,
    entrants: &[EntrantId],
    history: &[MatchRecord],
    base_seed: u64,
) -> Result<PairingGraph, ScheduleError> {
    validate_field(entrants, 2)?;
    let field = build_field(round, entrants, history, 2);
    pairing_graph(&field, round, base_seed)
}

/// Turns a perfect matching of `graph` (`mate[v]`, the ghost included) into
/// the round: boards in score order, the better seating first.
fn round_from_matching(
    field: &Field,
    graph: &PairingGraph,
    mate: &[usize],
    round: u32,
    base_seed: u64,
    seed: u64,
) -> Round {
    let ghost = graph.ghost();
    let mut boards = Vec::new();
    let mut byes = Vec::new();
    for (v, &u) in mate.iter().enumerate() {
        if Some(v) == ghost {
            continue;
        }
        if Some(u) == ghost {
            byes.push(field.standings[graph.field_index[v]].entrant.clone());
        } else if v < u {
            boards.push((v, u));
        }
    }
    // Boards in score order: vertices are numbered by score already.
    boards.sort_unstable();
    let st = &field.standings;
    let pairings = boards
        .into_iter()
        .map(|(a, b)| {
            let (x, y) = (&st[graph.field_index[a]], &st[graph.field_index[b]]);
            let (tx, ty) = (&graph.traits[a], &graph.traits[b]);
            let (xy, yx) = (seating_cost(tx, ty), seating_cost(ty, tx));
            let x_first = if xy != yx {
                xy < yx
            } else {
                jitter(base_seed ^ 1, round, &x.entrant, &y.entrant) & 1 == 0
            };
            let seats = if x_first {
                vec![x.entrant.clone(), y.entrant.clone()]
            } else {
                vec![y.entrant.clone(), x.entrant.clone()]
            };
            Pairing { seats, seed }
        })
        .collect();
    Round { pairings, byes }
}

/// The mates of a perfect matching as plain vertices, or an internal error:
/// every schedule graph has a perfect matching (the ghost makes the vertex
/// count even, and neighbours in score order are always joined).
fn perfect(mate: Vec<Option<usize>>) -> Result<Vec<usize>, ScheduleError> {
    mate.into_iter()
        .collect::<Option<Vec<usize>>>()
        .ok_or_else(|| ScheduleError::Internal("no perfect matching".into()))
}

fn jitter(base_seed: u64, round: u32, a: &str, b: &str) -> u64 {
    let (ha, hb) = (fnv1a(a), fnv1a(b));
    mix_seed(
        base_seed,
        &[JITTER_TAG, u64::from(round), ha.min(hb), ha.max(hb)],
    )
}

/// [`swiss_round`] for two seats solved the slow, obvious way: the blossom
/// algorithm on the complete graph (quadratic memory, cubic time). Kept as
/// the reference the scalable pairing is tested against; use it only for
/// small fields.
pub fn swiss_round_complete_graph(
    round: u32,
    entrants: &[EntrantId],
    history: &[MatchRecord],
    base_seed: u64,
) -> Result<Round, ScheduleError> {
    validate_field(entrants, 2)?;
    let field = build_field(round, entrants, history, 2);
    let graph = pairing_graph(&field, round, base_seed)?;
    let mate = max_weight_matching(graph.vertices.len(), &graph.all_edges(), true)
        .map_err(|e| ScheduleError::Internal(e.to_string()))?;
    let mate = perfect(mate)?;
    let seed = swiss_seed(base_seed, round);
    Ok(round_from_matching(
        &field, &graph, &mate, round, base_seed, seed,
    ))
}

/// [`swiss_round`] for two seats with the banded solve forced at every
/// size, in bands of about `band` entrants, and what it proved: how the
/// tests check the banded solve on fields small enough for the reference.
pub fn swiss_round_in_bands(
    round: u32,
    entrants: &[EntrantId],
    history: &[MatchRecord],
    base_seed: u64,
    band: usize,
) -> Result<(Round, BandedReport), ScheduleError> {
    validate_field(entrants, 2)?;
    let field = build_field(round, entrants, history, 2);
    let graph = pairing_graph(&field, round, base_seed)?;
    let solved = banded::banded(&graph, band)?;
    let mate = perfect(solved.mate)?;
    let seed = swiss_seed(base_seed, round);
    let paired = round_from_matching(&field, &graph, &mate, round, base_seed, seed);
    Ok((paired, solved.report))
}
