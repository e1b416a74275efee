//! Properties of the schedulers: round-robin coverage, seat balance and
//! seeds; Swiss completeness, bye fairness, rematch avoidance and (by brute
//! force on small fields) optimality of the matching.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::time::Instant;

use arena_coordinator::domain::{EntrantId, MatchRecord, Round, SeatResult};
use arena_coordinator::schedule::matching::{Weight, max_weight_matching};
use arena_coordinator::schedule::{
    MAX_ROUND_ROBIN_GAMES, PairCost, ScheduleError, default_games_per_pairing, rotation_seed,
    round_robin, round_robin_round_count, round_robin_seed, seat_points, splitmix64, swiss_graph,
    swiss_round, swiss_seed, swiss_standings,
};
use proptest::prelude::*;

fn ids(n: usize) -> Vec<EntrantId> {
    (0..n).map(|i| format!("bot-{i:03}")).collect()
}

/// A small deterministic generator for test data.
struct Rng(u64);

impl Rng {
    fn below(&mut self, bound: u64) -> u64 {
        self.0 = splitmix64(self.0);
        self.0 % bound
    }
}

/// Random results for a round: each game's ranks drawn at random (ties
/// allowed), as the runner would report them.
fn play(round_no: u32, round: &Round, rng: &mut Rng) -> Vec<MatchRecord> {
    round
        .pairings
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let n = p.seats.len() as u64;
            MatchRecord {
                match_id: format!("r{round_no}-m{i}"),
                round: round_no,
                seats: p
                    .seats
                    .iter()
                    .map(|e| SeatResult {
                        entrant: e.clone(),
                        rank: rng.below(n) as u32,
                        ..SeatResult::default()
                    })
                    .collect(),
                reason: "test".into(),
                turns: 1,
                worker: String::new(),
            }
        })
        .collect()
}

fn sorted(v: &[EntrantId]) -> Vec<EntrantId> {
    let mut v = v.to_vec();
    v.sort();
    v
}

// ---------------------------------------------------------------------------
// Round-robin
// ---------------------------------------------------------------------------

/// Checks that holds for every round-robin: structure, coverage, seeds.
fn check_round_robin(n: usize, seats: usize, cycles: u32, games: u32, base: u64) -> Vec<Round> {
    let entrants = ids(n);
    let rounds = round_robin(&entrants, seats, cycles, games, base).expect("valid input");
    assert_eq!(
        round_robin_round_count(&entrants, seats, cycles, games),
        Ok(rounds.len())
    );
    let mut meetings: BTreeMap<Vec<EntrantId>, u32> = BTreeMap::new();
    let mut seeds_seen: HashMap<u64, (u32, Vec<EntrantId>)> = HashMap::new();
    let rounds_per_cycle = rounds.len() / cycles as usize;
    assert_eq!(rounds.len() % cycles as usize, 0);
    for (r, round) in rounds.iter().enumerate() {
        let cycle = (r / rounds_per_cycle) as u32;
        // Each entrant plays in at most one group per round, and the
        // round's byes are exactly the entrants without a game.
        let mut group_of: HashMap<&str, Vec<EntrantId>> = HashMap::new();
        let mut games_in_group: BTreeMap<Vec<EntrantId>, Vec<&arena_coordinator::domain::Pairing>> =
            BTreeMap::new();
        for p in &round.pairings {
            assert_eq!(p.seats.len(), seats);
            let key = sorted(&p.seats);
            assert_eq!(
                key.iter().collect::<BTreeSet<_>>().len(),
                seats,
                "distinct seats"
            );
            for e in &p.seats {
                let prev = group_of.entry(e.as_str()).or_insert_with(|| key.clone());
                assert_eq!(*prev, key, "{e} plays two groups in round {r}");
            }
            games_in_group.entry(key).or_default().push(p);
        }
        for (key, games_of) in &games_in_group {
            assert_eq!(games_of.len() as u32, games, "G games per group per round");
            *meetings.entry(key.clone()).or_default() += 1;
            // One seed per group, cycle and pass through the seatings, the
            // documented function of (cycle, group rank, pass), never reused
            // elsewhere.
            let positions: Vec<usize> = key
                .iter()
                .map(|e| entrants.iter().position(|x| x == e).expect("known"))
                .collect();
            let rank = lex_rank(n, &positions);
            let group_seed = round_robin_seed(base, cycle, rank);
            let mut passes = BTreeSet::new();
            for (g, game) in games_of.iter().enumerate() {
                let pass = (g / seats) as u64;
                assert_eq!(
                    game.seed,
                    rotation_seed(group_seed, pass),
                    "one map per pass"
                );
                if passes.insert(pass)
                    && let Some(prev) = seeds_seen.insert(game.seed, (cycle, key.clone()))
                {
                    panic!("seed {} reused: {prev:?} and {:?}", game.seed, (cycle, key));
                }
            }
        }
        let mut byes = round.byes.clone();
        byes.sort();
        let idle: Vec<EntrantId> = entrants
            .iter()
            .filter(|e| !group_of.contains_key(e.as_str()))
            .cloned()
            .collect();
        assert_eq!(byes, sorted(&idle), "byes are the idle entrants");
    }
    // Every group of `seats` meets once per cycle.
    let expected = binomial(n, seats);
    assert_eq!(meetings.len() as u64, expected, "every group appears");
    assert!(
        meetings.values().all(|&m| m == cycles),
        "each group once per cycle: {meetings:?}"
    );
    rounds
}

