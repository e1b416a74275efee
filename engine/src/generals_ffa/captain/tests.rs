//! The captain on small hand-drawn views.
//!
//! A view is drawn one token per cell, rows on lines. Tokens: `.` neutral
//! plain (army 0), `#` mountain, `?` never seen, `c` neutral city (40), `a`
//! our plain, `K` our crown, `e` seat 1's plain, `E` seat 1's crown, `f`
//! seat 2's plain; digits after a letter set the army (owned cells default
//! to 1). A leading `~` makes the cell remembered: seen at turn 0, out of
//! sight now, army unknown. We are seat 0.

use super::compile;
use crate::generals_ffa::plan::{self, Cities, Condition, Intent, Plan, Rule};
use crate::generals_ffa::view::{CellKind, CellView, Move, View};

fn view(turn: u32, art: &str) -> View {
    let mut cells = Vec::new();
    let mut width = 0;
    let mut height = 0;
    let mut crown = usize::MAX;
    for line in art.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let row: Vec<&str> = line.split_whitespace().collect();
        width = row.len();
        height += 1;
        for token in row {
            let (remembered, token) = match token.strip_prefix('~') {
                Some(rest) => (true, rest),
                None => (false, token),
            };
            let (letter, digits) = token.split_at(1);
            let (kind, owner, default) = match letter {
                "." => (Some(CellKind::Plain), None, 0),
                "#" => (Some(CellKind::Mountain), None, 0),
                "?" => (None, None, 0),
                "c" => (Some(CellKind::City), None, 40),
                "a" => (Some(CellKind::Plain), Some(0), 1),
                "K" => (Some(CellKind::Crown), Some(0), 1),
                "e" => (Some(CellKind::Plain), Some(1), 1),
                "E" => (Some(CellKind::Crown), Some(1), 1),
                "f" => (Some(CellKind::Plain), Some(2), 1),
                _ => panic!("bad token {token}"),
            };
            if letter == "K" {
                crown = cells.len();
            }
            let army = digits.parse().unwrap_or(default);
            let visible = kind.is_some() && !remembered;
            cells.push(CellView {
                kind,
                owner,
                army: visible.then_some(army),
                seen: kind.map(|_| if visible { turn } else { 0 }),
                visible,
            });
        }
    }
    View {
        seat: 0,
        turn,
        max_turns: 240,
        width,
        height,
        cells,
        crown,
        alive: [true; 4],
    }
}

fn only(when: Condition, intent: Intent) -> Plan {
    Plan {
        rules: vec![Rule { when, intent }],
        reserve: 0,
        cities: Cities::Cheap,
        scouts: 0,
    }
}

fn mv(from: usize, to: usize, amount: u32) -> Option<Move> {
    Some(Move { from, to, amount })
}

#[test]
fn defend_takes_the_enemy_next_to_the_crown() {
    let v = view(
        3,
        "
        . . . .
        . K10 e3 .
        . a . .",
    );
    assert_eq!(compile(&plan::sprawl(), &v), mv(5, 6, 9));
}

#[test]
fn defend_gathers_home_when_it_cannot_take() {
    // The enemy stack of 30 is too big for anything we have: pull the
    // largest army (the 8, not the 3) one step home.
    let v = view(
        3,
        "
        . . . . .
        . K2 . e30 .
        . a . . .
        . a8 a3 . .",
    );
    assert_eq!(
        compile(&only(Condition::Always, Intent::Defend), &v),
        mv(16, 11, 7)
    );
}

#[test]
fn a_lone_enemy_border_cell_is_no_threat() {
    let v = view(1, ". K5 e1 .");
    let plan = only(Condition::CrownThreatened, Intent::Defend);
    assert_eq!(compile(&plan, &v), None);
    let v = view(1, ". K5 e2 .");
    assert_eq!(compile(&plan, &v), mv(1, 2, 4));
}

#[test]
fn expand_takes_a_neutral_neighbour_nearest_the_crown() {
    let v = view(
        1,
        "
        # . #
        # K5 a3
        # # .",
    );
    // The crown's 4 beats the plain's 2: it takes the only plain next to it.
    assert_eq!(compile(&plan::sprawl(), &v), mv(4, 1, 4));
}

#[test]
fn scouts_send_the_least_army_towards_the_fog() {
    let v = view(
        8,
        "
        ? ? ? ?
        . . . ?
        . K9 . ?",
    );
    // Turn 8 is the first of a plan window and sprawl scouts once: one army
    // onto the plain that uncovers the most never-seen cells (cell 5, next
    // to 3 of them; cell 10 touches 2).
    assert_eq!(compile(&plan::sprawl(), &v), mv(9, 5, 1));
    // The next turn is no scout turn: the whole stack goes.
    let later = View { turn: 9, ..v };
    assert_eq!(compile(&plan::sprawl(), &later).map(|m| m.amount), Some(8));
}

