//! Tournament schedulers: who plays whom, in which seat, on which map.
//!
//! Everything here is a pure function of its arguments — no I/O, no clock,
//! no global randomness — so the same inputs always give the same schedule,
//! and a coordinator that restarts mid-tournament recomputes exactly what it
//! had before.
//!
//! # Layout
//!
//! * `round_robin`: the round-robin schedules ([`round_robin`]).
//! * `swiss`: Swiss rounds ([`swiss_round`]): the field read from the
//!   history, the two-seat pairing graph, and the groups of more seats.
//! * [`matching`]: the blossom algorithm (maximum-weight matching).
//! * `pricing`: the exact two-seat Swiss matching on the implicit complete
//!   graph, certified by the matching's duals.
//! * `banded`: the two-seat Swiss matching of a large field, band by band.
//! * `sides`: the schedulers over the sides of a team game.
//!
//! This module holds what they share: the errors, the seeds and the checks
//! of a field.
//!
//! # Round-robin ([`round_robin`])
//!
//! **Two seats** use the circle method (the construction behind Berger
//! tables). With `n` entrants (plus a "ghost" when `n` is odd, whose opponent
//! gets a bye), one entrant is pinned and the other `m - 1` sit on a ring that
//! turns one step per round; in each round the pinned entrant meets the ring's
//! slot 0 and slot `k` meets slot `m - 1 - k`. Two ring entrants `p`, `q` meet
//! in the one round `r` with `p + q ≡ 2r (mod m - 1)`, which exists and is
//! unique because `m - 1` is odd, so `m - 1` rounds contain every pair exactly
//! once. The lower slot of each pair is "home"; the pinned entrant is home in
//! even rounds. Every entrant is home within one of half its pairings.
//!
//! Each pairing is played `games_per_pairing` (G) times in its round, the
//! seats alternating from game to game starting with home in seat 0, on one
//! map seed per pass through the seatings (games `2k` and `2k + 1` share a
//! map, [`rotation_seed`]; with more seats, each `N` consecutive games) — so two deterministic bots meet on equal terms, and for even G
//! everyone sits in seat 0 for exactly half their games. For odd G the
//! alternation carries over between cycles (game `g` of cycle `c` puts home in
//! seat 0 when `g + c·G` is even), so over an even number of cycles seats are
//! again exactly balanced. Each of the `cycles` repetitions gets fresh seeds.
//!
//! **More than two seats (N)**: every N-subset of the entrants is a pairing
//! group, played G times with seats rotated cyclically (game `g` puts member
//! `(s + offset) mod N` in seat `s`, offset = group index + g + c·G), so with
//! G = N (see [`default_games_per_pairing`]) everyone sits in every seat of
//! every group once. The groups are laid into rounds by *first fit*: taking
//! groups in lexicographic order, each goes into the earliest round where none
//! of its members plays yet. This is a greedy colouring, not an optimal one
//! (at least `C(n, N)·N / n` rounds are needed; first fit uses somewhat more),
//! and entrants who do not play in a round are listed as that round's byes
//! (worth nothing in round-robin). Mind the growth: `C(n, N)` groups — 70 for
//! 8 entrants of a 4-seat game, 4 845 for 20, 91 390 for 40 — which is why
//! schedules over [`MAX_ROUND_ROBIN_GAMES`] games are refused.
//!
//! # Swiss ([`swiss_round`])
//!
//! Each round is paired from the results so far. Scores: a game with N seats
//! gives the seat finishing `p` places from the top `(N-1-p)/(N-1)` points,
//! tied seats sharing the average of the places they cover (so 2 seats: win 1,
//! draw ½, loss 0); a bye is worth a win (1 point). Byes are not recorded in
//! the history, so they are inferred: an entrant of the field that appears in
//! no record of an earlier round that has records had the bye in that round.
//!
//! **Two seats** are paired by a maximum-weight perfect matching (the
//! O(n³) blossom algorithm in [`matching`]) over the complete graph of the
//! field, plus, when the field is odd, a ghost vertex standing for the bye.
//! Each edge carries a cost with five components, compared in strict priority
//! (a higher one outweighs any total of the lower ones over a whole round):
//!
//! 1. **rematches** — how often the two have met before. Minimising the total
//!    means no rematch is played while a rematch-free round exists.
//! 2. **bye rank** — only on ghost edges. The ghost is joined only to entrants
//!    with the fewest byes so far (nobody gets a second bye while someone has
//!    none), and its edge costs the candidate's position in bye order (lowest
//!    score first, then latest in seeding order). So the bye goes to the
//!    lowest-scored eligible entrant, unless that would force a rematch.
//! 3. **score gap** — `(score_a - score_b)²`, in the smallest exact score
//!    unit of the field (half points for two-seat games). Squaring prefers two
//!    one-point gaps to one two-point gap: floaters move one group at a time.
//! 4. **seat balance** — with `b` = (games in seat 0) − (games in seat 1),
//!    the pair costs `4·(b_0'² + b_1'²) + repeats`, where `b'` are the
//!    balances after the game with the better of the two seatings, and
//!    `repeats` counts who would get the same seat as in their previous game
//!    (colour alternation, as in chess). Two entrants wanting the same seat
//!    cost more than two wanting opposite seats.
//! 5. **tie-break** — each entrant draws a number from the base seed, the
//!    round and its id; its *key* is its place when the field is sorted by
//!    those draws (a shuffle of the field, `0..n`). A pair costs the
//!    distance between its two keys, so among otherwise equal pairings the
//!    matching pairs entrants that are near in the shuffle: deterministic,
//!    and equal-score pairings do not follow the seeding order. (A cost of
//!    one number per entrant rather than per pair is what lets the scalable
//!    solve check a whole class of pairs by one sorted sweep.)
//!
//! With `P` edges in a perfect matching, each tier's multiplier exceeds
//! everything the tiers below can add up to over a whole matching (`P` times
//! their largest edge cost, tier by tier; only one ghost edge can be in a
//! matching); the cost `C = Σ tierᵢ·multᵢ` becomes the weight
//! `max C + 1 - C`, and the matching is a maximum-weight *perfect* one, so
//! it minimises the tiers lexicographically. Arithmetic is exact `i128`. The
//! better seating decides who sits first (ties by a pseudo-random bit from
//! the seed and the two ids); boards are
//! ordered by the higher-placed entrant.
//!
//! Speed: the complete graph has `n²/2` edges, so [`PairingGraph`] is
//! implicit (an edge's cost is computed from its two vertices when asked)
//! and a field of up to [`SWISS_WHOLE_LIMIT`] entrants is solved whole and
//! exactly by `pricing`: the blossom algorithm on a sparse candidate graph,
//! whose final duals are then checked against every pair of the complete
//! graph, a whole class of pairs per sorted sweep, adding violated pairs
//! until none is left; see `pricing`'s docs for the argument. An exact solve
//! of that kind grows faster than `n²` with a real history (duals of many
//! equal-score vertices are degenerate, so certifying takes many rounds), so
//! a larger field is *banded* (`banded`): laid out by score, cut into bands
//! of [`SWISS_BAND`], each band matched exactly on its own, and the first
//! three tiers — rematches, bye, score gap — proved optimal for the whole
//! field from a bound (neighbours in score order pair with the least total
//! `(Δ score)²`, and the bound splits band by band). A band that misses it
//! is merged with its neighbours and solved again, up to the whole field
//! for a rematch or a misplaced bye, so those two tiers are always the
//! field's optimum; [`swiss_round_in_bands`] reports whether the score gaps
//! were proved too (they were in every round of the 10 000-entrant tests).
//! Seat balance and the tie-break are optimal within each band, not across
//! bands. [`swiss_round_complete_graph`] keeps the plain complete-graph solve
//! as the reference both are tested against.
//!
//! **More than two seats**: the field is sorted by score (ties by seeding
//! order); the `n mod N` entrants with the fewest byes, lowest score first,
//! sit out; the rest are cut into consecutive groups of N. Then a few
//! sweeps swap single members between *neighbouring* groups whenever that
//! lowers (first) the number of groups that already played together as a
//! group and (then) the number of pairs who have met before — avoiding
//! repeats only where it is cheap in score. Within a group, seats go to the
//! assignment that minimises how often each member already sat in the seat
//! it gets (then repeats of the previous seat): exhaustively for up to six
//! seats, by rotations and pairwise swaps above.
//!
//! **Games with baselines** ([`swiss_round_with_baseline`]): nobody sits out.
//! The whole field is cut into groups of N, and the last, short group (the
//! lowest-scored, after the swaps) is filled with seats of the game's first
//! baseline, entrant id `baseline:NAME` ([`crate::domain::baseline_id`]); its
//! empty seats cost nothing in the seat assignment. With two seats, the
//! entrant the matching gives the bye plays the baseline instead. Baseline
//! seats are no one in the history: they score for nobody, meet nobody and
//! never make a group a repeat, while the entrants beside them score their
//! placement as usual. The same holds for a round-robin of fewer entrants
//! than seats ([`round_robin_with_baseline`]): one filled group, seats
//! rotated, one round per cycle.
//!
//! # Team games ([`round_robin_by_side`], [`swiss_round_by_side`])
//!
//! A game played in teams (see [`crate::teams`]) is scheduled over its
//! *sides*: the schedulers above run with `seats` = the number of sides (2
//! in a 2v2 game), so everything said about two seats holds for two sides —
//! the circle method, home and away alternating from game to game, the
//! matching, byes for an odd field (or the game's baseline, where it has
//! one). Each pairing is then seated: seat `s` is taken by the entrant of
//! the side of `teams[s]`, so with teams `[0, 1, 0, 1]` the games of one
//! pairing are `[A, B, A, B]`, `[B, A, B, A]`, … Swiss reads its history
//! with each side's seats collapsed into one, so teammates never count as
//! having met and seat balance is balance of sides.
//!
//! # Seeds
//!
//! Map seeds come from [`mix_seed`]: SplitMix64 applied to the base seed, then
//! once more after XOR-ing in each part (a domain tag, then the indices). A
//! round-robin pairing's seed depends on the cycle and on its group index
//! (the rank of its entrant set, by position in `entrants`, among all
//! N-subsets in lexicographic order); see [`round_robin_seed`]. All games of a
//! Swiss round share one map, from the round number; see [`swiss_seed`].