/// Rank of a sorted index subset among all subsets of its size, in
/// lexicographic order (the test's own brute-force version).
fn lex_rank(n: usize, subset: &[usize]) -> u64 {
    let mut s = subset.to_vec();
    s.sort_unstable();
    let k = s.len();
    let mut combo: Vec<usize> = (0..k).collect();
    let mut rank = 0;
    loop {
        if combo == s {
            return rank;
        }
        rank += 1;
        let i = (0..k)
            .rev()
            .find(|&i| combo[i] < n - k + i)
            .expect("subset exists");
        combo[i] += 1;
        for j in i + 1..k {
            combo[j] = combo[j - 1] + 1;
        }
    }
}

fn binomial(n: usize, k: usize) -> u64 {
    (0..k).fold(1u64, |c, i| c * (n - i) as u64 / (i as u64 + 1))
}

fn seat_counts(rounds: &[Round], seats: usize) -> HashMap<EntrantId, Vec<u32>> {
    let mut counts: HashMap<EntrantId, Vec<u32>> = HashMap::new();
    for p in rounds.iter().flat_map(|r| &r.pairings) {
        for (s, e) in p.seats.iter().enumerate() {
            counts.entry(e.clone()).or_insert_with(|| vec![0; seats])[s] += 1;
        }
    }
    counts
}

#[test]
fn round_robin_two_seats_every_pair_meets_g_times_k() {
    for n in 2..=13 {
        for games in 1..=3 {
            for cycles in 1..=3 {
                let rounds = check_round_robin(n, 2, cycles, games, 42 + n as u64);
                let m = n + n % 2;
                assert_eq!(
                    rounds.len(),
                    cycles as usize * (m - 1),
                    "optimal round count"
                );
                // Every pair meets G·k times in total.
                let mut games_between: HashMap<Vec<EntrantId>, u32> = HashMap::new();
                for p in rounds.iter().flat_map(|r| &r.pairings) {
                    *games_between.entry(sorted(&p.seats)).or_default() += 1;
                }
                assert_eq!(games_between.len(), n * (n - 1) / 2);
                assert!(games_between.values().all(|&g| g == games * cycles));
            }
        }
    }
}

#[test]
fn round_robin_two_seats_swaps_seats_between_games() {
    let rounds = round_robin(&ids(6), 2, 1, 4, 7).expect("valid");
    for round in &rounds {
        for pair in round.pairings.chunks(4) {
            for w in pair.windows(2) {
                assert_eq!(w[0].seats[0], w[1].seats[1]);
                assert_eq!(w[0].seats[1], w[1].seats[0]);
            }
        }
    }
}

#[test]
fn round_robin_two_seats_balances_seats() {
    for n in 2..=12 {
        // Even G: exactly half of each entrant's games in seat 0.
        for games in [2, 4] {
            for cycles in 1..=3 {
                let rounds = round_robin(&ids(n), 2, cycles, games, 1).expect("valid");
                for (e, c) in seat_counts(&rounds, 2) {
                    assert_eq!(c[0], c[1], "{e}: {c:?} (n={n}, G={games}, k={cycles})");
                }
            }
        }
        // Odd G: within one game per cycle, and exact over an even number
        // of cycles (the alternation carries over).
        for games in [1, 3] {
            for cycles in 1..=4u32 {
                let rounds = round_robin(&ids(n), 2, cycles, games, 1).expect("valid");
                for (e, c) in seat_counts(&rounds, 2) {
                    let diff = c[0].abs_diff(c[1]);
                    if cycles % 2 == 0 {
                        assert_eq!(diff, 0, "{e}: {c:?}");
                    } else {
                        assert!(diff <= 1, "{e}: {c:?} (n={n}, G={games}, k={cycles})");
                    }
                }
            }
        }
    }
}

#[test]
fn round_robin_odd_field_gives_each_entrant_one_bye_per_cycle() {
    for n in [3, 5, 7, 9, 11] {
        let cycles = 2;
        let rounds = round_robin(&ids(n), 2, cycles, 2, 9).expect("valid");
        let mut byes: HashMap<EntrantId, u32> = HashMap::new();
        for round in &rounds {
            assert_eq!(round.byes.len(), 1, "exactly one bye per round");
            assert_eq!(round.pairings.len(), 2 * (n - 1) / 2);
            *byes.entry(round.byes[0].clone()).or_default() += 1;
        }
        assert_eq!(byes.len(), n);
        assert!(byes.values().all(|&b| b == cycles));
    }
    for n in [2, 4, 6, 10] {
        let rounds = round_robin(&ids(n), 2, 1, 1, 9).expect("valid");
        assert!(rounds.iter().all(|r| r.byes.is_empty()));
    }
}

