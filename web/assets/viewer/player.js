// One viewer's player, put together on its element: the seats' colours and
// record (shared.js, seats.js), the playback state (state.js), the
// renderer drawing the turn it shows (render.js), the controls driving it
// (controls.js), and the URL kept in step (url.js).
//
// Layout: the controls on top (in view on a laptop's screen however tall
// the board), the status line, then the board with the panel and graph
// beside it (below it on a narrow screen), then the events.

import { bindKeys, createControls, storedHideResult } from "./controls.js";
import { el } from "./dom.js";
import { createRenderer } from "./render.js";
import { buildSeats } from "./seats.js";
import { createPlayback } from "./state.js";
import { hashTurn, hashWriter, onHashTurn } from "./url.js";
import { seatColours } from "./games/shared.js";

// `page`: what the page says beside the frames: `colors` (each seat's
// entrant index, for its palette entry) and `forfeits` (each seat's
// forfeit reason from the stored result, or null).
export function buildPlayer(root, drawer, replay, names, page) {
  // Colours for more seats than the match has cost nothing: seats are
  // given theirs in order, so the real ones never depend on the rest.
  const colours = seatColours(page.colors, Math.max(8, names.length, page.colors.length));
  const model = drawer.prepare(replay.states, names, colours);
  const seats = buildSeats(drawer, model, replay, names, page.forfeits);
  const views = drawer.views ? drawer.views(model, names) : [];
  const ownEvents = drawer.events ? drawer.events(model, names) : [];
  const events = mergeEvents(ownEvents, seats);
  const playback = createPlayback(replay.states.length - 1, views.length ? views[0].value : null, storedHideResult());
  const render = createRenderer(drawer, model, replay, names, seats, colours, playback);
  const controls = createControls(playback, views, events, colours);
  const main = el("div", { class: "viewer-main" }, render.stage, render.side);
  root.replaceChildren(controls.bar, render.status, main);
  if (controls.events) root.append(controls.events);

  // Stepping, scrubbing and pausing write `#turn=N`; playing does not.
  const writeHash = hashWriter(() => playback.index);
  playback.on("playing", (playing) => {
    controls.showPlaying(playing);
    if (!playing) writeHash();
  });
  playback.on("turn", (how) => {
    controls.showTurn();
    root.dataset.turn = String(playback.index);
    if (how === "step") writeHash();
    render.frame(false);
  });
  playback.on("view", () => render.frame(true));
  playback.on("spoilers", (hidden) => {
    controls.showSpoilers();
    showPageSpoilers(hidden);
    root.dataset.hideResult = String(hidden);
    render.frame(true);
  });
  bindKeys(root, playback);

  render.fit();
  const start = hashTurn();
  controls.showSpoilers();
  showPageSpoilers(playback.hideResult);
  root.dataset.hideResult = String(playback.hideResult);
  playback.show(start == null ? 0 : start, "open");
  onHashTurn((turn) => {
    if (turn !== playback.index) playback.show(turn, "open");
  });
  root.dataset.ready = "true";
  root.dataset.state = "ready";
}

// The drawer's events and the viewer's own (forfeits), by turn. A drawer's
// elimination of a seat that had forfeited by then is left out: the
// forfeit says it.
function mergeEvents(own, seats) {
  const kept = own.filter((e) => {
    if (e.kind !== "eliminated" || e.seat == null) return true;
    const fate = seats.fates[e.seat];
    return !(fate && fate.kind === "forfeited" && fate.index <= e.index);
  });
  return [...kept, ...seats.events].sort((a, b) => a.index - b.index);
}

// The page's own spoilers (`[data-spoiler]`: its placements table, its
// result) follow the viewer's "hide result".
function showPageSpoilers(hidden) {
  for (const node of document.querySelectorAll("[data-spoiler]")) node.hidden = hidden;
}
