//! Swiss pairing: standings from the history, then a maximum-weight matching
//! (two seats) or score-ordered groups (more seats). The weight design is
//! described in the module docs of `schedule`.

use std::collections::{HashMap, HashSet};

use super::banded::{self, BandedReport};
use super::matching::{Weight, max_weight_matching};
use super::{
    JITTER_TAG, ScheduleError, fnv1a, mix_seed, swiss_seed, validate_field, validate_filled_field,
};
use crate::model::{EntrantId, MatchRecord, Pairing, Round, baseline_id};

/// Points are kept as integers in units of `1 / SCORE_UNIT` point. This is
/// `2 · lcm(1..=16)`, so every score of a game with up to 17 seats —
/// `(2·(N-1-better) - (tied-1)) / (2·(N-1))` — is exact.
pub const SCORE_UNIT: i64 = 1_441_440;

/// Each seat's points for one finished game, in [`SCORE_UNIT`]s: with N
/// seats, finishing `p` places from the top is worth `(N-1-p)/(N-1)`, and
/// seats with equal rank share the average of the places they cover. Games
/// with fewer than two seats are worth nothing.
pub fn seat_points(record: &MatchRecord) -> Vec<i64> {
    let n = record.seats.len();
    if n < 2 {
        return vec![0; n];
    }
    let denom = 2 * (n as i64 - 1);
    record
        .seats
        .iter()
        .map(|s| {
            let better = record.seats.iter().filter(|o| o.rank < s.rank).count() as i64;
            let tied = record.seats.iter().filter(|o| o.rank == s.rank).count() as i64;
            let numer = 2 * (n as i64 - 1 - better) - (tied - 1);
            // Exact whenever 2·(N-1) divides SCORE_UNIT (N ≤ 17).
            SCORE_UNIT * numer / denom
        })
        .collect()
}

/// One entrant's Swiss state before a round.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SwissStanding {
    pub entrant: EntrantId,
    /// Points so far (games plus byes), in [`SCORE_UNIT`]s.
    pub points: i64,
    /// Byes received so far (inferred, see [`swiss_standings`]).
    pub byes: u32,
    /// Games played in each seat, counting only games with the scheduled
    /// number of seats.
    pub seat_counts: Vec<u32>,
    /// The seat of the latest such game (by round, then match id).
    pub last_seat: Option<usize>,
}

impl SwissStanding {
    /// Points as a number (for display and tests).
    pub fn score(&self) -> f64 {
        self.points as f64 / SCORE_UNIT as f64
    }
}

/// Everything the pairers need to know about the past.
struct Field {
    standings: Vec<SwissStanding>,
    /// Games shared by each pair of entrants (indices into `standings`,
    /// smaller first).
    met: HashMap<(usize, usize), u32>,
    /// Sorted member lists of every game with the scheduled number of seats.
    groups: HashSet<Vec<usize>>,
}

impl Field {
    fn met(&self, a: usize, b: usize) -> u32 {
        self.met.get(&(a.min(b), a.max(b))).copied().unwrap_or(0)
    }
}

/// Standings of `entrants` before round `round`, from the records of rounds
/// `0..round` in `history` (later records are ignored, as are seats of
/// entrants outside the field).
///
/// Byes are inferred: in every earlier round that has at least one record,
/// an entrant that appears in none of that round's records had the bye, worth
/// one point. (So the field should be the same in every round: a late entrant
/// would be credited byes for the rounds before it joined.)
pub fn swiss_standings(
    round: u32,
    entrants: &[EntrantId],
    history: &[MatchRecord],
    seats: usize,
) -> Result<Vec<SwissStanding>, ScheduleError> {
    validate_field(entrants, seats)?;
    Ok(build_field(round, entrants, history, seats).standings)
}

