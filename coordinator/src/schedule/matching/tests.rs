use super::*;

fn pairs(mate: &[Option<usize>]) -> Vec<(usize, usize)> {
    mate.iter()
        .enumerate()
        .filter_map(|(v, m)| m.filter(|&u| v < u).map(|u| (v, u)))
        .collect()
}

/// Exhaustive maximum over all matchings (all, or maximum-cardinality).
fn brute(nv: usize, edges: &[(usize, usize, Weight)], maxcard: bool) -> (usize, Weight) {
    fn go(
        v: usize,
        used: &mut [bool],
        edges: &[(usize, usize, Weight)],
        card: usize,
        w: Weight,
        best: &mut (usize, Weight),
        maxcard: bool,
    ) {
        let nv = used.len();
        if v == nv {
            let better = if maxcard {
                (card, w) > *best
            } else {
                w > best.1
            };
            if better {
                *best = (card, w);
            }
            return;
        }
        if used[v] {
            return go(v + 1, used, edges, card, w, best, maxcard);
        }
        go(v + 1, used, edges, card, w, best, maxcard);
        for &(a, b, wt) in edges {
            let u = if a == v {
                b
            } else if b == v {
                a
            } else {
                continue;
            };
            if u > v && !used[u] {
                used[v] = true;
                used[u] = true;
                go(v + 1, used, edges, card + 1, w + wt, best, maxcard);
                used[v] = false;
                used[u] = false;
            }
        }
    }
    let mut best = (0, Weight::MIN);
    go(0, &mut vec![false; nv], edges, 0, 0, &mut best, maxcard);
    best
}

fn check(nv: usize, edges: &[(usize, usize, Weight)], maxcard: bool) {
    let mate = max_weight_matching(nv, edges, maxcard).expect("valid graph");
    for (v, m) in mate.iter().enumerate() {
        if let Some(u) = *m {
            assert_eq!(mate[u], Some(v), "mate is symmetric");
        }
    }
    let got = pairs(&mate);
    let weight: Weight = got
        .iter()
        .map(|&(a, b)| {
            edges
                .iter()
                .find(|e| (e.0 == a && e.1 == b) || (e.0 == b && e.1 == a))
                .expect("matched pairs are edges")
                .2
        })
        .sum();
    let (card, best) = brute(nv, edges, maxcard);
    if maxcard {
        assert_eq!((got.len(), weight), (card, best), "{edges:?}");
    } else {
        assert_eq!(weight, best.max(0), "{edges:?}");
    }
}

#[test]
fn small_fixed_graphs() {
    check(0, &[], false);
    check(2, &[(0, 1, 1)], false);
    check(3, &[(0, 1, 10), (1, 2, 11)], false);
    check(4, &[(0, 1, 5), (1, 2, 11), (2, 3, 5)], false);
    check(4, &[(0, 1, 5), (1, 2, 11), (2, 3, 5)], true);
    // Negative weights.
    let neg = [(0, 1, 2), (0, 2, -2), (1, 2, 1), (1, 3, -1), (2, 3, -6)];
    check(4, &neg, false);
    check(4, &neg, true);
    // A triangle with a tail forces a blossom.
    check(4, &[(0, 1, 8), (0, 2, 9), (1, 2, 10), (2, 3, 7)], false);
}

#[test]
fn rejects_bad_input() {
    assert!(matches!(
        max_weight_matching(2, &[(0, 0, 1)], false),
        Err(MatchingError::SelfLoop { .. })
    ));
    assert!(matches!(
        max_weight_matching(2, &[(0, 2, 1)], false),
        Err(MatchingError::VertexOutOfRange { .. })
    ));
    assert!(matches!(
        max_weight_matching(2, &[(0, 1, 1), (1, 0, 2)], false),
        Err(MatchingError::ParallelEdge { .. })
    ));
}

