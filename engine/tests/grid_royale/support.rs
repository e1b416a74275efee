//! Hand-made positions: a small grid with no shrinking unless a test asks.

use arena_engine::grid_royale::{
    Action, Cell, Dir, GridRoyale, Layout, Order, Orders, Params, Placed,
};

/// `seats` players on a `side × side` grid whose zone never shrinks.
pub fn params(seats: usize, side: usize) -> Params {
    Params {
        side,
        min_zone: side,
        ..Params::standard(seats)
    }
}

/// A position: ore `(x, y, amount)`, bases by seat, units `(owner, x, y,
/// cargo)` (ids 0, 1, ... in this order).
pub fn position(
    params: Params,
    ore: &[(usize, usize, u32)],
    bases: &[(usize, usize)],
    units: &[(usize, usize, usize, u32)],
) -> GridRoyale {
    let mut plane = vec![0; params.cells()];
    for &(x, y, amount) in ore {
        plane[y * params.side + x] = amount;
    }
    let layout = Layout {
        ore: plane,
        bases: bases.iter().map(|&(x, y)| Cell { x, y }).collect(),
        units: units
            .iter()
            .map(|&(owner, x, y, cargo)| Placed { owner, x, y, cargo })
            .collect(),
    };
    GridRoyale::new(params, layout).expect("a valid hand-made position")
}

/// Two players on 8 × 8, bases at (1, 1) and (6, 6).
pub fn duel(ore: &[(usize, usize, u32)], units: &[(usize, usize, usize, u32)]) -> GridRoyale {
    position(params(2, 8), ore, &[(1, 1), (6, 6)], units)
}

/// A legal-looking batch.
pub fn batch(orders: &[(u32, Dir)], spawn: bool) -> Option<Action> {
    Some(Action(Some(Orders {
        orders: orders
            .iter()
            .map(|&(unit, dir)| Order { unit, dir })
            .collect(),
        spawn,
    })))
}

/// Every seat plays a no-action turn.
pub fn idle(seats: usize) -> Vec<Option<Action>> {
    vec![Some(Action::NONE); seats]
}

/// `(x, y, cargo)` of the unit `id`, if alive.
pub fn where_is(game: &GridRoyale, id: u32) -> Option<(usize, usize, u32)> {
    game.unit(id).map(|u| (u.x, u.y, u.cargo))
}

/// `game` with its serialised form edited by `edit` (banks, turns: fields
/// no hand-made layout sets), read back through the state checks.
pub fn edited(game: &GridRoyale, edit: impl FnOnce(&mut serde_json::Value)) -> GridRoyale {
    let mut json = serde_json::to_value(game).unwrap();
    edit(&mut json);
    serde_json::from_value(json).expect("an edited state that still checks")
}