mod banded;
pub mod matching;
mod pricing;
mod round_robin;
mod sides;
mod swiss;

use std::collections::HashSet;

use crate::domain::{EntrantId, baseline_name};

pub use banded::{BAND as SWISS_BAND, BandedReport, WHOLE_LIMIT as SWISS_WHOLE_LIMIT};
pub use round_robin::{
    MAX_ROUND_ROBIN_GAMES, default_games_per_pairing, round_robin, round_robin_round_count,
    round_robin_round_count_with_baseline, round_robin_with_baseline,
};
pub use sides::{round_robin_by_side, round_robin_round_count_by_side, swiss_round_by_side};
pub use swiss::{
    PairCost, PairingGraph, SCORE_UNIT, SwissStanding, seat_points, swiss_graph, swiss_round,
    swiss_round_complete_graph, swiss_round_in_bands, swiss_round_with_baseline, swiss_standings,
};

/// Why a schedule could not be made.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ScheduleError {
    #[error("a game needs at least 2 seats, got {seats}")]
    TooFewSeats { seats: usize },
    #[error("{entrants} entrant(s) cannot fill a {seats}-seat game")]
    TooFewEntrants { entrants: usize, seats: usize },
    #[error("a round-robin needs at least one cycle")]
    ZeroCycles,
    #[error("a round-robin needs at least one game per pairing")]
    ZeroGames,
    #[error("entrant {0:?} is listed more than once")]
    DuplicateEntrant(EntrantId),
    #[error("entrant {0:?} is written as a baseline seat; baselines are not entrants")]
    BaselineEntrant(EntrantId),
    #[error("the schedule would hold {games} games, more than the {limit} allowed")]
    TooLarge { games: u128, limit: u64 },
    #[error("pairing weights overflow exact arithmetic (field or history too large)")]
    WeightOverflow,
    #[error("the schedule does not fit the game's teams")]
    Teams(#[from] crate::teams::TeamError),
    /// A bug, not a bad input: the matching came back imperfect.
    #[error("internal scheduling error: {0}")]
    Internal(String),
}

