//! The two-seat Swiss matching for large fields: the field cut into bands
//! of neighbouring scores, each band matched exactly on its own, and the
//! top three tiers of the whole round proved optimal from a bound, with
//! bands merged where the proof fails.
//!
//! # Bands
//!
//! The real vertices are laid out by score (highest first) and, within a
//! score, by tie-break key — so a band holds a seeded random sample of its
//! score group rather than the group's top seeds. The first bye candidate
//! (the one the bye tier wants) is taken out of that sequence, the rest is
//! cut into bands of [`BAND`] vertices at even offsets, and the candidate
//! and the ghost join the band its score falls in. Each band is matched by
//! [`pricing::perfect_matching`] on its own complete graph, with the weights
//! of the whole field: exact within the band in every tier.
//!
//! # Why rematches, bye and score gaps are still the field's optimum
//!
//! The score-gap tier is `(Δ points)²`, convex in the distance, so on the
//! sorted sequence pairing neighbours — first with second, third with
//! fourth — has the least total gap of any perfect matching (uncrossing two
//! pairs never raises a convex cost). Bands are cut at even offsets, so
//! that pairing splits into the bands' own neighbour pairings, and the
//! field's bound is the sum of theirs. A band whose optimum has no rematch,
//! gives the bye to the first candidate and reaches its bound is therefore
//! part of a round that is optimal in the first three tiers; when every
//! band is, the whole round is (rematches cannot go below zero, the bye
//! cannot go to a better candidate, and the gap total sits on its bound).
//!
//! A band that misses is merged with the next one (or, at the end, the one
//! before) and the merged region is solved again, and so on: for a rematch
//! or a misplaced bye until it is avoided or the region is the whole field
//! (solved exactly, as small fields are), for a gap above the bound — a
//! float that rematches force, which a larger region often cannot avoid
//! either — up to [`SCORE_REGION`] bands. Seat balance and the tie-break
//! are exact within each region, not across regions: a band is a random
//! sample of its scores, so its seat needs look like its group's.

use super::ScheduleError;
use super::pricing;
use super::swiss::PairingGraph;

/// Vertices per band. Smaller bands are faster (a 10,001-entrant round 15
/// took 0.29 s in bands of 32, 0.45 s in 64, 0.65 s in 128) and were proved
/// optimal in the first three tiers in every round of that test all the
/// same; seat balance came out no worse (at most 1 after 15 rounds).
pub const BAND: usize = 32;
/// Fields up to this many vertices are matched whole, exact in every tier.
pub const WHOLE_LIMIT: usize = 1024;
/// Bands a region grows to when only its score gaps miss their bound.
const SCORE_REGION: usize = 4;

/// A perfect matching of `graph` (`mate[v]` for every vertex, the ghost
/// included): exact for fields up to [`WHOLE_LIMIT`], banded above it.
pub(super) fn perfect_matching(graph: &PairingGraph) -> Result<Vec<Option<usize>>, ScheduleError> {
    if graph.vertices.len() <= WHOLE_LIMIT {
        return pricing::perfect_matching(graph);
    }
    Ok(banded(graph, BAND)?.mate)
}

/// What [`banded`] found.
pub(super) struct Banded {
    /// `mate[v]` for every vertex of the graph.
    pub(super) mate: Vec<Option<usize>>,
    pub(super) report: BandedReport,
}

/// How a banded round was settled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BandedReport {
    /// Whether the round is proved optimal in rematches, bye and score gap
    /// (every region met its bound, or a region was the whole field).
    pub proved: bool,
    /// Regions the field was finally matched in.
    pub regions: usize,
    /// Regions solved, the merged retries included.
    pub solves: usize,
}

/// Where the bands come from: the sequence without the first bye candidate,
/// cut at `starts`, and where the candidate and ghost go.
struct Layout {
    sequence: Vec<usize>,
    /// First position of each band in `sequence`, then its length.
    starts: Vec<usize>,
    /// The bye candidate, the ghost, and the band they join.
    bye: Option<(usize, usize, usize)>,
    /// Each band's score-gap bound: its neighbour pairing's total.
    bounds: Vec<u64>,
}