#[test]
fn more_games_than_seats_draw_a_fresh_map_per_pass_through_the_seatings() {
    let e = ids(2);
    // Two seats, four games: (A, B) and (B, A) on one map, then on another.
    let rounds = round_robin(&e, 2, 1, 4, 77).expect("valid");
    let games = &rounds[0].pairings;
    assert_eq!(games.len(), 4);
    assert_eq!(games[0].seed, games[1].seed);
    assert_eq!(games[2].seed, games[3].seed);
    assert_ne!(
        games[0].seed, games[2].seed,
        "the second pass replays the first"
    );
    assert_eq!(
        games[0].seats, games[2].seats,
        "same seating, so a fresh map matters"
    );
    // Up to one game per seat, schedules are what they were: one map.
    let two = round_robin(&e, 2, 1, 2, 77).expect("valid");
    assert_eq!(two[0].pairings[0].seed, round_robin_seed(77, 0, 0));
    assert_eq!(two[0].pairings[1].seed, round_robin_seed(77, 0, 0));
    // Four seats, eight games: two passes, two maps.
    let e = ids(4);
    let rounds = round_robin(&e, 4, 1, 8, 5).expect("valid");
    let seeds: Vec<u64> = rounds[0].pairings.iter().map(|p| p.seed).collect();
    assert!(seeds[..4].iter().all(|&s| s == seeds[0]));
    assert!(seeds[4..].iter().all(|&s| s == seeds[4]));
    assert_ne!(seeds[0], seeds[4]);
}

#[test]
fn round_robin_is_deterministic_and_seeded() {
    let e = ids(9);
    let a = round_robin(&e, 2, 2, 2, 1234).expect("valid");
    let b = round_robin(&e, 2, 2, 2, 1234).expect("valid");
    assert_eq!(a, b);
    let c = round_robin(&e, 2, 2, 2, 1235).expect("valid");
    assert_ne!(a, c, "another base seed gives other maps");
    // ... but the same pairings, seats and byes.
    let strip = |rs: &[Round]| -> Vec<(Vec<Vec<EntrantId>>, Vec<EntrantId>)> {
        rs.iter()
            .map(|r| {
                (
                    r.pairings.iter().map(|p| p.seats.clone()).collect(),
                    r.byes.clone(),
                )
            })
            .collect()
    };
    assert_eq!(strip(&a), strip(&c));
    let d = round_robin(&e, 4, 1, 4, 1234).expect("valid");
    assert_eq!(d, round_robin(&e, 4, 1, 4, 1234).expect("valid"));
}

#[test]
fn round_robin_many_seats_covers_every_subset() {
    for seats in [3, 4] {
        for n in seats..=8 {
            for games in [1, 2, seats as u32] {
                for cycles in [1, 2] {
                    let rounds = check_round_robin(n, seats, cycles, games, 5);
                    // Every subset appears G·k times as a game.
                    let mut count: HashMap<Vec<EntrantId>, u32> = HashMap::new();
                    for p in rounds.iter().flat_map(|r| &r.pairings) {
                        *count.entry(sorted(&p.seats)).or_default() += 1;
                    }
                    assert_eq!(count.len() as u64, binomial(n, seats));
                    assert!(count.values().all(|&c| c == games * cycles));
                }
            }
        }
    }
}

#[test]
fn round_robin_many_seats_rotates_every_member_through_every_seat() {
    let seats = 4;
    let games = default_games_per_pairing(seats);
    assert_eq!(games, 4);
    for n in 4..=8 {
        let rounds = round_robin(&ids(n), seats, 1, games, 3).expect("valid");
        // Within each group, each member sits in each seat exactly once.
        let mut per_group: HashMap<Vec<EntrantId>, HashMap<EntrantId, BTreeSet<usize>>> =
            HashMap::new();
        for p in rounds.iter().flat_map(|r| &r.pairings) {
            let g = per_group.entry(sorted(&p.seats)).or_default();
            for (s, e) in p.seats.iter().enumerate() {
                assert!(g.entry(e.clone()).or_default().insert(s), "seat repeated");
            }
        }
        for g in per_group.values() {
            assert!(g.values().all(|s| s.len() == seats));
        }
        // Hence every entrant sits equally often in every seat overall.
        for (e, c) in seat_counts(&rounds, seats) {
            assert!(c.iter().all(|&x| x == c[0]), "{e}: {c:?}");
        }
    }
}

