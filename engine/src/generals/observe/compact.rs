//! Every seat's view of a running game, written straight from the state.
//!
//! The planes hold exactly what [`crate::generals::frame`] (duel) and
//! [`crate::generals_classic::multi::frame`] (2v2, free-for-all) print: the
//! tile, owner and army of every cell as the seat reads them, fog applied.
//! This is the hot path of the training environment, so the duel writer
//! works a row at a time on bit masks and byte masks, without branches per
//! cell; `frame`'s parser is the slow, obviously right reading it is tested
//! against.

use super::{HeaderLayout, MAX_SIDE, ObserveError, View, check_len, owner, tile};
use crate::generals::{Generals, Kind};
use crate::generals_classic::{GeneralsClassic, GeneralsClassicMulti};

/// Output buffers for every seat of one game: `tile`, `owner` and `army`
/// hold `seats × side × side` cells (seat-major, then row-major), `header`
/// holds `seats × (1 + 2 × seats)` numbers.
pub struct CompactMut<'a> {
    pub tile: &'a mut [u8],
    pub owner: &'a mut [u8],
    pub army: &'a mut [i32],
    pub header: &'a mut [i64],
    /// When given (one entry per seat), bit `r` of a seat's entry is set
    /// when row `r` of its planes now differs from what the buffers held:
    /// a writer of a derived layout (the reference tensor) then redoes only
    /// those rows.
    pub changed_rows: Option<&'a mut [u64]>,
}

/// What changed on a board since an observer's last view, cell by cell:
/// [`Generals::changes`] keeps it. A seat's row is rewritten only where the
/// seat sees a changed cell, where a kind changed (structures show through
/// fog), or where its sight moved.
#[derive(Clone, Copy, Debug)]
pub struct Changes<'a> {
    /// Bit `r` for every row with a changed cell.
    pub rows: u64,
    /// Per row, bit `c` for every changed cell of column `c`; empty: every
    /// cell of `rows` counts as changed.
    pub columns: &'a [u64],
    /// Bit `r` for every row where a cell's kind changed.
    pub kinds: u64,
}

impl Changes<'_> {
    /// Everything changed.
    pub const ALL: Changes<'static> = Changes {
        rows: u64::MAX,
        columns: &[],
        kinds: u64::MAX,
    };

    /// The rows of a seat's view to rewrite, given the seat's sight: rows
    /// where it sees a changed cell, and rows where a kind changed.
    fn seen(&self, sight: &[u64; MAX_SIDE]) -> u64 {
        if self.columns.is_empty() {
            return self.rows;
        }
        let mut rows = self.rows;
        let mut seen = self.kinds & self.rows;
        while rows != 0 {
            let r = rows.trailing_zeros() as usize;
            rows &= rows - 1;
            let columns = self.columns.get(r).copied().unwrap_or(u64::MAX);
            seen |= u64::from(columns & sight[r] != 0) << r;
        }
        seen
    }
}

/// Every seat's views as [`CompactMut`] wrote them, read back.
#[derive(Clone, Copy, Debug)]
pub struct Compact<'a> {
    pub tile: &'a [u8],
    pub owner: &'a [u8],
    pub army: &'a [i32],
    pub header: &'a [i64],
}

impl<'a> Compact<'a> {
    /// Seat `seat`'s view of `game` in these `side × side` planes.
    pub fn view(&self, game: &impl Observe, side: usize, seat: usize) -> View<'a> {
        let n = side * side;
        let hl = 1 + 2 * game.seat_count();
        let (height, width) = game.board_size();
        View {
            side,
            height,
            width,
            tile: &self.tile[seat * n..(seat + 1) * n],
            owner: &self.owner[seat * n..(seat + 1) * n],
            army: &self.army[seat * n..(seat + 1) * n],
            header: &self.header[seat * hl..(seat + 1) * hl],
            layout: game.header_layout(),
            seat,
            allies: game.allies_of(seat),
        }
    }
}