/// SplitMix64's output function: a bijective 64-bit mixer.
pub fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// `h₀ = splitmix64(base)`, `hᵢ₊₁ = splitmix64(hᵢ ^ partᵢ)`; returns the last.
pub fn mix_seed(base_seed: u64, parts: &[u64]) -> u64 {
    parts
        .iter()
        .fold(splitmix64(base_seed), |h, &p| splitmix64(h ^ p))
}

/// Domain tags, so round-robin and Swiss seeds never coincide by design.
const ROUND_ROBIN_TAG: u64 = u64::from_be_bytes(*b"arena-rr");
const SWISS_TAG: u64 = u64::from_be_bytes(*b"arena-sw");
const JITTER_TAG: u64 = u64::from_be_bytes(*b"arena-jt");
const ROTATION_TAG: u64 = u64::from_be_bytes(*b"arena-ro");

/// The map seed of round-robin group `group_index` in cycle `cycle`.
pub fn round_robin_seed(base_seed: u64, cycle: u32, group_index: u64) -> u64 {
    mix_seed(base_seed, &[ROUND_ROBIN_TAG, u64::from(cycle), group_index])
}

/// The map seed of a group's games in their `rotation`-th pass through the
/// seat order (game `g` of a group of `N` seats is in pass `g / N`): the
/// group's seed for the first pass, a fresh one for each later pass, so that
/// more games than seats never replay a map with the same seating.
pub fn rotation_seed(group_seed: u64, rotation: u64) -> u64 {
    if rotation == 0 {
        group_seed
    } else {
        mix_seed(group_seed, &[ROTATION_TAG, rotation])
    }
}

