//! The outer loop: stages, each growing the alternating forest (or one
//! tree) along tight edges and stepping the duals until an augmenting path
//! is found or none can be.

use super::{Adjacent, Delta, FREE, Matcher, NONE, S, S_FREE, S_S, T};

impl Matcher {
    /// Solves for a perfect matching growing one alternating tree at a time
    /// (Edmonds' original scheme): each stage roots a tree at the first
    /// single vertex and grows it, moving only its own duals, until it
    /// reaches another single vertex. From a good start (see
    /// [`Self::jump_start`]) the trees stay small, and the stage's work is
    /// kept to what it touches. Single vertices outside the tree keep their
    /// duals, so the duals certify the result only when it is perfect; a
    /// tree that cannot grow (no perfect matching) ends the solve early.
    pub(super) fn run_single_tree(&mut self) {
        self.single_tree = true;
        self.run(true);
    }

    pub(super) fn run(&mut self, max_cardinality: bool) {
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
    pub(super) fn stage(&mut self, max_cardinality: bool) -> bool {
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
    pub(super) fn grow_forest(&mut self) -> bool {
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
}
