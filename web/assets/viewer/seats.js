// What the viewer knows of every seat at every turn, worked out once from
// the replay and the drawer: the game's figures (`drawer.stats`), faults so
// far, how each seat left the match (its fate: forfeited or eliminated, and
// on which turn) and the final placements. No DOM here: the panel, the
// graph, the status line and the timeline all read this one record.

import { inWords } from "./reasons.js";
import { seatNamer } from "./games/shared.js";

// Ordinal placement of a 0-based rank: 0 -> "1st".
export function place(rank) {
  const n = rank + 1;
  const tens = n % 100;
  const suffix = tens >= 11 && tens <= 13 ? "th" : { 1: "st", 2: "nd", 3: "rd" }[n % 10] || "th";
  return `${n}${suffix}`;
}

// `forfeits`: the page's word per seat (`data-forfeits`, the stored
// result's forfeit reasons), or []. A forfeit that took effect after the
// last step ended the match without a turn of its own, so the frames never
// name it; the page's word is the only trace of it.
export function buildSeats(drawer, model, replay, names, forfeits) {
  const last = replay.states.length - 1;
  const rows = replay.states.map((_, index) => (drawer.stats ? drawer.stats(model, index) : []));
  const count = Math.max(names.length, rows[0].length, replay.result ? replay.result.ranks.length : 0);
  const faults = countFaults(replay, count);
  const fates = seatFates(replay, rows, forfeits, count, last);
  const name = seatNamer(names);
  const events = [];
  fates.forEach((fate, seat) => {
    if (fate && fate.kind === "forfeited") {
      // Listed at its turn, unless it came after the last one.
      const when = fate.turn === fate.index ? "" : ` on turn ${fate.turn}`;
      events.push({ index: fate.index, seat, kind: "forfeit", text: `${name(seat)} forfeited${when} (${inWords(fate.reason)})` });
    }
  });
  const ranks = replay.result && Array.isArray(replay.result.ranks) ? replay.result.ranks : null;
  return {
    count,
    last,
    metrics: drawer.metrics || [],
    // rows[index][seat]: {values: {key: number}, out, note}.
    rows,
    // faults[index][seat]: {total, kinds: {kind: count}} so far.
    faults,
    // fates[seat]: null, or {kind: "forfeited" | "eliminated", turn, index, reason}.
    fates,
    // ranks[seat]: the final placement (0 is first), or null when unfinished.
    ranks,
    // The viewer's own events: forfeits, which no drawer sees.
    events,
  };
}

// Faults so far, per turn and seat, by kind.
function countFaults(replay, count) {
  let now = Array.from({ length: count }, () => ({ total: 0, kinds: {} }));
  return replay.turns.map((turn) => {
    if (turn && Array.isArray(turn.faults)) {
      now = now.map((seat) => ({ total: seat.total, kinds: { ...seat.kinds } }));
      turn.faults.forEach((fault, seat) => {
        if (!fault || !now[seat]) return;
        const kind = typeof fault === "string" ? fault : JSON.stringify(fault);
        now[seat].total += 1;
        now[seat].kinds[kind] = (now[seat].kinds[kind] || 0) + 1;
      });
    }
    return now;
  });
}

// How each seat left, if it did: the earlier of its forfeit and its
// elimination (the last time the game put it out for good).
function seatFates(replay, rows, pageForfeits, count, last) {
  const forfeited = new Array(count).fill(null);
  replay.turns.forEach((turn, index) => {
    for (const f of (turn && turn.forfeits) || []) {
      if (f && forfeited[f.seat] == null) forfeited[f.seat] = { kind: "forfeited", turn: index, index, reason: f.reason };
    }
  });
  (pageForfeits || []).forEach((reason, seat) => {
    if (reason && seat < count && forfeited[seat] == null) {
      forfeited[seat] = { kind: "forfeited", turn: last + 1, index: last, reason };
    }
  });
  return forfeited.map((forfeit, seat) => {
    const out = eliminatedAt(rows, seat);
    const eliminated = out == null ? null : { kind: "eliminated", turn: out, index: out, reason: null };
    if (forfeit && (!eliminated || forfeit.index <= eliminated.index)) return forfeit;
    return eliminated;
  });
}

// The first turn of the run of turns, to the end, in which `seat` is out.
function eliminatedAt(rows, seat) {
  let from = null;
  for (let index = rows.length - 1; index >= 0; index--) {
    const row = rows[index][seat];
    if (!row || !row.out) break;
    from = index;
  }
  return from;
}

// A seat's fate as the viewer may show it at turn `index`: all of it, or,
// when the result is hidden, only what has happened by then.
export function fateShown(seats, seat, index, hideResult) {
  const fate = seats.fates[seat];
  if (!fate) return null;
  if (fate.index <= index) return { ...fate, past: true };
  return hideResult ? null : { ...fate, past: false };
}

// "forfeited on turn 3 (crashed)", "eliminated on turn 120".
export function fateText(fate) {
  const when = `${fate.kind} on turn ${fate.turn}`;
  return fate.reason ? `${when} (${inWords(fate.reason)})` : when;
}
