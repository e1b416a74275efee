use arena_engine::registry::FuelLimits;
use arena_proto::v1::{LeasedMatch, Seat};

use super::job::CorePlan;
use super::lease_setup::setup_match;

const GENERALS: &str = arena_engine::generals::ENTRY.name;
const FFA: &str = arena_engine::generals_ffa::ENTRY.name;

#[test]
fn a_match_holds_one_core_per_bot_and_shares_only_beyond_the_machine() {
    assert_eq!(
        CorePlan::for_match(2, 7),
        CorePlan {
            cores: 2,
            shared: false
        }
    );
    assert_eq!(
        CorePlan::for_match(4, 3),
        CorePlan {
            cores: 3,
            shared: true
        }
    );
    // Baseline seats need no core.
    assert_eq!(CorePlan::for_match(0, 3).cores, 0);
}

fn leased(game: &str, seats: &[(&str, &str)]) -> LeasedMatch {
    LeasedMatch {
        game: game.to_owned(),
        seed: 3,
        seats: seats
            .iter()
            .map(|(submission, baseline)| Seat {
                submission: (*submission).to_owned(),
                name: (*submission).to_owned(),
                baseline: (*baseline).to_owned(),
            })
            .collect(),
        rules_json: "{}".to_owned(),
        ..LeasedMatch::default()
    }
}

#[test]
fn leases_set_up_through_the_registry_with_the_games_defaults() {
    let two = [("aa", ""), ("bb", "")];
    let (game, config) = setup_match(&leased(GENERALS, &two)).unwrap();
    assert_eq!(game.seats(), 2);
    let defaults = arena_engine::generals::ENTRY.limits;
    assert_eq!(config.fault_limit, defaults.fault_limit);
    assert_eq!(config.per_move.as_millis(), u128::from(defaults.move_ms));

    let four = [("aa", ""), ("", "sprawl"), ("bb", ""), ("", "crown")];
    let mut lease = leased(FFA, &four);
    lease.move_ms = 1234;
    lease.rules_json = r#"{"blitz": true}"#.to_owned();
    let (game, config) = setup_match(&lease).unwrap();
    assert_eq!(game.name(), FFA);
    assert_eq!(config.per_move.as_millis(), 1234);

    for (lease, needle) in [
        (leased("chess", &two), "chess"),
        (leased(GENERALS, &four), "seats"),
        (
            leased(FFA, &[("aa", ""), ("", "nope"), ("bb", ""), ("cc", "")]),
            "nope",
        ),
        (
            LeasedMatch {
                rules_json: "[1]".to_owned(),
                ..leased(FFA, &four)
            },
            "JSON",
        ),
    ] {
        let err = setup_match(&lease).err().expect("refused").to_string();
        assert!(err.contains(needle), "{err}");
    }
}

#[test]
fn the_leases_fuel_keys_override_the_games_field_by_field() {
    let grid = arena_engine::grid_royale::ENTRY.name;
    let two = [("aa", ""), ("bb", "")];
    let defaults = arena_engine::grid_royale::ENTRY
        .limits
        .fuel
        .expect("grid royale runs WebAssembly seats");
    // No fuel keys (an older coordinator): the game's own.
    let (_, config) = setup_match(&leased(grid, &two)).unwrap();
    assert_eq!(config.fuel, Some(defaults));

    let mut lease = leased(grid, &two);
    lease.fuel_per_turn = 1_000;
    lease.init_fuel = 7;
    let (_, config) = setup_match(&lease).unwrap();
    assert_eq!(
        config.fuel,
        Some(FuelLimits {
            per_turn: 1_000,
            init: 7,
            ..defaults
        })
    );
    lease.fuel_bank = 5_000;
    lease.fuel_wall_ms = 9;
    let (_, config) = setup_match(&lease).unwrap();
    assert_eq!(
        config.fuel,
        Some(FuelLimits {
            per_turn: 1_000,
            bank: 5_000,
            init: 7,
            wall_ms: 9,
        })
    );

    // A game without WebAssembly seats ignores them.
    let mut lease = leased(GENERALS, &two);
    lease.fuel_per_turn = 1_000;
    let (_, config) = setup_match(&lease).unwrap();
    assert_eq!(config.fuel, None);
}
