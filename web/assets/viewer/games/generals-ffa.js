// Generals FFA (`generals-ffa`, four seats). The dump holds params.width and
// params.height, kind[] ("plain" | "mountain" | "city" | "crown"), owner[]
// (seat or null), army[], seats[] (alive, crown cell, death_turn and each
// seat's memory of the board: {kind, owner, seen}) and the events so far.

import { paintCell } from "./board.js";
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

function prepare(states) {
  const { width, height } = states[0].params;
  return {
    states,
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
// (terrain and owner, army unknown), the rest hidden.
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
      paintCell(ctx, col, row, cell, state.kind[i], state.owner[i] == null ? -1 : state.owner[i], state.army[i], "visible");
      continue;
    }
    const recall = memory && memory[i];
    if (recall && recall.seen != null && recall.kind) {
      paintCell(ctx, col, row, cell, recall.kind, recall.owner == null ? -1 : recall.owner, null, "remembered");
    } else {
      // Never seen: the seat knows nothing, not even the terrain.
      paintCell(ctx, col, row, cell, "plain", -1, null, "hidden");
    }
  }
}

function legend(model, index) {
  const state = model.states[index];
  const { land, army } = model.totals[index];
  return state.seats.map((record, seat) => ({
    figures: record.alive ? `land ${land[seat]} · army ${army[seat]}` : `out on turn ${record.death_turn ?? "?"}`,
    out: !record.alive,
  }));
}

// Events are what changed between consecutive states: new entries in the
// event log, or, for a seat that died without one, its alive flag.
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
        list.push({ index: i, seat: e.seat, text: `${name(e.seat)} eliminated by ${name(e.other)}` });
      }
    }
    after.seats.forEach((record, seat) => {
      if (before.seats[seat].alive && !record.alive && !logged.has(seat)) {
        list.push({ index: i, seat, text: `${name(seat)} ${record.forfeited ? "forfeited" : "eliminated"}` });
      }
    });
  }
  return list;
}

export default { prepare, views, draw, legend, events };
