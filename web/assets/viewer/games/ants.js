// Ants (`ants`), played on a torus. The dump holds rows, cols, water[] (one
// string per row, "%" water), ants [[row, col, owner]], food [[row, col]],
// hills [{row, col, owner, razed, by}], the turn's deaths
// [{row, col, owner, cause, killers: [[row, col, owner]]}], scores[],
// hives[] (food waiting to spawn) and forfeited[].

import { seatNamer } from "./shared.js";

// Land is pale sand and water a dark slate grey, neither a hue of the seat
// palette (shared.js), so no colony looks like water. Food is a small white
// diamond with a dark edge: no seat is white, and ants are discs.
const LAND = "#efe6d2";
const WATER = "#4b5563";
const FOOD = "#ffffff";
const FOOD_EDGE = "#1f2937";
// For tests that check them against the seat palette.
export const SURFACES = { land: LAND, water: WATER, food: FOOD };

function prepare(states, _names, colours) {
  const first = states[0];
  return {
    states,
    colours,
    cols: first.cols,
    rows: first.rows,
    players: first.players || first.scores.length,
    // Ant counts per colony per frame, for the panel and the events.
    counts: states.map((s) => {
      const counts = new Array(first.players || first.scores.length).fill(0);
      for (const [, , owner] of s.ants) counts[owner] += 1;
      return counts;
    }),
  };
}

// The shortest step from `from` to `to` on a ring of `size` squares.
function wrapDelta(from, to, size) {
  let d = (to - from) % size;
  if (d > size / 2) d -= size;
  if (d < -size / 2) d += size;
  return d;
}

function draw(ctx, model, index, _view, cell) {
  const state = model.states[index];
  ctx.fillStyle = LAND;
  ctx.fillRect(0, 0, state.cols * cell, state.rows * cell);
  ctx.fillStyle = WATER;
  state.water.forEach((line, row) => {
    for (let col = 0; col < line.length; col++) {
      if (line[col] === "%") ctx.fillRect(col * cell, row * cell, cell, cell);
    }
  });
  for (const hill of state.hills) drawHill(ctx, model.colours, hill, cell);
  ctx.fillStyle = FOOD;
  ctx.strokeStyle = FOOD_EDGE;
  ctx.lineWidth = Math.max(1, cell * 0.08);
  for (const [row, col] of state.food) {
    const cx = (col + 0.5) * cell;
    const cy = (row + 0.5) * cell;
    const r = cell * 0.28;
    ctx.beginPath();
    ctx.moveTo(cx, cy - r);
    ctx.lineTo(cx + r, cy);
    ctx.lineTo(cx, cy + r);
    ctx.lineTo(cx - r, cy);
    ctx.closePath();
    ctx.fill();
    ctx.stroke();
  }
  for (const [row, col, owner] of state.ants) {
    ctx.fillStyle = model.colours.fill(owner);
    ctx.beginPath();
    ctx.arc((col + 0.5) * cell, (row + 0.5) * cell, cell * 0.36, 0, 2 * Math.PI);
    ctx.fill();
  }
  drawDeaths(ctx, model.colours, state, cell);
}

// A live hill is a solid square outline; a razed one is dashed.
function drawHill(ctx, colours, hill, cell) {
  ctx.save();
  ctx.strokeStyle = colours.fill(hill.owner);
  ctx.lineWidth = Math.max(1.5, cell * 0.12);
  if (hill.razed) ctx.setLineDash([Math.max(2, cell * 0.18), Math.max(2, cell * 0.12)]);
  else {
    ctx.fillStyle = "rgba(255,255,255,0.7)";
    ctx.fillRect(hill.col * cell, hill.row * cell, cell, cell);
  }
  const inset = ctx.lineWidth / 2;
  ctx.strokeRect(hill.col * cell + inset, hill.row * cell + inset, cell - 2 * inset, cell - 2 * inset);
  ctx.restore();
}

// Each death is a hollow ring in the victim's colour with a line from every
// killer in the killer's colour. When two ants killed each other the two
// lines each stop halfway, so they meet in the middle.
function drawDeaths(ctx, colours, state, cell) {
  const deaths = state.deaths || [];
  const ringsAt = new Map();
  ctx.lineCap = "round";
  for (const death of deaths) {
    const key = `${death.row},${death.col}`;
    const stacked = ringsAt.get(key) || 0;
    ringsAt.set(key, stacked + 1);
    const cx = (death.col + 0.5) * cell;
    const cy = (death.row + 0.5) * cell;
    for (const [krow, kcol, kowner] of death.killers || []) {
      const dr = wrapDelta(death.row, krow, state.rows);
      const dc = wrapDelta(death.col, kcol, state.cols);
      const mutual = deaths.some((other) => other.row === krow && other.col === kcol &&
        (other.killers || []).some(([r, c, o]) => r === death.row && c === death.col && o === death.owner));
      const reach = mutual ? 0.5 : 1;
      ctx.strokeStyle = colours.fill(kowner);
      ctx.lineWidth = Math.max(2, cell * 0.12);
      ctx.beginPath();
      ctx.moveTo(cx + dc * cell, cy + dr * cell);
      ctx.lineTo(cx + dc * cell * (1 - reach), cy + dr * cell * (1 - reach));
      ctx.stroke();
    }
    ctx.strokeStyle = colours.fill(death.owner);
    ctx.lineWidth = Math.max(2, cell * 0.12);
    ctx.beginPath();
    ctx.arc(cx, cy, cell * (0.4 + 0.12 * stacked), 0, 2 * Math.PI);
    ctx.stroke();
  }
}

// The colony's points are the score; its ants are the army.
const METRICS = [
  { key: "score", label: "points", graph: true },
  { key: "ants", label: "ants", graph: true },
  { key: "hive", label: "hive", graph: false },
];

// A colony without ants is out (it may come back while its hive holds
// food; the viewer counts the last time it went out).
function stats(model, index) {
  const state = model.states[index];
  const counts = model.counts[index];
  return state.scores.map((score, seat) => {
    const hills = state.hills.filter((h) => h.owner === seat);
    const razed = hills.length > 0 && hills.every((h) => h.razed);
    return {
      values: { score, ants: counts[seat], hive: state.hives ? state.hives[seat] : 0 },
      out: counts[seat] === 0,
      note: razed ? "hill razed" : "",
    };
  });
}

// Hills razed and colonies wiped out, found by comparing consecutive states.
function events(model, names) {
  const name = seatNamer(names);
  const list = [];
  for (let i = 1; i < model.states.length; i++) {
    const before = model.states[i - 1];
    const after = model.states[i];
    after.hills.forEach((hill, h) => {
      const was = before.hills[h];
      if (was && !was.razed && hill.razed) {
        const by = hill.by != null ? ` by ${name(hill.by)}` : "";
        list.push({ index: i, seat: hill.by ?? hill.owner, text: `${name(hill.owner)}'s hill razed${by}` });
      }
    });
    model.counts[i].forEach((count, seat) => {
      if (count === 0 && model.counts[i - 1][seat] > 0) {
        list.push({ index: i, seat, kind: "eliminated", text: `${name(seat)} has no ants left` });
      }
    });
  }
  return list;
}

export default { prepare, draw, metrics: METRICS, stats, events };
