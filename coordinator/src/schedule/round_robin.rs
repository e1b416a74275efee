//! Round-robin schedules: the circle method for two seats, every N-subset
//! laid out by first fit for more (see the module docs of `schedule`).

use super::{
    ScheduleError, rotation_seed, round_robin_seed, validate_field, validate_filled_field,
};
use crate::domain::{EntrantId, Pairing, Round, baseline_id};

/// The most games [`round_robin`] will schedule (over all cycles); larger
/// requests get [`ScheduleError::TooLarge`] instead of exhausting memory.
pub const MAX_ROUND_ROBIN_GAMES: u64 = 2_000_000;

/// The natural number of games per pairing for `seats`-seat games: one per
/// seat, so that with cyclic rotation each member of a group sits in each
/// seat exactly once.
pub fn default_games_per_pairing(seats: usize) -> u32 {
    u32::try_from(seats).unwrap_or(u32::MAX)
}

/// A full round-robin: every group of `seats` entrants meets
/// `games_per_pairing` times per cycle, `cycles` times over, each entrant in
/// at most one group per round.
///
/// Rounds come cycle by cycle; within a round, each group's games are
/// consecutive, and each pass of them through the seatings shares one seed
/// ([`super::round_robin_seed`], then [`super::rotation_seed`]). Entrants
/// without a game in a round are listed in its `byes`. Two seats give the
/// optimal `n - 1` rounds per cycle (`n` rounded up to even); see the module
/// docs for the layout with more seats.
pub fn round_robin(
    entrants: &[EntrantId],
    seats: usize,
    cycles: u32,
    games_per_pairing: u32,
    base_seed: u64,
) -> Result<Vec<Round>, ScheduleError> {
    validate(entrants, seats, cycles, games_per_pairing)?;
    let layout = if seats == 2 {
        circle_layout(entrants.len())
    } else {
        first_fit_layout(entrants.len(), seats)
    };
    let g = u64::from(games_per_pairing);
    let mut rounds = Vec::with_capacity(layout.len() * cycles as usize);
    for cycle in 0..cycles {
        for groups in &layout {
            let mut round = Round::default();
            let mut playing = vec![false; entrants.len()];
            for group in groups {
                let seed = round_robin_seed(base_seed, cycle, group.index);
                for &m in &group.members {
                    playing[m] = true;
                }
                for game in 0..g {
                    // Seat s gets member (s + offset) mod N; for two seats the
                    // group is (home, away), so this alternates starting home.
                    let turn = game + u64::from(cycle) * g;
                    let offset = if seats == 2 {
                        turn
                    } else {
                        group.index.wrapping_add(turn)
                    };
                    let n = seats as u64;
                    let order = (0..seats)
                        .map(|s| {
                            let m = (s as u64 + offset % n) % n;
                            entrants[group.members[m as usize]].clone()
                        })
                        .collect();
                    let seed = rotation_seed(seed, game / n);
                    round.pairings.push(Pairing { seats: order, seed });
                }
            }
            round.byes = entrants
                .iter()
                .zip(&playing)
                .filter(|(_, p)| !**p)
                .map(|(e, _)| e.clone())
                .collect();
            rounds.push(round);
        }
    }
    Ok(rounds)
}

/// [`round_robin`] for a game with baselines. A field of at least `seats`
/// plays the ordinary round-robin (every group is full). A smaller field is
/// one group filled with seats of `baseline` (written as [`baseline_id`]):
/// each cycle is one round of `games_per_pairing` games on one seed
/// (`round_robin_seed(base_seed, cycle, 0)`), seats rotated cyclically as in
/// the N-seat layout, so the entrants take turns in every seat.
pub fn round_robin_with_baseline(
    entrants: &[EntrantId],
    seats: usize,
    cycles: u32,
    games_per_pairing: u32,
    base_seed: u64,
    baseline: &str,
) -> Result<Vec<Round>, ScheduleError> {
    if entrants.len() >= seats {
        return round_robin(entrants, seats, cycles, games_per_pairing, base_seed);
    }
    validate_filled(entrants, seats, cycles, games_per_pairing)?;
    let mut members = entrants.to_vec();
    members.resize(seats, baseline_id(baseline));
    let g = u64::from(games_per_pairing);
    let n = seats as u64;
    let rounds = (0..cycles)
        .map(|cycle| {
            let seed = round_robin_seed(base_seed, cycle, 0);
            let pairings = (0..g)
                .map(|game| {
                    let offset = (game + u64::from(cycle) * g) % n;
                    let order = (0..n)
                        .map(|s| members[((s + offset) % n) as usize].clone())
                        .collect();
                    Pairing {
                        seats: order,
                        seed: rotation_seed(seed, game / n),
                    }
                })
                .collect();
            Round {
                pairings,
                byes: Vec::new(),
            }
        })
        .collect();
    Ok(rounds)
}