/// Pricing from poor candidate sets reaches the same optimum as the plain
/// algorithm on the full graph (or agrees that no perfect matching
/// exists), on graphs too large for brute force.
/// Random graphs, sparse and dense, small and narrow-weighted so that
/// blossoms, nested blossoms and ties all occur; compared with brute force.
#[test]
fn random_graphs_match_brute_force() {
    let mut state = 0x1234_5678_9abc_def0u64;
    let mut next = move |bound: u64| {
        state = crate::schedule::splitmix64(state);
        state % bound
    };
    for round in 0..3000 {
        let nv = 1 + next(10) as usize;
        let density = 1 + next(10);
        let span = [3, 10, 1000][round % 3];
        let mut edges = Vec::new();
        for a in 0..nv {
            for b in a + 1..nv {
                if next(10) < density {
                    let w = next(span) as Weight - (span as Weight) / 4;
                    if next(2) == 0 {
                        edges.push((a, b, w));
                    } else {
                        edges.push((b, a, w));
                    }
                }
            }
        }
        check(nv, &edges, round % 2 == 0);
    }
}

/// Edges among `nv` vertices, each present with a drawn density, with
/// weights from a span that changes with `round`.
fn random_edges(
    next: &mut impl FnMut(u64) -> u64,
    nv: usize,
    round: usize,
) -> Vec<(usize, usize, Weight)> {
    let density = 1 + next(10);
    let span = [3, 10, 1000, 1 << 40][round % 4];
    let mut edges = Vec::new();
    for a in 0..nv {
        for b in a + 1..nv {
            if next(10) < density {
                let w = next(span) as Weight - (span as Weight) / 4;
                edges.push((a, b, w));
            }
        }
    }
    edges
}

/// The jump-started sparse solve finds a matching as heavy as the cold
/// complete solve among maximum-cardinality matchings (perfect ones
/// where they exist, and then with duals that leave no negative slack).
/// A matching's size and weight over `edges`.
fn matched_weight(edges: &[(usize, usize, Weight)], mate: &[Option<usize>]) -> (usize, Weight) {
    let pairs = pairs(mate);
    let w = pairs
        .iter()
        .map(|&(a, b)| {
            edges
                .iter()
                .find(|e| (e.0.min(e.1), e.0.max(e.1)) == (a, b))
                .expect("matched pairs are edges")
                .2
        })
        .sum();
    (pairs.len(), w)
}

#[test]
fn jump_started_solve_matches_cold_solve() {
    let mut state = 0x0bad_5eed_u64;
    let mut next = move |bound: u64| {
        state = crate::schedule::splitmix64(state);
        state % bound
    };
    for round in 0..3000 {
        let nv = 2 + next(12) as usize;
        let edges = random_edges(&mut next, nv, round);
        let cold = max_weight_matching(nv, &edges, true).expect("valid");
        let solution = solve_sparse(nv, &edges).expect("valid");
        let warm = solution.mates();
        let weight = |mate: &[Option<usize>]| matched_weight(&edges, mate);
        assert_eq!(weight(&warm), weight(&cold), "round {round}: {edges:?}");
        if warm.iter().all(Option::is_some) {
            for &(a, b, w) in &edges {
                assert!(solution.slack(a, b, w) >= 0, "round {round}: {a}-{b}");
            }
        }
    }
}

