//! The two-seat Swiss matching at scale: an exact maximum-weight perfect
//! matching of the complete [`PairingGraph`] without ever listing its
//! `n²/2` edges.
//!
//! # Why the answer is the exact optimum
//!
//! The blossom algorithm ([`solve_sparse`]) runs on a sparse set of
//! candidate edges and returns, with its perfect matching, dual variables
//! `y_v` for the vertices and `z_B ≥ 0` for the blossoms. Those duals are
//! feasible for every candidate edge, tight on every matched edge, and
//! positive only on full blossoms. If, in addition, *every* pair of the
//! complete graph has non-negative slack `y_i + y_j + Σ_{B ∋ i,j} z_B - w_ij`,
//! the duals are a feasible solution of the dual of Edmonds' perfect-matching
//! LP over the complete graph with the same objective as the matching, so no
//! perfect matching of the complete graph weighs more. [`certify`] checks
//! exactly that; every pair it does not look at individually is covered by a
//! bound that is proved below. Any pair with negative slack is added to the
//! candidates and the sparse graph solved again; since such a pair is never
//! already a candidate (the duals are feasible on candidates), every round
//! adds edges, so the loop ends, at the latest with the complete graph.
//!
//! # Checking n² pairs in far less than n² steps
//!
//! An edge's cost is, tier by tier, rematches, bye rank (ghost edges only),
//! score gap, seat cost and jitter. Apart from rematches and jitter it
//! depends only on the two vertices' [`Traits`] (points, seat balance, last
//! seat). Vertices with equal traits form a *class*; for classes `c`, `d`
//! the *block weight* `W(c, d)` is the weight of an edge between them with no
//! rematch and no jitter. Rematches and jitter only subtract, so every pair
//! `(i, j)` of the block has `w_ij ≤ W(c, d)`, and (`z_B ≥ 0`) its slack is
//! at least `y_i + y_j - W(c, d)`. Sorting each class by dual, a whole block
//! is certified when its two smallest duals pass, and otherwise only the
//! pairs whose dual sum falls short of `W(c, d)` are visited, walking both
//! sorted lists and stopping at the first pair that passes. Those pairs get
//! their exact weight (jitter, then rematches, then blossom duals).
//!
//! Ghost edges are all candidates (there are at most `n`), so they need no
//! check.
//!
//! # Candidates
//!
//! What makes this fast is a candidate set on which the sparse optimum's
//! duals already pass the bounds. Every vertex gets its three neighbours on
//! each side in score order (which alone admit a perfect matching whoever
//! has the bye, and let floaters move between score groups), every ghost
//! edge, and its [`KEEP`] heaviest edges among up to [`SCAN`] partners drawn
//! from its best blocks (highest `W` first), skipping opponents it has met.
//! In a large class the heaviest edges have jitter 0, the sparse optimum
//! uses only such edges, every dual ends at its block weight, and each
//! block is certified by its first comparison.

use std::collections::HashSet;

use super::ScheduleError;
use super::matching::{SparseSolution, Weight, max_weight_matching, solve_sparse};
use super::splitmix64;
use super::swiss::{PairingGraph, Traits};

/// Heaviest scanned edges kept per vertex.
const KEEP: usize = 4;
/// Partners scanned per vertex for its heaviest edges.
const SCAN: usize = 2048;
/// Neighbours on each side in score order that are always candidates.
const NEIGHBOURS: usize = 3;
/// Violated pairs each vertex may add per pricing round (adding all of them
/// could make the next solve dense).
const PER_VERTEX: usize = 4;
/// Pricing rounds after which a small graph is solved whole instead.
const ROUNDS_BEFORE_DENSE: usize = 16;
/// Top-level blossoms at least this large get groups of their own in
/// [`certify`].
const MIN_GROUPED_BLOSSOM: usize = 16;
/// Largest vertex count solved whole (about 4.5 million edges).
const DENSE_LIMIT: usize = 3000;

/// A group of [`certify`]: its class, its large top-level blossom (id and
/// doubled dual) if any, and its members sorted by dual.
type Group = (usize, Option<(usize, Weight)>, Vec<usize>);

/// Vertices with equal [`Traits`], in vertex order.
struct Classes {
    /// Class of each real vertex.
    of: Vec<usize>,
    /// Members of each class, ascending.
    members: Vec<Vec<usize>>,
    /// Traits of each class.
    traits: Vec<Traits>,
}