#[test]
fn round_robin_many_seats_round_count_is_reasonable() {
    // First fit is not optimal, but it should not be far off the lower bound
    // C(n, N)·N / n (rounded up) on these sizes.
    for (n, seats) in [(5, 4), (8, 4), (9, 3), (12, 4), (16, 4)] {
        let rounds = round_robin(&ids(n), seats, 1, 1, 0).expect("valid");
        let lower = (binomial(n, seats) as usize * seats).div_ceil(n);
        assert!(rounds.len() >= lower);
        assert!(
            rounds.len() <= 2 * lower,
            "n={n} N={seats}: {} rounds, bound {lower}",
            rounds.len()
        );
    }
}

#[test]
fn round_robin_rejects_bad_input() {
    let e = ids(4);
    assert_eq!(
        round_robin(&e, 1, 1, 1, 0),
        Err(ScheduleError::TooFewSeats { seats: 1 })
    );
    assert_eq!(
        round_robin(&e, 5, 1, 1, 0),
        Err(ScheduleError::TooFewEntrants {
            entrants: 4,
            seats: 5
        })
    );
    assert_eq!(round_robin(&e, 2, 0, 1, 0), Err(ScheduleError::ZeroCycles));
    assert_eq!(round_robin(&e, 2, 1, 0, 0), Err(ScheduleError::ZeroGames));
    let mut dup = ids(3);
    dup.push("bot-001".into());
    assert_eq!(
        round_robin(&dup, 2, 1, 1, 0),
        Err(ScheduleError::DuplicateEntrant("bot-001".into()))
    );
    assert_eq!(
        round_robin(&[], 2, 1, 1, 0),
        Err(ScheduleError::TooFewEntrants {
            entrants: 0,
            seats: 2
        })
    );
    match round_robin(&ids(200), 4, 1, 4, 0) {
        Err(ScheduleError::TooLarge { games, limit }) => {
            assert_eq!(limit, MAX_ROUND_ROBIN_GAMES);
            assert_eq!(games, 4 * 64_684_950);
        }
        other => panic!("expected TooLarge, got {other:?}"),
    }
    // The round count refuses exactly what the schedule refuses.
    let large = ids(200);
    let refused: [(&[EntrantId], usize, u32, u32); 7] = [
        (&e, 1, 1, 1),
        (&e, 5, 1, 1),
        (&e, 2, 0, 1),
        (&e, 2, 1, 0),
        (&dup, 2, 1, 1),
        (&[], 2, 1, 1),
        (&large, 4, 1, 4),
    ];
    for (entrants, seats, cycles, games) in refused {
        assert_eq!(
            round_robin_round_count(entrants, seats, cycles, games).err(),
            round_robin(entrants, seats, cycles, games, 0).err()
        );
    }
}

// ---------------------------------------------------------------------------
// Swiss: oracles
// ---------------------------------------------------------------------------

/// The test's own reading of the history: pairs that met, byes per entrant
/// (an entrant absent from a round that has records had the bye), and
/// scores in half points for two-seat games.
struct Past {
    met: HashSet<(EntrantId, EntrantId)>,
    byes: HashMap<EntrantId, u32>,
    half_points: HashMap<EntrantId, u32>,
}

fn past(entrants: &[EntrantId], history: &[MatchRecord]) -> Past {
    let mut met = HashSet::new();
    let mut half_points: HashMap<EntrantId, u32> =
        entrants.iter().map(|e| (e.clone(), 0)).collect();
    let mut seen: BTreeMap<u32, HashSet<EntrantId>> = BTreeMap::new();
    for r in history {
        let present = seen.entry(r.round).or_default();
        for a in &r.seats {
            present.insert(a.entrant.clone());
            for b in &r.seats {
                if a.entrant != b.entrant {
                    met.insert((a.entrant.clone(), b.entrant.clone()));
                }
            }
        }
        if let [a, b] = r.seats.as_slice() {
            let (pa, pb) = match a.rank.cmp(&b.rank) {
                std::cmp::Ordering::Less => (2, 0),
                std::cmp::Ordering::Equal => (1, 1),
                std::cmp::Ordering::Greater => (0, 2),
            };
            *half_points.entry(a.entrant.clone()).or_default() += pa;
            *half_points.entry(b.entrant.clone()).or_default() += pb;
        }
    }
    let mut byes: HashMap<EntrantId, u32> = entrants.iter().map(|e| (e.clone(), 0)).collect();
    for present in seen.values() {
        for e in entrants {
            if !present.contains(e) {
                *byes.entry(e.clone()).or_default() += 1;
                *half_points.entry(e.clone()).or_default() += 2;
            }
        }
    }
    Past {
        met,
        byes,
        half_points,
    }
}

