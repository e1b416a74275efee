//! The small operations every phase uses: endpoints and slacks, the
//! tight-edge bits, the cached least slacks, a blossom's leaves, and the
//! bookkeeping of what a single-tree stage touched.

use super::{Matcher, NONE, Weight};

impl Matcher {
    /// The vertex at endpoint `p`.
    pub(super) fn endpoint(&self, p: usize) -> usize {
        let e = &self.edges[p / 2];
        if p & 1 == 0 { e.u } else { e.v }
    }

    /// Twice the slack of edge `k` (meaningless for edges inside a blossom).
    pub(super) fn slack(&self, k: usize) -> Weight {
        let e = &self.edges[k];
        self.dualvar[e.u] + self.dualvar[e.v] - 2 * e.weight
    }

    pub(super) fn allowed(&self, k: usize) -> bool {
        self.allowedge[k / 64] >> (k % 64) & 1 == 1
    }

    pub(super) fn allow(&mut self, k: usize) {
        self.allowedge[k / 64] |= 1 << (k % 64);
    }

    /// Slack of `bestedge[x]` (which must be set), cached per dual epoch.
    pub(super) fn best_slack(&mut self, x: usize) -> Weight {
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
    pub(super) fn leaves(&self, b: usize) -> Vec<usize> {
        let mut out = Vec::new();
        self.collect_leaves(b, &mut out);
        out
    }

    pub(super) fn collect_leaves(&self, b: usize, out: &mut Vec<usize>) {
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

    pub(super) fn leaves_of_children(&self, children: &[usize]) -> Vec<usize> {
        let mut out = Vec::new();
        for &c in children {
            self.collect_leaves(c, &mut out);
        }
        out
    }

    /// Records that vertex or blossom `x` was labelled this stage.
    pub(super) fn touch(&mut self, x: usize) {
        self.touch_free(x);
        if self.tree_in[x] != self.stage_no {
            self.tree_in[x] = self.stage_no;
            self.tree.push(x);
        }
    }

    /// Records that free vertex `x` got a least-slack edge this stage.
    pub(super) fn touch_free(&mut self, x: usize) {
        if self.touched_in[x] != self.stage_no {
            self.touched_in[x] = self.stage_no;
            self.touched.push(x);
        }
    }

    /// Single-tree stages: remembers a step that the current duals make
    /// `size` away (see [`Self::single_tree_delta`]).
    pub(super) fn event(&mut self, size: Weight, kind: u8, x: usize, k: usize) {
        if self.single_tree {
            let at = self.stepped + size;
            self.events.push(std::cmp::Reverse((at, kind, x, k)));
        }
    }

    /// For each vertex inside a non-trivial blossom, its blossoms from the
    /// top level down (empty for vertices at top level).
    pub(super) fn blossom_chains(&self) -> Vec<Vec<usize>> {
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
    pub(super) fn full_slack(
        &self,
        chains: &[Vec<usize>],
        i: usize,
        j: usize,
        w: Weight,
    ) -> Weight {
        let mut s = self.dualvar[i] + self.dualvar[j] - 2 * w;
        for (a, b) in chains[i].iter().zip(&chains[j]) {
            if a != b {
                break;
            }
            s += 2 * self.dualvar[*a];
        }
        s
    }

    pub(super) fn mates(&self) -> Vec<Option<usize>> {
        self.mate
            .iter()
            .map(|&p| (p != NONE).then(|| self.endpoint(p)))
            .collect()
    }
}