impl Classes {
    fn new(graph: &PairingGraph) -> Self {
        let n = graph.real();
        let mut index = std::collections::HashMap::new();
        let mut of = Vec::with_capacity(n);
        let mut members: Vec<Vec<usize>> = Vec::new();
        let mut traits = Vec::new();
        for v in 0..n {
            let t = *graph.traits(v);
            let c = *index.entry(t).or_insert_with(|| {
                members.push(Vec::new());
                traits.push(t);
                members.len() - 1
            });
            of.push(c);
            members[c].push(v);
        }
        Classes {
            of,
            members,
            traits,
        }
    }

    fn len(&self) -> usize {
        self.members.len()
    }

    fn block_weight(&self, graph: &PairingGraph, c: usize, d: usize) -> Weight {
        graph.class_weight(&self.traits[c], &self.traits[d])
    }
}

/// A maximum-weight perfect matching of `graph` (`mate[v]` for every vertex,
/// the ghost included), exact for the complete graph; see the module docs.
pub(super) fn perfect_matching(graph: &PairingGraph) -> Result<Vec<Option<usize>>, ScheduleError> {
    let nv = graph.vertices.len();
    let classes = Classes::new(graph);
    let mut seen = HashSet::new();
    let mut edges = Vec::new();
    let mut add = |a: usize, b: usize, edges: &mut Vec<(usize, usize, Weight)>| {
        let (a, b) = (a.min(b), a.max(b));
        if a != b
            && seen.insert((a, b))
            && let Some(w) = graph.weight(a, b)
        {
            edges.push((a, b, w));
        }
    };
    for (a, b) in candidates(graph, &classes) {
        add(a, b, &mut edges);
    }
    let internal = |e: super::matching::MatchingError| ScheduleError::Internal(e.to_string());
    for round in 0.. {
        if round >= ROUNDS_BEFORE_DENSE && nv <= DENSE_LIMIT {
            let mate = max_weight_matching(nv, &graph.all_edges(), true).map_err(internal)?;
            return Ok(mate);
        }
        let solution = solve_sparse(nv, &edges).map_err(internal)?;
        let mate = solution.mates();
        if mate.iter().any(Option::is_none) {
            // Cannot happen (score-order neighbours are candidates); be exact
            // anyway where the complete graph fits.
            if nv <= DENSE_LIMIT {
                return max_weight_matching(nv, &graph.all_edges(), true).map_err(internal);
            }
            return Err(ScheduleError::Internal(
                "the candidate graph has no perfect matching".into(),
            ));
        }
        let violated = certify(graph, &classes, &solution);
        if violated.is_empty() {
            return Ok(mate);
        }
        for (a, b) in violated {
            add(a, b, &mut edges);
        }
    }
    unreachable!("the pricing loop returns")
}

/// The starting candidate edges (see the module docs).
fn candidates(graph: &PairingGraph, classes: &Classes) -> Vec<(usize, usize)> {
    let n = graph.real();
    let mut out = Vec::with_capacity(n * (NEIGHBOURS + KEEP + 1));
    for a in 0..n {
        out.extend((a + 1..n).take(NEIGHBOURS).map(|b| (a, b)));
        if graph.ghost().is_some() && graph.cost(a, n).is_some() {
            out.push((a, n));
        }
    }
    // Each class's blocks, heaviest first (ties by class, to stay
    // deterministic).
    let k = classes.len();
    let mut best_blocks: Vec<Vec<(Weight, usize)>> = Vec::with_capacity(k);
    for c in 0..k {
        let mut row: Vec<(Weight, usize)> = (0..k)
            .map(|d| (classes.block_weight(graph, c, d), d))
            .collect();
        row.sort_unstable_by(|x, y| y.0.cmp(&x.0).then(x.1.cmp(&y.1)));
        best_blocks.push(row);
    }
    let mut kept: Vec<(Weight, usize)> = Vec::with_capacity(KEEP + 1);
    for a in 0..n {
        kept.clear();
        let mut scanned = 0;
        'blocks: for &(block, d) in &best_blocks[classes.of[a]] {
            let members = &classes.members[d];
            let len = members.len();
            // A different starting point per vertex, so that the scanned
            // partners of a large class look random rather than all alike.
            let start = usize::try_from(splitmix64(a as u64) % len as u64).unwrap_or(0);
            for t in 0..len {
                if scanned >= SCAN {
                    break 'blocks;
                }
                let b = members[(start + t) % len];
                if b == a {
                    continue;
                }
                scanned += 1;
                if graph.met_count(a, b) > 0 {
                    continue;
                }
                let w = block - Weight::from(graph.jitter(a, b));
                if kept.len() == KEEP && kept[KEEP - 1] >= (w, usize::MAX - b) {
                    continue;
                }
                // Heaviest first; ties by the smaller vertex.
                let at = kept.partition_point(|&x| x >= (w, usize::MAX - b));
                kept.insert(at, (w, usize::MAX - b));
                kept.truncate(KEEP);
            }
        }
        out.extend(kept.iter().map(|&(_, b)| (a, usize::MAX - b)));
    }
    out
}