/// Every entrant exactly once (in one game or in the byes); games have the
/// right size and distinct members.
fn assert_complete(round: &Round, entrants: &[EntrantId], seats: usize) {
    let mut seen = Vec::new();
    for p in &round.pairings {
        assert_eq!(p.seats.len(), seats);
        seen.extend(p.seats.iter().cloned());
    }
    seen.extend(round.byes.iter().cloned());
    assert_eq!(sorted(&seen), sorted(entrants), "everyone exactly once");
    assert_eq!(
        round.byes.len(),
        entrants.len() % seats,
        "byes = n mod seats"
    );
}

/// Is there a two-seat pairing of the field with no rematch, where the bye
/// (odd field) goes to one of the entrants with the fewest byes? Searches
/// perfect matchings of the "not met yet" graph, memoising dead ends.
fn rematch_free_pairing_exists(entrants: &[EntrantId], past: &Past) -> bool {
    let n = entrants.len();
    let odd = n % 2 == 1;
    let v = n + usize::from(odd);
    assert!(v <= 64);
    let fewest = past.byes.values().copied().min().unwrap_or(0);
    let allowed = |a: usize, b: usize| -> bool {
        if a >= n || b >= n {
            let x = a.min(b);
            past.byes[&entrants[x]] == fewest
        } else {
            !past
                .met
                .contains(&(entrants[a].clone(), entrants[b].clone()))
        }
    };
    let adj: Vec<u64> = (0..v)
        .map(|a| {
            (0..v)
                .filter(|&b| a != b && allowed(a, b))
                .fold(0u64, |row, b| row | 1 << b)
        })
        .collect();
    fn search(free: u64, adj: &[u64], dead: &mut HashSet<u64>) -> bool {
        if free == 0 {
            return true;
        }
        if dead.contains(&free) {
            return false;
        }
        let a = free.trailing_zeros() as usize;
        let rest = free & !(1 << a);
        let mut options = adj[a] & rest;
        while options != 0 {
            let b = options.trailing_zeros() as usize;
            options &= options - 1;
            if search(rest & !(1 << b), adj, dead) {
                return true;
            }
        }
        dead.insert(free);
        false
    }
    let all = if v == 64 { u64::MAX } else { (1u64 << v) - 1 };
    search(all, &adj, &mut HashSet::new())
}

/// All perfect matchings of `0..v` (v even), as pair lists.
fn perfect_matchings(v: usize) -> Vec<Vec<(usize, usize)>> {
    fn go(
        free: &mut Vec<usize>,
        cur: &mut Vec<(usize, usize)>,
        out: &mut Vec<Vec<(usize, usize)>>,
    ) {
        if free.is_empty() {
            out.push(cur.clone());
            return;
        }
        let a = free.remove(0);
        for i in 0..free.len() {
            let b = free.remove(i);
            cur.push((a, b));
            go(free, cur, out);
            cur.pop();
            free.insert(i, b);
        }
        free.insert(0, a);
    }
    let mut out = Vec::new();
    go(&mut (0..v).collect(), &mut Vec::new(), &mut out);
    out
}

/// Plays `rounds` Swiss rounds with random results, checking each round with
/// `check(round_no, entrants, history_before, round)`.
fn run_swiss(
    n: usize,
    seats: usize,
    rounds: u32,
    base: u64,
    results_seed: u64,
    mut check: impl FnMut(u32, &[EntrantId], &[MatchRecord], &Round),
) -> Vec<MatchRecord> {
    let entrants = ids(n);
    let mut rng = Rng(results_seed);
    let mut history = Vec::new();
    for r in 0..rounds {
        let round = swiss_round(r, &entrants, &history, seats, base).expect("valid");
        check(r, &entrants, &history, &round);
        history.extend(play(r, &round, &mut rng));
    }
    history
}

