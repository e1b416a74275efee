// The replay as the viewer reads it: frames.json split into states, and
// what happened on one turn in words.

import { seatNamer } from "./games/shared.js";

// The dump's lines: a header with the initial state, one entry per turn,
// then the result. Index 0 is the initial state, index n the state after turn n.
export function splitFrames(frames) {
  if (!Array.isArray(frames) || frames.length === 0) throw new Error("frames.json is not a non-empty array");
  const header = frames[0];
  if (!header || typeof header !== "object" || !("initial" in header)) {
    throw new Error("frames.json does not start with the replay header");
  }
  const turns = frames.filter((f) => f && typeof f === "object" && "state" in f);
  const end = frames.find((f) => f && typeof f === "object" && "result" in f);
  return {
    game: header.game,
    states: [header.initial, ...turns.map((t) => t.state)],
    turns: [null, ...turns],
    result: end ? end.result : null,
  };
}

// Forfeits and faults of the turn at `index`, and the result on the last one.
export function describeTurn(replay, index, names) {
  const turn = replay.turns[index];
  const parts = [];
  const name = seatNamer(names);
  if (turn) {
    for (const f of turn.forfeits || []) parts.push(`${name(f.seat)} forfeited: ${f.reason}`);
    (turn.faults || []).forEach((fault, seat) => {
      if (fault) parts.push(`${name(seat)} fault: ${typeof fault === "string" ? fault : JSON.stringify(fault)}`);
    });
  }
  if (index === replay.states.length - 1) {
    const r = replay.result;
    if (r && r.winner != null) parts.push(`winner ${name(r.winner)} (${r.reason})`);
    else if (r) parts.push(`ended: ${r.reason}`);
    else parts.push("match unfinished");
  }
  return parts.join(" · ");
}