/// A generals game whose seats' views can be written: what the writer
/// needs to know of it.
pub trait Observe {
    /// How many seats the game has.
    fn seat_count(&self) -> usize;
    /// The true board's `(height, width)`.
    fn board_size(&self) -> (usize, usize);
    /// How the header lists totals (and so how owner codes read).
    fn header_layout(&self) -> HeaderLayout;
    /// Bit `s` set for every other seat on `seat`'s team.
    fn allies_of(&self, seat: usize) -> u32;
    /// The board's cell planes.
    fn planes(&self) -> Planes<'_>;
    /// Per row of the padded square, the columns `seat` sees.
    fn sight(&self, seat: usize, side: usize) -> [u64; MAX_SIDE];
    /// How `seat` reads owner codes.
    fn owner_codes(&self, seat: usize) -> OwnerCodes;
    /// Every seat's header line, `1 + 2 × seats` numbers each.
    fn write_headers(&self, out: &mut [i64]);

    /// Writes every seat's view on a `side × side` board, whole.
    fn observe(&self, side: usize, out: CompactMut<'_>) -> Result<(), ObserveError>
    where
        Self: Sized,
    {
        write_views(self, side, out, None)
    }
}

/// What a writer remembers of a game between two views of it, so that the
/// next view rewrites only the rows whose inputs changed: a board row
/// whose cells changed, or a row of a seat's sight. One per game being
/// observed; [`Observer::forget`] it when the game is replaced.
#[derive(Clone, Debug, Default)]
pub struct Observer {
    kind: Vec<Kind>,
    owner: Vec<u8>,
    army: Vec<u32>,
    /// Each seat's sight at the last view.
    sight: Vec<[u64; MAX_SIDE]>,
    /// The buffers hold this game's previous views, written with the same
    /// side.
    valid: bool,
    side: usize,
}

impl Observer {
    pub fn new() -> Observer {
        Observer::default()
    }

    /// Starts loading what the next view reads first (each seat's sight at
    /// the last view).
    #[inline]
    pub fn prefetch(&self) {
        for sight in &self.sight {
            crate::prefetch::lines(&sight[..], 3);
        }
    }

    /// The next view is written whole (a new game, or buffers that may hold
    /// something else).
    pub fn forget(&mut self) {
        self.valid = false;
    }

    /// Writes every seat's view into buffers that hold the previous views
    /// this observer wrote (or anything, after [`Observer::forget`]),
    /// rewriting only the rows whose inputs changed. The result equals
    /// [`Observe::observe`]'s.
    pub fn observe<G: Observe>(
        &mut self,
        game: &G,
        side: usize,
        out: CompactMut<'_>,
    ) -> Result<(), ObserveError> {
        write_views(game, side, out, Some((self, None)))
    }

    /// [`Observer::observe`] for a game that reports which of its board rows
    /// changed since this observer's last view (bit `r` for row `r`, as
    /// [`Generals::take_changed_rows`] does): nothing is compared or copied
    /// for the board. An observer takes its board rows either always from
    /// here or always from [`Observer::observe`].
    pub fn observe_changed<G: Observe>(
        &mut self,
        game: &G,
        side: usize,
        out: CompactMut<'_>,
        board_rows: u64,
    ) -> Result<(), ObserveError> {
        write_views(
            game,
            side,
            out,
            Some((
                self,
                Some(Changes {
                    rows: board_rows,
                    ..Changes::ALL
                }),
            )),
        )
    }

    /// [`Observer::observe_changed`] for a game that reports its changes
    /// cell by cell ([`Generals::changes`]): a seat's rows are rewritten
    /// only where it can see something change.
    pub fn observe_changes<G: Observe>(
        &mut self,
        game: &G,
        side: usize,
        out: CompactMut<'_>,
        changes: Changes<'_>,
    ) -> Result<(), ObserveError> {
        write_views(game, side, out, Some((self, Some(changes))))
    }