// ---------------------------------------------------------------------------
// Swiss: properties
// ---------------------------------------------------------------------------

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    /// Two seats, fields of 2..40, several rounds of random results.
    #[test]
    fn swiss_two_seats_properties(
        n in 2usize..40,
        rounds in 1u32..8,
        base in any::<u64>(),
        results in any::<u64>(),
    ) {
        run_swiss(n, 2, rounds, base, results, |r, entrants, history, round| {
            assert_complete(round, entrants, 2);
            let past = past(entrants, history);
            // Fair byes: the bye goes to someone with the fewest byes.
            let fewest = past.byes.values().copied().min().unwrap_or(0);
            for b in &round.byes {
                assert_eq!(past.byes[b], fewest, "round {r}: {b} gets a second bye too early");
            }
            // No rematch while a rematch-free pairing exists.
            let rematches = round
                .pairings
                .iter()
                .filter(|p| past.met.contains(&(p.seats[0].clone(), p.seats[1].clone())))
                .count();
            let avoidable = rematch_free_pairing_exists(entrants, &past);
            assert_eq!(rematches == 0, avoidable, "round {r}: {rematches} rematches");
            // One map for the round.
            assert!(round.pairings.iter().all(|p| p.seed == swiss_seed(base, r)));
            // Deterministic, and blind to the order of the history.
            let again = swiss_round(r, entrants, history, 2, base).expect("valid");
            assert_eq!(&again, round);
            let mut reversed = history.to_vec();
            reversed.reverse();
            let shuffled = swiss_round(r, entrants, &reversed, 2, base).expect("valid");
            assert_eq!(&shuffled, round);
            // Standings agree with the test's own scoring.
            let standings = swiss_standings(r, entrants, history, 2).expect("valid");
            for s in &standings {
                assert_eq!(s.score() * 2.0, f64::from(past.half_points[&s.entrant]));
                assert_eq!(s.byes, past.byes[&s.entrant]);
            }
        });
    }

    /// Small fields: the scheduled round is a maximum-weight perfect matching
    /// of its graph, and — the point of the weight design — lexicographically
    /// minimal in (rematches, bye rank, score gaps, seats, jitter) among all
    /// pairings, by exhaustive enumeration.
    #[test]
    fn swiss_matching_is_optimal_by_brute_force(
        n in 2usize..=10,
        rounds in 1u32..8,
        base in any::<u64>(),
        results in any::<u64>(),
    ) {
        run_swiss(n, 2, rounds, base, results, |r, entrants, history, round| {
            let graph = swiss_graph(r, entrants, history, base).expect("valid");
            let chosen = graph.round_pairs(round).expect("round fits its graph");
            let chosen_weight = graph.total_weight(&chosen).expect("chosen pairs are edges");
            let chosen_cost = graph.total_cost(&chosen).expect("chosen pairs are edges");
            let mut best_weight = None;
            let mut best_cost: Option<PairCost> = None;
            for m in perfect_matchings(graph.vertices.len()) {
                let (Some(w), Some(c)) = (graph.total_weight(&m), graph.total_cost(&m)) else {
                    continue; // uses a missing ghost edge
                };
                best_weight = best_weight.max(Some(w));
                best_cost = Some(best_cost.map_or(c, |b| b.min(c)));
            }
            assert_eq!(Some(chosen_weight), best_weight, "round {r}: not a maximum");
            assert_eq!(Some(chosen_cost), best_cost, "round {r}: tiers out of order");
        });
    }

    /// Medium fields, beyond brute force: the round's weight equals that of
    /// the plain blossom algorithm run on the complete graph (the scheduler
    /// itself solves a sparse candidate graph and prices the rest).
    #[test]
    fn swiss_matching_equals_full_graph_optimum(
        n in 11usize..120,
        rounds in 1u32..7,
        base in any::<u64>(),
        results in any::<u64>(),
    ) {
        run_swiss(n, 2, rounds, base, results, |r, entrants, history, round| {
            let graph = swiss_graph(r, entrants, history, base).expect("valid");
            let v = graph.vertices.len();
            let full: Vec<(usize, usize, Weight)> = (0..v)
                .flat_map(|a| (a + 1..v).map(move |b| (a, b)))
                .filter_map(|(a, b)| Some((a, b, graph.weight(a, b)?)))
                .collect();
            let mate = max_weight_matching(v, &full, true).expect("valid graph");
            let reference: Vec<(usize, usize)> = mate
                .iter()
                .enumerate()
                .filter_map(|(a, m)| m.filter(|&b| a < b).map(|b| (a, b)))
                .collect();
            assert_eq!(reference.len() * 2, v, "perfect");
            let chosen = graph.round_pairs(round).expect("round fits its graph");
            assert_eq!(
                graph.total_weight(&chosen),
                graph.total_weight(&reference),
                "round {r}"
            );
        });
    }

    /// Four seats, fields of 4..40: completeness, fair byes (lowest score
    /// first among the fewest byes), determinism.
    #[test]
    fn swiss_four_seats_properties(
        n in 4usize..40,
        rounds in 1u32..7,
        base in any::<u64>(),
        results in any::<u64>(),
    ) {
        run_swiss(n, 4, rounds, base, results, |r, entrants, history, round| {
            assert_complete(round, entrants, 4);
            let standings = swiss_standings(r, entrants, history, 4).expect("valid");
            let fewest = standings.iter().map(|s| s.byes).min().unwrap_or(0);
            let byes_of: HashMap<&str, u32> =
                standings.iter().map(|s| (s.entrant.as_str(), s.byes)).collect();
            let with_fewest = standings.iter().filter(|s| s.byes == fewest).count();
            for b in &round.byes {
                // Nobody sits out twice while someone has sat out less,
                // unless there are not enough such entrants.
                if round.byes.len() <= with_fewest {
                    assert_eq!(byes_of[b.as_str()], fewest, "round {r}: unfair bye");
                } else {
                    assert!(byes_of[b.as_str()] <= fewest + 1);
                }
            }
            assert!(round.pairings.iter().all(|p| p.seed == swiss_seed(base, r)));
            let again = swiss_round(r, entrants, history, 4, base).expect("valid");
            assert_eq!(&again, round);
        });
    }
}

