//! A new solver state, and the starts a solve can begin from: the cold
//! start with a greedy matching of its tight edges (`warm_start`), greedy
//! duals and matching (`jump_start`), or a solved state with edges added
//! (`add_edges`, which raises duals to keep them feasible).

use super::{Adjacent, Edge, FREE, Matcher, NONE, UNUSED, Weight, adjacency};

impl Matcher {
    pub(super) fn new(nv: usize, edges: &[(usize, usize, Weight)]) -> Self {
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
    pub(super) fn warm_start(&mut self) {
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
    pub(super) fn jump_start(&mut self) {
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
    pub(super) fn add_edges(&mut self, edges: &[(usize, usize, Weight)]) {
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
    pub(super) fn edge_full_slack(&self, k: usize) -> Weight {
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
    pub(super) fn raise_to_fit(&mut self, k: usize, violated: &[u32]) {
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
    pub(super) fn raise(&mut self, x: usize, d: Weight) {
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
}
