//! Swiss pairing: standings from the history, then a maximum-weight matching
//! (two seats) or score-ordered groups (more seats). The weight design is
//! described in the module docs of `schedule`.

use std::collections::{HashMap, HashSet};

use super::matching::{Weight, max_weight_perfect_matching};
use super::{
    JITTER_TAG, ScheduleError, fnv1a, mix_seed, swiss_seed, validate_field, validate_filled_field,
};
use crate::model::{EntrantId, MatchRecord, Pairing, Round, baseline_id};

/// Points are kept as integers in units of `1 / SCORE_UNIT` point. This is
/// `2 · lcm(1..=16)`, so every score of a game with up to 17 seats —
/// `(2·(N-1-better) - (tied-1)) / (2·(N-1))` — is exact.
pub const SCORE_UNIT: i64 = 1_441_440;

/// Jitter (the last-resort tie-break) lies in `0..JITTER_RANGE`.
pub const JITTER_RANGE: u64 = 1024;

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
        let mut paired = pair_two_seats(&field, &graph, round, base_seed, seed)?;
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
    /// Deterministic tie-break in `0..JITTER_RANGE`.
    pub jitter: u64,
}

impl PairCost {
    /// Adds component-wise.
    pub fn plus(self, o: PairCost) -> PairCost {
        PairCost {
            rematches: self.rematches + o.rematches,
            bye_rank: self.bye_rank + o.bye_rank,
            score_gap: self.score_gap + o.score_gap,
            seat: self.seat + o.seat,
            jitter: self.jitter + o.jitter,
        }
    }
}