#[test]
fn city_policy_decides_whether_expand_takes_a_city() {
    let v = view(1, "# K90 c40 #");
    let mut plan = only(Condition::Always, Intent::Expand);
    for (cities, expected) in [
        (Cities::Never, None),
        (Cities::Cheap, mv(1, 2, 89)),
        (Cities::Always, mv(1, 2, 89)),
    ] {
        plan.cities = cities;
        assert_eq!(compile(&plan, &v), expected, "{cities:?}");
    }
    // 40 is more than half of 70: not cheap, but still takeable.
    let v = view(1, "# K70 c40 #");
    plan.cities = Cities::Cheap;
    assert_eq!(compile(&plan, &v), None);
    plan.cities = Cities::Always;
    assert_eq!(compile(&plan, &v), mv(1, 2, 69));
}

#[test]
fn expand_walks_the_largest_army_to_the_frontier() {
    let v = view(1, "K1 a1 a6 a1 a1 .");
    assert_eq!(compile(&plan::sprawl(), &v), mv(2, 3, 5));
}

#[test]
fn attack_nearest_steps_towards_a_visible_enemy() {
    let v = view(
        1,
        "
        K9 . . .
        a . . e
        . . . .",
    );
    let plan = only(Condition::Always, Intent::AttackNearest);
    // From cell 0 (distance 4) both right and down are a step closer: the
    // step onto our own cell (4) is free, so it beats taking the plain at 1.
    assert_eq!(compile(&plan, &v), mv(0, 4, 8));
    // Without that cell of ours, the lower index wins the tie.
    let v = view(1, "K9 . . . \n . . . e");
    assert_eq!(compile(&plan, &v), mv(0, 1, 8));
    assert_eq!(
        compile(
            &only(Condition::EnemyVisible, Intent::AttackNearest),
            &view(1, "K9 . .")
        ),
        None
    );
}

#[test]
fn raid_crown_steps_towards_a_remembered_crown() {
    let v = view(
        1,
        "
        . . . ~E
        K30 # . .",
    );
    let plan = plan::crown();
    // Reserve 20: the crown sends 9, around the mountain.
    assert_eq!(compile(&plan, &v), mv(4, 0, 9));
    // A remembered crown of a dead seat is stale: crown_known fails and
    // the plan expands instead (there is nothing else to take either way).
    let mut dead = v.clone();
    dead.alive[1] = false;
    let only_raid = only(Condition::CrownKnown, Intent::RaidCrown);
    assert_eq!(compile(&only_raid, &dead), None);
    assert_eq!(compile(&only_raid, &v), mv(4, 0, 29));
}

#[test]
fn reserve_is_kept_on_every_source() {
    let mut plan = only(Condition::Always, Intent::Expand);
    plan.reserve = 3;
    assert_eq!(compile(&plan, &view(1, "K5 .")), mv(0, 1, 1));
    assert_eq!(compile(&plan, &view(1, "K4 .")), None);
}

#[test]
fn nothing_to_do_is_none() {
    assert_eq!(compile(&plan::sprawl(), &view(1, "K1 a1 .")), None);
    assert_eq!(compile(&plan::sprawl(), &view(1, "K9 # #")), None);
    // Never a move from a cell that is not ours.
    assert_eq!(compile(&plan::sprawl(), &view(1, "e9 . K1")), None);
}

#[test]
fn conditions_read_the_view() {
    // 1 cell of 4 is 25%: not below 25, below 26.
    let v = view(5, "K5 . . .");
    assert_eq!(
        compile(&only(Condition::LandBelow(25), Intent::Expand), &v),
        None
    );
    assert!(compile(&only(Condition::LandBelow(26), Intent::Expand), &v).is_some());
    assert_eq!(
        compile(&only(Condition::TurnAtLeast(6), Intent::Expand), &v),
        None
    );
    assert!(compile(&only(Condition::TurnAtLeast(5), Intent::Expand), &v).is_some());
}

#[test]
fn inconsistent_views_do_not_panic() {
    let base = view(1, "K5 . e3 .");
    let mut short = base.clone();
    short.cells.truncate(2);
    let mut no_width = base.clone();
    no_width.width = 0;
    let mut far_crown = base.clone();
    far_crown.crown = 999;
    let mut huge = base.clone();
    huge.width = usize::MAX;
    huge.height = 2;
    for v in [short, no_width, far_crown, huge] {
        for plan in [plan::sprawl(), plan::crown()] {
            let _ = compile(&plan, &v);
        }
    }
}

#[test]
fn compile_is_deterministic() {
    let v = view(
        17,
        "
        ? ? . . e2
        . a3 a . e5
        . K12 a4 . .
        ~E . c . #",
    );
    for plan in [plan::sprawl(), plan::crown()] {
        assert_eq!(compile(&plan, &v), compile(&plan, &v.clone()));
    }
}
