// Cell painting shared by the generals drawers: terrain, owner colour, army
// count, and the three fog levels (visible, remembered, hidden).

import { seatColour, cellFont, shortNumber } from "./palette.js";

const PLAIN = "#dcdcdc";
const MOUNTAIN = "#9b9b9b";
const NEUTRAL_CITY = "#a8a8a8";
const HIDDEN = "#2e2e2e";
const HIDDEN_STRUCTURE = "#4a4a4a";

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

function triangle(ctx, x, y, cell, colour) {
  ctx.fillStyle = colour;
  ctx.beginPath();
  ctx.moveTo(x + cell * 0.5, y + cell * 0.18);
  ctx.lineTo(x + cell * 0.85, y + cell * 0.82);
  ctx.lineTo(x + cell * 0.15, y + cell * 0.82);
  ctx.closePath();
  ctx.fill();
}

// A castle: a square with two battlements, outlined so it shows on any colour.
function castle(ctx, x, y, cell, colour) {
  const s = cell;
  ctx.strokeStyle = colour;
  ctx.lineWidth = Math.max(1, s * 0.07);
  ctx.beginPath();
  ctx.moveTo(x + s * 0.18, y + s * 0.85);
  ctx.lineTo(x + s * 0.18, y + s * 0.2);
  ctx.lineTo(x + s * 0.35, y + s * 0.2);
  ctx.lineTo(x + s * 0.35, y + s * 0.32);
  ctx.lineTo(x + s * 0.65, y + s * 0.32);
  ctx.lineTo(x + s * 0.65, y + s * 0.2);
  ctx.lineTo(x + s * 0.82, y + s * 0.2);
  ctx.lineTo(x + s * 0.82, y + s * 0.85);
  ctx.closePath();
  ctx.stroke();
}

function crown(ctx, x, y, cell, colour) {
  const s = cell;
  ctx.strokeStyle = colour;
  ctx.lineWidth = Math.max(1, s * 0.07);
  ctx.beginPath();
  ctx.moveTo(x + s * 0.15, y + s * 0.82);
  ctx.lineTo(x + s * 0.12, y + s * 0.22);
  ctx.lineTo(x + s * 0.33, y + s * 0.45);
  ctx.lineTo(x + s * 0.5, y + s * 0.15);
  ctx.lineTo(x + s * 0.67, y + s * 0.45);
  ctx.lineTo(x + s * 0.88, y + s * 0.22);
  ctx.lineTo(x + s * 0.85, y + s * 0.82);
  ctx.closePath();
  ctx.stroke();
}

// terrain: "plain" | "mountain" | "city" | "crown"; seat: -1 neutral;
// army: number or null (unknown); fog: "visible" | "remembered" | "hidden".
export function paintCell(ctx, col, row, cell, terrain, seat, army, fog) {
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
  if (seat >= 0) fill = seatColour(seat);
  else if (terrain === "mountain") fill = MOUNTAIN;
  else if (terrain === "city") fill = NEUTRAL_CITY;
  ctx.fillStyle = fill;
  ctx.fillRect(x, y, cell - gap, cell - gap);
  // Icons stay faint under an army figure so the figure reads first.
  const counted = army != null && army > 0 && cell >= 12;
  const mark = seat >= 0 ? `rgba(255,255,255,${counted ? 0.4 : 0.7})` : `rgba(0,0,0,${counted ? 0.3 : 0.5})`;
  if (terrain === "mountain") triangle(ctx, x, y, cell, "#6b6b6b");
  else if (terrain === "city") castle(ctx, x, y, cell, mark);
  else if (terrain === "crown") crown(ctx, x, y, cell, mark);
  if (counted) {
    ctx.fillStyle = seat >= 0 ? "#fff" : "#111";
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