/// How many rounds [`round_robin_with_baseline`] would return, without
/// building them.
pub fn round_robin_round_count_with_baseline(
    entrants: &[EntrantId],
    seats: usize,
    cycles: u32,
    games_per_pairing: u32,
) -> Result<usize, ScheduleError> {
    if entrants.len() >= seats {
        return round_robin_round_count(entrants, seats, cycles, games_per_pairing);
    }
    validate_filled(entrants, seats, cycles, games_per_pairing)?;
    Ok(cycles as usize)
}

/// The checks of a field too small for one full group, which baselines fill.
fn validate_filled(
    entrants: &[EntrantId],
    seats: usize,
    cycles: u32,
    games_per_pairing: u32,
) -> Result<(), ScheduleError> {
    validate_filled_field(entrants, seats)?;
    if cycles == 0 {
        return Err(ScheduleError::ZeroCycles);
    }
    if games_per_pairing == 0 {
        return Err(ScheduleError::ZeroGames);
    }
    let games = u128::from(games_per_pairing) * u128::from(cycles);
    if games > u128::from(MAX_ROUND_ROBIN_GAMES) {
        return Err(ScheduleError::TooLarge {
            games,
            limit: MAX_ROUND_ROBIN_GAMES,
        });
    }
    Ok(())
}

/// How many rounds [`round_robin`] would return for these arguments (and the
/// same error it would give), without building a single pairing: callers
/// that only need the count, such as a status poll, skip the schedule.
pub fn round_robin_round_count(
    entrants: &[EntrantId],
    seats: usize,
    cycles: u32,
    games_per_pairing: u32,
) -> Result<usize, ScheduleError> {
    validate(entrants, seats, cycles, games_per_pairing)?;
    let per_cycle = if seats == 2 {
        // The circle method's `m - 1` rounds (see `circle_layout`).
        entrants.len() + entrants.len() % 2 - 1
    } else {
        first_fit_layout(entrants.len(), seats).len()
    };
    Ok(per_cycle * cycles as usize)
}

/// The checks [`round_robin`] makes before laying anything out.
fn validate(
    entrants: &[EntrantId],
    seats: usize,
    cycles: u32,
    games_per_pairing: u32,
) -> Result<(), ScheduleError> {
    validate_field(entrants, seats)?;
    if cycles == 0 {
        return Err(ScheduleError::ZeroCycles);
    }
    if games_per_pairing == 0 {
        return Err(ScheduleError::ZeroGames);
    }
    let groups = binomial(entrants.len(), seats);
    let games = groups
        .saturating_mul(u128::from(games_per_pairing))
        .saturating_mul(u128::from(cycles));
    if games > u128::from(MAX_ROUND_ROBIN_GAMES) {
        return Err(ScheduleError::TooLarge {
            games,
            limit: MAX_ROUND_ROBIN_GAMES,
        });
    }
    Ok(())
}

/// One pairing group in a layout: member positions in `entrants` and the
/// group's lexicographic rank among all subsets of its size.
#[derive(Clone, Debug)]
struct Group {
    members: Vec<usize>,
    index: u64,
}

/// `C(n, k)`, saturating.
fn binomial(n: usize, k: usize) -> u128 {
    if k > n {
        return 0;
    }
    let k = k.min(n - k);
    let mut c: u128 = 1;
    for i in 0..k {
        // c·(n-i)/(i+1) stays integral at every step.
        c = match c.checked_mul((n - i) as u128) {
            Some(v) => v / (i as u128 + 1),
            None => return u128::MAX,
        };
    }
    c
}

