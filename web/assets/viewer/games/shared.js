// What the game drawers share, in one place: seat names and colours (a seat
// keeps one colour across the board, the panel, the graph and the timeline
// marks; see `seatColours`),
// text that fits a cell, and the fog helpers of the games with per-seat
// views. The viewer's own legend and timeline use the same lookups.

// Okabe–Ito's colour-blind-safe set (black left out: it is the fog),
// ordered so that no red sits next to a green among the first four, then
// one more for an eighth seat. A seat's colour is PALETTE[index], where
// index is the seat's entrant index in its tournament (`data-colors`), so
// an entrant keeps its colour from match to match.
export const PALETTE = [
  "#0072b2", // blue
  "#e69f00", // orange
  "#009e73", // bluish green
  "#cc79a7", // reddish purple
  "#56b4e9", // sky blue
  "#d55e00", // vermillion
  "#f0e442", // yellow
  "#882255", // wine
];

// sRGB relative luminance (WCAG 2) of "#rrggbb".
export function luminance(hex) {
  const channel = (i) => {
    const c = parseInt(hex.slice(1 + 2 * i, 3 + 2 * i), 16) / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * channel(0) + 0.7152 * channel(1) + 0.0722 * channel(2);
}

// Black or white, whichever reads better on `hex`.
function inkOn(hex) {
  const l = luminance(hex);
  return (l + 0.05) / 0.05 >= 1.05 / (l + 0.05) ? "#000" : "#fff";
}

// The colours of one match's seats: `indices[seat]` picks the palette
// entry (the seat number itself when the page gives none). Two seats that
// would share an entry (a tournament of more entrants than colours, or a
// team entrant on two seats) get the next entries no other seat uses, so
// colours are always distinct within a match.
// Returns {fill(seat), ink(seat)}: the seat's colour and the text colour
// that reads on it.
export function seatColours(indices, seats) {
  const size = PALETTE.length;
  const wanted = [];
  for (let seat = 0; seat < seats; seat++) {
    const index = Number.isInteger(indices[seat]) && indices[seat] >= 0 ? indices[seat] : seat;
    wanted.push(index % size);
  }
  const taken = new Set();
  const chosen = wanted.map((index) => {
    let pick = index;
    for (let tries = 0; taken.has(pick) && tries < size; tries++) pick = (pick + 1) % size;
    taken.add(pick);
    return PALETTE[pick];
  });
  const fill = (seat) => chosen[seat] || PALETTE[((seat % size) + size) % size];
  return { fill, ink: (seat) => inkOn(fill(seat)) };
}

// A seat's name as the page gives it (`data-seats`), else "seat N".
export function seatName(names, seat) {
  return names[seat] || `seat ${seat}`;
}

// `seatName` bound to one list of names: `const name = seatNamer(names)`.
export function seatNamer(names) {
  return (seat) => seatName(names, seat);
}

// Text that stays readable on a cell: smaller on small cells, none on tiny ones.
export function cellFont(cell, scale = 0.42) {
  return `${Math.max(7, Math.floor(cell * scale))}px system-ui, sans-serif`;
}

// Short army/cargo figures so they fit in a cell: 1234 -> "1.2k".
export function shortNumber(n) {
  if (n < 1000) return String(n);
  if (n < 10000) return `${(n / 1000).toFixed(1)}k`;
  return `${Math.round(n / 1000)}k`;
}

// Fog. The views a fogged game offers: the whole board first (the
// default), then each of its `seats` seats' own view.
export function fogViews(seats, names) {
  const list = [{ value: "all", label: "whole board" }];
  for (let seat = 0; seat < seats; seat++) {
    list.push({ value: String(seat), label: `${seatName(names, seat)}'s view` });
  }
  return list;
}

// The seat a view value shows, or -1 for the whole board.
export function viewedSeat(view) {
  return view === "all" || view == null ? -1 : Number(view);
}

// A seat's sight at one frame, made by `compute()` the first time it is
// asked for and kept in `model.sight` (a Map the drawer's prepare makes).
export function cachedSight(model, index, seat, compute) {
  const key = `${index}:${seat}`;
  let mask = model.sight.get(key);
  if (!mask) {
    mask = compute();
    model.sight.set(key, mask);
  }
  return mask;
}

// Eight-neighbourhood sight: every cell within one step (diagonals too) of a
// cell some seat in `sees` owns. `ownerSeat(cell)` gives -1 for neutral.
export function sightMask(width, height, ownerSeat, sees) {
  const seen = new Uint8Array(width * height);
  for (let cell = 0; cell < width * height; cell++) {
    const seat = ownerSeat(cell);
    if (seat < 0 || !sees(seat)) continue;
    const row = Math.floor(cell / width);
    const col = cell % width;
    for (let r = Math.max(0, row - 1); r <= Math.min(height - 1, row + 1); r++) {
      for (let c = Math.max(0, col - 1); c <= Math.min(width - 1, col + 1); c++) seen[r * width + c] = 1;
    }
  }
  return seen;
}
