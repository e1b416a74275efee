//! Maximum-weight matching in general (non-bipartite) graphs.
//!
//! This is Edmonds' blossom algorithm in its primal-dual form, organised the
//! way Galil's survey ("Efficient algorithms for finding maximum matching in
//! graphs", ACM Computing Surveys, 1986) describes it, with the least-slack
//! edge bookkeeping that makes it O(n³): each *stage* grows alternating
//! trees from every single vertex along zero-slack ("tight") edges, shrinking
//! odd cycles into blossoms, until it finds an augmenting path; when no tight
//! edge extends the forest, the dual variables move by the largest step that
//! keeps every slack non-negative (the four `delta` cases), which either makes
//! a new edge tight or lets a blossom be expanded. At the end the duals
//! certify optimality.
//!
//! The bookkeeping (endpoint numbering, labels, least-slack edges per
//! blossom) follows the layout of Joris van Rantwijk's well-known reference
//! implementation of the same algorithm. All arithmetic is exact integer
//! arithmetic on [`Weight`] (`i128`): vertex duals are stored doubled, so
//! with integer weights every quantity stays integral (the slack between two
//! S-blossoms is always even).
//!
//! [`solve_sparse`] runs it on a sparse candidate set and keeps the final
//! duals, which `schedule::pricing` uses as an optimality certificate for the
//! Swiss scheduler's implicit complete graph.
//! [`solve_sparse_in_two`] does the same in two phases (a part of the edges,
//! then the rest), which is how the scheduler's first solve keeps its trees
//! inside score groups.
//!
//! # Layout
//!
//! This module holds the public entry points ([`max_weight_matching`],
//! [`solve_sparse`], [`solve_sparse_in_two`], [`SparseSolution`]) and the
//! solver's state (`Matcher`, its edges and adjacency). The phases of the
//! algorithm add to `Matcher` in files of their own:
//!
//! * `setup`: a new state, and the three starts (cold with a greedy
//!   matching, jump-started from greedy duals, resumed with added edges).
//! * `primitives`: endpoints, slacks, tight-edge bits, leaves of a blossom,
//!   and the bookkeeping of what a stage touched.
//! * `stages`: the outer loop and one stage (growing the forest along tight
//!   edges).
//! * `blossoms`: labelling, finding, shrinking and expanding blossoms.
//! * `augment`: flipping the matching along an augmenting path.
//! * `duals`: the dual step (the four `delta` cases), over the whole forest
//!   or over a single tree.
//! * `tests` (tests only): brute-force and property tests.

mod augment;
mod blossoms;
mod duals;
mod primitives;
mod setup;
mod stages;
#[cfg(test)]
mod tests;

/// Edge weights and dual variables.
pub type Weight = i128;

/// Sentinel for "no vertex / edge / endpoint / blossom".
const NONE: usize = usize::MAX;

/// Labels of top-level blossoms (and of vertices inside T-blossoms).
const FREE: i8 = 0;
const S: i8 = 1;
const T: i8 = 2;
/// Bit set on an S-blossom while [`Matcher::scan_blossom`] walks past it.
const CRUMB: i8 = 4;
/// Label of a recycled blossom number.
const UNUSED: i8 = -1;

/// Kinds of single-tree step candidates, in the order ties are taken.
const S_FREE: u8 = 0;
const S_S: u8 = 1;
const EXPAND: u8 = 2;

/// Why [`max_weight_matching`] refused its input.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MatchingError {
    #[error("edge {edge} joins vertex {vertex} to itself")]
    SelfLoop { edge: usize, vertex: usize },
    #[error("edge {edge} names vertex {vertex}, but the graph has {vertices} vertices")]
    VertexOutOfRange {
        edge: usize,
        vertex: usize,
        vertices: usize,
    },
    #[error("vertices {a} and {b} are joined by more than one edge")]
    ParallelEdge { a: usize, b: usize },
    #[error("edge weights too large for exact arithmetic")]
    WeightOverflow,
}

