// Seat colours shared by every drawer and the legend, so a seat keeps one
// colour across the board, the legend and the timeline marks.

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