fn build_field(round: u32, entrants: &[EntrantId], history: &[MatchRecord], seats: usize) -> Field {
    let index: HashMap<&str, usize> = entrants
        .iter()
        .enumerate()
        .map(|(i, e)| (e.as_str(), i))
        .collect();
    let mut standings: Vec<SwissStanding> = entrants
        .iter()
        .map(|e| SwissStanding {
            entrant: e.clone(),
            points: 0,
            byes: 0,
            seat_counts: vec![0; seats],
            last_seat: None,
        })
        .collect();
    let mut met = HashMap::new();
    let mut groups = HashSet::new();
    // Latest (round, match id) seen per entrant, for `last_seat`.
    let mut latest: Vec<Option<(u32, &str)>> = vec![None; entrants.len()];
    // Entrants seen per earlier round (only rounds with records get a set).
    let mut played: HashMap<u32, Vec<bool>> = HashMap::new();
    for record in history.iter().filter(|r| r.round < round) {
        let seen = played
            .entry(record.round)
            .or_insert_with(|| vec![false; entrants.len()]);
        let points = seat_points(record);
        let members: Vec<Option<usize>> = record
            .seats
            .iter()
            .map(|s| index.get(s.entrant.as_str()).copied())
            .collect();
        for (seat, (&member, &pts)) in members.iter().zip(&points).enumerate() {
            let Some(i) = member else { continue };
            seen[i] = true;
            standings[i].points += pts;
            if record.seats.len() == seats {
                standings[i].seat_counts[seat] += 1;
                let key = (record.round, record.match_id.as_str());
                if latest[i].is_none_or(|l| key > l) {
                    latest[i] = Some(key);
                    standings[i].last_seat = Some(seat);
                }
            }
        }
        let known: Vec<usize> = members.iter().flatten().copied().collect();
        for (x, &a) in known.iter().enumerate() {
            for &b in &known[x + 1..] {
                if a != b {
                    *met.entry((a.min(b), a.max(b))).or_insert(0) += 1;
                }
            }
        }
        if record.seats.len() == seats && known.len() == seats {
            let mut key = known;
            key.sort_unstable();
            key.dedup();
            if key.len() == seats {
                groups.insert(key);
            }
        }
    }
    for seen in played.values() {
        for (s, &was_seen) in standings.iter_mut().zip(seen) {
            if !was_seen {
                s.points += SCORE_UNIT;
                s.byes += 1;
            }
        }
    }
    Field {
        standings,
        met,
        groups,
    }
}

/// Indices of the field sorted by points (highest first), ties by position
/// in `entrants` (the seeding order).
fn score_order(field: &Field) -> Vec<usize> {
    let mut order: Vec<usize> = (0..field.standings.len()).collect();
    order.sort_by_key(|&i| (std::cmp::Reverse(field.standings[i].points), i));
    order
}

/// Pairs round `round` (0-based) of a Swiss tournament, given the records of
/// all earlier rounds.
///
/// Every entrant appears exactly once: in one pairing or in `byes`. With two
/// seats, an odd field gives exactly one bye; with `seats` = N > 2, `n mod N`
/// entrants get byes. All pairings carry the round's seed
/// ([`super::swiss_seed`]). Ties in score are broken by position in
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

/// The cost of one edge of the two-seat pairing graph, tier by tier (highest
/// priority first); see the module docs of `schedule`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PairCost {
    /// Games the two have already played together.
    pub rematches: u32,
    /// Ghost edges only: the candidate's place in bye order (0 = first).
    pub bye_rank: u32,
    /// Squared score difference, in the field's score step.
    pub score_gap: u64,
    /// Seat-balance cost of the better seating.
    pub seat: u64,
    /// Deterministic tie-break: the distance between the two entrants'
    /// tie-break keys (a shuffle of the field drawn from the seed and the
    /// round); see [`PairingGraph::tie_key`].
    pub tie: u64,
}

impl PairCost {
    /// Adds component-wise.
    pub fn plus(self, o: PairCost) -> PairCost {
        PairCost {
            rematches: self.rematches + o.rematches,
            bye_rank: self.bye_rank + o.bye_rank,
            score_gap: self.score_gap + o.score_gap,
            seat: self.seat + o.seat,
            tie: self.tie + o.tie,
        }
    }
}

