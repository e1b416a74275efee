// Generals Competition (`generals`, 1v1) and classic generals.io
// (`generals-classic`: 1v1, 2v2, FFA). Both dump the same board planes:
// width, height, kind[] ("Plain" | "Mountain" | "Castle" | "General"),
// owner[] (0 neutral, 1 + seat), army[], generals[] (each seat's general
// cell); classic adds seats[] with team and alive.

import { hatchCell, paintCell } from "./board.js";
import { cachedSight, fogViews, seatNamer, sightMask, viewedSeat } from "./shared.js";

const TERRAIN = { Plain: "plain", Mountain: "mountain", Castle: "city", General: "crown" };

function seatCount(state) {
  return Array.isArray(state.seats) ? state.seats.length : state.generals.length;
}

// The team a seat plays for; without teams every seat is its own.
function teamOf(state, seat) {
  const record = Array.isArray(state.seats) ? state.seats[seat] : null;
  return record && record.team != null ? record.team : seat;
}

function totals(state, seats) {
  const land = new Array(seats).fill(0);
  const army = new Array(seats).fill(0);
  state.owner.forEach((owner, cell) => {
    if (owner === 0) return;
    land[owner - 1] += 1;
    army[owner - 1] += state.army[cell];
  });
  return { land, army };
}

// The first frame from which each seat's general is no longer its own, or
// null: in the competition game that is the end of the match.
function generalsLost(states, seats) {
  const lost = new Array(seats).fill(null);
  states.forEach((state, index) => {
    for (let seat = 0; seat < seats; seat++) {
      if (lost[seat] == null && state.owner[state.generals[seat]] - 1 !== seat) lost[seat] = index;
    }
  });
  return lost;
}

function prepare(states, _names, colours) {
  const first = states[0];
  const seats = seatCount(first);
  return {
    states,
    seats,
    colours,
    cols: first.width,
    rows: first.height,
    totals: states.map((s) => totals(s, seats)),
    lost: generalsLost(states, seats),
    sight: new Map(),
  };
}

function views(model, names) {
  return fogViews(model.seats, names);
}

// A seat sees what it or a teammate owns and every cell touching it.
function sightOf(model, index, seat) {
  return cachedSight(model, index, seat, () => {
    const state = model.states[index];
    const team = teamOf(state, seat);
    return sightMask(
      state.width,
      state.height,
      (cell) => state.owner[cell] - 1,
      (other) => teamOf(state, other) === team,
    );
  });
}

function draw(ctx, model, index, view, cell) {
  const state = model.states[index];
  const seat = viewedSeat(view);
  const seen = seat < 0 ? null : sightOf(model, index, seat);
  for (let i = 0; i < state.kind.length; i++) {
    const fog = !seen || seen[i] ? "visible" : "hidden";
    const terrain = TERRAIN[state.kind[i]] || "plain";
    const owner = state.owner[i] - 1;
    const col = i % state.width;
    const row = Math.floor(i / state.width);
    paintCell(ctx, model.colours, col, row, cell, terrain, owner, state.army[i], fog);
    // Classic keeps a forfeited seat's cells on the board: striped.
    const record = owner >= 0 && fog === "visible" && Array.isArray(state.seats) ? state.seats[owner] : null;
    if (record && record.forfeited) hatchCell(ctx, model.colours, col, row, cell, owner);
  }
}

const METRICS = [
  { key: "land", label: "land", graph: true },
  { key: "army", label: "army", graph: true },
];

// Land (cells owned) and army (the sum of their armies) per seat; a seat
// is out once its general is gone (classic: its alive flag).
function stats(model, index) {
  const state = model.states[index];
  const { land, army } = model.totals[index];
  return land.map((_, seat) => {
    const record = Array.isArray(state.seats) ? state.seats[seat] : null;
    const out = record ? !record.alive : model.lost[seat] != null && model.lost[seat] <= index;
    const note = record && state.mode === "2v2" ? `team ${record.team}` : "";
    return { values: { land: land[seat], army: army[seat] }, out, note };
  });
}

// A general's cell changing hands is a capture; a seat's alive flag going
// false (classic) is an elimination.
function events(model, names) {
  const name = seatNamer(names);
  const list = [];
  for (let i = 1; i < model.states.length; i++) {
    const before = model.states[i - 1];
    const after = model.states[i];
    for (let seat = 0; seat < model.seats; seat++) {
      const cell = after.generals[seat];
      if (before.owner[cell] - 1 === seat && after.owner[cell] - 1 !== seat) {
        const by = after.owner[cell] - 1;
        list.push({ index: i, seat: by >= 0 ? by : null, text: `${name(seat)}'s general captured${by >= 0 ? ` by ${name(by)}` : ""}` });
      }
      const was = before.seats && before.seats[seat];
      const now = after.seats && after.seats[seat];
      if (was && now && was.alive && !now.alive) {
        list.push({ index: i, seat, kind: "eliminated", text: `${name(seat)} eliminated` });
      }
    }
  }
  return list;
}

export default { prepare, views, draw, metrics: METRICS, stats, events };
