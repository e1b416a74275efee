// The viewer in live mode (`#viewer[data-live]`, a running match's page):
// no replay to load, no controls; it draws each board the page hands it
// (an "arena-live-board" event whose detail is the engine's live view:
// {game, turn, state, forfeits: [{seat, turn, reason}], faults: [count]})
// with the panel beside it, and says which turn it is. Each board is
// drawn as a replay of one state, through the same drawer, seats record
// and renderer as a replay.

import { el } from "./dom.js";
import { createRenderer } from "./render.js";
import { buildSeats } from "./seats.js";
import { createPlayback } from "./state.js";
import { seatColours } from "./games/shared.js";

export function mountLive(root, drawer, names, page) {
  root.dataset.state = "waiting";
  root.replaceChildren(el("div", { class: "viewer-message" }, "waiting for the worker's first report of the board…"));
  const colours = seatColours(page.colors, Math.max(8, names.length, page.colors.length));
  // Ends the listeners of the board shown, when the next one replaces it.
  let shown = null;
  root.addEventListener("arena-live-board", (event) => {
    const board = event.detail;
    try {
      const next = new AbortController();
      showBoard(root, drawer, board, names, colours, next.signal);
      if (shown) shown.abort();
      shown = next;
    } catch (error) {
      root.dataset.state = "error";
      root.replaceChildren(el("div", { class: "viewer-message" }, `Could not show the board: ${error.message}`));
    }
  });
}

function showBoard(root, drawer, board, names, colours, signal) {
  const replay = { game: board.game, states: [board.state], turns: [null], result: null };
  const forfeits = names.map(() => null);
  for (const f of board.forfeits || []) {
    if (Number.isInteger(f.seat) && f.seat >= 0 && f.seat < forfeits.length) forfeits[f.seat] = String(f.reason);
  }
  const model = drawer.prepare(replay.states, names, colours);
  const seats = buildSeats(drawer, model, replay, names, forfeits);
  // The turn each forfeit took effect, which one state cannot tell.
  for (const f of board.forfeits || []) {
    const fate = seats.fates[f.seat];
    if (fate && fate.kind === "forfeited" && Number.isInteger(f.turn)) fate.turn = f.turn;
  }
  addFaults(seats, board.faults);
  const views = drawer.views ? drawer.views(model, names) : [];
  const playback = createPlayback(0, views.length ? views[0].value : null, false);
  const render = createRenderer(drawer, model, replay, names, seats, colours, playback);
  const caption = el("div", { class: "viewer-status viewer-live-turn", "aria-live": "polite" }, `turn ${board.turn} · live`);
  root.replaceChildren(caption, el("div", { class: "viewer-main" }, render.stage, render.side));
  render.fit(signal);
  render.frame(true);
  root.dataset.turn = String(board.turn);
  root.dataset.state = "live";
}

// The faults so far come with the board (one state has no turns to count
// them from).
function addFaults(seats, faults) {
  if (!Array.isArray(faults)) return;
  seats.faults[0] = seats.faults[0].map((seat, i) => {
    const total = Number.isInteger(faults[i]) ? faults[i] : 0;
    return { total, kinds: seat.kinds };
  });
}