/// Computes a maximum-weight matching of the undirected graph on vertices
/// `0..vertices` with the given weighted `edges` (no self-loops, at most one
/// edge per pair of vertices).
///
/// With `max_cardinality`, only matchings of maximum cardinality compete, and
/// the heaviest of those is returned (this is what makes a *perfect* matching
/// come out whenever one exists, whatever the weights' signs).
///
/// Returns `mate`, where `mate[v]` is `Some(u)` when `v` is matched to `u`.
/// Deterministic: the same edge list (in the same order) gives the same
/// matching, including among equally heavy ones.
pub fn max_weight_matching(
    vertices: usize,
    edges: &[(usize, usize, Weight)],
    max_cardinality: bool,
) -> Result<Vec<Option<usize>>, MatchingError> {
    validate(vertices, edges)?;
    if edges.is_empty() {
        return Ok(vec![None; vertices]);
    }
    let mut m = Matcher::new(vertices, edges);
    m.run(max_cardinality);
    Ok(m.mates())
}

/// One exact solve of a sparse graph, kept with the duals that certify it.
///
/// The matching is a maximum-weight matching of maximum cardinality among
/// the given edges; [`SparseSolution::slack`] gives the reduced cost of *any*
/// pair under the final duals, so a caller that knows the weights of edges
/// it left out can check them without handing them all over (see
/// `schedule::pricing`). If no pair has negative slack and the matching is
/// perfect, it is a maximum-weight perfect matching of the whole graph:
/// every matched edge is tight, every blossom with a positive dual is full,
/// and the duals are feasible everywhere, which is LP duality for Edmonds'
/// perfect-matching polytope.
pub struct SparseSolution {
    matcher: Matcher,
    /// For each vertex, its enclosing blossoms from the top level down.
    chains: Vec<Vec<usize>>,
}

impl SparseSolution {
    /// `mate[v]`, as [`max_weight_matching`] returns it.
    pub fn mates(&self) -> Vec<Option<usize>> {
        self.matcher.mates()
    }

    /// Twice the dual of vertex `v`: a pair `v`–`u` of weight `w` has slack
    /// at least `dual(v) + dual(u) - 2w` (blossom duals only add to it).
    pub fn dual(&self, v: usize) -> Weight {
        self.matcher.dualvar[v]
    }

    /// The outermost blossom holding `v` (an id, unique among blossoms) and
    /// its dual, doubled like the slacks: a pair inside that blossom has at
    /// least this much more slack than its vertex duals alone give. `None`
    /// for a vertex in no blossom.
    pub fn top_blossom(&self, v: usize) -> Option<(usize, Weight)> {
        let b = *self.chains[v].first()?;
        Some((b, 2 * self.matcher.dualvar[b]))
    }

    /// The blossoms holding `v`, from the top level down (empty for a vertex
    /// at the top level). Blossom ids lie in `vertices..2 * vertices`.
    pub fn chain(&self, v: usize) -> &[usize] {
        &self.chains[v]
    }

    /// The dual of blossom `b` (an id from [`Self::chain`]), doubled like
    /// the slacks.
    pub fn blossom_dual(&self, b: usize) -> Weight {
        2 * self.matcher.dualvar[b]
    }

    /// Twice the exact slack of a pair `i`–`j` of weight `w`, counting every
    /// blossom that holds both ends.
    pub fn slack(&self, i: usize, j: usize, w: Weight) -> Weight {
        self.matcher.full_slack(&self.chains, i, j, w)
    }

