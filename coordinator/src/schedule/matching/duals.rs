//! The dual step: the largest change of the dual variables that keeps
//! every slack non-negative, and which of the four cases bounds it, over
//! the whole forest (`compute_delta`) or a single tree's recorded
//! candidates (`single_tree_delta`).

use std::cmp::Ordering;

use super::{Delta, FREE, Matcher, NONE, S, S_FREE, S_S, T, Weight};

impl Matcher {
    /// Picks the dual step, applies it, and says what it unlocked.
    pub(super) fn compute_delta(&mut self, max_cardinality: bool) -> Delta {
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
    pub(super) fn single_tree_delta(&mut self) -> Delta {
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
}