impl Layout {
    fn new(graph: &PairingGraph, band: usize) -> Result<Self, ScheduleError> {
        let band = (band.max(2) + 1) & !1;
        let n = graph.real();
        let mut order: Vec<usize> = (0..n).collect();
        // By score, then by tie-break key within a score (the graph numbers
        // vertices by score and field position, so the keys reorder each
        // group).
        order.sort_by_key(|&v| {
            (
                std::cmp::Reverse(graph.traits(v).points),
                graph.tie_key(v).unwrap_or(0),
            )
        });
        let candidate = match graph.ghost() {
            None => None,
            Some(ghost) => {
                let first = graph.first_bye_candidate().ok_or_else(|| {
                    ScheduleError::Internal("an odd field with no bye candidate".into())
                })?;
                Some((first, ghost))
            }
        };
        let at = candidate.and_then(|(first, _)| order.iter().position(|&v| v == first));
        if let Some(at) = at {
            order.remove(at);
        }
        let count = (order.len() / band).max(1);
        let mut starts: Vec<usize> = (0..count).map(|b| b * band).collect();
        starts.push(order.len());
        let bounds = starts
            .windows(2)
            .map(|w| {
                order[w[0]..w[1]]
                    .chunks_exact(2)
                    .map(|p| graph.score_gap(p[0], p[1]))
                    .sum()
            })
            .collect();
        let bye = candidate.map(|(first, ghost)| {
            let at = at.unwrap_or(order.len());
            let joins = starts[..count]
                .iter()
                .rposition(|&s| s <= at.saturating_sub(1))
                .unwrap_or(0);
            (first, ghost, joins)
        });
        Ok(Layout {
            sequence: order,
            starts,
            bye,
            bounds,
        })
    }

    fn bands(&self) -> usize {
        self.starts.len() - 1
    }

    /// The vertices of bands `lo..hi`, ascending (the ghost, if among them,
    /// last, as graphs number it).
    fn members(&self, lo: usize, hi: usize) -> Vec<usize> {
        let mut members = self.sequence[self.starts[lo]..self.starts[hi]].to_vec();
        if let Some((first, ghost, joins)) = self.bye
            && (lo..hi).contains(&joins)
        {
            members.push(first);
            members.push(ghost);
        }
        members.sort_unstable();
        members
    }
}

/// How a region's optimum fares against the bounds.
struct Outcome {
    /// Pairs, in the whole graph's vertices.
    pairs: Vec<(usize, usize)>,
    /// A rematch, or the bye not with the first candidate.
    hard_miss: bool,
    /// Score gaps above the region's bound.
    gap_miss: bool,
}

fn solve_region(
    graph: &PairingGraph,
    layout: &Layout,
    lo: usize,
    hi: usize,
) -> Result<Outcome, ScheduleError> {
    let members = layout.members(lo, hi);
    let sub = graph.restrict(&members);
    let mate = pricing::perfect_matching(&sub)?;
    let n = graph.real();
    let mut pairs = Vec::with_capacity(members.len() / 2);
    let (mut rematches, mut gap, mut bye_ok) = (0u64, 0u64, true);
    for (v, m) in mate.iter().enumerate() {
        let u = m.ok_or_else(|| ScheduleError::Internal("a band left unmatched".into()))?;
        if v >= u {
            continue;
        }
        let (a, b) = (members[v], members[u]);
        pairs.push((a, b));
        if b == n {
            bye_ok &= layout.bye.is_some_and(|(first, _, _)| first == a);
        } else {
            rematches += u64::from(graph.met_count(a, b));
            gap += graph.score_gap(a, b);
        }
    }
    let bound: u64 = layout.bounds[lo..hi].iter().sum();
    Ok(Outcome {
        pairs,
        hard_miss: rematches > 0 || !bye_ok,
        gap_miss: gap > bound,
    })
}

/// A run of bands matched together and kept.
struct Region {
    first_band: usize,
    /// Whether its matching met the region's bound (or is the whole field's
    /// exact optimum).
    proved: bool,
    pairs: Vec<(usize, usize)>,
}

/// Matches `graph` band by band (bands of about `band` vertices), merging
/// bands where the bound is missed; see the module docs.
pub(super) fn banded(graph: &PairingGraph, band: usize) -> Result<Banded, ScheduleError> {
    let layout = Layout::new(graph, band)?;
    let bands = layout.bands();
    let mut accepted: Vec<Region> = Vec::new();
    let mut lo = 0;
    let mut solves = 0;
    while lo < bands {
        let mut hi = lo + 1;
        loop {
            let outcome = solve_region(graph, &layout, lo, hi)?;
            solves += 1;
            let whole = lo == 0 && hi == bands;
            let settled = !outcome.hard_miss && !outcome.gap_miss;
            if settled || whole {
                accepted.push(Region {
                    first_band: lo,
                    proved: true,
                    pairs: outcome.pairs,
                });
                break;
            }
            if !outcome.hard_miss && hi - lo >= SCORE_REGION {
                accepted.push(Region {
                    first_band: lo,
                    proved: false,
                    pairs: outcome.pairs,
                });
                break;
            }
            if hi < bands {
                hi += 1;
            } else if let Some(before) = accepted.pop() {
                lo = before.first_band;
            }
        }
        lo = hi;
    }
    let mut mate = vec![None; graph.vertices.len()];
    for region in &accepted {
        for &(a, b) in &region.pairs {
            mate[a] = Some(b);
            mate[b] = Some(a);
        }
    }
    Ok(Banded {
        mate,
        report: BandedReport {
            proved: accepted.iter().all(|r| r.proved),
            regions: accepted.len(),
            solves,
        },
    })
}