    /// Solves again with more edges: `edges` is the list this solution was
    /// solved with followed by new ones. The solve starts from this
    /// solution's matching and duals (see `Matcher::add_edges`) rather
    /// than from nothing, so it costs about as many stages as the new edges
    /// free vertices. The result is what [`solve_sparse`] promises: a
    /// maximum-weight perfect matching of `edges`, when one exists, with
    /// duals that certify it (falling back to a cold solve of `edges` when
    /// the warm one ends imperfect).
    pub fn resolve(
        self,
        edges: &[(usize, usize, Weight)],
    ) -> Result<SparseSolution, MatchingError> {
        let mut matcher = self.matcher;
        let nv = matcher.nv;
        let old = matcher.edges.len();
        if edges.len() < old {
            return solve_sparse(nv, edges);
        }
        // The solved edges passed already: check the new ones, and that
        // none is parallel to a solved one.
        validate(nv, &edges[old..]).map_err(|e| match e {
            MatchingError::SelfLoop { edge, vertex } => MatchingError::SelfLoop {
                edge: edge + old,
                vertex,
            },
            MatchingError::VertexOutOfRange {
                edge,
                vertex,
                vertices,
            } => MatchingError::VertexOutOfRange {
                edge: edge + old,
                vertex,
                vertices,
            },
            other => other,
        })?;
        for &(a, b, _) in &edges[old..] {
            let at_a = &matcher.adjacency[matcher.adj_start[a]..matcher.adj_start[a + 1]];
            if at_a.iter().any(|x| x.w == b) {
                return Err(MatchingError::ParallelEdge {
                    a: a.min(b),
                    b: a.max(b),
                });
            }
        }
        debug_assert!(
            edges[..old]
                .iter()
                .zip(&matcher.edges)
                .all(|(&(u, v, w), e)| (u, v, w) == (e.u, e.v, e.weight)),
            "the solved edges come first"
        );
        if matcher.mate.contains(&NONE) {
            return solve_sparse(nv, edges);
        }
        matcher.add_edges(&edges[old..]);
        matcher.run_single_tree();
        if matcher.mate.contains(&NONE) {
            return solve_sparse(nv, edges);
        }
        let chains = matcher.blossom_chains();
        Ok(SparseSolution { matcher, chains })
    }
}

/// Solves the graph on `0..vertices` with exactly these `edges` (maximum
/// cardinality first, then weight), starting from a greedy dual solution and
/// a greedy matching of its tight edges instead of from nothing (see
/// `Matcher::jump_start`). When the graph has a perfect matching the result
/// is a maximum-weight perfect matching, as the cold start's is (possibly
/// another of equal weight), with duals that certify it; the jump start only
/// saves most of the stages. When it has none, the graph is solved again from
/// the cold start, whose uniform duals the maximum-cardinality argument needs.
pub fn solve_sparse(
    vertices: usize,
    edges: &[(usize, usize, Weight)],
) -> Result<SparseSolution, MatchingError> {
    validate(vertices, edges)?;
    let mut matcher = Matcher::new(vertices, edges);
    matcher.jump_start();
    matcher.run_single_tree();
    if matcher.mate.contains(&NONE) {
        matcher = Matcher::new(vertices, edges);
        matcher.warm_start();
        matcher.run(true);
    }
    let chains = matcher.blossom_chains();
    Ok(SparseSolution { matcher, chains })
}

/// [`solve_sparse`] of `inner` followed by `outer`, in two phases: first
/// the graph of the `inner` edges alone (each root whose tree gets stuck is
/// left single), then the `outer` edges are added to that state as
/// [`SparseSolution::resolve`] adds edges, and the vertices still single are
/// matched. When the `inner` edges hold most of an optimal matching (the
/// Swiss scheduler's edges within score groups), the first phase is many
/// small independent problems whose trees cannot wander into other groups,
/// and the second takes about one stage per floater. The result is what
/// [`solve_sparse`] promises for the edge list `inner ++ outer` (the order
/// later resolves must keep).
pub fn solve_sparse_in_two(
    vertices: usize,
    inner: &[(usize, usize, Weight)],
    outer: &[(usize, usize, Weight)],
) -> Result<SparseSolution, MatchingError> {
    let all: Vec<(usize, usize, Weight)> = inner.iter().chain(outer).copied().collect();
    validate(vertices, &all)?;
    let mut matcher = Matcher::new(vertices, inner);
    // Every dual starts at the cold start's value for *all* edges, so a
    // vertex with no inner edge (the ghost) has the parity of the others and
    // is feasible on its outer edges.
    let top = all.iter().map(|e| e.2).max().unwrap_or(0).max(0);
    matcher.dualvar[..vertices].fill(top);
    matcher.jump_start();
    matcher.skip_stuck = true;
    matcher.run_single_tree();
    matcher.skip_stuck = false;
    matcher.add_edges(outer);
    matcher.run_single_tree();
    if matcher.mate.contains(&NONE) {
        return solve_sparse(vertices, &all);
    }
    let chains = matcher.blossom_chains();
    Ok(SparseSolution { matcher, chains })
}

