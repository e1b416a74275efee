//! Swiss rounds of more than two seats: groups in score order, swaps
//! between neighbouring groups that avoid repeats, byes for the field's
//! remainder (or a baseline filling the short group), and each group's
//! seat order.

use std::collections::HashSet;

use super::{Field, score_order};
use crate::domain::{Pairing, Round, baseline_id};

/// Groups of `seats` (> 2) by score, with repeat-avoiding swaps between
/// neighbouring groups and balanced seats (see the module docs). With a
/// `baseline`, nobody sits out: the last, short group is filled with it.
pub(super) fn group_many_seats(
    field: &Field,
    seats: usize,
    seed: u64,
    baseline: Option<&str>,
) -> Round {
    let st = &field.standings;
    let order = score_order(field);
    let sitting_out = if baseline.is_some() {
        0
    } else {
        order.len() % seats
    };
    // Byes: fewest byes first, then lowest score, then latest seeded.
    let mut bye_order = order.clone();
    bye_order.sort_by_key(|&i| (st[i].byes, st[i].points, std::cmp::Reverse(i)));
    let bye_set: HashSet<usize> = bye_order[..sitting_out].iter().copied().collect();
    let players: Vec<usize> = order
        .iter()
        .copied()
        .filter(|i| !bye_set.contains(i))
        .collect();
    let mut groups: Vec<Vec<usize>> = players.chunks(seats).map(<[usize]>::to_vec).collect();
    improve_groups(field, &mut groups);
    let pairings = groups
        .iter()
        .map(|g| {
            // Only the short group of a filled field has empty seats.
            let mut members: Vec<Option<usize>> = g.iter().copied().map(Some).collect();
            members.resize(seats, None);
            Pairing {
                seats: assign_seats(field, &members, seats)
                    .into_iter()
                    .map(|seat| match (seat, baseline) {
                        (Some(i), _) => st[i].entrant.clone(),
                        (None, Some(baseline)) => baseline_id(baseline),
                        // Without a baseline every group is full.
                        (None, None) => String::new(),
                    })
                    .collect(),
                seed,
            }
        })
        .collect();
    // Byes in score order, like everything else.
    let byes = order
        .iter()
        .filter(|i| bye_set.contains(i))
        .map(|&i| st[i].entrant.clone())
        .collect();
    Round { pairings, byes }
}

/// (already played as this exact group, pairs who met before).
fn group_cost(field: &Field, group: &[usize]) -> (u32, u32) {
    let mut key = group.to_vec();
    key.sort_unstable();
    let repeat = u32::from(field.groups.contains(&key));
    let mut met = 0;
    for (x, &a) in group.iter().enumerate() {
        for &b in &group[x + 1..] {
            met += field.met(a, b);
        }
    }
    (repeat, met)
}

/// Sweeps over neighbouring groups, making the best single swap between each
/// two when it lowers their combined (repeats, met pairs); a few sweeps at
/// most, so the cost stays linear in the field.
fn improve_groups(field: &Field, groups: &mut [Vec<usize>]) {
    const SWEEPS: usize = 4;
    let add = |a: (u32, u32), b: (u32, u32)| (a.0 + b.0, a.1 + b.1);
    for _ in 0..SWEEPS {
        let mut changed = false;
        for gi in 0..groups.len().saturating_sub(1) {
            let current = add(
                group_cost(field, &groups[gi]),
                group_cost(field, &groups[gi + 1]),
            );
            if current == (0, 0) {
                continue;
            }
            // Best swap: lowest cost, then smallest score disturbance.
            let mut best: Option<((u32, u32), u64, usize, usize)> = None;
            for x in 0..groups[gi].len() {
                for y in 0..groups[gi + 1].len() {
                    let (a, b) = (groups[gi][x], groups[gi + 1][y]);
                    groups[gi][x] = b;
                    groups[gi + 1][y] = a;
                    let cost = add(
                        group_cost(field, &groups[gi]),
                        group_cost(field, &groups[gi + 1]),
                    );
                    groups[gi][x] = a;
                    groups[gi + 1][y] = b;
                    let shift = field.standings[a]
                        .points
                        .abs_diff(field.standings[b].points);
                    if cost < current && best.is_none_or(|(c, s, _, _)| (cost, shift) < (c, s)) {
                        best = Some((cost, shift, x, y));
                    }
                }
            }
            if let Some((_, _, x, y)) = best {
                let (a, b) = (groups[gi][x], groups[gi + 1][y]);
                groups[gi][x] = b;
                groups[gi + 1][y] = a;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
}

/// Seat order for a group: minimises (Σ times each member already sat in
/// its new seat, Σ members repeating their previous seat); an empty seat
/// (`None`, to be filled by a baseline) costs nothing. Exhaustive up to six
/// seats; beyond, the best rotation improved by pairwise swaps.
fn assign_seats(field: &Field, group: &[Option<usize>], seats: usize) -> Vec<Option<usize>> {
    let st = &field.standings;
    let cost = |arrangement: &[Option<usize>]| -> (u64, u64) {
        arrangement
            .iter()
            .enumerate()
            .fold((0, 0), |(c, r), (seat, member)| match member {
                Some(i) => (
                    c + u64::from(st[*i].seat_counts[seat]),
                    r + u64::from(st[*i].last_seat == Some(seat)),
                ),
                None => (c, r),
            })
    };
    let mut best = group.to_vec();
    let mut best_cost = cost(&best);
    if seats <= 6 {
        let mut perm = group.to_vec();
        // Heap's algorithm visits every permutation once, deterministically.
        let mut c = vec![0usize; perm.len()];
        let mut i = 1;
        while i < perm.len() {
            if c[i] < i {
                let j = if i % 2 == 0 { 0 } else { c[i] };
                perm.swap(j, i);
                let pc = cost(&perm);
                if pc < best_cost {
                    best_cost = pc;
                    best.clone_from(&perm);
                }
                c[i] += 1;
                i = 1;
            } else {
                c[i] = 0;
                i += 1;
            }
        }
        return best;
    }
    for r in 1..group.len() {
        let mut rot = group.to_vec();
        rot.rotate_left(r);
        let rc = cost(&rot);
        if rc < best_cost {
            best_cost = rc;
            best = rot;
        }
    }
    loop {
        let mut improved = false;
        for i in 0..best.len() {
            for j in i + 1..best.len() {
                best.swap(i, j);
                let c = cost(&best);
                if c < best_cost {
                    best_cost = c;
                    improved = true;
                } else {
                    best.swap(i, j);
                }
            }
        }
        if !improved {
            break;
        }
    }
    best
}
