//! A view laid out as the reference environment's float tensor, so that a
//! network written for that environment reads Arena's observations without
//! change.
//!
//! The duel layout is the reference's `Observation.as_tensor()`: 14
//! channels. The 2v2 and free-for-all layout is its multi-player
//! observation's: 17 channels, with teammates' cells and totals beside the
//! seat's own. Cell channels are 0 or 1 (armies are counts); the totals and
//! the turn are the raw numbers, repeated over every cell, as the reference
//! broadcasts them. Every channel is a function of the compact view alone.

use super::{HeaderLayout, ObserveError, Totals, View, check_len, owner, tile};

/// The duel channels, in order.
pub const DUEL_CHANNELS: [&str; 14] = [
    "armies",
    "generals",
    "castles",
    "mountains",
    "neutral_cells",
    "owned_cells",
    "opponent_cells",
    "fog_cells",
    "structures_in_fog",
    "owned_land_count",
    "owned_army_count",
    "opponent_land_count",
    "opponent_army_count",
    "timestep",
];

/// The 2v2 and free-for-all channels, in order.
pub const SEATS_CHANNELS: [&str; 17] = [
    "armies",
    "generals",
    "castles",
    "mountains",
    "neutral_cells",
    "owned_cells",
    "allied_cells",
    "opponent_cells",
    "fog_cells",
    "structures_in_fog",
    "owned_land_count",
    "owned_army_count",
    "allied_land_count",
    "allied_army_count",
    "opponent_land_count",
    "opponent_army_count",
    "timestep",
];

/// The channel names of a layout.
pub fn reference_channels(layout: HeaderLayout) -> &'static [&'static str] {
    match layout {
        HeaderLayout::Duel => &DUEL_CHANNELS,
        HeaderLayout::Seats => &SEATS_CHANNELS,
    }
}

/// One cell channel over the rows in `rows` (bit `r` for row `r`): 1.0
/// where `keep(tile, owner)`, else 0.0.
#[inline]
fn cells(
    out: &mut [f32],
    side: usize,
    rows: u64,
    tiles: &[u8],
    owners: &[u8],
    keep: impl Fn(u8, u8) -> bool,
) {
    for r in (0..side).filter(|r| rows >> r & 1 == 1) {
        let span = r * side..(r + 1) * side;
        let (o, t, w) = (&mut out[span.clone()], &tiles[span.clone()], &owners[span]);
        for c in 0..side {
            o[c] = f32::from(u8::from(keep(t[c], w[c])));
        }
    }
}

/// A broadcast channel: every cell `value`. Unless `full`, a plane that
/// already holds it is left alone (a plane is only ever written whole).
#[inline]
fn fill(out: &mut [f32], value: f32, full: bool) {
    if full || out.first() != Some(&value) {
        out.fill(value);
    }
}

/// Writes `view` as `channels × side × side` floats (channel-major).
pub fn write_reference(view: &View<'_>, out: &mut [f32]) -> Result<(), ObserveError> {
    write_reference_rows(view, u64::MAX, out)
}

/// [`write_reference`] for a buffer that already holds the layout of the
/// view's previous values: only the rows in `rows` (bit `r` for row `r`,
/// as [`super::compact::CompactMut::changed_rows`] reports them) and the
/// broadcast planes whose value changed are written. `u64::MAX` writes
/// everything.
pub fn write_reference_rows(
    view: &View<'_>,
    rows: u64,
    out: &mut [f32],
) -> Result<(), ObserveError> {
    let side = view.side;
    let n = side * side;
    let channels = reference_channels(view.layout).len();
    check_len("reference", out.len(), channels * n)?;
    check_len("tile", view.tile.len(), n)?;
    check_len("owner", view.owner.len(), n)?;
    check_len("army", view.army.len(), n)?;
    let full = rows == u64::MAX;
    let (tiles, owners) = (view.tile, view.owner);
    let mut planes = out.chunks_exact_mut(n);
    let mut next = || planes.next().unwrap_or_default();

    let armies = next();
    for r in (0..side).filter(|r| rows >> r & 1 == 1) {
        let span = r * side..(r + 1) * side;
        for (o, &a) in armies[span.clone()].iter_mut().zip(&view.army[span]) {
            *o = a as f32;
        }
    }
    cells(next(), side, rows, tiles, owners, |t, _| t == tile::GENERAL);
    cells(next(), side, rows, tiles, owners, |t, _| t == tile::CASTLE);
    cells(next(), side, rows, tiles, owners, |t, _| {
        t == tile::MOUNTAIN
    });
    // Seen, passable and nobody's: plains and castles (a general always
    // has an owner).
    cells(next(), side, rows, tiles, owners, |t, o| {
        o == owner::NEUTRAL && matches!(t, tile::PLAIN | tile::CASTLE | tile::GENERAL)
    });
    cells(next(), side, rows, tiles, owners, |_, o| o == owner::ME);
    // In a duel code 2 is the opponent; in the other formats a teammate,
    // with opponents from code 3 on.
    cells(next(), side, rows, tiles, owners, |_, o| o == owner::SECOND);
    let totals = match view.layout {
        HeaderLayout::Duel => [view.mine(), view.opponents(), Totals::default()],
        HeaderLayout::Seats => {
            cells(next(), side, rows, tiles, owners, |_, o| {
                o >= owner::OPPONENT_BASE
            });
            [view.mine(), view.allied(), view.opponents()]
        }
    };
    let groups = if view.layout == HeaderLayout::Duel {
        2
    } else {
        3
    };
    cells(next(), side, rows, tiles, owners, |t, _| t == tile::FOG);
    cells(next(), side, rows, tiles, owners, |t, _| {
        t == tile::FOG_STRUCTURE
    });
    for pair in &totals[..groups] {
        fill(next(), pair.land as f32, full);
        fill(next(), pair.army as f32, full);
    }
    fill(next(), view.turn() as f32, full);
    Ok(())
}