/// Rank of the pair `{i, j}` (i < j) among the 2-subsets of `0..n` in
/// lexicographic order.
fn pair_rank(n: usize, i: usize, j: usize) -> u64 {
    let (i, j, n) = (i as u64, j as u64, n as u64);
    i * (2 * n - i - 1) / 2 + (j - i - 1)
}

/// The circle method: `m - 1` rounds of `(home, away)` pairs over `n`
/// entrants (`m` = `n` rounded up to even; pairs with the ghost, index
/// `m - 1` when `n` is odd, are left out, so their other member sits out).
fn circle_layout(n: usize) -> Vec<Vec<Group>> {
    let m = n + n % 2;
    let ring = m - 1; // entrants 0..ring rotate; entrant `ring` is pinned
    let pinned = ring;
    let mut rounds = Vec::with_capacity(ring);
    for r in 0..ring {
        let slot = |k: usize| (k + r) % ring;
        let mut pairs = Vec::with_capacity(m / 2);
        pairs.push(if r % 2 == 0 {
            (pinned, slot(0))
        } else {
            (slot(0), pinned)
        });
        for k in 1..m / 2 {
            pairs.push((slot(k), slot(ring - k)));
        }
        let groups = pairs
            .into_iter()
            .filter(|&(a, b)| a < n && b < n)
            .map(|(home, away)| Group {
                members: vec![home, away],
                index: pair_rank(n, home.min(away), home.max(away)),
            })
            .collect();
        rounds.push(groups);
    }
    rounds
}

/// Every `seats`-subset of `0..n` in lexicographic order, each placed in the
/// earliest round where none of its members already plays (first fit).
fn first_fit_layout(n: usize, seats: usize) -> Vec<Vec<Group>> {
    let mut rounds: Vec<Vec<Group>> = Vec::new();
    // busy[e] is a bitset over rounds: bit r set when e plays in round r.
    let mut busy: Vec<Vec<u64>> = vec![Vec::new(); n];
    let mut combo: Vec<usize> = (0..seats).collect();
    let mut index = 0u64;
    loop {
        let mut word = 0usize;
        let round = loop {
            let taken = combo.iter().fold(0u64, |acc, &e| {
                acc | busy[e].get(word).copied().unwrap_or(0)
            });
            if taken != u64::MAX {
                break word * 64 + taken.trailing_ones() as usize;
            }
            word += 1;
        };
        for &e in &combo {
            let w = round / 64;
            if busy[e].len() <= w {
                busy[e].resize(w + 1, 0);
            }
            busy[e][w] |= 1 << (round % 64);
        }
        if rounds.len() <= round {
            rounds.resize_with(round + 1, Vec::new);
        }
        rounds[round].push(Group {
            members: combo.clone(),
            index,
        });
        index += 1;
        // Next combination in lexicographic order.
        let Some(i) = (0..seats).rev().find(|&i| combo[i] < n - seats + i) else {
            break;
        };
        combo[i] += 1;
        for j in i + 1..seats {
            combo[j] = combo[j - 1] + 1;
        }
    }
    rounds
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binomials() {
        assert_eq!(binomial(5, 2), 10);
        assert_eq!(binomial(40, 4), 91_390);
        assert_eq!(binomial(3, 4), 0);
        assert_eq!(binomial(1000, 500), u128::MAX);
    }

    #[test]
    fn pair_rank_is_lexicographic() {
        for n in 2..12 {
            let mut k = 0;
            for i in 0..n {
                for j in i + 1..n {
                    assert_eq!(pair_rank(n, i, j), k);
                    k += 1;
                }
            }
        }
    }

    #[test]
    fn first_fit_group_index_matches_rank_for_pairs() {
        let layout = first_fit_layout(7, 2);
        for g in layout.iter().flatten() {
            assert_eq!(g.index, pair_rank(7, g.members[0], g.members[1]));
        }
    }
}
