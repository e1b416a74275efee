//! The weighted graph a two-seat Swiss round is matched on: the tiers of an
//! edge's cost, the multipliers that flatten them into one weight, and the
//! ghost vertex that takes the bye of an odd field.

use std::collections::HashMap;

use super::{Field, SCORE_UNIT, SwissStanding, score_order};
use crate::domain::{EntrantId, Round};
use crate::schedule::matching::Weight;
use crate::schedule::{JITTER_TAG, ScheduleError, fnv1a, mix_seed, splitmix64};

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
    pub(super) field_index: Vec<usize>,
    /// Number of real (entrant) vertices.
    real: usize,
    /// Vertex of each entrant, for [`Self::vertex_of`].
    index: HashMap<EntrantId, usize>,
    /// What each real vertex's edge costs depend on, besides whom it met.
    pub(super) traits: Vec<Traits>,
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
pub(in crate::schedule) struct Traits {
    /// Points, in [`SCORE_UNIT`]s.
    pub(in crate::schedule) points: i64,
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
    pub(in crate::schedule) fn real(&self) -> usize {
        self.real
    }

    pub(in crate::schedule) fn traits(&self, v: usize) -> &Traits {
        &self.traits[v]
    }

    /// The weight of an edge between vertices of traits `x` and `y` with no
    /// rematch and no tie-break: an upper bound on every such edge's weight,
    /// and its exact weight less its tie-break when the two never met.
    pub(in crate::schedule) fn class_weight(&self, x: &Traits, y: &Traits) -> Weight {
        self.top - self.flatten(self.class_cost(x, y))
    }