    /// The board rows that differ from the remembered board (all of them
    /// when nothing valid is remembered), remembering the new board.
    fn board_rows(&mut self, planes: &Planes<'_>, side: usize) -> u64 {
        let cells = planes.height * planes.width;
        let fits = self.valid
            && self.side == side
            && self.kind.len() == cells
            && planes.kind.len() == cells
            && planes.owner.len() == cells
            && planes.army.len() == cells;
        if !fits {
            self.kind.clear();
            self.kind.extend_from_slice(planes.kind);
            self.owner.clear();
            self.owner.extend_from_slice(planes.owner);
            self.army.clear();
            self.army.extend_from_slice(planes.army);
            return u64::MAX;
        }
        let w = planes.width;
        let mut rows = 0u64;
        for r in 0..planes.height {
            let span = r * w..(r + 1) * w;
            let (kind, owner, army) = (
                &mut self.kind[span.clone()],
                &mut self.owner[span.clone()],
                &mut self.army[span.clone()],
            );
            let (new_kind, new_owner, new_army) = (
                &planes.kind[span.clone()],
                &planes.owner[span.clone()],
                &planes.army[span],
            );
            // Folded differences rather than `==`: a row is a few dozen
            // bytes, and a library comparison per row costs more than
            // the comparison itself.
            let mut diff = 0u32;
            for c in 0..w {
                diff |= (owner[c] ^ new_owner[c]) as u32
                    | (kind[c] as u8 ^ new_kind[c] as u8) as u32
                    | (army[c] ^ new_army[c]);
            }
            if diff != 0 {
                rows |= 1 << r;
                kind.copy_from_slice(new_kind);
                owner.copy_from_slice(new_owner);
                army.copy_from_slice(new_army);
            }
        }
        rows
    }
}

/// Writes every seat's view; with an observer, only the rows whose inputs
/// changed since its last view (the board's changes as given, or, with
/// `None`, found by comparing).
fn write_views<G: Observe>(
    game: &G,
    side: usize,
    mut out: CompactMut<'_>,
    memory: Option<(&mut Observer, Option<Changes<'_>>)>,
) -> Result<(), ObserveError> {
    check(game, side, &out)?;
    let seats = game.seat_count();
    let planes = game.planes();
    // What changed on the board: found by comparing with the observer's
    // copy, as the game reported it, or everything (no view to build on).
    let (mut memory, board) = match memory {
        Some((m, None)) => {
            let rows = m.board_rows(&planes, side);
            (
                Some(m),
                Changes {
                    rows,
                    ..Changes::ALL
                },
            )
        }
        Some((m, Some(reported))) if m.valid && m.side == side => (Some(m), reported),
        Some((m, Some(_))) => (Some(m), Changes::ALL),
        None => (None, Changes::ALL),
    };
    let header_len = 1 + 2 * seats;
    for seat in 0..seats {
        let sight = game.sight(seat, side);
        let rows = match memory.as_deref_mut() {
            Some(m) if m.valid && m.sight.len() == seats => {
                let before = &mut m.sight[seat][..side];
                let mut moved = 0u64;
                for (r, (old, &new)) in before.iter_mut().zip(&sight[..side]).enumerate() {
                    moved |= u64::from(*old != new) << r;
                    *old = new;
                }
                board.seen(&sight) | moved
            }
            _ => u64::MAX,
        };
        let (t, o, a, _) = seat_slices(&mut out, seat, side, header_len);
        let changed = write_seat(
            side,
            rows,
            &planes,
            &sight,
            &game.owner_codes(seat),
            t,
            o,
            a,
        );
        if let Some(report) = out.changed_rows.as_deref_mut() {
            report[seat] = changed;
        }
    }
    game.write_headers(out.header);
    if let Some(m) = memory {
        if !(m.valid && m.sight.len() == seats) {
            m.sight = (0..seats).map(|seat| game.sight(seat, side)).collect();
        }
        m.valid = true;
        m.side = side;
    }
    Ok(())
}

/// Checks the side and every buffer's length before anything is written.
fn check(game: &impl Observe, side: usize, out: &CompactMut<'_>) -> Result<(), ObserveError> {
    if side == 0 || side > MAX_SIDE {
        return Err(ObserveError::Side { side });
    }
    let (height, width) = game.board_size();
    if height > side || width > side {
        return Err(ObserveError::BoardTooLarge {
            height,
            width,
            side,
        });
    }
    let seats = game.seat_count();
    let cells = seats * side * side;
    check_len("tile", out.tile.len(), cells)?;
    check_len("owner", out.owner.len(), cells)?;
    check_len("army", out.army.len(), cells)?;
    if let Some(rows) = &out.changed_rows {
        check_len("changed_rows", rows.len(), seats)?;
    }
    check_len("header", out.header.len(), seats * (1 + 2 * seats))
}

/// Per row, the columns a seat sees: its (or its team's) cells dilated by
/// one step in all eight directions, over the whole padded square (so sight
/// reaches the padding next to the board's last row and column). Rows past
/// the end of `owned_rows` own nothing.
fn sight_rows(side: usize, owned_rows: &[u64]) -> [u64; MAX_SIDE] {
    let full = if side == 64 {
        u64::MAX
    } else {
        (1u64 << side) - 1
    };
    let across = |r: usize| {
        let m = owned_rows.get(r).copied().unwrap_or(0);
        (m | (m << 1) | (m >> 1)) & full
    };
    let mut rows = [0u64; MAX_SIDE];
    // One pass, the row above and this one carried from the last step.
    let (mut above, mut here) = (0, across(0));
    for (r, out) in rows.iter_mut().enumerate().take(side) {
        let below = if r + 1 < side { across(r + 1) } else { 0 };
        *out = above | here | below;
        (above, here) = (here, below);
    }
    rows
}

/// Eight sight bits spread over eight bytes: bit `i` of the index becomes
/// byte `i` (`0xFF` or `0`), little-endian.
const SPREAD: [u64; 256] = {
    let mut table = [0u64; 256];
    let mut bits = 0;
    while bits < 256 {
        let mut i = 0;
        while i < 8 {
            if bits >> i & 1 == 1 {
                table[bits] |= 0xFF << (8 * i);
            }
            i += 1;
        }
        bits += 1;
    }
    table
};

/// `0xFF` for each seen column of a row, `0` elsewhere: eight columns per
/// table lookup.
#[inline]
fn byte_mask(seen: u64, mask: &mut [u8; MAX_SIDE]) {
    for (k, chunk) in mask.chunks_exact_mut(8).enumerate() {
        chunk.copy_from_slice(&SPREAD[(seen >> (8 * k)) as usize & 0xFF].to_le_bytes());
    }
}

/// A padding cell: a mountain, seen or in fog.
#[inline]
fn padding_tile(m: u8) -> u8 {
    (m & tile::MOUNTAIN) | (!m & tile::FOG_STRUCTURE)
}

/// The tile code of a cell of kind code `k` (0 plain, 1 mountain, 2 castle,
/// 3 general) under seen-mask `m`: `k + 1` when seen; 5 for an unseen
/// mountain or castle, 0 for an unseen plain or general.
#[inline]
fn tile_code(k: u8, m: u8) -> u8 {
    let structure = 0u8.wrapping_sub(u8::from(k.wrapping_sub(1) < 2));
    (m & (k + 1)) | (!m & structure & tile::FOG_STRUCTURE)
}

/// How a seat reads the board's owner codes in the cells it sees.
#[derive(Clone, Copy, Debug)]
pub enum OwnerCodes {
    /// A duel: 0 stays 0, and 1 and 2 swap for seat 1 (`swap` 3) or stay
    /// for seat 0 (`swap` 0). Arithmetic, so the row loop vectorises.
    Duel { swap: u8 },
    /// Any other game: a table from board code (0..=8) to the seat's code.
    Table([u8; 9]),
}

/// The board's planes, row-major, `height × width`.
#[derive(Clone, Copy, Debug)]
pub struct Planes<'a> {
    pub height: usize,
    pub width: usize,
    pub kind: &'a [Kind],
    pub owner: &'a [u8],
    pub army: &'a [u32],
}

/// Writes the rows in `rows` (bit `r` for row `r`) of one seat's planes,
/// without a branch per cell. Returns the rows whose values changed: what
/// was in the buffers is compared as it is overwritten.
#[allow(clippy::too_many_arguments)]
fn write_seat(
    side: usize,
    rows: u64,
    board: &Planes<'_>,
    sight: &[u64; MAX_SIDE],
    codes: &OwnerCodes,
    out_tile: &mut [u8],
    out_owner: &mut [u8],
    out_army: &mut [i32],
) -> u64 {
    let mut changed = 0u64;
    let mut mask = [0u8; MAX_SIDE];
    let width = board.width;
    for r in (0..side).filter(|r| rows >> r & 1 == 1) {
        byte_mask(sight[r], &mut mask);
        let base = r * side;
        let tile_row = &mut out_tile[base..base + side];
        let owner_row = &mut out_owner[base..base + side];
        let army_row = &mut out_army[base..base + side];
        let real = if r < board.height { width } else { 0 };
        // Bits that differ between the old and the new values of the row.
        let mut diff = 0u8;
        let mut diff_army = 0i32;
        if real > 0 {
            let from = r * width;
            // Every slice cut to the row's width, so the loops below carry
            // no bounds checks and the compiler can vectorise them.
            let kinds = &board.kind[from..from + width];
            let owners = &board.owner[from..from + width];
            let armies = &board.army[from..from + width];
            let m = &mask[..width];
            let tiles = &mut tile_row[..width];
            let seen_owners = &mut owner_row[..width];
            let seen_armies = &mut army_row[..width];
            for c in 0..width {
                let t = tile_code(kinds[c] as u8, m[c]);
                // Armies stay far below i32::MAX (the engine caps the total
                // at 10^9); the sign-extended mask keeps or zeroes them.
                let a = (armies[c] as i32) & i32::from(m[c] as i8);
                diff |= tiles[c] ^ t;
                diff_army |= seen_armies[c] ^ a;
                tiles[c] = t;
                seen_armies[c] = a;
            }
            match *codes {
                OwnerCodes::Duel { swap } => {
                    for c in 0..width {
                        let o = owners[c];
                        let code = m[c] & (o ^ (swap & 0u8.wrapping_sub(u8::from(o != 0))));
                        diff |= seen_owners[c] ^ code;
                        seen_owners[c] = code;
                    }
                }
                OwnerCodes::Table(ref table) => {
                    for c in 0..width {
                        let code = m[c] & table[usize::from(owners[c]).min(8)];
                        diff |= seen_owners[c] ^ code;
                        seen_owners[c] = code;
                    }
                }
            }
        }
        for c in real..side {
            let t = padding_tile(mask[c]);
            diff |= (tile_row[c] ^ t) | owner_row[c];
            diff_army |= army_row[c];
            tile_row[c] = t;
            owner_row[c] = owner::NEUTRAL;
            army_row[c] = 0;
        }
        changed |= u64::from((diff != 0) | (diff_army != 0)) << r;
    }
    changed
}

/// The slices of seat `seat` in all-seat buffers.
fn seat_slices<'o>(
    out: &'o mut CompactMut<'_>,
    seat: usize,
    side: usize,
    header_len: usize,
) -> (&'o mut [u8], &'o mut [u8], &'o mut [i32], &'o mut [i64]) {
    let cells = side * side;
    let range = seat * cells..(seat + 1) * cells;
    (
        &mut out.tile[range.clone()],
        &mut out.owner[range.clone()],
        &mut out.army[range],
        &mut out.header[seat * header_len..(seat + 1) * header_len],
    )
}