/// The weighted graph a two-seat Swiss round is matched on: one vertex per
/// entrant (in score order) plus, for an odd field, a ghost (`None`) whose
/// partner gets the bye. Exposed so that tests and tools can check or explain
/// a pairing.
///
/// The graph is complete but *implicit*: it keeps what each vertex's edges
/// are computed from (score, seat balance, last seat, opponents met) and
/// works out an edge's cost when asked, so a field of 100 000 entrants takes
/// linear memory, not the 5·10⁹ edges it has.
#[derive(Clone, Debug)]
pub struct PairingGraph {
    /// Vertex `v` is `vertices[v]`; `None` is the bye ghost (last, if any).
    pub vertices: Vec<Option<EntrantId>>,
    /// Field index (position in `entrants`) of each real vertex.
    field_index: Vec<usize>,
    /// Number of real (entrant) vertices.
    real: usize,
    /// Vertex of each entrant, for [`Self::vertex_of`].
    index: HashMap<EntrantId, usize>,
    /// What each real vertex's edge costs depend on, besides whom it met.
    traits: Vec<Traits>,
    /// Tie-break key of each real vertex: its place in a shuffle of the
    /// field drawn from the seed and the round (`0..real`, all distinct).
    keys: Vec<u64>,
    /// Opponents each real vertex has met, `(vertex, games)` sorted by vertex.
    met: Vec<Vec<(usize, u32)>>,
    /// The ghost edge's cost of each real vertex that is a bye candidate.
    ghost_cost: Vec<Option<PairCost>>,
    /// The field's smallest score step, in [`SCORE_UNIT`]s.
    step: u64,
    multipliers: [Weight; 5],
    top: Weight,
}

/// The part of a vertex its edge costs depend on apart from the opponents
/// it met and its tie-break key: two vertices with equal traits cost the
/// same against any third up to rematches and the tie-break. `schedule::pricing` groups vertices
/// into classes by it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(super) struct Traits {
    /// Points, in [`SCORE_UNIT`]s.
    pub(super) points: i64,
    /// Games in seat 0 minus games in seat 1.
    balance: i64,
    last_seat: Option<usize>,
}

impl PairingGraph {
    /// The cost of the edge between vertices `a` and `b`, if there is one
    /// (every two entrants are joined; the ghost only to bye candidates).
    pub fn cost(&self, a: usize, b: usize) -> Option<PairCost> {
        let (a, b) = (a.min(b), a.max(b));
        let n = self.real;
        if a == b || b > n {
            return None;
        }
        if b == n {
            return self.ghost_cost.get(a).copied().flatten();
        }
        Some(PairCost {
            rematches: self.met_count(a, b),
            tie: self.tie(a, b),
            ..self.class_cost(&self.traits[a], &self.traits[b])
        })
    }

    /// The weight the matching maximises for that edge: `top - Σ tier·mult`.
    pub fn weight(&self, a: usize, b: usize) -> Option<Weight> {
        self.cost(a, b).map(|c| self.top - self.flatten(c))
    }

    /// The vertex of an entrant.
    pub fn vertex_of(&self, entrant: &str) -> Option<usize> {
        self.index.get(entrant).copied()
    }

    /// The ghost vertex, when the field is odd.
    pub fn ghost(&self) -> Option<usize> {
        (self.vertices.len() > self.real).then_some(self.real)
    }

    /// The vertex pairs of a scheduled two-seat round (the bye as a pair with
    /// the ghost), or `None` if the round names someone not in the graph or
    /// has a game that is not a pair.
    pub fn round_pairs(&self, round: &Round) -> Option<Vec<(usize, usize)>> {
        let mut pairs = Vec::new();
        for p in &round.pairings {
            let [a, b] = p.seats.as_slice() else {
                return None;
            };
            pairs.push((self.vertex_of(a)?, self.vertex_of(b)?));
        }
        for b in &round.byes {
            pairs.push((self.vertex_of(b)?, self.ghost()?));
        }
        Some(pairs)
    }

