//! The exact two-seat Swiss matching: a maximum-weight perfect matching of
//! the complete [`PairingGraph`] without ever listing its `n²/2` edges. It
//! pairs whole fields up to `banded::WHOLE_LIMIT` entrants, and each region
//! of a larger field (see `banded`).
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
//! score gap, seat cost and tie-break. Apart from rematches and the
//! tie-break it depends only on the two vertices' [`Traits`] (points, seat
//! balance, last seat). Vertices with equal traits form a *class*; for
//! classes `c`, `d` the *block weight* `W(c, d)` is the weight of an edge
//! between them with no rematch and no tie-break. The tie-break of a pair is
//! the distance `|k_i - k_j|` between the two vertices' tie-break keys
//! (tier multiplier 1) and rematches only subtract, so every pair `(i, j)`
//! of the block has `w_ij ≤ W(c, d) - |k_i - k_j|`, and (`z_B ≥ 0`) its
//! (doubled) slack is at least `y_i + y_j - 2W(c, d) + 2|k_i - k_j|`, less
//! the duals of the blossoms holding both ends. That bound is
//! one-dimensional in the keys: with a class's members sorted by key, the
//! least of `y_j + 2|k - k_j|` over the members below `k` is
//! `2k + min (y_j - 2k_j)` over a prefix, and above `k` it is
//! `-2k + min (y_j + 2k_j)` over a suffix. So a sweep over the two key-sorted
//! lists with prefix and suffix minima checks a vertex against a whole class
//! in constant time, and only the pairs that fail the bound are visited,
//! walking outwards from the vertex's key while the prefix (or suffix)
//! minimum still fails. Those pairs get their exact slack: tie-break,
//! rematches, and every shared blossom's dual ([`SharedDuals`], a lowest
//! common ancestor in the blossom forest).
//!
//! Classes are split into groups by the large top-level blossom their
//! members sit in: a pair inside one blossom has its dual as extra slack, so
//! the bound of a pair of groups in the same blossom is that much lower.
//!
//! Ghost edges are all candidates (there are at most `n`), so they need no
//! check.
//!
//! # The first solve
//!
//! The candidate edges within a score group come first, and the first solve
//! ([`solve_sparse_in_two`]) matches each group on them alone before the
//! edges across groups are added and the floaters matched: a tree grown
//! from a single vertex then stays inside its group instead of spreading
//! across the field. Later solves re-solve warm, as before. This only
//! changes how the optimum of the candidate graph is found, not what is
//! certified.
//!
//! # Candidates
//!
//! What makes this fast is a candidate set on which the sparse optimum's
//! duals already pass the bounds. Every vertex gets its three neighbours on
//! each side in score order (which alone admit a perfect matching whoever
//! has the bye, and let floaters move between score groups), every ghost
//! edge, and, in each of its [`BLOCKS`] best blocks (highest `W` first), its
//! [`NEAR`] nearest partners in key order on either side that it has not
//! met: the optimal pairs of a block are between near keys.

use std::collections::HashSet;

use super::ScheduleError;
use super::matching::{SparseSolution, Weight, max_weight_matching, solve_sparse_in_two};
use super::swiss::{PairingGraph, Traits};

/// Blocks (partner classes, best first) each vertex takes candidates from.
const BLOCKS: usize = 4;
/// Candidates taken on each side of a vertex's key in each such block: its
/// nearest partners in tie-break key order that it has not met.
const NEAR: usize = 2;
/// Partners looked at on each side in a block while skipping met ones.
const NEAR_SCAN: usize = 8;
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
/// Levels of large blossoms (from the top) that split groups in [`certify`]:
/// deeper ones would multiply the groups, and pairs inside them are checked
/// exactly (cheaply, see [`SharedDuals`]) instead.
const GROUP_DEPTH: usize = 1;
/// Largest vertex count solved whole (about 4.5 million edges).
const DENSE_LIMIT: usize = 3000;

