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

use std::cmp::Ordering;

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
    /// solution's matching and duals (see [`Matcher::add_edges`]) rather
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
/// [`Matcher::jump_start`]). When the graph has a perfect matching the result
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

impl Matcher {
    fn new(nv: usize, edges: &[(usize, usize, Weight)]) -> Self {
        let ne = edges.len();
        let max_weight = edges.iter().map(|e| e.2).max().unwrap_or(0).max(0);
        let (adj_start, adjacency) = adjacency(
            nv,
            edges.iter().map(|&(u, v, weight)| Edge { u, v, weight }),
        );
        let mut blossombase: Vec<usize> = (0..nv).collect();
        blossombase.extend(std::iter::repeat_n(NONE, nv));
        let mut dualvar = vec![max_weight; nv];
        dualvar.extend(std::iter::repeat_n(0, nv));
        Matcher {
            nv,
            edges: edges
                .iter()
                .map(|&(u, v, weight)| Edge { u, v, weight })
                .collect(),
            adj_start,
            adjacency,
            mate: vec![NONE; nv],
            label: vec![FREE; 2 * nv],
            labelend: vec![NONE; 2 * nv],
            inblossom: (0..nv).collect(),
            blossomparent: vec![NONE; 2 * nv],
            blossomchilds: vec![Vec::new(); 2 * nv],
            blossombase,
            blossomendps: vec![Vec::new(); 2 * nv],
            bestedge: vec![NONE; 2 * nv],
            blossombestedges: vec![None; 2 * nv],
            best_slack: vec![(NONE, 0, 0); 2 * nv],
            epoch: 0,
            unusedblossoms: (nv..2 * nv).rev().collect(),
            dualvar,
            allowedge: vec![0; ne.div_ceil(64)],
            queue: Vec::new(),
            single_tree: false,
            touched: Vec::new(),
            touched_in: vec![0; 2 * nv],
            tree: Vec::new(),
            tree_in: vec![0; 2 * nv],
            events: std::collections::BinaryHeap::new(),
            stepped: 0,
            stage_no: 1,
            next_root: 0,
            skip_stuck: false,
            near_blossoms: Vec::new(),
            near_used: Vec::new(),
            leaf_scratch: Vec::new(),
        }
    }

    /// A greedy matching of the edges that the starting duals (every vertex
    /// at the heaviest weight) make tight, in edge order. The algorithm would
    /// reach the same state itself, one single-edge augmentation per stage
    /// with no dual change; doing it up front saves those stages. The duals
    /// stay uniform, which keeps the integrality the dual steps rely on
    /// (every slack between two S-vertices even).
    fn warm_start(&mut self) {
        for k in 0..self.edges.len() {
            let Edge { u, v, weight } = self.edges[k];
            if self.mate[u] == NONE
                && self.mate[v] == NONE
                && self.dualvar[u] + self.dualvar[v] == 2 * weight
            {
                self.mate[u] = 2 * k + 1;
                self.mate[v] = 2 * k;
            }
        }
    }