    /// Total weight of a set of vertex pairs, or `None` if one is no edge.
    pub fn total_weight(&self, pairs: &[(usize, usize)]) -> Option<Weight> {
        pairs.iter().map(|&(a, b)| self.weight(a, b)).sum()
    }

    /// Component-wise total cost of a set of vertex pairs.
    pub fn total_cost(&self, pairs: &[(usize, usize)]) -> Option<PairCost> {
        pairs.iter().try_fold(PairCost::default(), |acc, &(a, b)| {
            Some(acc.plus(self.cost(a, b)?))
        })
    }

    /// Every edge with its weight, `a < b`: the complete graph, for the
    /// exact reference solve (quadratic; small fields only).
    pub fn all_edges(&self) -> Vec<(usize, usize, Weight)> {
        let v = self.vertices.len();
        (0..v)
            .flat_map(|a| (a + 1..v).map(move |b| (a, b)))
            .filter_map(|(a, b)| Some((a, b, self.weight(a, b)?)))
            .collect()
    }

    /// Number of real (entrant) vertices; the ghost, if any, is vertex `real`.
    pub(super) fn real(&self) -> usize {
        self.real
    }

    pub(super) fn traits(&self, v: usize) -> &Traits {
        &self.traits[v]
    }

    /// The weight of an edge between vertices of traits `x` and `y` with no
    /// rematch and no tie-break: an upper bound on every such edge's weight,
    /// and its exact weight less its tie-break when the two never met.
    pub(super) fn class_weight(&self, x: &Traits, y: &Traits) -> Weight {
        self.top - self.flatten(self.class_cost(x, y))
    }

    /// The graph induced by `members` (vertices of this graph, ascending;
    /// the ghost, if included, last): the same edges with the same weights
    /// between them, renumbered `0..members.len()` in that order. Each band
    /// of the banded solve is matched on one of these.
    pub(super) fn restrict(&self, members: &[usize]) -> PairingGraph {
        let mut local = HashMap::with_capacity(members.len());
        for (v, &g) in members.iter().enumerate() {
            local.insert(g, v);
        }
        let real_members: Vec<usize> = members.iter().copied().filter(|&g| g < self.real).collect();
        let met = real_members
            .iter()
            .map(|&g| {
                let mut list: Vec<(usize, u32)> = self.met[g]
                    .iter()
                    .filter_map(|&(o, games)| local.get(&o).map(|&l| (l, games)))
                    .collect();
                list.sort_unstable();
                list
            })
            .collect();
        let vertices: Vec<Option<EntrantId>> =
            members.iter().map(|&g| self.vertices[g].clone()).collect();
        let index = vertices
            .iter()
            .enumerate()
            .filter_map(|(v, e)| Some((e.clone()?, v)))
            .collect();
        PairingGraph {
            vertices,
            field_index: real_members.iter().map(|&g| self.field_index[g]).collect(),
            real: real_members.len(),
            index,
            traits: real_members.iter().map(|&g| self.traits[g]).collect(),
            keys: real_members.iter().map(|&g| self.keys[g]).collect(),
            met,
            ghost_cost: real_members.iter().map(|&g| self.ghost_cost[g]).collect(),
            step: self.step,
            multipliers: self.multipliers,
            top: self.top,
        }
    }

    /// Where the bye goes first: the real vertex whose ghost edge has bye
    /// rank 0, when the field is odd.
    pub(super) fn first_bye_candidate(&self) -> Option<usize> {
        self.ghost_cost
            .iter()
            .position(|c| c.is_some_and(|c| c.bye_rank == 0))
    }