#[test]
fn swiss_scores_follow_ranks() {
    let rec = |ranks: &[u32]| MatchRecord {
        match_id: "m".into(),
        round: 0,
        seats: ranks
            .iter()
            .enumerate()
            .map(|(i, &rank)| SeatResult {
                entrant: format!("e{i}"),
                rank,
                ..SeatResult::default()
            })
            .collect(),
        reason: String::new(),
        turns: 0,
        worker: String::new(),
    };
    let unit = arena_coordinator::schedule::SCORE_UNIT as f64;
    let as_points = |v: Vec<i64>| v.into_iter().map(|p| p as f64 / unit).collect::<Vec<_>>();
    assert_eq!(as_points(seat_points(&rec(&[0, 1]))), [1.0, 0.0]);
    assert_eq!(as_points(seat_points(&rec(&[1, 0]))), [0.0, 1.0]);
    assert_eq!(as_points(seat_points(&rec(&[0, 0]))), [0.5, 0.5]);
    assert_eq!(
        as_points(seat_points(&rec(&[2, 0, 1, 3]))),
        [1.0 / 3.0, 1.0, 2.0 / 3.0, 0.0]
    );
    // Tied for second: the average of 2/3 and 1/3.
    assert_eq!(
        as_points(seat_points(&rec(&[0, 1, 1, 3]))),
        [1.0, 0.5, 0.5, 0.0]
    );
    assert_eq!(as_points(seat_points(&rec(&[0, 0, 0, 0]))), [0.5; 4]);
}

#[test]
fn swiss_first_round_pairs_everyone_with_one_bye() {
    let e = ids(9);
    let round = swiss_round(0, &e, &[], 2, 77).expect("valid");
    assert_complete(&round, &e, 2);
    // Everyone is on zero points: the bye goes to the last seeded.
    assert_eq!(round.byes, vec!["bot-008".to_string()]);
}

#[test]
fn swiss_bye_goes_to_lowest_score_without_a_bye() {
    let e = ids(5);
    let mut rng = Rng(3);
    let mut history = Vec::new();
    let mut byes = Vec::new();
    for r in 0..10 {
        let round = swiss_round(r, &e, &history, 2, 1).expect("valid");
        let past = past(&e, &history);
        let b = round.byes[0].clone();
        let fewest = past.byes.values().copied().min().unwrap_or(0);
        assert_eq!(past.byes[&b], fewest);
        byes.push(b);
        history.extend(play(r, &round, &mut rng));
    }
    // Ten rounds, five entrants: two byes each.
    let mut count: HashMap<EntrantId, u32> = HashMap::new();
    for b in byes {
        *count.entry(b).or_default() += 1;
    }
    assert_eq!(count.len(), 5);
    assert!(count.values().all(|&c| c == 2), "{count:?}");
}

#[test]
fn swiss_two_entrants_alternate_seats() {
    let e = ids(2);
    let mut rng = Rng(11);
    let mut history = Vec::new();
    let mut first = Vec::new();
    for r in 0..6 {
        let round = swiss_round(r, &e, &history, 2, 5).expect("valid");
        assert_eq!(round.pairings.len(), 1, "a rematch is unavoidable");
        first.push(round.pairings[0].seats[0].clone());
        history.extend(play(r, &round, &mut rng));
    }
    for w in first.windows(2) {
        assert_ne!(w[0], w[1], "seat 0 alternates: {first:?}");
    }
}

#[test]
fn swiss_pairs_by_score() {
    // Eight entrants after one round: four winners, four losers. The second
    // round pairs winners with winners and losers with losers.
    let e = ids(8);
    let round0 = swiss_round(0, &e, &[], 2, 3).expect("valid");
    let history: Vec<MatchRecord> = round0
        .pairings
        .iter()
        .enumerate()
        .map(|(i, p)| MatchRecord {
            match_id: format!("m{i}"),
            round: 0,
            seats: vec![
                SeatResult {
                    entrant: p.seats[0].clone(),
                    rank: 0,
                    ..SeatResult::default()
                },
                SeatResult {
                    entrant: p.seats[1].clone(),
                    rank: 1,
                    ..SeatResult::default()
                },
            ],
            reason: String::new(),
            turns: 0,
            worker: String::new(),
        })
        .collect();
    let winners: HashSet<&EntrantId> = round0.pairings.iter().map(|p| &p.seats[0]).collect();
    let round1 = swiss_round(1, &e, &history, 2, 3).expect("valid");
    for p in &round1.pairings {
        assert_eq!(winners.contains(&p.seats[0]), winners.contains(&p.seats[1]));
        // Each had seat 0 once or seat 1 once; they get opposite seats now:
        // the round-0 loser (who sat second) sits first.
        let first_sat_first = round0.pairings.iter().any(|q| q.seats[0] == p.seats[0]);
        let second_sat_first = round0.pairings.iter().any(|q| q.seats[0] == p.seats[1]);
        assert!(
            !first_sat_first || second_sat_first,
            "seat preference ignored"
        );
    }
    // Top boards first.
    assert!(winners.contains(&round1.pairings[0].seats[0]));
}