impl Observe for Generals {
    fn seat_count(&self) -> usize {
        2
    }

    fn board_size(&self) -> (usize, usize) {
        (self.height, self.width)
    }

    fn header_layout(&self) -> HeaderLayout {
        HeaderLayout::Duel
    }

    fn allies_of(&self, _seat: usize) -> u32 {
        0
    }

    fn planes(&self) -> Planes<'_> {
        Planes {
            height: self.height,
            width: self.width,
            kind: &self.kind,
            owner: &self.owner,
            army: &self.army,
        }
    }

    fn sight(&self, seat: usize, side: usize) -> [u64; MAX_SIDE] {
        sight_rows(
            side,
            self.owned_rows.get(seat).map_or(&[][..], Vec::as_slice),
        )
    }

    fn owner_codes(&self, seat: usize) -> OwnerCodes {
        // Seat 0 reads the board's codes as they are (1 itself, 2 the
        // opponent); seat 1 swaps 1 and 2, and 0 stays 0.
        OwnerCodes::Duel {
            swap: if seat == 1 { 3 } else { 0 },
        }
    }

    fn write_headers(&self, out: &mut [i64]) {
        for (seat, h) in out.chunks_exact_mut(5).enumerate().take(2) {
            let (my_land, my_army) = self.totals(seat);
            let (their_land, their_army) = self.totals(1 - seat);
            h.copy_from_slice(&[
                i64::from(self.time),
                i64::from(my_land),
                my_army as i64,
                i64::from(their_land),
                their_army as i64,
            ]);
        }
    }
}