/// The weighted graph a two-seat Swiss round is matched on: one vertex per
/// entrant (in score order) plus, for an odd field, a ghost (`None`) whose
/// partner gets the bye. Exposed so that tests and tools can check or explain
/// a pairing.
#[derive(Clone, Debug)]
pub struct PairingGraph {
    /// Vertex `v` is `vertices[v]`; `None` is the bye ghost (last, if any).
    pub vertices: Vec<Option<EntrantId>>,
    /// Field index (position in `entrants`) of each real vertex.
    field_index: Vec<usize>,
    /// Edges `(a, b, cost)`, `a < b`: first every pair of entrants in
    /// lexicographic order, then the ghost's edges.
    edges: Vec<(usize, usize, PairCost)>,
    /// Number of real (entrant) vertices.
    real: usize,
    /// The ghost edge of each vertex, if it is a bye candidate.
    ghost_edge: Vec<Option<usize>>,
    multipliers: [Weight; 5],
    top: Weight,
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
        let k = if b == n {
            self.ghost_edge.get(a).copied().flatten()?
        } else {
            // Rank of (a, b) among the pairs of 0..n in lexicographic order.
            a * (2 * n - a - 1) / 2 + (b - a - 1)
        };
        self.edges.get(k).map(|e| e.2)
    }

    /// The weight the matching maximises for that edge: `top - Σ tier·mult`.
    pub fn weight(&self, a: usize, b: usize) -> Option<Weight> {
        self.cost(a, b).map(|c| self.top - self.flatten(c))
    }

    /// The vertex of an entrant.
    pub fn vertex_of(&self, entrant: &str) -> Option<usize> {
        self.vertices
            .iter()
            .position(|v| v.as_deref() == Some(entrant))
    }

    /// The ghost vertex, when the field is odd.
    pub fn ghost(&self) -> Option<usize> {
        self.vertices.iter().position(Option::is_none)
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

    fn flatten(&self, c: PairCost) -> Weight {
        let [m_r, m_b, m_s, m_seat, m_j] = self.multipliers;
        Weight::from(c.rematches) * m_r
            + Weight::from(c.bye_rank) * m_b
            + Weight::from(c.score_gap) * m_s
            + Weight::from(c.seat) * m_seat
            + Weight::from(c.jitter) * m_j
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

/// Seat cost of `first` taking seat 0 and `second` seat 1.
fn seating_cost(first: &SwissStanding, second: &SwissStanding) -> u64 {
    let b0 = balance(first) + 1;
    let b1 = balance(second) - 1;
    let repeats = u64::from(first.last_seat == Some(0)) + u64::from(second.last_seat == Some(1));
    4 * ((b0 * b0) as u64 + (b1 * b1) as u64) + repeats
}

fn jitter(base_seed: u64, round: u32, a: &str, b: &str) -> u64 {
    let (ha, hb) = (fnv1a(a), fnv1a(b));
    mix_seed(
        base_seed,
        &[JITTER_TAG, u64::from(round), ha.min(hb), ha.max(hb)],
    )
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
    // The smallest score step in play, so squared gaps stay small.
    let step = order
        .iter()
        .fold(SCORE_UNIT.unsigned_abs(), |g, &i| {
            gcd(g, st[i].points.unsigned_abs())
        })
        .max(1);
    let mut edges = Vec::with_capacity(n * (n - 1) / 2 + n);
    for a in 0..n {
        let sa = &st[order[a]];
        for b in a + 1..n {
            let sb = &st[order[b]];
            let gap = u128::from(sa.points.abs_diff(sb.points) / step);
            let score_gap = u64::try_from(gap * gap).map_err(|_| ScheduleError::WeightOverflow)?;
            edges.push((
                a,
                b,
                PairCost {
                    rematches: field.met(order[a], order[b]),
                    bye_rank: 0,
                    score_gap,
                    seat: seating_cost(sa, sb).min(seating_cost(sb, sa)),
                    jitter: jitter(base_seed, round, &sa.entrant, &sb.entrant) % JITTER_RANGE,
                },
            ));
        }
    }
    if odd {
        // Bye candidates: fewest byes so far; lowest score first, and among
        // equal scores the latest in seeding order.
        let fewest = st.iter().map(|s| s.byes).min().unwrap_or(0);
        let mut candidates: Vec<usize> = (0..n).filter(|&v| st[order[v]].byes == fewest).collect();
        candidates.sort_by_key(|&v| (st[order[v]].points, std::cmp::Reverse(order[v])));
        for (rank, &v) in candidates.iter().enumerate() {
            let b = balance(&st[order[v]]);
            edges.push((
                v,
                n,
                PairCost {
                    rematches: 0,
                    bye_rank: u32::try_from(rank).map_err(|_| ScheduleError::WeightOverflow)?,
                    score_gap: 0,
                    seat: 4 * (b * b) as u64,
                    jitter: 0,
                },
            ));
        }
    }
    let pairs_in_matching =
        Weight::try_from(vertices.len() / 2).map_err(|_| ScheduleError::WeightOverflow)?;
    let max_of = |f: fn(&PairCost) -> Weight| edges.iter().map(|e| f(&e.2)).max().unwrap_or(0);
    let max_jitter = max_of(|c| Weight::from(c.jitter));
    let max_seat = max_of(|c| Weight::from(c.seat));
    let max_gap = max_of(|c| Weight::from(c.score_gap));
    let max_bye = max_of(|c| Weight::from(c.bye_rank));
    let max_rematch = max_of(|c| Weight::from(c.rematches));
    let overflow = || ScheduleError::WeightOverflow;
    // Each multiplier exceeds everything the lower tiers can add up to over
    // a whole matching. (Only one ghost edge is ever in a matching.)
    let m_j: Weight = 1;
    let above = |mult: Weight, max: Weight, count: Weight| -> Option<Weight> {
        mult.checked_mul(max.checked_mul(count)?.checked_add(1)?)
    };
    let m_seat = above(m_j, max_jitter, pairs_in_matching).ok_or_else(overflow)?;
    let m_score = above(m_seat, max_seat, pairs_in_matching).ok_or_else(overflow)?;
    let m_bye = above(m_score, max_gap, pairs_in_matching).ok_or_else(overflow)?;
    let m_rematch = above(m_bye, max_bye, 1).ok_or_else(overflow)?;
    let top = above(m_rematch, max_rematch, 1).ok_or_else(overflow)?;
    // `top` bounds every single edge's flattened cost; keep the whole
    // matching's total well inside i128 as well.
    top.checked_mul(pairs_in_matching.max(1) * 4)
        .ok_or_else(overflow)?;
    let mut ghost_edge = vec![None; n];
    for (k, &(a, b, _)) in edges.iter().enumerate() {
        if b == n {
            ghost_edge[a] = Some(k);
        }
    }
    Ok(PairingGraph {
        vertices,
        field_index: order,
        edges,
        real: n,
        ghost_edge,
        multipliers: [m_rematch, m_bye, m_score, m_seat, m_j],
        top,
    })
}

fn pair_two_seats(
    field: &Field,
    graph: &PairingGraph,
    round: u32,
    base_seed: u64,
    seed: u64,
) -> Result<Round, ScheduleError> {
    let mate = max_weight_perfect_matching(
        graph.vertices.len(),
        |a, b| graph.weight(a, b),
        &candidates(graph),
    )
    .map_err(|e| ScheduleError::Internal(e.to_string()))?
    .ok_or_else(|| ScheduleError::Internal("no perfect matching".into()))?;
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
            let (xy, yx) = (seating_cost(x, y), seating_cost(y, x));
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
    Ok(Round { pairings, byes })
}

/// Candidate edges for the matching (see `max_weight_perfect_matching`):
/// each entrant's neighbours one and two places away in score order (enough
/// for a perfect matching whoever gets the bye), its few heaviest edges, and
/// every ghost edge. Pricing adds whatever else the optimum needs.
fn candidates(graph: &PairingGraph) -> Vec<(usize, usize)> {
    const HEAVIEST: usize = 10;
    let n = graph.real;
    let mut out = Vec::with_capacity(n * (HEAVIEST + 3));
    let mut row: Vec<(Weight, usize)> = Vec::with_capacity(n);
    for a in 0..n {
        for b in (a + 1..n).take(2) {
            out.push((a, b));
        }
        row.clear();
        row.extend((0..n).filter_map(|b| Some((graph.weight(a, b)?, b))));
        if row.len() > HEAVIEST {
            // Heaviest first; ties by vertex, to stay deterministic.
            row.select_nth_unstable_by(HEAVIEST, |x, y| y.0.cmp(&x.0).then(x.1.cmp(&y.1)));
            row.truncate(HEAVIEST);
        }
        out.extend(row.iter().map(|&(_, b)| (a, b)));
        if graph.ghost_edge[a].is_some() {
            out.push((a, n));
        }
    }
    out
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
