// Generals FFA (`generals-ffa`, four seats). The dump holds params.width and
// params.height, kind[] ("plain" | "mountain" | "city" | "crown"), owner[]
// (seat or null), army[], seats[] (alive, crown cell, death_turn and each
// seat's memory of the board: {kind, owner, seen}) and the events so far.

import { hatchCell, paintCell } from "./board.js";
import { cachedSight, fogViews, seatNamer, sightMask, viewedSeat } from "./shared.js";

function totals(state) {
  const seats = state.seats.length;
  const land = new Array(seats).fill(0);
  const army = new Array(seats).fill(0);
  state.owner.forEach((owner, cell) => {
    if (owner == null) return;
    land[owner] += 1;
    army[owner] += state.army[cell];
  });
  return { land, army };
}

function prepare(states, _names, colours) {
  const { width, height } = states[0].params;
  return {
    states,
    colours,
    seats: states[0].seats.length,
    cols: width,
    rows: height,
    totals: states.map(totals),
    sight: new Map(),
  };
}

function views(model, names) {
  return fogViews(model.seats, names);
}

function sightOf(model, index, seat) {
  return cachedSight(model, index, seat, () => {
    const state = model.states[index];
    const { width, height } = state.params;
    return sightMask(width, height, (cell) => (state.owner[cell] == null ? -1 : state.owner[cell]), (s) => s === seat);
  });
}

// A seat's view: what it sees now in full, what it saw before as remembered
// (terrain and owner, army unknown), the rest hidden. A forfeited seat's
// cells are striped.
function draw(ctx, model, index, view, cell) {
  const state = model.states[index];
  const width = state.params.width;
  const seat = viewedSeat(view);
  const seen = seat < 0 ? null : sightOf(model, index, seat);
  const memory = seat < 0 ? null : state.seats[seat].memory;
  for (let i = 0; i < state.kind.length; i++) {
    const col = i % width;
    const row = Math.floor(i / width);
    if (!seen || seen[i]) {
      const owner = state.owner[i] == null ? -1 : state.owner[i];
      paintCell(ctx, model.colours, col, row, cell, state.kind[i], owner, state.army[i], "visible");
      if (owner >= 0 && state.seats[owner].forfeited) hatchCell(ctx, model.colours, col, row, cell, owner);
      continue;
    }
    const recall = memory && memory[i];
    if (recall && recall.seen != null && recall.kind) {
      paintCell(ctx, model.colours, col, row, cell, recall.kind, recall.owner == null ? -1 : recall.owner, null, "remembered");
    } else {
      // Never seen: the seat knows nothing, not even the terrain.
      paintCell(ctx, model.colours, col, row, cell, "plain", -1, null, "hidden");
    }
  }
}

const METRICS = [
  { key: "land", label: "land", graph: true },
  { key: "army", label: "army", graph: true },
];

// Land and army per seat; out once its crown fell. A forfeited seat stays
// alive on the board (the `sprawl` baseline plays it): the viewer marks it
// from the replay's forfeits, not from here.
function stats(model, index) {
  const state = model.states[index];
  const { land, army } = model.totals[index];
  return state.seats.map((record, seat) => ({
    values: { land: land[seat], army: army[seat] },
    out: !record.alive,
    note: record.forfeited && record.alive ? "played by sprawl" : "",
  }));
}

// Events are what changed between consecutive states: new entries in the
// event log, or, for a seat that died without one, its alive flag.
// Forfeits are the viewer's own events (seats.js), from the replay.
function events(model, names) {
  const name = seatNamer(names);
  const list = [];
  for (let i = 1; i < model.states.length; i++) {
    const before = model.states[i - 1];
    const after = model.states[i];
    const logged = new Set();
    for (const e of (after.events || []).slice((before.events || []).length)) {
      if (e.kind === "generalcaptured") {
        list.push({ index: i, seat: e.seat, text: `${name(e.seat)} captured ${name(e.other)}'s crown` });
      } else if (e.kind === "eliminated") {
        logged.add(e.seat);
        list.push({ index: i, seat: e.seat, kind: "eliminated", text: `${name(e.seat)} eliminated by ${name(e.other)}` });
      }
    }
    after.seats.forEach((record, seat) => {
      if (before.seats[seat].alive && !record.alive && !logged.has(seat)) {
        list.push({ index: i, seat, kind: "eliminated", text: `${name(seat)} eliminated` });
      }
    });
  }
  return list;
}

export default { prepare, views, draw, metrics: METRICS, stats, events };
