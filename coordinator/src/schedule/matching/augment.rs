//! Augmenting: flipping matched and unmatched edges along an augmenting
//! path, through the blossoms on it.

use super::{Matcher, NONE, S, T, wrap};

impl Matcher {
    /// Flips matched and unmatched edges along the even alternating path
    /// inside blossom `b` from vertex `v` to the base; `v` becomes the base.
    pub(super) fn augment_blossom(&mut self, b: usize, v: usize) {
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
    pub(super) fn augment_matching(&mut self, k: usize) {
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
}