#[test]
fn swiss_avoids_repeat_groups_with_four_seats() {
    // 16 entrants, 4 per game: through a few rounds no group of four repeats
    // and nobody sits out.
    let mut groups = HashSet::new();
    run_swiss(16, 4, 5, 99, 4, |r, _, _, round| {
        assert!(round.byes.is_empty());
        for p in &round.pairings {
            assert!(groups.insert(sorted(&p.seats)), "round {r}: group repeated");
        }
    });
}

#[test]
fn swiss_four_seats_balances_seats() {
    // 8 entrants over 8 rounds: every entrant sits in every seat twice, or
    // nearly (each seat count within one of the mean).
    let history = run_swiss(8, 4, 8, 21, 8, |_, _, _, _| {});
    let mut counts: HashMap<&str, [u32; 4]> = HashMap::new();
    for r in &history {
        for (s, seat) in r.seats.iter().enumerate() {
            counts.entry(seat.entrant.as_str()).or_default()[s] += 1;
        }
    }
    for (e, c) in counts {
        assert!(c.iter().all(|&x| (1..=3).contains(&x)), "{e}: {c:?}");
    }
}

#[test]
fn swiss_rejects_bad_input() {
    assert_eq!(
        swiss_round(0, &ids(3), &[], 1, 0),
        Err(ScheduleError::TooFewSeats { seats: 1 })
    );
    assert_eq!(
        swiss_round(0, &ids(1), &[], 2, 0),
        Err(ScheduleError::TooFewEntrants {
            entrants: 1,
            seats: 2
        })
    );
    assert_eq!(
        swiss_round(0, &ids(3), &[], 4, 0),
        Err(ScheduleError::TooFewEntrants {
            entrants: 3,
            seats: 4
        })
    );
    let mut dup = ids(4);
    dup.push("bot-000".into());
    assert_eq!(
        swiss_round(0, &dup, &[], 2, 0),
        Err(ScheduleError::DuplicateEntrant("bot-000".into()))
    );
}

#[test]
fn swiss_ignores_later_rounds_and_strangers() {
    let e = ids(6);
    let mut rng = Rng(1);
    let r0 = swiss_round(0, &e, &[], 2, 8).expect("valid");
    let history = play(0, &r0, &mut rng);
    let clean = swiss_round(1, &e, &history, 2, 8).expect("valid");
    // A record from the future and one about entrants outside the field
    // change nothing.
    let mut noisy = history.clone();
    noisy.extend(play(5, &clean, &mut rng));
    noisy.push(MatchRecord {
        match_id: "stranger".into(),
        round: 0,
        seats: vec![
            SeatResult {
                entrant: "someone-else".into(),
                rank: 0,
                ..SeatResult::default()
            },
            SeatResult {
                entrant: "another".into(),
                rank: 1,
                ..SeatResult::default()
            },
        ],
        reason: String::new(),
        turns: 0,
        worker: String::new(),
    });
    assert_eq!(swiss_round(1, &e, &noisy, 2, 8).expect("valid"), clean);
}

/// A large field: 500 entrants, 9 rounds of random results. Not a timed
/// assertion — it prints how long the pairing took (run with `--release
/// --nocapture` to see release timings).
#[test]
fn swiss_large_field_schedules() {
    let n = 500;
    let rounds = 9;
    let mut pairing_time = std::time::Duration::ZERO;
    let mut rematches = 0;
    let entrants = ids(n);
    let mut rng = Rng(2024);
    let mut history: Vec<MatchRecord> = Vec::new();
    let mut met = HashSet::new();
    let mut played = Vec::new();
    for r in 0..rounds {
        let start = Instant::now();
        let round = swiss_round(r, &entrants, &history, 2, 31).expect("valid");
        pairing_time += start.elapsed();
        assert_complete(&round, &entrants, 2);
        for p in &round.pairings {
            if !met.insert(sorted(&p.seats)) {
                rematches += 1;
            }
        }
        history.extend(play(r, &round, &mut rng));
        played.push(round);
    }
    assert_eq!(
        rematches, 0,
        "a large field never needs a rematch in 9 rounds"
    );
    // Seats stay balanced: nobody sat first two games more than second.
    for (e, c) in seat_counts(&played, 2) {
        assert!(c[0].abs_diff(c[1]) <= 2, "{e}: {c:?}");
    }
    eprintln!(
        "swiss: {n} entrants, {rounds} rounds paired in {:.2?} ({:.2?} per round)",
        pairing_time,
        pairing_time / rounds
    );
}
