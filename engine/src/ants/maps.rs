//! The shipped maps, compiled in, and the `map` option's choices.

use super::map::Map;
use super::state::StateError;

/// The word that asks for a generated map.
pub const RANDOM: &str = "random";

/// `(name, file)` of every shipped map.
pub const SHIPPED: [(&str, &str); 3] = [
    ("duel", include_str!("../../maps/ants/duel.map")),
    ("quartet", include_str!("../../maps/ants/quartet.map")),
    ("octet", include_str!("../../maps/ants/octet.map")),
];

/// The `map` option's choices: `random`, then the shipped maps.
pub const CHOICES: [&str; 4] = [RANDOM, SHIPPED[0].0, SHIPPED[1].0, SHIPPED[2].0];

/// The map the `map` option names for `seats` seats and `seed`.
pub fn choose(name: &str, seats: usize, seed: u64) -> Result<Map, StateError> {
    if name == RANDOM {
        return Ok(super::mapgen::generate(seed, seats));
    }
    let (_, text) = SHIPPED
        .iter()
        .find(|(n, _)| *n == name)
        .ok_or(StateError::Params("no such map"))?;
    let map = Map::parse(text)?;
    if map.players != seats {
        return Err(StateError::Players {
            name: name.to_owned(),
            map: map.players,
            seats,
        });
    }
    Ok(map)
}
