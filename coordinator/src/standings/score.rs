//! Placement arithmetic: how a seat's rank within one match turns into
//! points, and how two seats of the same match compare pairwise. Everything
//! here is integer arithmetic so equal results compare equal exactly.

use std::cmp::Ordering;

/// Where one seat finished in its match, read from the order of the ranks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Placement {
    /// How many seats finished strictly ahead of this one (0 is first place).
    pub first: usize,
    /// How many seats share this placement, this one included (1 = alone).
    pub shared: usize,
}

impl Placement {
    /// Whether this seat is alone in first place.
    pub fn is_win(self) -> bool {
        self.first == 0 && self.shared == 1
    }

    /// Whether this seat shares first place with at least one other seat.
    pub fn is_shared_first(self) -> bool {
        self.first == 0 && self.shared > 1
    }

    /// The seat's points scaled by `2 (N - 1)`, which makes them an integer.
    ///
    /// Places `first ..= first + shared - 1` are covered by the tie group, so
    /// the seat's place is their average `a = first + (shared - 1) / 2` and its
    /// points are `(N - 1 - a) / (N - 1)`. Scaled: `2 (N - 1) - 2 first - (shared - 1)`.
    pub fn scaled_points(self, seats: usize) -> u64 {
        let scaled = 2 * (seats - 1) - 2 * self.first - (self.shared - 1);
        scaled as u64
    }
}

/// The placement of every seat, in seat order. Only the order of the ranks
/// matters: `[0, 1]`, `[0, 7]` and `[3, 5]` all mean "seat 0 beat seat 1".
pub(super) fn placements(ranks: &[u32]) -> Vec<Placement> {
    ranks
        .iter()
        .map(|rank| Placement {
            first: ranks.iter().filter(|other| *other < rank).count(),
            shared: ranks.iter().filter(|other| *other == rank).count(),
        })
        .collect()
}

/// A seat's score against one co-player, doubled: 2 when it finished ahead,
/// 1 when they tied, 0 when it finished behind.
pub(super) fn doubled_pair_score(mine: u32, theirs: u32) -> u128 {
    match mine.cmp(&theirs) {
        Ordering::Less => 2,
        Ordering::Equal => 1,
        Ordering::Greater => 0,
    }
}

pub(super) fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// Least common multiple, or `None` when it does not fit a `u64`.
pub(super) fn lcm(a: u64, b: u64) -> Option<u64> {
    (a / gcd(a, b)).checked_mul(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn points(ranks: &[u32]) -> Vec<f64> {
        let n = ranks.len();
        placements(ranks)
            .into_iter()
            .map(|p| p.scaled_points(n) as f64 / (2 * (n - 1)) as f64)
            .collect()
    }

    #[test]
    fn two_seats_win_draw_loss() {
        assert_eq!(points(&[0, 1]), [1.0, 0.0]);
        assert_eq!(points(&[1, 0]), [0.0, 1.0]);
        assert_eq!(points(&[0, 0]), [0.5, 0.5]);
        // Only the order counts: both forfeited is still a tie.
        assert_eq!(points(&[1, 1]), [0.5, 0.5]);
    }

    #[test]
    fn four_seats_share_the_places_they_cover() {
        // Places 1 and 2 shared: (3 - 1.5) / 3 = 0.5 each.
        assert_eq!(points(&[0, 1, 1, 3]), [1.0, 0.5, 0.5, 0.0]);
        // Dense ranks read the same way.
        assert_eq!(points(&[0, 1, 1, 2]), [1.0, 0.5, 0.5, 0.0]);
        // Shared first of three: (3 - 1) / 3 each.
        let p = points(&[0, 0, 0, 1]);
        assert!((p[0] - 2.0 / 3.0).abs() < 1e-12 && p[3] == 0.0);
        // Points of one match always add up to N / 2.
        for ranks in [[0, 0, 0, 0], [2, 0, 1, 1], [3, 2, 1, 0]] {
            assert!((points(&ranks).iter().sum::<f64>() - 2.0).abs() < 1e-12);
        }
    }

    /// The exact integers here are the engine's placement points, the
    /// scoring every registered game reports.
    #[test]
    fn points_are_the_engine_s_placement_points() {
        let cases: [&[u32]; 12] = [
            &[0, 1],
            &[1, 0],
            &[0, 0],
            &[0, 0, 2, 3],
            &[0, 0, 1, 2],
            &[0, 1, 1, 3],
            &[0, 0, 0, 1],
            &[0, 0, 0, 0],
            &[3, 2, 1, 0],
            &[2, 0, 1, 1],
            &[0, 1, 2],
            &[4, 0, 4, 1, 2, 2],
        ];
        for ranks in cases {
            let engine = arena_engine::placement_points(ranks);
            let ours = points(ranks);
            assert_eq!(ours.len(), engine.len());
            for (a, b) in ours.iter().zip(&engine) {
                assert!((a - b).abs() < 1e-12, "{ranks:?}: {ours:?} vs {engine:?}");
            }
        }
    }

    #[test]
    fn lcm_and_gcd() {
        assert_eq!(gcd(12, 18), 6);
        assert_eq!(lcm(2, 6), Some(6));
        assert_eq!(lcm(4, 6), Some(12));
        assert_eq!(lcm(u64::MAX, u64::MAX - 1), None);
    }
}