    /// The graph induced by `members` (vertices of this graph, ascending;
    /// the ghost, if included, last): the same edges with the same weights
    /// between them, renumbered `0..members.len()` in that order. Each band
    /// of the banded solve is matched on one of these.
    pub(in crate::schedule) fn restrict(&self, members: &[usize]) -> PairingGraph {
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
    pub(in crate::schedule) fn first_bye_candidate(&self) -> Option<usize> {
        self.ghost_cost
            .iter()
            .position(|c| c.is_some_and(|c| c.bye_rank == 0))
    }

    /// The score-gap tier of an edge between real vertices `a` and `b`.
    pub(in crate::schedule) fn score_gap(&self, a: usize, b: usize) -> u64 {
        self.class_cost(&self.traits[a], &self.traits[b]).score_gap
    }

    /// Games real vertices `a` and `b` have played together.
    pub(in crate::schedule) fn met_count(&self, a: usize, b: usize) -> u32 {
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
    pub(in crate::schedule) fn tie(&self, a: usize, b: usize) -> u64 {
        self.keys[a].abs_diff(self.keys[b])
    }

    /// The weight one rematch takes off an edge.
    pub(in crate::schedule) fn rematch_multiplier(&self) -> Weight {
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

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// Seat balance: games in seat 0 minus games in seat 1.
pub(super) fn balance(s: &SwissStanding) -> i64 {
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
pub(super) fn seating_cost(first: &Traits, second: &Traits) -> u64 {
    let b0 = first.balance + 1;
    let b1 = second.balance - 1;
    let repeats = u64::from(first.last_seat == Some(0)) + u64::from(second.last_seat == Some(1));
    4 * (b0.unsigned_abs().pow(2) + b1.unsigned_abs().pow(2)) + repeats
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
            (splitmix64(prefix ^ h), i)
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

/// The two-seat pairing graph of the field before round `round` (see
/// [`PairingGraph`]): one vertex per entrant in score order and the ghost
/// of an odd field, what their edges cost, and the multipliers that flatten
/// those costs into weights.
pub(super) fn pairing_graph(
    field: &Field,
    round: u32,
    base_seed: u64,
) -> Result<PairingGraph, ScheduleError> {
    let order = score_order(field);
    let st = &field.standings;
    let vertices = vertices_in_order(field, &order);
    let traits: Vec<Traits> = order.iter().map(|&i| traits_of(&st[i])).collect();
    let met = opponents_met(field, &order);
    let step = score_step(field, &order);
    let (ghost_cost, bye_candidates) = ghost_costs(field, &order, &traits)?;
    let bounds = tier_bounds(field, &traits, &ghost_cost, step, bye_candidates)?;
    let (multipliers, top) = multipliers(&bounds, vertices.len())?;
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
        real: order.len(),
        multipliers,
        top,
    })
}

/// The graph's vertices: the entrants in score order (`order`), then the
/// ghost (`None`) when the field is odd.
fn vertices_in_order(field: &Field, order: &[usize]) -> Vec<Option<EntrantId>> {
    let st = &field.standings;
    let mut vertices: Vec<Option<EntrantId>> =
        order.iter().map(|&i| Some(st[i].entrant.clone())).collect();
    if order.len() % 2 == 1 {
        vertices.push(None);
    }
    vertices
}

/// The opponents each real vertex has met, `(vertex, games)` sorted by
/// vertex (`order[v]` is vertex `v`'s field index).
fn opponents_met(field: &Field, order: &[usize]) -> Vec<Vec<(usize, u32)>> {
    let n = order.len();
    let mut vertex_of_field = vec![0; n];
    for (v, &i) in order.iter().enumerate() {
        vertex_of_field[i] = v;
    }
    let mut met: Vec<Vec<(usize, u32)>> = vec![Vec::new(); n];
    for (&(a, b), &games) in &field.met {
        let (va, vb) = (vertex_of_field[a], vertex_of_field[b]);
        met[va].push((vb, games));
        met[vb].push((va, games));
    }
    for list in &mut met {
        list.sort_unstable();
    }
    met
}

/// The smallest score step in play, in [`SCORE_UNIT`]s (at least 1), so
/// squared gaps stay small.
fn score_step(field: &Field, order: &[usize]) -> u64 {
    let st = &field.standings;
    order
        .iter()
        .fold(SCORE_UNIT.unsigned_abs(), |g, &i| {
            gcd(g, st[i].points.unsigned_abs())
        })
        .max(1)
}

/// The ghost edge's cost of each real vertex that is a bye candidate (none
/// when the field is even), and how many candidates there are.
fn ghost_costs(
    field: &Field,
    order: &[usize],
    traits: &[Traits],
) -> Result<(Vec<Option<PairCost>>, usize), ScheduleError> {
    let st = &field.standings;
    let n = order.len();
    let mut ghost_cost = vec![None; n];
    let mut bye_candidates = 0usize;
    if n % 2 == 1 {
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
    Ok((ghost_cost, bye_candidates))
}

/// The most each tier of an edge's cost can reach in one graph (or a bound
/// on it).
struct TierBounds {
    tie: Weight,
    seat: Weight,
    gap: Weight,
    bye: Weight,
    rematch: Weight,
}

/// The tiers' maxima over the graph of `traits` (one per real vertex).
fn tier_bounds(
    field: &Field,
    traits: &[Traits],
    ghost_cost: &[Option<PairCost>],
    step: u64,
    bye_candidates: usize,
) -> Result<TierBounds, ScheduleError> {
    // Tier maxima, or bounds on them: the multipliers only have to dominate
    // what the tiers below can add up to, so a bound is as good as the
    // maximum and is what keeps this linear in the field.
    let distinct: Vec<Traits> = {
        let mut t = traits.to_vec();
        t.sort_unstable();
        t.dedup();
        t
    };
    let max_tie = Weight::try_from(traits.len().saturating_sub(1))
        .map_err(|_| ScheduleError::WeightOverflow)?;
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
    Ok(TierBounds {
        tie: max_tie,
        seat: max_seat,
        gap: max_gap,
        bye: max_bye,
        rematch: max_rematch,
    })
}

/// The tiers' multipliers, highest tier first, and `top` (which bounds every
/// edge's flattened cost), for a graph of `vertex_count` vertices whose
/// tiers reach at most `bounds`.
fn multipliers(
    bounds: &TierBounds,
    vertex_count: usize,
) -> Result<([Weight; 5], Weight), ScheduleError> {
    let pairs_in_matching =
        Weight::try_from(vertex_count / 2).map_err(|_| ScheduleError::WeightOverflow)?;
    let overflow = || ScheduleError::WeightOverflow;
    // Each multiplier exceeds everything the lower tiers can add up to over
    // a whole matching. (Only one ghost edge is ever in a matching.)
    let m_j: Weight = 1;
    let above = |mult: Weight, max: Weight, count: Weight| -> Option<Weight> {
        mult.checked_mul(max.checked_mul(count)?.checked_add(1)?)
    };
    let m_seat = above(m_j, bounds.tie, pairs_in_matching).ok_or_else(overflow)?;
    let m_score = above(m_seat, bounds.seat, pairs_in_matching).ok_or_else(overflow)?;
    let m_bye = above(m_score, bounds.gap, pairs_in_matching).ok_or_else(overflow)?;
    let m_rematch = above(m_bye, bounds.bye, 1).ok_or_else(overflow)?;
    let top = above(m_rematch, bounds.rematch, 1).ok_or_else(overflow)?;
    // `top` bounds every single edge's flattened cost; keep the whole
    // matching's total well inside i128 as well.
    top.checked_mul(pairs_in_matching.max(1) * 4)
        .ok_or_else(overflow)?;
    Ok(([m_rematch, m_bye, m_score, m_seat, m_j], top))
}