/// A group of [`certify`]: vertices of one class whose innermost large
/// blossom is the same (or that are in none), with what the sweep over a pair of groups needs.
struct Group {
    class: usize,
    /// The large blossoms (id and doubled dual) holding the members, from
    /// the top level down.
    blossoms: Vec<(usize, Weight)>,
    /// Members in tie-break key order.
    members: Vec<usize>,
    /// Their keys and (doubled) duals.
    keys: Vec<Weight>,
    dual: Vec<Weight>,
    /// `left_min[p]`: least `dual - 2·key` over members `..=p`.
    left_min: Vec<Weight>,
    /// `right_min[p]`: least `dual + 2·key` over members `p..`.
    right_min: Vec<Weight>,
    /// Least dual.
    least: Weight,
}

impl Group {
    fn new(class: usize, blossoms: Vec<(usize, Weight)>) -> Self {
        Group {
            class,
            blossoms,
            members: Vec::new(),
            keys: Vec::new(),
            dual: Vec::new(),
            left_min: Vec::new(),
            right_min: Vec::new(),
            least: Weight::MAX,
        }
    }

    fn finish(&mut self, dual: &[Weight], key: impl Fn(usize) -> Weight) {
        self.keys = self.members.iter().map(|&v| key(v)).collect();
        self.dual = self.members.iter().map(|&v| dual[v]).collect();
        let mut lo = Weight::MAX;
        self.left_min = (0..self.members.len())
            .map(|p| {
                lo = lo.min(self.dual[p] - 2 * self.keys[p]);
                lo
            })
            .collect();
        let mut lo = Weight::MAX;
        self.right_min = vec![0; self.members.len()];
        for p in (0..self.members.len()).rev() {
            lo = lo.min(self.dual[p] + 2 * self.keys[p]);
            self.right_min[p] = lo;
        }
        self.least = self.dual.iter().copied().min().unwrap_or(Weight::MAX);
    }
}