    /// A feasible dual solution and a matching of tight edges to start a
    /// perfect-matching solve from, in three greedy passes:
    ///
    /// 1. every vertex's (doubled) dual is its heaviest incident weight,
    ///    rounded up to the parity of the cold start's dual, which is
    ///    feasible on every edge;
    /// 2. in vertex order, each single vertex lowers its dual by its least
    ///    slack (so one of its edges becomes tight) and is matched along its
    ///    first tight edge to a single vertex, if any;
    /// 3. each vertex still single tries an augmenting path of three tight
    ///    edges (it, a matched neighbour, that neighbour's mate, a single
    ///    vertex).
    ///
    /// Only single vertices' duals move and matched edges are tight, so the
    /// state is one the algorithm accepts: duals feasible, matched edges
    /// tight, no blossoms. Every dual keeps the parity of the cold start's
    /// (a slack between two vertices is then even, and halving it in pass 2
    /// is not needed), which is the integrality the dual steps rely on:
    /// vertices labelled in a stage share the parity of the single vertices,
    /// so the slack between two S-vertices stays even. Without uniform duals
    /// the optimum is certified for *perfect* matchings only, which is why
    /// [`solve_sparse`] falls back to a cold start when the result is not
    /// perfect.
    fn jump_start(&mut self) {
        let nv = self.nv;
        let parity = self.dualvar.first().map_or(0, |d| d & 1);
        for v in 0..nv {
            let edges = &self.adjacency[self.adj_start[v]..self.adj_start[v + 1]];
            if let Some(heaviest) = edges.iter().map(|a| a.weight).max() {
                self.dualvar[v] = heaviest + ((heaviest & 1) ^ parity);
            }
        }
        for v in 0..nv {
            if self.mate[v] != NONE {
                continue;
            }
            let (lo, hi) = (self.adj_start[v], self.adj_start[v + 1]);
            let Some(least) = self.adjacency[lo..hi]
                .iter()
                .map(|a| self.dualvar[v] + self.dualvar[a.w] - 2 * a.weight)
                .min()
            else {
                continue;
            };
            debug_assert!(least >= 0 && least % 2 == 0);
            self.dualvar[v] -= least;
            let dual_v = self.dualvar[v];
            if let Some(a) = self.adjacency[lo..hi]
                .iter()
                .find(|a| self.mate[a.w] == NONE && dual_v + self.dualvar[a.w] == 2 * a.weight)
            {
                let (p, w) = (a.p, a.w);
                self.mate[v] = p;
                self.mate[w] = p ^ 1;
            }
        }
        for v in 0..nv {
            if self.mate[v] != NONE {
                continue;
            }
            let tight =
                |m: &Self, x: usize, a: &Adjacent| m.dualvar[x] + m.dualvar[a.w] == 2 * a.weight;
            'path: for i in self.adj_start[v]..self.adj_start[v + 1] {
                let a = self.adjacency[i];
                if !tight(self, v, &a) || self.mate[a.w] == NONE {
                    continue;
                }
                let u = a.w;
                let u2 = self.endpoint(self.mate[u]);
                for j in self.adj_start[u2]..self.adj_start[u2 + 1] {
                    let b = self.adjacency[j];
                    if b.w != v && self.mate[b.w] == NONE && tight(self, u2, &b) {
                        self.mate[v] = a.p;
                        self.mate[u] = a.p ^ 1;
                        self.mate[u2] = b.p;
                        self.mate[b.w] = b.p ^ 1;
                        break 'path;
                    }
                }
            }
        }
    }

    /// Adds `edges` (after the current ones, so that endpoint numbers keep
    /// their meaning) to a solved state, keeping its matching, blossoms and
    /// duals, and restores what a stage needs: duals feasible on every edge,
    /// matched edges and blossom edges tight, positive blossom duals only on
    /// full blossoms. A new edge with negative slack is made tight by raising
    /// the duals on one side (see [`Self::raise_to_fit`]); raising frees a
    /// matched pair, and single-tree stages then rematch the freed vertices.
    fn add_edges(&mut self, edges: &[(usize, usize, Weight)]) {
        debug_assert!(self.label.iter().all(|&l| l == FREE || l == UNUSED));
        let old = self.edges.len();
        self.edges
            .extend(edges.iter().map(|&(u, v, weight)| Edge { u, v, weight }));
        let (adj_start, adjacency) = adjacency(self.nv, self.edges.iter().copied());
        self.adj_start = adj_start;
        self.adjacency = adjacency;
        self.allowedge = vec![0; self.edges.len().div_ceil(64)];
        self.bestedge.fill(NONE);
        self.blossombestedges.fill(None);
        // How many violated new edges each vertex has: raising a vertex
        // with many fixes them all for one freed pair.
        let mut violated = vec![0u32; self.nv];
        for k in old..self.edges.len() {
            if self.edge_full_slack(k) < 0 {
                violated[self.edges[k].u] += 1;
                violated[self.edges[k].v] += 1;
            }
        }
        for k in old..self.edges.len() {
            self.raise_to_fit(k, &violated);
        }
        self.epoch += 1;
        self.next_root = 0;
    }

    /// Twice the slack of edge `k` counting every blossom holding both ends
    /// (the true reduced cost, also for an edge inside a blossom).
    fn edge_full_slack(&self, k: usize) -> Weight {
        let Edge { u, v, weight } = self.edges[k];
        let chain = |x: usize| {
            let mut out = Vec::new();
            let mut b = self.blossomparent[x];
            while b != NONE {
                out.push(b);
                b = self.blossomparent[b];
            }
            out.reverse();
            out
        };
        let (cu, cv) = (chain(u), chain(v));
        let mut s = self.dualvar[u] + self.dualvar[v] - 2 * weight;
        for (a, b) in cu.iter().zip(&cv) {
            if a != b {
                break;
            }
            s += 2 * self.dualvar[*a];
        }
        s
    }

    /// Makes edge `k` feasible (tight, if it was violated) without making any
    /// other edge infeasible. A top-level blossom (or vertex) `X` holding one
    /// end but not the other is *raised* by `d`: its vertices' duals go up by
    /// `d` and its own dual down by `d`, which leaves every edge inside it as
    /// it was and adds `d` to the slack of every edge leaving it, the
    /// violated one included, and the one matched edge leaving it (at its
    /// base), which is therefore unmatched. A blossom's dual stays
    /// non-negative: if it falls short, it is raised by its whole dual,
    /// expanded, and the one of its children holding the end raised next.
    /// When both ends are in one top-level blossom, that blossom is raised
    /// by its whole dual and expanded until they are not.
    fn raise_to_fit(&mut self, k: usize, violated: &[u32]) {
        let nv = self.nv;
        loop {
            let slack = self.edge_full_slack(k);
            if slack >= 0 {
                return;
            }
            let Edge { u, v, .. } = self.edges[k];
            let (bu, bv) = (self.inblossom[u], self.inblossom[v]);
            if bu == bv {
                let z = self.dualvar[bu];
                self.raise(bu, z);
                self.expand_blossom(bu, true);
                continue;
            }
            let need = -slack;
            // Raising costs a freed pair unless the side is single already,
            // and a blossom whose dual falls short costs an expansion; among
            // equals, the end with more violated new edges is raised (once
            // for all of them).
            let rank = |x: usize, end: usize| {
                (
                    self.mate[self.blossombase[x]] == NONE,
                    x < nv || self.dualvar[x] >= need,
                    violated[end],
                )
            };
            let x = if rank(bv, v) > rank(bu, u) { bv } else { bu };
            if x < nv || self.dualvar[x] >= need {
                self.raise(x, need);
                return;
            }
            let z = self.dualvar[x];
            self.raise(x, z);
            self.expand_blossom(x, true);
        }
    }

    /// Raises top-level blossom (or vertex) `x` by `d` (see
    /// [`Self::raise_to_fit`]) and, if `d > 0`, unmatches its base.
    fn raise(&mut self, x: usize, d: Weight) {
        if d <= 0 {
            return;
        }
        if x < self.nv {
            self.dualvar[x] += d;
        } else {
            for v in self.leaves(x) {
                self.dualvar[v] += d;
            }
            self.dualvar[x] -= d;
            debug_assert!(self.dualvar[x] >= 0);
        }
        let base = self.blossombase[x];
        let p = self.mate[base];
        if p != NONE {
            let other = self.endpoint(p);
            self.mate[base] = NONE;
            self.mate[other] = NONE;
        }
    }

    /// The vertex at endpoint `p`.
    fn endpoint(&self, p: usize) -> usize {
        let e = &self.edges[p / 2];
        if p & 1 == 0 { e.u } else { e.v }
    }

    /// Twice the slack of edge `k` (meaningless for edges inside a blossom).
    fn slack(&self, k: usize) -> Weight {
        let e = &self.edges[k];
        self.dualvar[e.u] + self.dualvar[e.v] - 2 * e.weight
    }

    fn allowed(&self, k: usize) -> bool {
        self.allowedge[k / 64] >> (k % 64) & 1 == 1
    }

    fn allow(&mut self, k: usize) {
        self.allowedge[k / 64] |= 1 << (k % 64);
    }

    /// Slack of `bestedge[x]` (which must be set), cached per dual epoch.
    fn best_slack(&mut self, x: usize) -> Weight {
        let k = self.bestedge[x];
        let (edge, epoch, slack) = self.best_slack[x];
        if edge == k && epoch == self.epoch {
            return slack;
        }
        let slack = self.slack(k);
        self.best_slack[x] = (k, self.epoch, slack);
        slack
    }

    /// The vertices inside blossom `b`, depth first.
    fn leaves(&self, b: usize) -> Vec<usize> {
        let mut out = Vec::new();
        self.collect_leaves(b, &mut out);
        out
    }

    fn collect_leaves(&self, b: usize, out: &mut Vec<usize>) {
        if b < self.nv {
            out.push(b);
            return;
        }
        // Depth first without recursion (blossoms can nest deeply in large
        // fields): one iterator per open level.
        let mut open = vec![self.blossomchilds[b].iter()];
        while let Some(level) = open.last_mut() {
            match level.next() {
                Some(&t) if t < self.nv => out.push(t),
                Some(&t) => open.push(self.blossomchilds[t].iter()),
                None => {
                    open.pop();
                }
            }
        }
    }

    /// Labels the top-level blossom containing `w` with `t`, reached through
    /// remote endpoint `p`; a T-label passes an S-label on to the mate.
    /// Records that vertex or blossom `x` was labelled this stage.
    fn touch(&mut self, x: usize) {
        self.touch_free(x);
        if self.tree_in[x] != self.stage_no {
            self.tree_in[x] = self.stage_no;
            self.tree.push(x);
        }
    }

    /// Records that free vertex `x` got a least-slack edge this stage.
    fn touch_free(&mut self, x: usize) {
        if self.touched_in[x] != self.stage_no {
            self.touched_in[x] = self.stage_no;
            self.touched.push(x);
        }
    }

    /// Single-tree stages: remembers a step that the current duals make
    /// `size` away (see [`Self::single_tree_delta`]).
    fn event(&mut self, size: Weight, kind: u8, x: usize, k: usize) {
        if self.single_tree {
            let at = self.stepped + size;
            self.events.push(std::cmp::Reverse((at, kind, x, k)));
        }
    }

    fn assign_label(&mut self, w: usize, t: i8, p: usize) {
        let b = self.inblossom[w];
        debug_assert!(self.label[w] == FREE && self.label[b] == FREE);
        self.touch(w);
        // The leaves are listed once: a single tree records them (their
        // duals move with the blossom's label), and S-leaves are scanned.
        let leaves = if b >= self.nv && (t == S || self.single_tree) {
            self.leaves(b)
        } else {
            vec![b]
        };
        if b >= self.nv {
            self.touch(b);
            if self.single_tree {
                for &v in &leaves {
                    self.touch(v);
                }
            }
            if t == T {
                self.event(self.dualvar[b], EXPAND, b, NONE);
            }
        }
        self.label[w] = t;
        self.label[b] = t;
        self.labelend[w] = p;
        self.labelend[b] = p;
        self.bestedge[w] = NONE;
        self.bestedge[b] = NONE;
        if t == S {
            self.queue.extend(leaves);
        } else {
            let base = self.blossombase[b];
            let mp = self.mate[base];
            debug_assert!(mp != NONE);
            self.assign_label(self.endpoint(mp), S, mp ^ 1);
        }
    }

    /// Traces back from S-vertices `v` and `w` (joined by a tight edge).
    /// Returns the base of the blossom they close, or `None` when the two
    /// paths end at different single vertices (an augmenting path).
    fn scan_blossom(&mut self, mut v: usize, mut w: usize) -> Option<usize> {
        let mut path = Vec::new();
        let mut base = None;
        while v != NONE || w != NONE {
            let mut b = self.inblossom[v];
            if self.label[b] & CRUMB != 0 {
                base = Some(self.blossombase[b]);
                break;
            }
            debug_assert_eq!(self.label[b], S);
            path.push(b);
            self.label[b] = S | CRUMB;
            if self.labelend[b] == NONE {
                // Reached a single vertex: this path is done.
                v = NONE;
            } else {
                v = self.endpoint(self.labelend[b]);
                b = self.inblossom[v];
                debug_assert_eq!(self.label[b], T);
                v = self.endpoint(self.labelend[b]);
            }
            if w != NONE {
                std::mem::swap(&mut v, &mut w);
            }
        }
        for b in path {
            self.label[b] = S;
        }
        base
    }

    /// Shrinks the odd cycle closed by edge `k` (between two S-vertices)
    /// into a new S-blossom with the given base.
    fn add_blossom(&mut self, base: usize, k: usize) {
        let (mut v, mut w) = (self.edges[k].u, self.edges[k].v);
        let bb = self.inblossom[base];
        let mut bv = self.inblossom[v];
        let mut bw = self.inblossom[w];
        let Some(b) = self.unusedblossoms.pop() else {
            // Cannot happen: there are never more than nv/2 blossoms.
            unreachable!("blossom numbers exhausted");
        };
        self.blossombase[b] = base;
        self.blossomparent[b] = NONE;
        self.blossomparent[bb] = b;
        let mut path = Vec::new();
        let mut endps = Vec::new();
        // Walk from v's side back to the base.
        while bv != bb {
            self.blossomparent[bv] = b;
            path.push(bv);
            endps.push(self.labelend[bv]);
            v = self.endpoint(self.labelend[bv]);
            bv = self.inblossom[v];
        }
        path.push(bb);
        path.reverse();
        endps.reverse();
        endps.push(2 * k);
        // Then from w's side.
        while bw != bb {
            self.blossomparent[bw] = b;
            path.push(bw);
            endps.push(self.labelend[bw] ^ 1);
            w = self.endpoint(self.labelend[bw]);
            bw = self.inblossom[w];
        }
        debug_assert_eq!(self.label[bb], S);
        self.label[b] = S;
        self.touch(b);
        self.labelend[b] = self.labelend[bb];
        self.dualvar[b] = 0;
        for v in self.leaves_of_children(&path) {
            if self.label[self.inblossom[v]] == T {
                // A T-vertex inside a new S-blossom becomes an S-vertex.
                self.queue.push(v);
            }
            self.inblossom[v] = b;
        }
        // Least-slack edges from the new blossom to other S-blossoms, kept
        // in scratch space indexed by blossom: a fresh `2·nv` array per new
        // blossom, scanned whole, was most of the cost of small blossoms in
        // large graphs.
        let mut near = std::mem::take(&mut self.near_blossoms);
        let mut used = std::mem::take(&mut self.near_used);
        near.resize(2 * self.nv, (NONE, 0));
        let mut note = |bj: usize, kk: usize, slack: Weight, used: &mut Vec<usize>| {
            let entry = &mut near[bj];
            if entry.0 == NONE {
                used.push(bj);
                *entry = (kk, slack);
            } else if slack < entry.1 {
                *entry = (kk, slack);
            }
        };
        for &sub in &path {
            match self.blossombestedges[sub].take() {
                Some(list) => {
                    for kk in list {
                        // The far end of the edge, seen from the new blossom.
                        let Edge { u, v, .. } = self.edges[kk];
                        let j = if self.inblossom[v] == b { u } else { v };
                        let bj = self.inblossom[j];
                        if bj != b && self.label[bj] == S {
                            note(bj, kk, self.slack(kk), &mut used);
                        }
                    }
                }
                None => {
                    // Every edge of every leaf, read from the adjacency
                    // (far end and weight at hand).
                    let mut leaves = std::mem::take(&mut self.leaf_scratch);
                    leaves.clear();
                    self.collect_leaves(sub, &mut leaves);
                    for &leaf in &leaves {
                        let dual = self.dualvar[leaf];
                        for a in &self.adjacency[self.adj_start[leaf]..self.adj_start[leaf + 1]] {
                            let bj = self.inblossom[a.w];
                            if bj != b && self.label[bj] == S {
                                let slack = dual + self.dualvar[a.w] - 2 * a.weight;
                                note(bj, a.p / 2, slack, &mut used);
                            }
                        }
                    }
                    self.leaf_scratch = leaves;
                }
            }
            self.bestedge[sub] = NONE;
        }
        // In blossom order, as a scan of the whole array gave them (the
        // order decides ties, so results stay as they were).
        used.sort_unstable();
        let list: Vec<usize> = used
            .iter()
            .map(|&bj| std::mem::replace(&mut near[bj], (NONE, 0)).0)
            .collect();
        used.clear();
        self.near_blossoms = near;
        self.near_used = used;
        let mut best = NONE;
        for &kk in &list {
            if best == NONE || self.slack(kk) < self.slack(best) {
                best = kk;
            }
        }
        self.bestedge[b] = best;
        if best != NONE {
            self.event(self.slack(best) / 2, S_S, b, best);
        }
        self.blossombestedges[b] = Some(list);
        self.blossomchilds[b] = path;
        self.blossomendps[b] = endps;
    }

    fn leaves_of_children(&self, children: &[usize]) -> Vec<usize> {
        let mut out = Vec::new();
        for &c in children {
            self.collect_leaves(c, &mut out);
        }
        out
    }

    /// Dissolves top-level blossom `b` into its sub-blossoms. Mid-stage (a
    /// T-blossom whose dual reached zero) the sub-blossoms are relabelled so
    /// that the alternating tree stays valid; at the end of a stage, zero-dual
    /// sub-blossoms are expanded recursively.
    fn expand_blossom(&mut self, b: usize, endstage: bool) {
        let children = self.blossomchilds[b].clone();
        for &s in &children {
            self.blossomparent[s] = NONE;
            if s < self.nv {
                self.inblossom[s] = s;
            } else if endstage && self.dualvar[s] == 0 {
                self.expand_blossom(s, endstage);
            } else {
                for v in self.leaves(s) {
                    self.inblossom[v] = s;
                }
            }
        }
        if !endstage && self.label[b] == T {
            let leaves = if self.single_tree {
                self.leaves(b)
            } else {
                Vec::new()
            };
            self.relabel_expanded_t_blossom(b);
            // Vertices of the blossom left free keep the least-slack edges
            // they got inside it; their candidates were dropped while the
            // blossom was T, so they come back now.
            for v in leaves {
                let k = self.bestedge[v];
                if k != NONE && self.label[self.inblossom[v]] == FREE {
                    self.event(self.slack(k), S_FREE, v, k);
                }
            }
        }
        self.label[b] = UNUSED;
        self.labelend[b] = NONE;
        self.blossomchilds[b] = Vec::new();
        self.blossomendps[b] = Vec::new();
        self.blossombase[b] = NONE;
        self.blossombestedges[b] = None;
        self.bestedge[b] = NONE;
        self.unusedblossoms.push(b);
    }

    /// The relabelling half of [`Self::expand_blossom`]: the path from the
    /// entry child to the base (the even-length way round) becomes an
    /// alternating T/S chain; the other children are free unless some S-vertex
    /// outside already reaches them.
    fn relabel_expanded_t_blossom(&mut self, b: usize) {
        let len = self.blossomchilds[b].len();
        debug_assert!(self.labelend[b] != NONE);
        let entrychild = self.inblossom[self.endpoint(self.labelend[b] ^ 1)];
        let Some(start) = self.blossomchilds[b].iter().position(|&c| c == entrychild) else {
            unreachable!("entry child belongs to the blossom");
        };
        let mut j = start as isize;
        let (jstep, endptrick): (isize, usize) = if j & 1 == 1 {
            j -= len as isize;
            (1, 0)
        } else {
            (-1, 1)
        };
        let mut p = self.labelend[b];
        while j != 0 {
            let e = self.blossomendps[b][wrap(j - endptrick as isize, len)];
            let here = self.endpoint(p ^ 1);
            self.label[here] = FREE;
            let there = self.endpoint(e ^ endptrick ^ 1);
            self.label[there] = FREE;
            self.assign_label(here, T, p);
            self.allow(e / 2);
            j += jstep;
            p = self.blossomendps[b][wrap(j - endptrick as isize, len)] ^ endptrick;
            self.allow(p / 2);
            j += jstep;
        }
        // The base child becomes T without passing S on to its mate (the
        // mate already has it).
        let bv = self.blossomchilds[b][wrap(j, len)];
        let here = self.endpoint(p ^ 1);
        self.label[here] = T;
        self.label[bv] = T;
        self.touch(here);
        self.touch(bv);
        if bv >= self.nv {
            self.event(self.dualvar[bv], EXPAND, bv, NONE);
        }
        self.labelend[here] = p;
        self.labelend[bv] = p;
        self.bestedge[bv] = NONE;
        j += jstep;
        while self.blossomchilds[b][wrap(j, len)] != entrychild {
            let bv = self.blossomchilds[b][wrap(j, len)];
            if self.label[bv] == S {
                // Already reached (as S) through one of its own neighbours.
                j += jstep;
                continue;
            }
            let reached = self.leaves(bv).into_iter().find(|&v| self.label[v] != FREE);
            if let Some(v) = reached {
                debug_assert_eq!(self.label[v], T);
                debug_assert_eq!(self.inblossom[v], bv);
                self.label[v] = FREE;
                let mate_vertex = self.endpoint(self.mate[self.blossombase[bv]]);
                self.label[mate_vertex] = FREE;
                self.assign_label(v, T, self.labelend[v]);
            }
            j += jstep;
        }
    }

    /// Flips matched and unmatched edges along the even alternating path
    /// inside blossom `b` from vertex `v` to the base; `v` becomes the base.
    fn augment_blossom(&mut self, b: usize, v: usize) {
        let mut t = v;
        while self.blossomparent[t] != b {
            t = self.blossomparent[t];
        }
        if t >= self.nv {
            self.augment_blossom(t, v);
        }
        let len = self.blossomchilds[b].len();
        let Some(i) = self.blossomchilds[b].iter().position(|&c| c == t) else {
            unreachable!("child belongs to the blossom");
        };
        let mut j = i as isize;
        let (jstep, endptrick): (isize, usize) = if i & 1 == 1 {
            j -= len as isize;
            (1, 0)
        } else {
            (-1, 1)
        };
        while j != 0 {
            j += jstep;
            let t1 = self.blossomchilds[b][wrap(j, len)];
            let p = self.blossomendps[b][wrap(j - endptrick as isize, len)] ^ endptrick;
            if t1 >= self.nv {
                let ep = self.endpoint(p);
                self.augment_blossom(t1, ep);
            }
            j += jstep;
            let t2 = self.blossomchilds[b][wrap(j, len)];
            if t2 >= self.nv {
                let ep = self.endpoint(p ^ 1);
                self.augment_blossom(t2, ep);
            }
            let (a, c) = (self.endpoint(p), self.endpoint(p ^ 1));
            self.mate[a] = p ^ 1;
            self.mate[c] = p;
        }
        self.blossomchilds[b].rotate_left(i);
        self.blossomendps[b].rotate_left(i);
        self.blossombase[b] = self.blossombase[self.blossomchilds[b][0]];
        debug_assert_eq!(self.blossombase[b], v);
    }

    /// Augments along the path through edge `k` (joining two S-vertices in
    /// different trees) back to both roots.
    fn augment_matching(&mut self, k: usize) {
        let (v, w) = (self.edges[k].u, self.edges[k].v);
        for (mut s, mut p) in [(v, 2 * k + 1), (w, 2 * k)] {
            loop {
                let bs = self.inblossom[s];
                debug_assert_eq!(self.label[bs], S);
                if bs >= self.nv {
                    self.augment_blossom(bs, s);
                }
                self.mate[s] = p;
                if self.labelend[bs] == NONE {
                    break; // reached the tree's root
                }
                let t = self.endpoint(self.labelend[bs]);
                let bt = self.inblossom[t];
                debug_assert_eq!(self.label[bt], T);
                s = self.endpoint(self.labelend[bt]);
                let j = self.endpoint(self.labelend[bt] ^ 1);
                debug_assert_eq!(self.blossombase[bt], t);
                if bt >= self.nv {
                    self.augment_blossom(bt, j);
                }
                self.mate[j] = self.labelend[bt];
                p = self.labelend[bt] ^ 1;
            }
        }
    }

    /// Solves for a perfect matching growing one alternating tree at a time
    /// (Edmonds' original scheme): each stage roots a tree at the first
    /// single vertex and grows it, moving only its own duals, until it
    /// reaches another single vertex. From a good start (see
    /// [`Self::jump_start`]) the trees stay small, and the stage's work is
    /// kept to what it touches. Single vertices outside the tree keep their
    /// duals, so the duals certify the result only when it is perfect; a
    /// tree that cannot grow (no perfect matching) ends the solve early.
    fn run_single_tree(&mut self) {
        self.single_tree = true;
        self.run(true);
    }

    fn run(&mut self, max_cardinality: bool) {
        // A bound only: each stage augments, or (skipping stuck trees)
        // passes a root for good.
        for _ in 0..2 * self.nv {
            if !self.stage(max_cardinality) {
                break;
            }
            if self.single_tree {
                let blossoms: Vec<usize> = self
                    .touched
                    .iter()
                    .copied()
                    .filter(|&b| b >= self.nv)
                    .collect();
                for b in blossoms {
                    if self.blossomparent[b] == NONE
                        && self.blossombase[b] != NONE
                        && self.label[b] == S
                        && self.dualvar[b] == 0
                    {
                        self.expand_blossom(b, true);
                    }
                }
                continue;
            }
            // Blossoms whose dual fell to zero are no longer needed.
            for b in self.nv..2 * self.nv {
                if self.blossomparent[b] == NONE
                    && self.blossombase[b] != NONE
                    && self.label[b] == S
                    && self.dualvar[b] == 0
                {
                    self.expand_blossom(b, true);
                }
            }
        }
    }

    /// One stage: grow the forest and adjust duals until an augmenting path
    /// is found (returns true) or the optimum is reached (false).
    fn stage(&mut self, max_cardinality: bool) -> bool {
        let nv = self.nv;
        if self.single_tree {
            for x in std::mem::take(&mut self.touched) {
                self.label[x] = FREE;
                self.bestedge[x] = NONE;
                if x >= nv {
                    self.blossombestedges[x] = None;
                }
            }
            self.tree.clear();
            self.events.clear();
            self.stepped = 0;
            self.stage_no += 1;
        } else {
            self.label.fill(FREE);
            self.bestedge.fill(NONE);
            for b in nv..2 * nv {
                self.blossombestedges[b] = None;
            }
        }
        self.allowedge.fill(0);
        self.queue.clear();
        if self.single_tree {
            while self.next_root < nv && self.mate[self.next_root] != NONE {
                self.next_root += 1;
            }
            if self.next_root == nv {
                return false;
            }
            self.assign_label(self.next_root, S, NONE);
        } else {
            for v in 0..nv {
                if self.mate[v] == NONE && self.label[self.inblossom[v]] == FREE {
                    self.assign_label(v, S, NONE);
                }
            }
        }
        loop {
            if self.grow_forest() {
                return true;
            }
            match self.compute_delta(max_cardinality) {
                Delta::VertexDual if self.single_tree && self.skip_stuck => {
                    // This root cannot be matched on these edges; leave it
                    // for a later solve with more of them.
                    self.next_root += 1;
                    return true;
                }
                Delta::VertexDual => return false,
                Delta::SFree(k) => {
                    self.allow(k);
                    let (mut i, j) = (self.edges[k].u, self.edges[k].v);
                    if self.label[self.inblossom[i]] == FREE {
                        i = j;
                    }
                    debug_assert_eq!(self.label[self.inblossom[i]], S);
                    self.queue.push(i);
                }
                Delta::SS(k) => {
                    self.allow(k);
                    let i = self.edges[k].u;
                    debug_assert_eq!(self.label[self.inblossom[i]], S);
                    self.queue.push(i);
                }
                Delta::Expand(b) => self.expand_blossom(b, false),
            }
        }
    }

    /// Scans queued S-vertices along tight edges. Returns true when it
    /// augmented the matching.
    fn grow_forest(&mut self) -> bool {
        while let Some(v) = self.queue.pop() {
            debug_assert_eq!(self.label[self.inblossom[v]], S);
            let dual_v = self.dualvar[v];
            for idx in self.adj_start[v]..self.adj_start[v + 1] {
                let Adjacent { p, w, weight } = self.adjacency[idx];
                let k = p / 2;
                if self.inblossom[v] == self.inblossom[w] {
                    continue; // inside one blossom
                }
                let mut kslack = 0;
                if !self.allowed(k) {
                    kslack = dual_v + self.dualvar[w] - 2 * weight;
                    if kslack <= 0 {
                        self.allow(k);
                    }
                }
                let bw = self.inblossom[w];
                if self.allowed(k) {
                    if self.label[bw] == FREE && self.mate[self.blossombase[bw]] == NONE {
                        // Only with a single tree: a single vertex (or a
                        // blossom based at one) outside the tree. It becomes
                        // a root, and the edge an augmenting path.
                        debug_assert!(self.single_tree);
                        self.assign_label(w, S, NONE);
                        self.augment_matching(k);
                        return true;
                    } else if self.label[bw] == FREE {
                        // Free vertex: it becomes T, its mate S.
                        self.assign_label(w, T, p ^ 1);
                    } else if self.label[bw] == S {
                        match self.scan_blossom(v, w) {
                            Some(base) => self.add_blossom(base, k),
                            None => {
                                self.augment_matching(k);
                                return true;
                            }
                        }
                    } else if self.label[w] == FREE {
                        // w sits in a T-blossom and is now reachable from
                        // outside it; remember how, for a later expansion.
                        debug_assert_eq!(self.label[bw], T);
                        self.label[w] = T;
                        self.touch(w);
                        self.labelend[w] = p ^ 1;
                    }
                } else if self.label[bw] == S {
                    let b = self.inblossom[v];
                    if self.bestedge[b] == NONE || kslack < self.best_slack(b) {
                        self.event(kslack / 2, S_S, b, k);
                        self.bestedge[b] = k;
                        self.best_slack[b] = (k, self.epoch, kslack);
                    }
                } else if self.label[w] == FREE
                    && (self.bestedge[w] == NONE || kslack < self.best_slack(w))
                {
                    self.touch_free(w);
                    self.bestedge[w] = k;
                    self.event(kslack, S_FREE, w, k);
                    self.best_slack[w] = (k, self.epoch, kslack);
                }
            }
        }
        false
    }

    /// Picks the dual step, applies it, and says what it unlocked.
    fn compute_delta(&mut self, max_cardinality: bool) -> Delta {
        let nv = self.nv;
        let mut best: Option<(Weight, Delta)> = None;
        // Strictly smaller only: among equal steps the first case found wins.
        fn consider(d: Weight, what: Delta, best: &mut Option<(Weight, Delta)>) {
            if best
                .as_ref()
                .is_none_or(|(cur, _)| d.cmp(cur) == Ordering::Less)
            {
                *best = Some((d, what));
            }
        }
        if !max_cardinality {
            let d = self.dualvar[..nv].iter().copied().min().unwrap_or(0);
            consider(d, Delta::VertexDual, &mut best);
        }
        if self.single_tree {
            return self.single_tree_delta();
        }
        for v in 0..nv {
            if self.label[self.inblossom[v]] == FREE && self.bestedge[v] != NONE {
                let k = self.bestedge[v];
                consider(self.slack(k), Delta::SFree(k), &mut best);
            }
        }
        for b in 0..2 * nv {
            if self.blossomparent[b] == NONE && self.label[b] == S && self.bestedge[b] != NONE {
                let k = self.bestedge[b];
                let s = self.slack(k);
                debug_assert_eq!(s % 2, 0, "S-S slack is even with integer weights");
                consider(s / 2, Delta::SS(k), &mut best);
            }
        }
        for b in nv..2 * nv {
            if self.blossombase[b] != NONE && self.blossomparent[b] == NONE && self.label[b] == T {
                consider(self.dualvar[b], Delta::Expand(b), &mut best);
            }
        }
        let (delta, what) = match best {
            Some(found) => found,
            None => {
                // Max-cardinality optimum: one last step keeps the duals
                // a valid certificate.
                let d = self.dualvar[..nv].iter().copied().min().unwrap_or(0);
                (d.max(0), Delta::VertexDual)
            }
        };
        for v in 0..nv {
            match self.label[self.inblossom[v]] {
                S => self.dualvar[v] -= delta,
                T => self.dualvar[v] += delta,
                _ => {}
            }
        }
        for b in nv..2 * nv {
            if self.blossombase[b] != NONE && self.blossomparent[b] == NONE {
                match self.label[b] {
                    S => self.dualvar[b] += delta,
                    T => self.dualvar[b] -= delta,
                    _ => {}
                }
            }
        }
        self.epoch += 1;
        what
    }

    /// [`Self::compute_delta`] for a single tree: the same four cases, but
    /// looking only at what the stage touched (the tree, its blossoms and
    /// the free vertices next to it). With no step left the tree is stuck:
    /// there is no perfect matching, and the duals are left as they are.
    fn single_tree_delta(&mut self) -> Delta {
        let nv = self.nv;
        // Within a stage every S-free slack falls by the step, every
        // half S-S slack and every T-blossom dual too, so each candidate is
        // kept as the stage's total step at which it happens. A candidate
        // is current if what it names still holds and its value is what the
        // duals now give; every current one was pushed when it arose.
        let (at, what) = loop {
            let Some(&std::cmp::Reverse((at, kind, x, k))) = self.events.peek() else {
                return Delta::VertexDual;
            };
            self.events.pop();
            let left = at - self.stepped;
            // What it names still holds, and how far away it now is. A
            // free vertex inside a T-blossom (its least-slack edge kept for
            // when the blossom is expanded) saw its slack stand still, so
            // its candidate can come up early: it is then put back at its
            // true distance. None comes up late: no slack falls faster.
            let now = match kind {
                S_FREE => (self.label[self.inblossom[x]] == FREE && self.bestedge[x] == k)
                    .then(|| self.slack(k)),
                S_S => (self.blossomparent[x] == NONE
                    && (x < nv || self.blossombase[x] != NONE)
                    && self.label[x] == S
                    && self.bestedge[x] == k
                    && self.label[self.inblossom[self.edges[k].u]] == S
                    && self.label[self.inblossom[self.edges[k].v]] == S
                    && self.inblossom[self.edges[k].u] != self.inblossom[self.edges[k].v])
                    .then(|| self.slack(k) / 2),
                _ => (self.blossombase[x] != NONE
                    && self.blossomparent[x] == NONE
                    && self.label[x] == T)
                    .then(|| self.dualvar[x]),
            };
            let Some(now) = now else { continue };
            debug_assert!(now >= left, "a step candidate came up late");
            if now != left {
                self.events
                    .push(std::cmp::Reverse((self.stepped + now, kind, x, k)));
                continue;
            }
            let what = match kind {
                S_FREE => Delta::SFree(k),
                S_S => Delta::SS(k),
                _ => Delta::Expand(x),
            };
            // Put it back: a later look must still see it if the step does
            // not use it up.
            self.events.push(std::cmp::Reverse((at, kind, x, k)));
            break (at, what);
        };
        let delta = at - self.stepped;
        debug_assert!(delta >= 0);
        for i in 0..self.tree.len() {
            let x = self.tree[i];
            if x < nv {
                match self.label[self.inblossom[x]] {
                    S => self.dualvar[x] -= delta,
                    T => self.dualvar[x] += delta,
                    _ => {}
                }
            } else if self.blossombase[x] != NONE && self.blossomparent[x] == NONE {
                match self.label[x] {
                    S => self.dualvar[x] += delta,
                    T => self.dualvar[x] -= delta,
                    _ => {}
                }
            }
        }
        self.stepped = at;
        self.epoch += 1;
        what
    }

    /// For each vertex inside a non-trivial blossom, its blossoms from the
    /// top level down (empty for vertices at top level).
    fn blossom_chains(&self) -> Vec<Vec<usize>> {
        (0..self.nv)
            .map(|v| {
                let mut chain = Vec::new();
                let mut b = self.blossomparent[v];
                while b != NONE {
                    chain.push(b);
                    b = self.blossomparent[b];
                }
                chain.reverse();
                chain
            })
            .collect()
    }

    /// Twice the slack of a (possibly absent) edge `i`–`j` of weight `w`
    /// under the current duals, counting every blossom containing both ends.
    fn full_slack(&self, chains: &[Vec<usize>], i: usize, j: usize, w: Weight) -> Weight {
        let mut s = self.dualvar[i] + self.dualvar[j] - 2 * w;
        for (a, b) in chains[i].iter().zip(&chains[j]) {
            if a != b {
                break;
            }
            s += 2 * self.dualvar[*a];
        }
        s
    }

    fn mates(&self) -> Vec<Option<usize>> {
        self.mate
            .iter()
            .map(|&p| (p != NONE).then(|| self.endpoint(p)))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(mate: &[Option<usize>]) -> Vec<(usize, usize)> {
        mate.iter()
            .enumerate()
            .filter_map(|(v, m)| m.filter(|&u| v < u).map(|u| (v, u)))
            .collect()
    }

    /// Exhaustive maximum over all matchings (all, or maximum-cardinality).
    fn brute(nv: usize, edges: &[(usize, usize, Weight)], maxcard: bool) -> (usize, Weight) {
        fn go(
            v: usize,
            used: &mut [bool],
            edges: &[(usize, usize, Weight)],
            card: usize,
            w: Weight,
            best: &mut (usize, Weight),
            maxcard: bool,
        ) {
            let nv = used.len();
            if v == nv {
                let better = if maxcard {
                    (card, w) > *best
                } else {
                    w > best.1
                };
                if better {
                    *best = (card, w);
                }
                return;
            }
            if used[v] {
                return go(v + 1, used, edges, card, w, best, maxcard);
            }
            go(v + 1, used, edges, card, w, best, maxcard);
            for &(a, b, wt) in edges {
                let u = if a == v {
                    b
                } else if b == v {
                    a
                } else {
                    continue;
                };
                if u > v && !used[u] {
                    used[v] = true;
                    used[u] = true;
                    go(v + 1, used, edges, card + 1, w + wt, best, maxcard);
                    used[v] = false;
                    used[u] = false;
                }
            }
        }
        let mut best = (0, Weight::MIN);
        go(0, &mut vec![false; nv], edges, 0, 0, &mut best, maxcard);
        best
    }

    fn check(nv: usize, edges: &[(usize, usize, Weight)], maxcard: bool) {
        let mate = max_weight_matching(nv, edges, maxcard).expect("valid graph");
        for (v, m) in mate.iter().enumerate() {
            if let Some(u) = *m {
                assert_eq!(mate[u], Some(v), "mate is symmetric");
            }
        }
        let got = pairs(&mate);
        let weight: Weight = got
            .iter()
            .map(|&(a, b)| {
                edges
                    .iter()
                    .find(|e| (e.0 == a && e.1 == b) || (e.0 == b && e.1 == a))
                    .expect("matched pairs are edges")
                    .2
            })
            .sum();
        let (card, best) = brute(nv, edges, maxcard);
        if maxcard {
            assert_eq!((got.len(), weight), (card, best), "{edges:?}");
        } else {
            assert_eq!(weight, best.max(0), "{edges:?}");
        }
    }

    #[test]
    fn small_fixed_graphs() {
        check(0, &[], false);
        check(2, &[(0, 1, 1)], false);
        check(3, &[(0, 1, 10), (1, 2, 11)], false);
        check(4, &[(0, 1, 5), (1, 2, 11), (2, 3, 5)], false);
        check(4, &[(0, 1, 5), (1, 2, 11), (2, 3, 5)], true);
        // Negative weights.
        let neg = [(0, 1, 2), (0, 2, -2), (1, 2, 1), (1, 3, -1), (2, 3, -6)];
        check(4, &neg, false);
        check(4, &neg, true);
        // A triangle with a tail forces a blossom.
        check(4, &[(0, 1, 8), (0, 2, 9), (1, 2, 10), (2, 3, 7)], false);
    }

    #[test]
    fn rejects_bad_input() {
        assert!(matches!(
            max_weight_matching(2, &[(0, 0, 1)], false),
            Err(MatchingError::SelfLoop { .. })
        ));
        assert!(matches!(
            max_weight_matching(2, &[(0, 2, 1)], false),
            Err(MatchingError::VertexOutOfRange { .. })
        ));
        assert!(matches!(
            max_weight_matching(2, &[(0, 1, 1), (1, 0, 2)], false),
            Err(MatchingError::ParallelEdge { .. })
        ));
    }

    /// Pricing from poor candidate sets reaches the same optimum as the plain
    /// algorithm on the full graph (or agrees that no perfect matching
    /// exists), on graphs too large for brute force.
    /// Random graphs, sparse and dense, small and narrow-weighted so that
    /// blossoms, nested blossoms and ties all occur; compared with brute force.
    #[test]
    fn random_graphs_match_brute_force() {
        let mut state = 0x1234_5678_9abc_def0u64;
        let mut next = move |bound: u64| {
            state = crate::schedule::splitmix64(state);
            state % bound
        };
        for round in 0..3000 {
            let nv = 1 + next(10) as usize;
            let density = 1 + next(10);
            let span = [3, 10, 1000][round % 3];
            let mut edges = Vec::new();
            for a in 0..nv {
                for b in a + 1..nv {
                    if next(10) < density {
                        let w = next(span) as Weight - (span as Weight) / 4;
                        if next(2) == 0 {
                            edges.push((a, b, w));
                        } else {
                            edges.push((b, a, w));
                        }
                    }
                }
            }
            check(nv, &edges, round % 2 == 0);
        }
    }

    /// Edges among `nv` vertices, each present with a drawn density, with
    /// weights from a span that changes with `round`.
    fn random_edges(
        next: &mut impl FnMut(u64) -> u64,
        nv: usize,
        round: usize,
    ) -> Vec<(usize, usize, Weight)> {
        let density = 1 + next(10);
        let span = [3, 10, 1000, 1 << 40][round % 4];
        let mut edges = Vec::new();
        for a in 0..nv {
            for b in a + 1..nv {
                if next(10) < density {
                    let w = next(span) as Weight - (span as Weight) / 4;
                    edges.push((a, b, w));
                }
            }
        }
        edges
    }

    /// The jump-started sparse solve finds a matching as heavy as the cold
    /// complete solve among maximum-cardinality matchings (perfect ones
    /// where they exist, and then with duals that leave no negative slack).
    /// A matching's size and weight over `edges`.
    fn matched_weight(edges: &[(usize, usize, Weight)], mate: &[Option<usize>]) -> (usize, Weight) {
        let pairs = pairs(mate);
        let w = pairs
            .iter()
            .map(|&(a, b)| {
                edges
                    .iter()
                    .find(|e| (e.0.min(e.1), e.0.max(e.1)) == (a, b))
                    .expect("matched pairs are edges")
                    .2
            })
            .sum();
        (pairs.len(), w)
    }

    #[test]
    fn jump_started_solve_matches_cold_solve() {
        let mut state = 0x0bad_5eed_u64;
        let mut next = move |bound: u64| {
            state = crate::schedule::splitmix64(state);
            state % bound
        };
        for round in 0..3000 {
            let nv = 2 + next(12) as usize;
            let edges = random_edges(&mut next, nv, round);
            let cold = max_weight_matching(nv, &edges, true).expect("valid");
            let solution = solve_sparse(nv, &edges).expect("valid");
            let warm = solution.mates();
            let weight = |mate: &[Option<usize>]| matched_weight(&edges, mate);
            assert_eq!(weight(&warm), weight(&cold), "round {round}: {edges:?}");
            if warm.iter().all(Option::is_some) {
                for &(a, b, w) in &edges {
                    assert!(solution.slack(a, b, w) >= 0, "round {round}: {a}-{b}");
                }
            }
        }
    }

    /// The two-phase solve (a random part of the edges first, stuck trees
    /// left single, then the rest) finds as heavy a maximum-cardinality
    /// matching as the cold complete solve, and where it is perfect its
    /// duals leave no negative slack on any edge.
    #[test]
    fn two_phase_solve_matches_cold_solve() {
        let mut state = 0x2fa5_e5ee_u64;
        let mut next = move |bound: u64| {
            state = crate::schedule::splitmix64(state);
            state % bound
        };
        for round in 0..3000 {
            let nv = 2 + next(12) as usize;
            let mut edges = random_edges(&mut next, nv, round);
            // Inner edges: those within a random split of the vertices.
            let side: Vec<u64> = (0..nv).map(|_| next(3)).collect();
            edges.sort_by_key(|&(a, b, _)| side[a] != side[b]);
            let split = edges.iter().take_while(|e| side[e.0] == side[e.1]).count();
            let cold = max_weight_matching(nv, &edges, true).expect("valid");
            let solution =
                solve_sparse_in_two(nv, &edges[..split], &edges[split..]).expect("valid");
            let two = solution.mates();
            let weight = |mate: &[Option<usize>]| matched_weight(&edges, mate);
            assert_eq!(weight(&two), weight(&cold), "round {round}: {edges:?}");
            if two.iter().all(Option::is_some) {
                for &(a, b, w) in &edges {
                    assert!(solution.slack(a, b, w) >= 0, "round {round}: {a}-{b}");
                }
            }
        }
    }

    /// Solving a part of a graph and then the rest warm (in a few steps)
    /// gives as heavy a perfect matching as a cold solve of the whole, with
    /// duals feasible on every edge.
    #[test]
    fn warm_resolve_matches_cold_solve() {
        let mut state = 0x5eed_cafe_u64;
        let mut next = move |bound: u64| {
            state = crate::schedule::splitmix64(state);
            state % bound
        };
        for round in 0..6000 {
            let nv = 2 * (1 + next(8) as usize);
            let density = 3 + next(8);
            let span = [3, 10, 1000, 1 << 40][round % 4];
            let mut edges = Vec::new();
            // A path through every vertex keeps a perfect matching in each
            // part.
            for a in 0..nv {
                for b in a + 1..nv {
                    if b == a + 1 || next(10) < density {
                        let w = next(span) as Weight - (span as Weight) / 4;
                        edges.push((a, b, w));
                    }
                }
            }
            // The path first, then the rest in a few random batches.
            let (mut path, mut rest): (Vec<_>, Vec<_>) = edges.iter().partition(|e| e.1 == e.0 + 1);
            for i in (1..rest.len()).rev() {
                rest.swap(i, next(i as u64 + 1) as usize);
            }
            let weight = |mate: &[Option<usize>], edges: &[(usize, usize, Weight)]| {
                matched_weight(edges, mate)
            };
            let mut solution = solve_sparse(nv, &path).expect("valid");
            let batches = 1 + next(4) as usize;
            let size = rest.len().div_ceil(batches).max(1);
            for batch in rest.chunks(size) {
                path.extend_from_slice(batch);
                solution = solution.resolve(&path).expect("valid");
                let cold = max_weight_matching(nv, &path, true).expect("valid");
                assert_eq!(
                    weight(&solution.mates(), &path),
                    weight(&cold, &path),
                    "round {round}: {path:?}"
                );
                for &(a, b, w) in &path {
                    assert!(solution.slack(a, b, w) >= 0, "round {round}: {a}-{b}");
                }
            }
        }
    }

    /// Every way of starting and growing ends, when perfect, with duals
    /// that leave no edge with negative slack (the certificate pricing
    /// relies on).
    #[test]
    fn every_start_ends_with_feasible_duals() {
        let mut state = 0x0bad_5eed_u64;
        let mut next = move |bound: u64| {
            state = crate::schedule::splitmix64(state);
            state % bound
        };
        for round in 0..20000 {
            let nv = 2 + next(14) as usize;
            let edges = random_edges(&mut next, nv, round);
            for variant in 0..3 {
                let mut m = Matcher::new(nv, &edges);
                match variant {
                    0 => {
                        m.jump_start();
                        m.run(true);
                    }
                    1 => {
                        m.warm_start();
                        m.run_single_tree();
                    }
                    _ => {
                        m.jump_start();
                        m.run_single_tree();
                    }
                }
                if m.mate.contains(&NONE) {
                    continue;
                }
                let chains = m.blossom_chains();
                for &(a, b, w) in &edges {
                    if m.full_slack(&chains, a, b, w) < 0 {
                        panic!("variant {variant} round {round} nv {nv} edges {edges:?}");
                    }
                }
            }
        }
    }
}
