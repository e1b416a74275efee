//! Labels and blossoms: labelling a tree's vertices S and T, finding the
//! base of the odd cycle a tight edge between two S-vertices closes,
//! shrinking that cycle into a blossom, and expanding a blossom again
//! (relabelling its children when it was a T-blossom mid-stage).

use super::{CRUMB, EXPAND, Edge, FREE, Matcher, NONE, S, S_FREE, S_S, T, UNUSED, Weight, wrap};

impl Matcher {
    /// Labels the top-level blossom containing `w` with `t`, reached through
    /// remote endpoint `p`; a T-label passes an S-label on to the mate.
    pub(super) fn assign_label(&mut self, w: usize, t: i8, p: usize) {
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
    pub(super) fn scan_blossom(&mut self, mut v: usize, mut w: usize) -> Option<usize> {
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
    pub(super) fn add_blossom(&mut self, base: usize, k: usize) {
        let bb = self.inblossom[base];
        let Some(b) = self.unusedblossoms.pop() else {
            // Cannot happen: there are never more than nv/2 blossoms.
            unreachable!("blossom numbers exhausted");
        };
        self.blossombase[b] = base;
        self.blossomparent[b] = NONE;
        self.blossomparent[bb] = b;
        let (path, endps) = self.trace_cycle(b, bb, k);
        self.label_new_blossom(b, bb, &path);
        let list = self.least_slack_edges_to_s_blossoms(b, &path);
        self.set_least_slack_edge(b, &list);
        self.blossombestedges[b] = Some(list);
        self.blossomchilds[b] = path;
        self.blossomendps[b] = endps;
    }

    /// The step of [`Self::add_blossom`] that walks the cycle closed by
    /// edge `k` from both of its ends back to the base blossom `bb`, making
    /// new blossom `b` the parent of each sub-blossom on the way. Returns
    /// the sub-blossoms starting at the base, and the endpoints linking each
    /// to the next.
    fn trace_cycle(&mut self, b: usize, bb: usize, k: usize) -> (Vec<usize>, Vec<usize>) {
        let (mut v, mut w) = (self.edges[k].u, self.edges[k].v);
        let mut bv = self.inblossom[v];
        let mut bw = self.inblossom[w];
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
        (path, endps)
    }

    /// The step of [`Self::add_blossom`] that labels new blossom `b` (with
    /// children `path`, based at `bb`) as an S-blossom with a zero dual and
    /// moves its vertices into it, queueing the former T-vertices to scan.
    fn label_new_blossom(&mut self, b: usize, bb: usize, path: &[usize]) {
        debug_assert_eq!(self.label[bb], S);
        self.label[b] = S;
        self.touch(b);
        self.labelend[b] = self.labelend[bb];
        self.dualvar[b] = 0;
        for v in self.leaves_of_children(path) {
            if self.label[self.inblossom[v]] == T {
                // A T-vertex inside a new S-blossom becomes an S-vertex.
                self.queue.push(v);
            }
            self.inblossom[v] = b;
        }
    }

    /// The step of [`Self::add_blossom`] that finds, for each other
    /// S-blossom next to new blossom `b`, the least-slack edge from one of
    /// the sub-blossoms `path` to it, in blossom order; the sub-blossoms'
    /// own least-slack edges are used up on the way.
    fn least_slack_edges_to_s_blossoms(&mut self, b: usize, path: &[usize]) -> Vec<usize> {
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
        for &sub in path {
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
        list
    }

    /// The step of [`Self::add_blossom`] that makes the least-slack edge of
    /// `list` (the first among equals) new blossom `b`'s, and a candidate
    /// step of a single tree.
    fn set_least_slack_edge(&mut self, b: usize, list: &[usize]) {
        let mut best = NONE;
        for &kk in list {
            if best == NONE || self.slack(kk) < self.slack(best) {
                best = kk;
            }
        }
        self.bestedge[b] = best;
        if best != NONE {
            self.event(self.slack(best) / 2, S_S, b, best);
        }
    }

    /// Dissolves top-level blossom `b` into its sub-blossoms. Mid-stage (a
    /// T-blossom whose dual reached zero) the sub-blossoms are relabelled so
    /// that the alternating tree stays valid; at the end of a stage, zero-dual
    /// sub-blossoms are expanded recursively.
    pub(super) fn expand_blossom(&mut self, b: usize, endstage: bool) {
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
    pub(super) fn relabel_expanded_t_blossom(&mut self, b: usize) {
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
}