/// The two-phase solve (a random part of the edges first, stuck trees
/// left single, then the rest) finds as heavy a maximum-cardinality
/// matching as the cold complete solve, and where it is perfect its
/// duals leave no negative slack on any edge.
#[test]
fn two_phase_solve_matches_cold_solve() {
    let mut state = 0x2fa5_e5ee_u64;
    let mut next = move |bound: u64| {
        state = crate::schedule::splitmix64(state);
        state % bound
    };
    for round in 0..3000 {
        let nv = 2 + next(12) as usize;
        let mut edges = random_edges(&mut next, nv, round);
        // Inner edges: those within a random split of the vertices.
        let side: Vec<u64> = (0..nv).map(|_| next(3)).collect();
        edges.sort_by_key(|&(a, b, _)| side[a] != side[b]);
        let split = edges.iter().take_while(|e| side[e.0] == side[e.1]).count();
        let cold = max_weight_matching(nv, &edges, true).expect("valid");
        let solution = solve_sparse_in_two(nv, &edges[..split], &edges[split..]).expect("valid");
        let two = solution.mates();
        let weight = |mate: &[Option<usize>]| matched_weight(&edges, mate);
        assert_eq!(weight(&two), weight(&cold), "round {round}: {edges:?}");
        if two.iter().all(Option::is_some) {
            for &(a, b, w) in &edges {
                assert!(solution.slack(a, b, w) >= 0, "round {round}: {a}-{b}");
            }
        }
    }
}

/// Solving a part of a graph and then the rest warm (in a few steps)
/// gives as heavy a perfect matching as a cold solve of the whole, with
/// duals feasible on every edge.
#[test]
fn warm_resolve_matches_cold_solve() {
    let mut state = 0x5eed_cafe_u64;
    let mut next = move |bound: u64| {
        state = crate::schedule::splitmix64(state);
        state % bound
    };
    for round in 0..6000 {
        let nv = 2 * (1 + next(8) as usize);
        let density = 3 + next(8);
        let span = [3, 10, 1000, 1 << 40][round % 4];
        let mut edges = Vec::new();
        // A path through every vertex keeps a perfect matching in each
        // part.
        for a in 0..nv {
            for b in a + 1..nv {
                if b == a + 1 || next(10) < density {
                    let w = next(span) as Weight - (span as Weight) / 4;
                    edges.push((a, b, w));
                }
            }
        }
        // The path first, then the rest in a few random batches.
        let (mut path, mut rest): (Vec<_>, Vec<_>) = edges.iter().partition(|e| e.1 == e.0 + 1);
        for i in (1..rest.len()).rev() {
            rest.swap(i, next(i as u64 + 1) as usize);
        }
        let weight =
            |mate: &[Option<usize>], edges: &[(usize, usize, Weight)]| matched_weight(edges, mate);
        let mut solution = solve_sparse(nv, &path).expect("valid");
        let batches = 1 + next(4) as usize;
        let size = rest.len().div_ceil(batches).max(1);
        for batch in rest.chunks(size) {
            path.extend_from_slice(batch);
            solution = solution.resolve(&path).expect("valid");
            let cold = max_weight_matching(nv, &path, true).expect("valid");
            assert_eq!(
                weight(&solution.mates(), &path),
                weight(&cold, &path),
                "round {round}: {path:?}"
            );
            for &(a, b, w) in &path {
                assert!(solution.slack(a, b, w) >= 0, "round {round}: {a}-{b}");
            }
        }
    }
}

/// Every way of starting and growing ends, when perfect, with duals
/// that leave no edge with negative slack (the certificate pricing
/// relies on).
#[test]
fn every_start_ends_with_feasible_duals() {
    let mut state = 0x0bad_5eed_u64;
    let mut next = move |bound: u64| {
        state = crate::schedule::splitmix64(state);
        state % bound
    };
    for round in 0..20000 {
        let nv = 2 + next(14) as usize;
        let edges = random_edges(&mut next, nv, round);
        for variant in 0..3 {
            let mut m = Matcher::new(nv, &edges);
            match variant {
                0 => {
                    m.jump_start();
                    m.run(true);
                }
                1 => {
                    m.warm_start();
                    m.run_single_tree();
                }
                _ => {
                    m.jump_start();
                    m.run_single_tree();
                }
            }
            if m.mate.contains(&NONE) {
                continue;
            }
            let chains = m.blossom_chains();
            for &(a, b, w) in &edges {
                if m.full_slack(&chains, a, b, w) < 0 {
                    panic!("variant {variant} round {round} nv {nv} edges {edges:?}");
                }
            }
        }
    }
}
