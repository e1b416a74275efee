// Grid Royale (`grid-royale`). The dump holds width, height, ore[y][x],
// bases [{owner, x, y}], banks[] (ore banked per seat), units
// [{id, owner, x, y, cargo}], safe_zone {x0, y0, x1, y1} (inclusive) and
// params.cargo_cap.

import { seatColour, cellFont, shortNumber } from "./shared.js";

const EMPTY = [246, 241, 230];
const RICH = [139, 90, 20];

function prepare(states) {
  const first = states[0];
  let richest = 1;
  for (const row of first.ore) for (const v of row) richest = Math.max(richest, v);
  return {
    states,
    cols: first.width,
    rows: first.height,
    richest,
    cargoCap: (first.params && first.params.cargo_cap) || 1000,
    // Units grouped by cell once per frame: own units may share a base.
    stacks: states.map(stackUnits),
  };
}

function stackUnits(state) {
  const stacks = new Map();
  for (const unit of state.units || []) {
    const key = unit.y * state.width + unit.x;
    if (!stacks.has(key)) stacks.set(key, []);
    stacks.get(key).push(unit);
  }
  return stacks;
}

// Ore as shading: square root so the sparse 1–40 background still shows
// next to 900-ore peaks.
function oreColour(value, richest) {
  const t = Math.min(1, Math.sqrt(value / richest));
  const mix = EMPTY.map((e, i) => Math.round(e + (RICH[i] - e) * t));
  return `rgb(${mix[0]},${mix[1]},${mix[2]})`;
}

function draw(ctx, model, index, _view, cell) {
  const state = model.states[index];
  for (let y = 0; y < state.height; y++) {
    for (let x = 0; x < state.width; x++) {
      ctx.fillStyle = oreColour(state.ore[y][x], model.richest);
      ctx.fillRect(x * cell, y * cell, cell, cell);
    }
  }
  drawZone(ctx, state, cell);
  for (const base of state.bases) {
    const inset = cell * 0.08;
    ctx.fillStyle = "rgba(255,255,255,0.6)";
    ctx.fillRect(base.x * cell + inset, base.y * cell + inset, cell - 2 * inset, cell - 2 * inset);
    ctx.strokeStyle = seatColour(base.owner);
    ctx.lineWidth = Math.max(2, cell * 0.12);
    ctx.strokeRect(base.x * cell + inset, base.y * cell + inset, cell - 2 * inset, cell - 2 * inset);
  }
  for (const units of model.stacks[index].values()) drawStack(ctx, units, cell, model.cargoCap);
}

// Everything outside the safe zone is dimmed and the border drawn dashed.
function drawZone(ctx, state, cell) {
  const z = state.safe_zone;
  if (!z) return;
  const left = z.x0 * cell;
  const top = z.y0 * cell;
  const right = (z.x1 + 1) * cell;
  const bottom = (z.y1 + 1) * cell;
  const w = state.width * cell;
  const h = state.height * cell;
  ctx.fillStyle = "rgba(30,30,50,0.4)";
  ctx.fillRect(0, 0, w, top);
  ctx.fillRect(0, bottom, w, h - bottom);
  ctx.fillRect(0, top, left, bottom - top);
  ctx.fillRect(right, top, w - right, bottom - top);
  ctx.save();
  ctx.strokeStyle = "#c00";
  ctx.lineWidth = 2;
  ctx.setLineDash([6, 4]);
  ctx.strokeRect(left + 1, top + 1, right - left - 2, bottom - top - 2);
  ctx.restore();
}

// A unit is a disc in its owner's colour with a gold arc for how full its
// cargo is; the cargo figure sits on it when the cell is big enough.
function drawStack(ctx, units, cell, cargoCap) {
  const unit = units[0];
  const cx = (unit.x + 0.5) * cell;
  const cy = (unit.y + 0.5) * cell;
  const r = cell * 0.36;
  const cargo = units.reduce((sum, u) => sum + u.cargo, 0);
  ctx.fillStyle = seatColour(unit.owner);
  ctx.beginPath();
  ctx.arc(cx, cy, r, 0, 2 * Math.PI);
  ctx.fill();
  if (cargo > 0) {
    const share = Math.min(1, cargo / (cargoCap * units.length));
    ctx.strokeStyle = "#ffc400";
    ctx.lineWidth = Math.max(1.5, cell * 0.1);
    ctx.beginPath();
    ctx.arc(cx, cy, r, -Math.PI / 2, -Math.PI / 2 + share * 2 * Math.PI);
    ctx.stroke();
  }
  ctx.textAlign = "center";
  ctx.textBaseline = "middle";
  if (cargo > 0 && cell >= 18) {
    ctx.fillStyle = "#fff";
    ctx.font = cellFont(cell, 0.3);
    ctx.fillText(shortNumber(cargo), cx, cy + 1);
  }
  if (units.length > 1) {
    ctx.fillStyle = "#000";
    ctx.font = cellFont(cell, 0.28);
    ctx.fillText(`×${units.length}`, cx + r, cy - r);
  }
}

function legend(model, index) {
  const state = model.states[index];
  return state.banks.map((bank, seat) => {
    const mine = (state.units || []).filter((u) => u.owner === seat);
    const cargo = mine.reduce((sum, u) => sum + u.cargo, 0);
    return { figures: `bank ${bank} · units ${mine.length} · carrying ${cargo}` };
  });
}

export default { prepare, draw, legend };