    /// The score-gap tier of an edge between real vertices `a` and `b`.
    pub(super) fn score_gap(&self, a: usize, b: usize) -> u64 {
        self.class_cost(&self.traits[a], &self.traits[b]).score_gap
    }

    /// Games real vertices `a` and `b` have played together.
    pub(super) fn met_count(&self, a: usize, b: usize) -> u32 {
        let list = &self.met[a];
        list.binary_search_by_key(&b, |&(v, _)| v)
            .map_or(0, |k| list[k].1)
    }

    /// The tie-break key of real vertex `v`: the round's shuffle of the
    /// field (drawn from the base seed, the round and the entrant ids) puts
    /// `v` at place `tie_key(v)`. The lowest tier of an edge costs the
    /// distance between its two keys, so among otherwise equal pairings the
    /// matching pairs entrants that are close in the shuffle: a pairing that
    /// does not follow the seeding order, fixed by the seed.
    pub fn tie_key(&self, v: usize) -> Option<u64> {
        self.keys.get(v).copied()
    }

    /// The tie-break of the edge between real vertices `a` and `b` (its
    /// weight in the lowest tier, whose multiplier is 1).
    pub(super) fn tie(&self, a: usize, b: usize) -> u64 {
        self.keys[a].abs_diff(self.keys[b])
    }

    /// The weight one rematch takes off an edge.
    pub(super) fn rematch_multiplier(&self) -> Weight {
        self.multipliers[0]
    }

    fn class_cost(&self, x: &Traits, y: &Traits) -> PairCost {
        let gap = x.points.abs_diff(y.points) / self.step;
        PairCost {
            score_gap: gap.saturating_mul(gap),
            seat: seating_cost(x, y).min(seating_cost(y, x)),
            ..PairCost::default()
        }
    }

