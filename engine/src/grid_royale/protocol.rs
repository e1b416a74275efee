//! The wire: the observation a seat reads and the reply it writes, one JSON
//! object per line, and the state line `arena replay dump` prints.
//!
//! Nothing here knows how a seat runs: a process host and a WebAssembly host
//! call the same [`write_observation`] (a fuel host passes its [`Fuel`]) and
//! the same [`parse_reply`].

use serde::{Serialize, Serializer};
use serde_json::Value;

use super::orders::{Dir, Illegal, Order, Orders};
use super::params::Zone;
use super::state::{GridRoyale, Unit};

/// A fuel-metered seat's budget, as its observation reports it.
pub use crate::game::Fuel;

/// The observation: the seed's object, plus `fuel` (`null` for a seat
/// that has no fuel, such as a process) for a seat; without `you` and
/// `fuel` it is a dump's state line.
#[derive(Serialize)]
struct Observation<'a> {
    /// The turn about to be played, from 1.
    turn: u32,
    max_turns: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    you: Option<usize>,
    width: usize,
    height: usize,
    safe_zone: Zone,
    ore: Rows<'a>,
    bases: Vec<BaseView>,
    banks: &'a [u64],
    units: &'a [Unit],
    params: ParamsView,
    /// Outer `None`: no such key (state lines); `Some(None)`: `null`.
    #[serde(skip_serializing_if = "Option::is_none")]
    fuel: Option<Option<Fuel>>,
}

/// The ore plane as rows: `ore[y][x]`.
struct Rows<'a> {
    ore: &'a [u32],
    side: usize,
}

impl Serialize for Rows<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.ore.chunks(self.side.max(1)))
    }
}

#[derive(Serialize)]
struct BaseView {
    owner: usize,
    x: usize,
    y: usize,
}

/// The seed's five parameters, exactly (the border's follow from
/// `safe_zone` from turn to turn).
#[derive(Serialize)]
struct ParamsView {
    cargo_cap: u32,
    spawn_cost: u32,
    move_cost_divisor: u32,
    harvest_divisor: u32,
    units_cap: u32,
}

fn observation(
    game: &GridRoyale,
    you: Option<usize>,
    fuel: Option<Option<Fuel>>,
) -> Observation<'_> {
    let p = &game.params;
    Observation {
        turn: game.turn.saturating_add(1),
        max_turns: p.max_turns,
        you,
        width: p.side,
        height: p.side,
        safe_zone: game.zone,
        ore: Rows {
            ore: &game.ore,
            side: p.side,
        },
        bases: game
            .bases
            .iter()
            .enumerate()
            .map(|(owner, b)| BaseView {
                owner,
                x: b.x,
                y: b.y,
            })
            .collect(),
        banks: &game.banks,
        units: &game.units,
        params: ParamsView {
            cargo_cap: p.cargo_cap,
            spawn_cost: p.spawn_cost,
            move_cost_divisor: p.move_cost_divisor,
            harvest_divisor: p.harvest_divisor,
            units_cap: p.units_cap,
        },
        fuel,
    }
}

/// Appends `seat`'s observation as one line (with its newline). `fuel` is
/// the seat's budget, `None` for a seat without fuel (`"fuel": null`).
pub fn write_observation(game: &GridRoyale, seat: usize, fuel: Option<Fuel>, out: &mut Vec<u8>) {
    let start = out.len();
    if serde_json::to_writer(&mut *out, &observation(game, Some(seat), Some(fuel))).is_ok() {
        out.push(b'\n');
    } else {
        out.truncate(start);
    }
}

/// The state as a dump prints it: the observation without `you` and `fuel`.
pub fn state_value(game: &GridRoyale) -> serde_json::Value {
    serde_json::to_value(observation(game, None, None)).unwrap_or(serde_json::Value::Null)
}

/// Reads one reply line of `seat` (without its newline) into a batch that is
/// legal now, or says why the whole batch is refused. The shape is checked by
/// hand rather than by serde's derive, which would also take arrays for
/// objects: a reply is an object with `orders` and `spawn` at most, and each
/// order an object with exactly `unit` and `do`.
pub fn parse_reply(game: &GridRoyale, seat: usize, line: &[u8]) -> Result<Orders, Illegal> {
    let syntax = |what: &str| Illegal::Syntax(what.to_owned());
    let value: Value = serde_json::from_slice(line).map_err(|e| Illegal::Syntax(e.to_string()))?;
    let Value::Object(reply) = value else {
        return Err(syntax("the reply is not a JSON object"));
    };
    if let Some(key) = reply
        .keys()
        .find(|k| !["orders", "spawn"].contains(&k.as_str()))
    {
        return Err(Illegal::Syntax(format!("unknown key {key:?}")));
    }
    let spawn = match reply.get("spawn") {
        None => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => return Err(syntax("spawn is not true or false")),
    };
    let items = match reply.get("orders") {
        None => &[][..],
        Some(Value::Array(items)) => &items[..],
        Some(_) => return Err(syntax("orders is not an array")),
    };
    let mut orders = Vec::with_capacity(items.len());
    for item in items {
        let Some(order) = item.as_object().filter(|o| o.len() == 2) else {
            return Err(syntax("an order is not an object of unit and do"));
        };
        let (Some(unit), Some(word)) = (order.get("unit"), order.get("do")) else {
            return Err(syntax("an order is not an object of unit and do"));
        };
        let Some(unit) = unit.as_u64() else {
            return Err(syntax("unit is not a non-negative integer"));
        };
        let Some(word) = word.as_str() else {
            return Err(syntax("do is not a string"));
        };
        let dir = Dir::from_word(word).ok_or_else(|| Illegal::UnknownDo(word.to_owned()))?;
        let unit = u32::try_from(unit).map_err(|_| Illegal::NotYours(unit))?;
        orders.push(Order { unit, dir });
    }
    let orders = Orders { orders, spawn };
    game.check_orders(seat, &orders)?;
    Ok(orders)
}