/// Vertices with equal [`Traits`].
struct Classes {
    /// Class of each real vertex.
    of: Vec<usize>,
    /// Members of each class, in tie-break key order.
    members: Vec<Vec<usize>>,
    /// The keys of `members`, ascending.
    keys: Vec<Vec<u64>>,
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
        let key = |v: usize| graph.tie_key(v).unwrap_or(0);
        for list in &mut members {
            list.sort_unstable_by_key(|&v| key(v));
        }
        let keys = members
            .iter()
            .map(|list| list.iter().map(|&v| key(v)).collect())
            .collect();
        Classes {
            of,
            members,
            keys,
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
    // Edges within a score group first: the first solve matches each group
    // on its own edges, then the floaters across groups (see
    // `solve_sparse_in_two`); later solves keep this order.
    let n = graph.real();
    let (mut inside, across): (Vec<_>, Vec<_>) = edges
        .iter()
        .partition(|&&(a, b, _)| b < n && graph.traits(a).points == graph.traits(b).points);
    let split = inside.len();
    inside.extend(across);
    edges = inside;
    let internal = |e: super::matching::MatchingError| ScheduleError::Internal(e.to_string());
    let mut solution: Option<SparseSolution> = None;
    for round in 0.. {
        if round >= ROUNDS_BEFORE_DENSE && nv <= DENSE_LIMIT {
            let mate = max_weight_matching(nv, &graph.all_edges(), true).map_err(internal)?;
            return Ok(mate);
        }
        // Each round after the first starts from the last one's optimum
        // (the candidates only grew); see `SparseSolution::resolve`.
        let solved = match solution.take() {
            None => solve_sparse_in_two(nv, &edges[..split], &edges[split..]),
            Some(last) => last.resolve(&edges),
        }
        .map_err(internal)?;
        let current = solution.insert(solved);
        let mate = current.mates();
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
        let violated = certify(graph, &classes, current);
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
    let mut out = Vec::with_capacity(n * (NEIGHBOURS + 2 * NEAR * BLOCKS + 1));
    for a in 0..n {
        out.extend((a + 1..n).take(NEIGHBOURS).map(|b| (a, b)));
        if graph.ghost().is_some() && graph.cost(a, n).is_some() {
            out.push((a, n));
        }
    }
    // Each class's blocks, heaviest first (ties by class, to stay
    // deterministic).
    let k = classes.len();
    let mut best_blocks: Vec<Vec<usize>> = Vec::with_capacity(k);
    for c in 0..k {
        let mut row: Vec<(Weight, usize)> = (0..k)
            .map(|d| (classes.block_weight(graph, c, d), d))
            .collect();
        row.sort_unstable_by(|x, y| y.0.cmp(&x.0).then(x.1.cmp(&y.1)));
        best_blocks.push(row.into_iter().map(|(_, d)| d).collect());
    }
    for a in 0..n {
        let key = graph.tie_key(a).unwrap_or(0);
        let mut blocks = 0;
        for &d in &best_blocks[classes.of[a]] {
            if blocks == BLOCKS {
                break;
            }
            let (members, keys) = (&classes.members[d], &classes.keys[d]);
            if members.len() < 2 && members.first() == Some(&a) {
                continue;
            }
            blocks += 1;
            let at = keys.partition_point(|&x| x < key);
            // Below the key, then from it upwards (`a` itself is skipped).
            let below = members[..at].iter().rev();
            let above = members[at..].iter();
            for side in [below.collect::<Vec<_>>(), above.collect::<Vec<_>>()] {
                side.into_iter()
                    .take(NEAR_SCAN)
                    .filter(|&&b| b != a && graph.met_count(a, b) == 0)
                    .take(NEAR)
                    .for_each(|&b| out.push((a, b)));
            }
        }
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
    let groups = blossom_groups(graph, classes, solution, &dual);
    let sweep = Sweep {
        graph,
        solution,
        dual: &dual,
        shared_duals: SharedDuals::new(solution, graph.vertices.len()),
    };
    let mut worst = Worst::new(n);
    let k = groups.len();
    for x in 0..k {
        for y in x..k {
            sweep.group_pair(classes, &groups[x], &groups[y], &mut worst);
        }
    }
    worst.most_violated()
}

/// Vertex `v`'s tie-break key, as the sweeps of [`certify`] compare it.
fn key_of(graph: &PairingGraph, v: usize) -> Weight {
    Weight::from(graph.tie_key(v).unwrap_or(0))
}

/// The groups of [`certify`], finished: each class split by the innermost
/// large blossom its members sit in.
fn blossom_groups(
    graph: &PairingGraph,
    classes: &Classes,
    solution: &SparseSolution,
    dual: &[Weight],
) -> Vec<Group> {
    let n = graph.real();
    // Groups: a class, split by the innermost large blossom its members
    // sit in, since a pair inside one blossom has that blossom's dual (and
    // its enclosing blossoms') as extra slack. Blossoms only get smaller
    // inwards, so a vertex's large blossoms are a prefix of its chain.
    // Small blossoms are not worth groups of their own.
    let mut blossom_size = vec![0usize; 2 * graph.vertices.len()];
    for v in 0..n {
        for &b in solution.chain(v) {
            blossom_size[b] += 1;
        }
    }
    let large_prefix = |v: usize| {
        let chain = solution.chain(v);
        let len = chain
            .iter()
            .take(GROUP_DEPTH)
            .take_while(|&&b| blossom_size[b] >= MIN_GROUPED_BLOSSOM)
            .count();
        &chain[..len]
    };
    let mut group_of = std::collections::HashMap::new();
    let mut groups: Vec<Group> = Vec::new();
    // Class members are in key order, so every group's are too.
    for c in 0..classes.len() {
        for &v in &classes.members[c] {
            let prefix = large_prefix(v);
            let g = *group_of
                .entry((c, prefix.last().copied()))
                .or_insert_with(|| {
                    let blossoms = prefix
                        .iter()
                        .map(|&b| (b, solution.blossom_dual(b)))
                        .collect();
                    groups.push(Group::new(c, blossoms));
                    groups.len() - 1
                });
            groups[g].members.push(v);
        }
    }
    for g in &mut groups {
        g.finish(dual, |v| key_of(graph, v));
    }
    groups
}

/// The most violated pairs [`certify`] has found so far, per vertex.
struct Worst {
    /// `(slack, partner)` of each vertex, kept to the most violated few.
    lists: Vec<Vec<(Weight, usize)>>,
}

impl Worst {
    fn new(n: usize) -> Self {
        Worst {
            lists: vec![Vec::new(); n],
        }
    }

    /// Notes pair `i`–`j` with negative `slack`, for both ends.
    fn note(&mut self, slack: Weight, i: usize, j: usize) {
        for (a, b) in [(i, j), (j, i)] {
            let list = &mut self.lists[a];
            list.push((slack, b));
            if list.len() > 2 * PER_VERTEX {
                list.sort_unstable();
                list.dedup();
                list.truncate(PER_VERTEX);
            }
        }
    }

    /// Up to [`PER_VERTEX`] pairs per vertex, the most violated first.
    fn most_violated(self) -> Vec<(usize, usize)> {
        let mut violated = Vec::new();
        for (i, mut list) in self.lists.into_iter().enumerate() {
            list.sort_unstable();
            list.dedup();
            violated.extend(list.into_iter().take(PER_VERTEX).map(|(_, j)| (i, j)));
        }
        violated
    }
}

/// What the sweeps of [`certify`] over pairs of groups read.
struct Sweep<'a> {
    graph: &'a PairingGraph,
    solution: &'a SparseSolution,
    /// The (doubled) dual of each real vertex.
    dual: &'a [Weight],
    shared_duals: SharedDuals,
}

impl Sweep<'_> {
    /// Checks every pair of a member of `gx` and a member of `gy` against
    /// the block bound, and visits those that fail it.
    fn group_pair(&self, classes: &Classes, gx: &Group, gy: &Group, worst: &mut Worst) {
        let (graph, dual) = (self.graph, self.dual);
        let block = classes.block_weight(graph, gx.class, gy.class);
        // Twice the block weight, less what shared blossoms add.
        let shared: Weight = gx
            .blossoms
            .iter()
            .zip(&gy.blossoms)
            .take_while(|(a, b)| a.0 == b.0)
            .map(|(a, _)| a.1)
            .sum();
        let bound = 2 * block - shared;
        if gx.least + gy.least >= bound {
            return;
        }
        let mut at = 0;
        for &i in &gx.members {
            let ki = key_of(graph, i);
            // Twice the least the pair's weight is below the block's;
            // a pair at key distance t weighs at most block - t.
            let want = bound - dual[i];
            if gy.least >= want {
                continue;
            }
            while at < gy.members.len() && gy.keys[at] < ki {
                at += 1;
            }
            let left_ok = at == 0 || gy.left_min[at - 1] + 2 * ki >= want;
            let right_ok = at == gy.members.len() || gy.right_min[at] - 2 * ki >= want;
            if left_ok && right_ok {
                continue;
            }
            self.walk_out(i, want, at, block, gy, worst);
        }
    }

    /// Visits the members of `gy` that may pair with `i` below `want`,
    /// walking outwards from position `at` (the first key not below
    /// `ki`) on each side while the prefix or suffix minimum still fails,
    /// and notes each pair whose exact slack is negative.
    fn walk_out(
        &self,
        i: usize,
        want: Weight,
        at: usize,
        block: Weight,
        gy: &Group,
        worst: &mut Worst,
    ) {
        let (graph, dual) = (self.graph, self.dual);
        let ki = key_of(graph, i);
        let mut found = 0;
        let mut check = |j: usize, found: &mut usize| {
            if j == i {
                return;
            }
            let tie = Weight::from(graph.tie(i, j));
            let w = block - tie - Weight::from(graph.met_count(i, j)) * graph.rematch_multiplier();
            let slack = dual[i] + dual[j] - 2 * w + self.shared_duals.between(i, j);
            debug_assert_eq!(slack, self.solution.slack(i, j, w));
            if slack < 0 {
                worst.note(slack, i, j);
                *found += 1;
            }
        };
        // Below i's key: pair cost dual_j - 2 k_j + 2 k_i.
        let mut p = at;
        while p > 0 && found < PER_VERTEX && gy.left_min[p - 1] + 2 * ki < want {
            p -= 1;
            if gy.dual[p] - 2 * gy.keys[p] + 2 * ki < want {
                check(gy.members[p], &mut found);
            }
        }
        // From i's key up: dual_j + 2 k_j - 2 k_i.
        let mut p = at;
        while p < gy.members.len() && found < PER_VERTEX && gy.right_min[p] - 2 * ki < want {
            if gy.dual[p] + 2 * gy.keys[p] - 2 * ki < want {
                check(gy.members[p], &mut found);
            }
            p += 1;
        }
    }
}

/// The doubled dual of every blossom holding both ends of a pair, summed,
/// in constant time per pair: the blossoms form a forest (vertices as
/// leaves), the blossoms holding both `i` and `j` are their lowest common
/// ancestor and its ancestors, and the lowest common ancestor comes from a
/// range-minimum table over an Euler tour of the forest.
struct SharedDuals {
    /// Position of each vertex in the tour.
    first: Vec<usize>,
    /// `table[k][p]`: the shallowest of `tour[p..p + 2^k]`.
    table: Vec<Vec<(u32, usize)>>,
    /// For each node (vertices, then blossoms): for a blossom, its doubled
    /// dual plus its ancestors'; zero for a vertex (no blossom). The
    /// virtual root is the last.
    above: Vec<Weight>,
}

impl SharedDuals {
    fn new(solution: &SparseSolution, nv: usize) -> Self {
        // Nodes: vertices `0..nv`, blossoms `nv..2nv`, the virtual root.
        let root = 2 * nv;
        let mut children: Vec<Vec<usize>> = vec![Vec::new(); root + 1];
        let mut above = vec![0; root + 1];
        let mut seen = vec![false; root];
        for v in 0..nv {
            let chain = solution.chain(v);
            match chain.first() {
                None => children[root].push(v),
                Some(&top) => {
                    if !seen[top] {
                        children[root].push(top);
                    }
                    let mut sum = 0;
                    for (t, &b) in chain.iter().enumerate() {
                        sum += solution.blossom_dual(b);
                        if !seen[b] {
                            seen[b] = true;
                            above[b] = sum;
                            if t > 0 {
                                children[chain[t - 1]].push(b);
                            }
                        }
                    }
                    children[chain[chain.len() - 1]].push(v);
                }
            }
        }
        // One virtual root above the forest's trees, so that two vertices of
        // different trees meet there (where no blossom holds both).
        let mut first = vec![0; nv];
        let mut tour = Vec::new();
        // Iterative depth-first walk: (node, depth, next child).
        let mut stack = vec![(root, 0u32, 0usize)];
        while let Some(&mut (node, depth, ref mut next)) = stack.last_mut() {
            if *next == 0 && node < nv {
                first[node] = tour.len();
            }
            tour.push((depth, node));
            let kids = &children[node];
            if *next < kids.len() {
                let child = kids[*next];
                *next += 1;
                stack.push((child, depth + 1, 0));
            } else {
                stack.pop();
            }
        }
        let mut table = vec![tour.clone()];
        let mut width = 1;
        while 2 * width <= tour.len() {
            let prev = &table[table.len() - 1];
            let next: Vec<(u32, usize)> = (0..=tour.len() - 2 * width)
                .map(|p| prev[p].min(prev[p + width]))
                .collect();
            table.push(next);
            width *= 2;
        }
        SharedDuals {
            first,
            table,
            above,
        }
    }

    /// Twice the summed dual of the blossoms holding both `i` and `j`.
    fn between(&self, i: usize, j: usize) -> Weight {
        let (a, b) = (
            self.first[i].min(self.first[j]),
            self.first[i].max(self.first[j]),
        );
        let level = (usize::BITS - 1 - (b - a + 1).leading_zeros()) as usize;
        let lowest = self.table[level][a].min(self.table[level][b + 1 - (1 << level)]);
        // A vertex (i = j) or the virtual root is no blossom.
        self.above[lowest.1]
    }
}
