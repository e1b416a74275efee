// What the game drawers share, in one place: seat names and colours (a seat
// keeps one colour across the board, the legend and the timeline marks),
// text that fits a cell, and the fog helpers of the games with per-seat
// views. The viewer's own legend and timeline use the same lookups.

const SEAT_COLOURS = [
  "#e6194b", // red
  "#4363d8", // blue
  "#3cb44b", // green
  "#911eb4", // purple
  "#f58231", // orange
  "#008080", // teal
  "#9a6324", // brown
  "#f032e6", // magenta
];

export function seatColour(seat) {
  return SEAT_COLOURS[((seat % SEAT_COLOURS.length) + SEAT_COLOURS.length) % SEAT_COLOURS.length];
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
