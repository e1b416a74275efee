// The replay as the viewer reads it: frames.json split into states, what
// happened on one turn and how the match ended, in words.

import { inWords } from "./reasons.js";
import { fateText, place } from "./seats.js";
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

// Forfeits and faults of the turn at `index`, in words.
export function describeTurn(replay, index, names) {
  const turn = replay.turns[index];
  const parts = [];
  const name = seatNamer(names);
  if (turn) {
    for (const f of turn.forfeits || []) parts.push(`${name(f.seat)} forfeited: ${inWords(f.reason)}`);
    (turn.faults || []).forEach((fault, seat) => {
      if (fault) parts.push(`${name(seat)}: ${typeof fault === "string" ? inWords(fault) : JSON.stringify(fault)}`);
    });
  }
  return parts.join(" · ");
}

// The result in words, with the final placements (best first) and how
// each seat that left did so: "alice wins (turn limit reached) · 1st alice
// · 2nd bob · 3rd carol, forfeited on turn 1 (crashed)".
export function describeResult(replay, seats, names) {
  const r = replay.result;
  if (!r) return "match unfinished";
  const name = seatNamer(names);
  const head = r.winner != null ? `${name(r.winner)} wins (${inWords(r.reason)})` : `no single winner (${inWords(r.reason)})`;
  const order = (r.ranks || []).map((rank, seat) => ({ rank, seat })).sort((a, b) => a.rank - b.rank || a.seat - b.seat);
  const placings = order.map(({ rank, seat }) => {
    const fate = seats.fates[seat];
    return `${place(rank)} ${name(seat)}${fate ? `, ${fateText(fate)}` : ""}`;
  });
  return [head, ...placings].join(" · ");
}
