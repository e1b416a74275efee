// Grid Royale (`grid-royale`). The dump holds width, height, ore[y][x],
// bases [{owner, x, y}], banks[] (ore banked per seat), units
// [{id, owner, x, y, cargo}], safe_zone {x0, y0, x1, y1} (inclusive) and
// params (cargo_cap, spawn_cost). Forfeits are not in the state: the
// viewer takes them from the replay.

import { cellFont, seatNamer, shortNumber } from "./shared.js";

const EMPTY = [246, 241, 230];
const RICH = [139, 90, 20];

function prepare(states, _names, colours) {
  const first = states[0];
  let richest = 1;
  for (const row of first.ore) for (const v of row) richest = Math.max(richest, v);
  return {
    states,
    colours,
    spawnCost: first.params && first.params.spawn_cost != null ? first.params.spawn_cost : 500,
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
    ctx.strokeStyle = model.colours.fill(base.owner);
    ctx.lineWidth = Math.max(2, cell * 0.12);
    ctx.strokeRect(base.x * cell + inset, base.y * cell + inset, cell - 2 * inset, cell - 2 * inset);
  }
  for (const units of model.stacks[index].values()) drawStack(ctx, model.colours, units, cell, model.cargoCap);
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
function drawStack(ctx, colours, units, cell, cargoCap) {
  const unit = units[0];
  const cx = (unit.x + 0.5) * cell;
  const cy = (unit.y + 0.5) * cell;
  const r = cell * 0.36;
  const cargo = units.reduce((sum, u) => sum + u.cargo, 0);
  ctx.fillStyle = colours.fill(unit.owner);
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
    ctx.fillStyle = colours.ink(unit.owner);
    ctx.font = cellFont(cell, 0.3);
    ctx.fillText(shortNumber(cargo), cx, cy + 1);
  }
  if (units.length > 1) {
    ctx.fillStyle = "#000";
    ctx.font = cellFont(cell, 0.28);
    ctx.fillText(`×${units.length}`, cx + r, cy - r);
  }
}

// The bank is the score; units are the army.
const METRICS = [
  { key: "bank", label: "bank", graph: true },
  { key: "units", label: "units", graph: true },
  { key: "cargo", label: "carrying", graph: false },
];

// A seat without units and with less banked than a unit costs can never
// act again: it is out.
function stats(model, index) {
  const state = model.states[index];
  return state.banks.map((bank, seat) => {
    const mine = (state.units || []).filter((u) => u.owner === seat);
    const cargo = mine.reduce((sum, u) => sum + u.cargo, 0);
    return { values: { bank, units: mine.length, cargo }, out: mine.length === 0 && bank < model.spawnCost };
  });
}

// A seat going out (see `stats`).
function events(model, names) {
  const name = seatNamer(names);
  const list = [];
  let before = stats(model, 0);
  for (let i = 1; i < model.states.length; i++) {
    const after = stats(model, i);
    after.forEach((row, seat) => {
      if (row.out && !before[seat].out) list.push({ index: i, seat, kind: "eliminated", text: `${name(seat)} eliminated` });
    });
    before = after;
  }
  return list;
}

export default { prepare, draw, metrics: METRICS, stats, events };