/// Pairs of real vertices whose slack under `solution`'s duals is negative
/// (up to [`PER_VERTEX`] per vertex, the most violated first); empty when
/// the duals certify the matching for the complete graph. Every pair is
/// either visited or covered by its block bound (see the module docs).
fn certify(
    graph: &PairingGraph,
    classes: &Classes,
    solution: &SparseSolution,
) -> Vec<(usize, usize)> {
    let n = graph.real();
    let dual: Vec<Weight> = (0..n).map(|v| solution.dual(v)).collect();
    // Groups: a class, split by the large blossom (if any) its members sit
    // in at the top level, since a pair inside one blossom has that
    // blossom's dual as extra slack. Small blossoms are not worth a group.
    let mut blossom_size = std::collections::HashMap::new();
    for v in 0..n {
        if let Some((b, _)) = solution.top_blossom(v) {
            *blossom_size.entry(b).or_insert(0usize) += 1;
        }
    }
    let big = |v: usize| {
        solution.top_blossom(v).filter(|(b, _)| {
            blossom_size
                .get(b)
                .is_some_and(|&s| s >= MIN_GROUPED_BLOSSOM)
        })
    };
    let mut group_of = std::collections::HashMap::new();
    let mut groups: Vec<Group> = Vec::new();
    for v in 0..n {
        let key = (classes.of[v], big(v).map(|(b, _)| b));
        let g = *group_of.entry(key).or_insert_with(|| {
            groups.push((classes.of[v], big(v), Vec::new()));
            groups.len() - 1
        });
        groups[g].2.push(v);
    }
    for g in &mut groups {
        g.2.sort_unstable_by_key(|&v| (dual[v], v));
    }
    let mut worst: Vec<Vec<(Weight, usize)>> = vec![Vec::new(); n];
    let mut note = |slack: Weight, i: usize, j: usize| {
        for (a, b) in [(i, j), (j, i)] {
            let list = &mut worst[a];
            list.push((slack, b));
            if list.len() > 2 * PER_VERTEX {
                list.sort_unstable();
                list.truncate(PER_VERTEX);
            }
        }
    };
    // The exact check of one pair, given its block weight.
    let check = |i: usize, j: usize, block: Weight, note: &mut dyn FnMut(Weight, usize, usize)| {
        let sum = dual[i] + dual[j];
        let w = block - Weight::from(graph.jitter(i, j));
        if sum >= 2 * w {
            return;
        }
        let w = w - Weight::from(graph.met_count(i, j)) * graph.rematch_multiplier();
        if sum >= 2 * w {
            return;
        }
        let slack = solution.slack(i, j, w);
        if slack < 0 {
            note(slack, i, j);
        }
    };
    let k = groups.len();
    for x in 0..k {
        for y in x..k {
            let ((c, bc, sc), (d, bd, sd)) = (&groups[x], &groups[y]);
            let (Some(&ci), Some(&di)) = (sc.first(), sd.first()) else {
                continue;
            };
            let block = classes.block_weight(graph, *c, *d);
            // Twice the block weight, less what a shared blossom adds.
            let bound = match (bc, bd) {
                (Some((b1, z)), Some((b2, _))) if b1 == b2 => 2 * block - z,
                _ => 2 * block,
            };
            if x == y {
                // Pairs within one group: positions p < q.
                for (p, &i) in sc.iter().enumerate() {
                    let Some(&next) = sc.get(p + 1) else { break };
                    if dual[i] + dual[next] >= bound {
                        break;
                    }
                    for &j in &sc[p + 1..] {
                        if dual[i] + dual[j] >= bound {
                            break;
                        }
                        check(i, j, block, &mut note);
                    }
                }
            } else {
                if dual[ci] + dual[di] >= bound {
                    continue;
                }
                for &i in sc {
                    if dual[i] + dual[di] >= bound {
                        break;
                    }
                    for &j in sd {
                        if dual[i] + dual[j] >= bound {
                            break;
                        }
                        check(i, j, block, &mut note);
                    }
                }
            }
        }
    }
    let mut violated = Vec::new();
    for (i, mut list) in worst.into_iter().enumerate() {
        list.sort_unstable();
        violated.extend(list.into_iter().take(PER_VERTEX).map(|(_, j)| (i, j)));
    }
    violated
}