/// The classic duel is the competition's engine under another ruleset.
impl Observe for GeneralsClassic {
    fn seat_count(&self) -> usize {
        2
    }

    fn board_size(&self) -> (usize, usize) {
        (**self).board_size()
    }

    fn header_layout(&self) -> HeaderLayout {
        HeaderLayout::Duel
    }

    fn allies_of(&self, _seat: usize) -> u32 {
        0
    }

    fn planes(&self) -> Planes<'_> {
        (**self).planes()
    }

    fn sight(&self, seat: usize, side: usize) -> [u64; MAX_SIDE] {
        (**self).sight(seat, side)
    }

    fn owner_codes(&self, seat: usize) -> OwnerCodes {
        (**self).owner_codes(seat)
    }

    fn write_headers(&self, out: &mut [i64]) {
        (**self).write_headers(out);
    }
}

impl Observe for GeneralsClassicMulti {
    fn seat_count(&self) -> usize {
        self.0.seats.len()
    }

    fn board_size(&self) -> (usize, usize) {
        (self.0.height, self.0.width)
    }

    fn header_layout(&self) -> HeaderLayout {
        HeaderLayout::Seats
    }

    fn allies_of(&self, seat: usize) -> u32 {
        let seats = self.seat_count();
        (0..seats)
            .filter(|&other| other != seat && seat < seats && self.allied(seat, other))
            .fold(0, |bits, other| bits | 1 << other)
    }