/// The map seed shared by every game of Swiss round `round`.
pub fn swiss_seed(base_seed: u64, round: u32) -> u64 {
    mix_seed(base_seed, &[SWISS_TAG, u64::from(round)])
}

/// FNV-1a, for turning entrant ids into numbers to mix.
fn fnv1a(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// The checks every scheduler shares.
fn validate_field(entrants: &[EntrantId], seats: usize) -> Result<(), ScheduleError> {
    validate_filled_field(entrants, seats)?;
    if entrants.len() < seats {
        return Err(ScheduleError::TooFewEntrants {
            entrants: entrants.len(),
            seats,
        });
    }
    Ok(())
}

/// The checks of a field whose empty seats baselines fill: any number of
/// entrants but none, each once, and no entrant that claims to be a baseline.
fn validate_filled_field(entrants: &[EntrantId], seats: usize) -> Result<(), ScheduleError> {
    if seats < 2 {
        return Err(ScheduleError::TooFewSeats { seats });
    }
    let mut seen = HashSet::with_capacity(entrants.len());
    for e in entrants {
        if !seen.insert(e.as_str()) {
            return Err(ScheduleError::DuplicateEntrant(e.clone()));
        }
        if baseline_name(e).is_some() {
            return Err(ScheduleError::BaselineEntrant(e.clone()));
        }
    }
    if entrants.is_empty() {
        return Err(ScheduleError::TooFewEntrants {
            entrants: entrants.len(),
            seats,
        });
    }
    Ok(())
}