    fn flatten(&self, c: PairCost) -> Weight {
        let [m_r, m_b, m_s, m_seat, m_j] = self.multipliers;
        Weight::from(c.rematches) * m_r
            + Weight::from(c.bye_rank) * m_b
            + Weight::from(c.score_gap) * m_s
            + Weight::from(c.seat) * m_seat
            + Weight::from(c.tie) * m_j
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

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// Seat balance: games in seat 0 minus games in seat 1.
fn balance(s: &SwissStanding) -> i64 {
    i64::from(s.seat_counts[0]) - i64::from(s.seat_counts[1])
}

fn traits_of(s: &SwissStanding) -> Traits {
    Traits {
        points: s.points,
        balance: balance(s),
        last_seat: s.last_seat,
    }
}

/// Seat cost of `first` taking seat 0 and `second` seat 1.
fn seating_cost(first: &Traits, second: &Traits) -> u64 {
    let b0 = first.balance + 1;
    let b1 = second.balance - 1;
    let repeats = u64::from(first.last_seat == Some(0)) + u64::from(second.last_seat == Some(1));
    4 * (b0.unsigned_abs().pow(2) + b1.unsigned_abs().pow(2)) + repeats
}

fn jitter(base_seed: u64, round: u32, a: &str, b: &str) -> u64 {
    let (ha, hb) = (fnv1a(a), fnv1a(b));
    mix_seed(
        base_seed,
        &[JITTER_TAG, u64::from(round), ha.min(hb), ha.max(hb)],
    )
}

/// The tie-break keys of the vertices (`order[v]` is vertex `v`'s field
/// index): each entrant draws a number from the base seed, the round and its
/// id, and its key is its place when the field is sorted by those draws
/// (ties, which need a 64-bit collision, by field index).
fn tie_keys(field: &Field, order: &[usize], round: u32, base_seed: u64) -> Vec<u64> {
    let prefix = mix_seed(base_seed, &[JITTER_TAG, u64::from(round)]);
    let draws: Vec<(u64, usize)> = order
        .iter()
        .map(|&i| {
            let h = fnv1a(&field.standings[i].entrant);
            (super::splitmix64(prefix ^ h), i)
        })
        .collect();
    let mut by_draw: Vec<usize> = (0..order.len()).collect();
    by_draw.sort_unstable_by_key(|&v| draws[v]);
    let mut keys = vec![0; order.len()];
    for (place, &v) in by_draw.iter().enumerate() {
        keys[v] = place as u64;
    }
    keys
}

fn pairing_graph(field: &Field, round: u32, base_seed: u64) -> Result<PairingGraph, ScheduleError> {
    let order = score_order(field);
    let st = &field.standings;
    let n = order.len();
    let odd = n % 2 == 1;
    let mut vertices: Vec<Option<EntrantId>> =
        order.iter().map(|&i| Some(st[i].entrant.clone())).collect();
    if odd {
        vertices.push(None);
    }
    let mut vertex_of_field = vec![0; n];
    for (v, &i) in order.iter().enumerate() {
        vertex_of_field[i] = v;
    }
    let traits: Vec<Traits> = order.iter().map(|&i| traits_of(&st[i])).collect();
    let mut met: Vec<Vec<(usize, u32)>> = vec![Vec::new(); n];
    for (&(a, b), &games) in &field.met {
        let (va, vb) = (vertex_of_field[a], vertex_of_field[b]);
        met[va].push((vb, games));
        met[vb].push((va, games));
    }
    for list in &mut met {
        list.sort_unstable();
    }
    // The smallest score step in play, so squared gaps stay small.
    let step = order
        .iter()
        .fold(SCORE_UNIT.unsigned_abs(), |g, &i| {
            gcd(g, st[i].points.unsigned_abs())
        })
        .max(1);
    let mut ghost_cost = vec![None; n];
    let mut bye_candidates = 0usize;
    if odd {
        // Bye candidates: fewest byes so far; lowest score first, and among
        // equal scores the latest in seeding order.
        let fewest = st.iter().map(|s| s.byes).min().unwrap_or(0);
        let mut candidates: Vec<usize> = (0..n).filter(|&v| st[order[v]].byes == fewest).collect();
        candidates.sort_by_key(|&v| (st[order[v]].points, std::cmp::Reverse(order[v])));
        bye_candidates = candidates.len();
        for (rank, &v) in candidates.iter().enumerate() {
            let b = traits[v].balance.unsigned_abs();
            ghost_cost[v] = Some(PairCost {
                rematches: 0,
                bye_rank: u32::try_from(rank).map_err(|_| ScheduleError::WeightOverflow)?,
                score_gap: 0,
                seat: 4 * b.pow(2),
                tie: 0,
            });
        }
    }
    // Tier maxima, or bounds on them: the multipliers only have to dominate
    // what the tiers below can add up to, so a bound is as good as the
    // maximum and is what keeps this linear in the field.
    let distinct: Vec<Traits> = {
        let mut t = traits.clone();
        t.sort_unstable();
        t.dedup();
        t
    };
    let max_tie =
        Weight::try_from(n.saturating_sub(1)).map_err(|_| ScheduleError::WeightOverflow)?;
    let mut max_seat = ghost_cost
        .iter()
        .flatten()
        .map(|c| Weight::from(c.seat))
        .max()
        .unwrap_or(0);
    for (k, x) in distinct.iter().enumerate() {
        for y in &distinct[k..] {
            let seat = seating_cost(x, y).min(seating_cost(y, x));
            max_seat = max_seat.max(Weight::from(seat));
        }
    }
    let (lo, hi) = (
        distinct.first().map_or(0, |t| t.points),
        distinct.iter().map(|t| t.points).max().unwrap_or(0),
    );
    let max_gap = Weight::from(hi.abs_diff(lo) / step).pow(2);
    let max_bye = Weight::try_from(bye_candidates.saturating_sub(1))
        .map_err(|_| ScheduleError::WeightOverflow)?;
    let max_rematch = Weight::from(field.met.values().copied().max().unwrap_or(0));
    let pairs_in_matching =
        Weight::try_from(vertices.len() / 2).map_err(|_| ScheduleError::WeightOverflow)?;
    let overflow = || ScheduleError::WeightOverflow;
    // Each multiplier exceeds everything the lower tiers can add up to over
    // a whole matching. (Only one ghost edge is ever in a matching.)
    let m_j: Weight = 1;
    let above = |mult: Weight, max: Weight, count: Weight| -> Option<Weight> {
        mult.checked_mul(max.checked_mul(count)?.checked_add(1)?)
    };
    let m_seat = above(m_j, max_tie, pairs_in_matching).ok_or_else(overflow)?;
    let m_score = above(m_seat, max_seat, pairs_in_matching).ok_or_else(overflow)?;
    let m_bye = above(m_score, max_gap, pairs_in_matching).ok_or_else(overflow)?;
    let m_rematch = above(m_bye, max_bye, 1).ok_or_else(overflow)?;
    let top = above(m_rematch, max_rematch, 1).ok_or_else(overflow)?;
    // `top` bounds every single edge's flattened cost; keep the whole
    // matching's total well inside i128 as well.
    top.checked_mul(pairs_in_matching.max(1) * 4)
        .ok_or_else(overflow)?;
    let index = order
        .iter()
        .enumerate()
        .map(|(v, &i)| (st[i].entrant.clone(), v))
        .collect();
    Ok(PairingGraph {
        vertices,
        field_index: order.clone(),
        index,
        keys: tie_keys(field, &order, round, base_seed),
        traits,
        met,
        ghost_cost,
        step,
        real: n,
        multipliers: [m_rematch, m_bye, m_score, m_seat, m_j],
        top,
    })
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

/// Groups of `seats` (> 2) by score, with repeat-avoiding swaps between
/// neighbouring groups and balanced seats (see the module docs). With a
/// `baseline`, nobody sits out: the last, short group is filled with it.
fn group_many_seats(field: &Field, seats: usize, seed: u64, baseline: Option<&str>) -> Round {
    let st = &field.standings;
    let order = score_order(field);
    let sitting_out = if baseline.is_some() {
        0
    } else {
        order.len() % seats
    };
    // Byes: fewest byes first, then lowest score, then latest seeded.
    let mut bye_order = order.clone();
    bye_order.sort_by_key(|&i| (st[i].byes, st[i].points, std::cmp::Reverse(i)));
    let bye_set: HashSet<usize> = bye_order[..sitting_out].iter().copied().collect();
    let players: Vec<usize> = order
        .iter()
        .copied()
        .filter(|i| !bye_set.contains(i))
        .collect();
    let mut groups: Vec<Vec<usize>> = players.chunks(seats).map(<[usize]>::to_vec).collect();
    improve_groups(field, &mut groups);
    let pairings = groups
        .iter()
        .map(|g| {
            // Only the short group of a filled field has empty seats.
            let mut members: Vec<Option<usize>> = g.iter().copied().map(Some).collect();
            members.resize(seats, None);
            Pairing {
                seats: assign_seats(field, &members, seats)
                    .into_iter()
                    .map(|seat| match (seat, baseline) {
                        (Some(i), _) => st[i].entrant.clone(),
                        (None, Some(baseline)) => baseline_id(baseline),
                        // Without a baseline every group is full.
                        (None, None) => String::new(),
                    })
                    .collect(),
                seed,
            }
        })
        .collect();
    // Byes in score order, like everything else.
    let byes = order
        .iter()
        .filter(|i| bye_set.contains(i))
        .map(|&i| st[i].entrant.clone())
        .collect();
    Round { pairings, byes }
}

/// (already played as this exact group, pairs who met before).
fn group_cost(field: &Field, group: &[usize]) -> (u32, u32) {
    let mut key = group.to_vec();
    key.sort_unstable();
    let repeat = u32::from(field.groups.contains(&key));
    let mut met = 0;
    for (x, &a) in group.iter().enumerate() {
        for &b in &group[x + 1..] {
            met += field.met(a, b);
        }
    }
    (repeat, met)
}

/// Sweeps over neighbouring groups, making the best single swap between each
/// two when it lowers their combined (repeats, met pairs); a few sweeps at
/// most, so the cost stays linear in the field.
fn improve_groups(field: &Field, groups: &mut [Vec<usize>]) {
    const SWEEPS: usize = 4;
    let add = |a: (u32, u32), b: (u32, u32)| (a.0 + b.0, a.1 + b.1);
    for _ in 0..SWEEPS {
        let mut changed = false;
        for gi in 0..groups.len().saturating_sub(1) {
            let current = add(
                group_cost(field, &groups[gi]),
                group_cost(field, &groups[gi + 1]),
            );
            if current == (0, 0) {
                continue;
            }
            // Best swap: lowest cost, then smallest score disturbance.
            let mut best: Option<((u32, u32), u64, usize, usize)> = None;
            for x in 0..groups[gi].len() {
                for y in 0..groups[gi + 1].len() {
                    let (a, b) = (groups[gi][x], groups[gi + 1][y]);
                    groups[gi][x] = b;
                    groups[gi + 1][y] = a;
                    let cost = add(
                        group_cost(field, &groups[gi]),
                        group_cost(field, &groups[gi + 1]),
                    );
                    groups[gi][x] = a;
                    groups[gi + 1][y] = b;
                    let shift = field.standings[a]
                        .points
                        .abs_diff(field.standings[b].points);
                    if cost < current && best.is_none_or(|(c, s, _, _)| (cost, shift) < (c, s)) {
                        best = Some((cost, shift, x, y));
                    }
                }
            }
            if let Some((_, _, x, y)) = best {
                let (a, b) = (groups[gi][x], groups[gi + 1][y]);
                groups[gi][x] = b;
                groups[gi + 1][y] = a;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
}

/// Seat order for a group: minimises (Σ times each member already sat in
/// its new seat, Σ members repeating their previous seat); an empty seat
/// (`None`, to be filled by a baseline) costs nothing. Exhaustive up to six
/// seats; beyond, the best rotation improved by pairwise swaps.
fn assign_seats(field: &Field, group: &[Option<usize>], seats: usize) -> Vec<Option<usize>> {
    let st = &field.standings;
    let cost = |arrangement: &[Option<usize>]| -> (u64, u64) {
        arrangement
            .iter()
            .enumerate()
            .fold((0, 0), |(c, r), (seat, member)| match member {
                Some(i) => (
                    c + u64::from(st[*i].seat_counts[seat]),
                    r + u64::from(st[*i].last_seat == Some(seat)),
                ),
                None => (c, r),
            })
    };
    let mut best = group.to_vec();
    let mut best_cost = cost(&best);
    if seats <= 6 {
        let mut perm = group.to_vec();
        // Heap's algorithm visits every permutation once, deterministically.
        let mut c = vec![0usize; perm.len()];
        let mut i = 1;
        while i < perm.len() {
            if c[i] < i {
                let j = if i % 2 == 0 { 0 } else { c[i] };
                perm.swap(j, i);
                let pc = cost(&perm);
                if pc < best_cost {
                    best_cost = pc;
                    best.clone_from(&perm);
                }
                c[i] += 1;
                i = 1;
            } else {
                c[i] = 0;
                i += 1;
            }
        }
        return best;
    }
    for r in 1..group.len() {
        let mut rot = group.to_vec();
        rot.rotate_left(r);
        let rc = cost(&rot);
        if rc < best_cost {
            best_cost = rc;
            best = rot;
        }
    }
    loop {
        let mut improved = false;
        for i in 0..best.len() {
            for j in i + 1..best.len() {
                best.swap(i, j);
                let c = cost(&best);
                if c < best_cost {
                    best_cost = c;
                    improved = true;
                } else {
                    best.swap(i, j);
                }
            }
        }
        if !improved {
            break;
        }
    }
    best
}