fn validate(vertices: usize, edges: &[(usize, usize, Weight)]) -> Result<(), MatchingError> {
    // Duals start at the largest weight and move by at most a few times the
    // spread of weights; keeping |w| below 2^120 leaves ample headroom.
    const LIMIT: Weight = 1 << 120;
    let mut pairs = Vec::with_capacity(edges.len());
    for (edge, &(i, j, w)) in edges.iter().enumerate() {
        for vertex in [i, j] {
            if vertex >= vertices {
                return Err(MatchingError::VertexOutOfRange {
                    edge,
                    vertex,
                    vertices,
                });
            }
        }
        if i == j {
            return Err(MatchingError::SelfLoop { edge, vertex: i });
        }
        if !(-LIMIT..=LIMIT).contains(&w) {
            return Err(MatchingError::WeightOverflow);
        }
        pairs.push((i.min(j), i.max(j)));
    }
    pairs.sort_unstable();
    if let Some(w) = pairs.windows(2).find(|w| w[0] == w[1]) {
        return Err(MatchingError::ParallelEdge {
            a: w[0].0,
            b: w[0].1,
        });
    }
    Ok(())
}

/// Python-style index into a cyclic list: `-1` is the last element.
fn wrap(j: isize, len: usize) -> usize {
    // `j` always lies in `-len..len` here.
    if j < 0 {
        (j + len as isize) as usize
    } else {
        j as usize
    }
}

/// The algorithm's state. Vertices are `0..nv`; non-trivial blossoms are
/// numbered `nv..2*nv`. Edge `k` has endpoints `2k` (its first vertex) and
/// `2k+1` (its second); `p ^ 1` is the other end of endpoint `p`.
struct Matcher {
    nv: usize,
    edges: Vec<Edge>,
    /// The edges at vertex `v` are `adjacency[adj_start[v]..adj_start[v + 1]]`,
    /// each with its far vertex and weight at hand: scanning a vertex then
    /// reads one contiguous run of memory (the hot loop of the algorithm).
    adj_start: Vec<usize>,
    adjacency: Vec<Adjacent>,
    /// `mate[v]`: the remote endpoint of `v`'s matched edge, or `NONE`.
    mate: Vec<usize>,
    /// Label of a top-level blossom; for a vertex inside a T-blossom, `T`
    /// once it is reachable from an S-vertex outside that blossom.
    label: Vec<i8>,
    /// The remote endpoint of the edge through which the label came.
    labelend: Vec<usize>,
    /// Top-level blossom containing each vertex.
    inblossom: Vec<usize>,
    blossomparent: Vec<usize>,
    /// Sub-blossoms of a non-trivial blossom, starting at its base.
    blossomchilds: Vec<Vec<usize>>,
    /// Base vertex of each blossom.
    blossombase: Vec<usize>,
    /// `blossomendps[b][i]`: the endpoint, on child `i`, of the edge linking
    /// child `i` to child `i + 1` (cyclically).
    blossomendps: Vec<Vec<usize>>,
    /// Least-slack edge to an S-blossom (see `stage`).
    bestedge: Vec<usize>,
    /// `(edge, epoch, slack)`: the slack of `bestedge[x]` as last computed,
    /// valid while the edge and the dual epoch are unchanged. Spares the
    /// hot loop a random memory access per scanned edge.
    best_slack: Vec<(usize, u64, Weight)>,
    /// Bumped whenever the duals change.
    epoch: u64,
    /// For a non-trivial top-level S-blossom: its least-slack edges to
    /// neighbouring S-blossoms, when computed.
    blossombestedges: Vec<Option<Vec<usize>>>,
    unusedblossoms: Vec<usize>,
    /// Doubled vertex duals, then blossom duals.
    dualvar: Vec<Weight>,
    /// Edges known to be tight in the current stage.
    /// (A bitset: it is probed once per scanned edge, so keep it small.)
    allowedge: Vec<u64>,
    /// S-vertices waiting to be scanned.
    queue: Vec<usize>,
    /// Grow one alternating tree per stage (from one single vertex) rather
    /// than one from every single vertex; see [`Self::run_single_tree`].
    single_tree: bool,
    /// Vertices and blossoms whose label or least-slack edge this stage set
    /// (each once), so a single-tree stage costs what its tree touches.
    touched: Vec<usize>,
    /// The stage that last put each vertex or blossom in `touched`.
    touched_in: Vec<u64>,
    /// The labelled vertices and blossoms of a single-tree stage (each once):
    /// the ones whose duals a step moves.
    tree: Vec<usize>,
    /// The stage that last put each vertex or blossom in `tree`.
    tree_in: Vec<u64>,
    /// A single-tree stage's candidate steps, each as the total step size
    /// of the stage at which it happens (see [`Self::single_tree_delta`]).
    events: std::collections::BinaryHeap<std::cmp::Reverse<(Weight, u8, usize, usize)>>,
    /// The total of the stage's steps so far.
    stepped: Weight,
    stage_no: u64,
    /// Vertices below this are matched or were roots of stuck trees
    /// (single-tree roots are taken in vertex order).
    next_root: usize,
    /// Single-tree stages: when a tree gets stuck, leave its root single and
    /// go on with the next one instead of stopping (see
    /// [`solve_sparse_in_two`]).
    skip_stuck: bool,
    /// Scratch space of [`Self::add_blossom`]: per blossom, the least-slack
    /// edge to it and that slack (all `NONE` between calls), and which
    /// entries are set.
    near_blossoms: Vec<(usize, Weight)>,
    near_used: Vec<usize>,
    /// Scratch space for a sub-blossom's leaves.
    leaf_scratch: Vec<usize>,
}

