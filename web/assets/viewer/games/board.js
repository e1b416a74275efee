// Cell painting shared by the generals drawers: terrain, owner colour, army
// count, and the three fog levels (visible, remembered, hidden). What a
// seat sees is worked out with the fog helpers of shared.js.

import { cellFont, shortNumber } from "./shared.js";

const PLAIN = "#dcdcdc";
const MOUNTAIN = "#9b9b9b";
const NEUTRAL_CITY = "#a8a8a8";
const HIDDEN = "#2e2e2e";
const HIDDEN_STRUCTURE = "#4a4a4a";

// Traces a closed path through points given as fractions of the cell.
function trace(ctx, x, y, cell, points) {
  ctx.beginPath();
  points.forEach(([px, py], i) => {
    if (i === 0) ctx.moveTo(x + cell * px, y + cell * py);
    else ctx.lineTo(x + cell * px, y + cell * py);
  });
  ctx.closePath();
}

const TRIANGLE = [[0.5, 0.18], [0.85, 0.82], [0.15, 0.82]];
// A castle: a square with two battlements.
const CASTLE = [
  [0.18, 0.85], [0.18, 0.2], [0.35, 0.2], [0.35, 0.32],
  [0.65, 0.32], [0.65, 0.2], [0.82, 0.2], [0.82, 0.85],
];
const CROWN = [[0.15, 0.82], [0.12, 0.22], [0.33, 0.45], [0.5, 0.15], [0.67, 0.45], [0.88, 0.22], [0.85, 0.82]];

function triangle(ctx, x, y, cell, colour) {
  ctx.fillStyle = colour;
  trace(ctx, x, y, cell, TRIANGLE);
  ctx.fill();
}

// Castles and crowns are outlined, so they show on any owner's colour.
function outline(ctx, x, y, cell, colour, points) {
  ctx.strokeStyle = colour;
  ctx.lineWidth = Math.max(1, cell * 0.07);
  trace(ctx, x, y, cell, points);
  ctx.stroke();
}

// colours: the match's seat colours (shared.js `seatColours`); terrain:
// "plain" | "mountain" | "city" | "crown"; seat: -1 neutral; army: number
// or null (unknown); fog: "visible" | "remembered" | "hidden".
export function paintCell(ctx, colours, col, row, cell, terrain, seat, army, fog) {
  const x = col * cell;
  const y = row * cell;
  const gap = cell >= 10 ? 1 : 0;
  if (fog === "hidden") {
    ctx.fillStyle = HIDDEN;
    ctx.fillRect(x, y, cell - gap, cell - gap);
    // The bots see mountains and cities in fog as an unnamed structure.
    if (terrain === "mountain" || terrain === "city") triangle(ctx, x, y, cell, HIDDEN_STRUCTURE);
    return;
  }
  let fill = PLAIN;
  if (seat >= 0) fill = colours.fill(seat);
  else if (terrain === "mountain") fill = MOUNTAIN;
  else if (terrain === "city") fill = NEUTRAL_CITY;
  ctx.fillStyle = fill;
  ctx.fillRect(x, y, cell - gap, cell - gap);
  // Icons stay faint under an army figure so the figure reads first; both
  // take the ink that reads on the owner's colour.
  const counted = army != null && army > 0 && cell >= 12;
  const light = seat >= 0 && colours.ink(seat) === "#fff";
  const mark = light ? `rgba(255,255,255,${counted ? 0.4 : 0.7})` : `rgba(0,0,0,${counted ? 0.3 : 0.5})`;
  if (terrain === "mountain") triangle(ctx, x, y, cell, "#6b6b6b");
  else if (terrain === "city") outline(ctx, x, y, cell, mark, CASTLE);
  else if (terrain === "crown") outline(ctx, x, y, cell, mark, CROWN);
  if (counted) {
    ctx.fillStyle = seat >= 0 ? colours.ink(seat) : "#111";
    ctx.font = cellFont(cell, army >= 1000 ? 0.34 : 0.42);
    ctx.textAlign = "center";
    ctx.textBaseline = "middle";
    ctx.fillText(shortNumber(army), x + cell / 2, y + cell / 2 + 1);
  }
  if (fog === "remembered") {
    ctx.fillStyle = "rgba(20,20,20,0.55)";
    ctx.fillRect(x, y, cell - gap, cell - gap);
  }
}

// Diagonal stripes over a cell whose owner has forfeited (a game that
// plays such a seat on leaves its cells on the board): they must not read
// as a player still in the match.
export function hatchCell(ctx, colours, col, row, cell, seat) {
  if (cell < 6) return;
  const x = col * cell;
  const y = row * cell;
  ctx.save();
  ctx.beginPath();
  ctx.rect(x, y, cell, cell);
  ctx.clip();
  ctx.strokeStyle = colours.ink(seat) === "#fff" ? "rgba(255,255,255,0.55)" : "rgba(0,0,0,0.45)";
  ctx.lineWidth = Math.max(1, cell * 0.08);
  ctx.beginPath();
  for (let k = -cell; k < cell; k += cell / 3) {
    ctx.moveTo(x + k, y + cell);
    ctx.lineTo(x + k + cell, y);
  }
  ctx.stroke();
  ctx.restore();
}