    fn planes(&self) -> Planes<'_> {
        let s = &self.0;
        Planes {
            height: s.height,
            width: s.width,
            kind: &s.kind,
            owner: &s.owner,
            army: &s.army,
        }
    }

    fn sight(&self, seat: usize, side: usize) -> [u64; MAX_SIDE] {
        let s = &self.0;
        let seats = s.seats.len();
        // The board owner codes (seat + 1) on this seat's team.
        let team_codes = (0..seats)
            .filter(|&other| seat < seats && self.allied(seat, other))
            .fold(0u16, |bits, other| bits | 1 << (other + 1));
        let mut owned = [0u64; MAX_SIDE];
        for (cell, &o) in s.owner.iter().enumerate() {
            if team_codes >> o.min(15) & 1 == 1 {
                owned[cell / s.width] |= 1 << (cell % s.width);
            }
        }
        sight_rows(side, &owned)
    }

    fn owner_codes(&self, seat: usize) -> OwnerCodes {
        let mut codes = [0u8; 9];
        for (board_code, code) in codes.iter_mut().enumerate().skip(1).take(self.seat_count()) {
            *code = self.owner_code(seat, board_code as u8) as u8;
        }
        OwnerCodes::Table(codes)
    }

    fn write_headers(&self, out: &mut [i64]) {
        let s = &self.0;
        let seats = s.seats.len();
        // One pass for every seat's totals, shared by all headers.
        let mut land = [0i64; 9];
        let mut army = [0i64; 9];
        for (&o, &a) in s.owner.iter().zip(&s.army) {
            let o = usize::from(o).min(8);
            land[o] += 1;
            army[o] += i64::from(a);
        }
        for h in out.chunks_exact_mut(1 + 2 * seats).take(seats) {
            h[0] = i64::from(s.time);
            for other in 0..seats {
                h[1 + 2 * other] = land[other + 1];
                h[2 + 2 * other] = army[other + 1];
            }
        }
    }
}