#[derive(Clone, Copy, Debug)]
struct Edge {
    u: usize,
    v: usize,
    weight: Weight,
}

/// An edge seen from one of its ends.
#[derive(Clone, Copy, Debug)]
struct Adjacent {
    /// The remote endpoint (`2k` or `2k + 1` for edge `k`).
    p: usize,
    /// The vertex at that endpoint.
    w: usize,
    weight: Weight,
}

/// The edges at each vertex as [`Matcher`] keeps them: the ones at `v` are
/// `adjacency[adj_start[v]..adj_start[v + 1]]`, in edge order.
fn adjacency(nv: usize, edges: impl Iterator<Item = Edge> + Clone) -> (Vec<usize>, Vec<Adjacent>) {
    let mut degree = vec![0usize; nv + 1];
    for e in edges.clone() {
        degree[e.u] += 1;
        degree[e.v] += 1;
    }
    let mut adj_start = vec![0usize; nv + 1];
    for v in 0..nv {
        adj_start[v + 1] = adj_start[v] + degree[v];
    }
    let mut fill = adj_start.clone();
    let blank = Adjacent {
        p: NONE,
        w: NONE,
        weight: 0,
    };
    let mut adjacency = vec![blank; adj_start[nv]];
    for (k, Edge { u: i, v: j, weight }) in edges.enumerate() {
        adjacency[fill[i]] = Adjacent {
            p: 2 * k + 1,
            w: j,
            weight,
        };
        fill[i] += 1;
        adjacency[fill[j]] = Adjacent {
            p: 2 * k,
            w: i,
            weight,
        };
        fill[j] += 1;
    }
    (adj_start, adjacency)
}

/// Which of the four dual-adjustment cases bounds the step.
enum Delta {
    /// No vertex dual may fall further: optimum.
    VertexDual,
    /// Edge between an S-vertex and a free vertex becomes tight.
    SFree(usize),
    /// Edge between two S-blossoms becomes tight.
    SS(usize),
    /// A T-blossom's dual reaches zero: expand it.
    Expand(usize),
}
