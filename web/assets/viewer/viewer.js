// Arena replay viewer: turns a `#viewer` element into a canvas player for a
// match's frames.json (the lines of `arena replay dump` as one JSON array).
//
// This entry module picks the game's drawer, loads the frames and mounts a
// player on each viewer element. The player (player.js) is made of the
// seats' record (seats.js: figures, faults, forfeits, eliminations,
// placements), the playback state (state.js: turn, playing, speed, view,
// hidden result), the renderer (render.js: canvas, drawer, status, with
// panel.js and graph.js beside the board) and the controls (controls.js:
// buttons, scrubber, choices, events, keys); url.js keeps `#turn=N`,
// replay.js reads the frames, reasons.js puts codes in words, dom.js
// builds elements, and viewer.css styles it all. live.js is the live mode
// of a running match's page (`data-live`): each board the page hands it
// drawn alone, with its panel, and no controls.
//
// A game drawer is a module whose default export has:
//   prepare(states, names, colours) -> model   (once; precompute everything
//                                     per frame) model.cols, model.rows: board
//                                     size in cells; colours: {fill(seat),
//                                     ink(seat)} (shared.js `seatColours`)
//   draw(ctx, model, index, view, cell)  ctx in CSS pixels, `cell` px per cell
//   metrics: [{key, label, graph}]    the figures `stats` gives; `graph`: drawn
//                                     in the graph (optional)
//   stats(model, index) -> [{values: {key: number}, out, note}] per seat:
//                                     the figures, whether the game has put
//                                     the seat out, a word more (optional)
//   views(model, names) -> [{value, label}]  first one is the default (optional)
//   events(model, names) -> [{index, text, seat, kind}]  timeline marks; kind
//                                     "eliminated" for a seat put out (optional)

import generals from "./games/generals.js";
import generalsFfa from "./games/generals-ffa.js";
import gridRoyale from "./games/grid-royale.js";
import ants from "./games/ants.js";
import { listenForKeys } from "./controls.js";
import { el } from "./dom.js";
import { mountLive } from "./live.js";
import { buildPlayer } from "./player.js";
import { splitFrames } from "./replay.js";

const DRAWERS = {
  generals: generals,
  "generals-classic": generals,
  "generals-ffa": generalsFfa,
  "grid-royale": gridRoyale,
  ants: ants,
};

// The viewer's stylesheet, beside this module.
const STYLESHEET = new URL("viewer.css", import.meta.url).href;

// Links the stylesheet, once per page. The promise settles when it has
// loaded, or failed to (the viewer then works unstyled).
function linkStylesheet() {
  if (document.getElementById("viewer-style")) return Promise.resolve();
  return new Promise((settle) => {
    document.head.appendChild(el("link", { id: "viewer-style", rel: "stylesheet", href: STYLESHEET, onload: settle, onerror: settle }));
  });
}

// A JSON array attribute of `root`, or [] when absent or not an array.
function jsonList(root, name) {
  try {
    const list = JSON.parse(root.dataset[name] || "[]");
    return Array.isArray(list) ? list : [];
  } catch {
    return [];
  }
}

function seatNames(root) {
  return jsonList(root, "seats").map(String);
}

// What the page says of the seats beside the frames (see player.js).
function pageSeats(root) {
  return {
    colors: jsonList(root, "colors").map((n) => (Number.isInteger(n) ? n : null)),
    forfeits: jsonList(root, "forfeits").map((f) => (typeof f === "string" && f ? f : null)),
  };
}

function showMessage(root, text, link) {
  const box = el("div", { class: "viewer-message" }, text);
  if (link) box.append(" ", el("a", { href: link, download: "" }, "download the replay"));
  root.replaceChildren(box);
}

// Loads `root`'s frames and puts a player on it once `styled` (the
// stylesheet) has settled; on failure `root` says what went wrong.
async function mount(root, styled) {
  const names = seatNames(root);
  const replayLink = root.dataset.replay || null;
  const declared = root.dataset.game || "";
  if (declared && !DRAWERS[declared]) {
    root.dataset.state = "unsupported";
    showMessage(root, `No viewer for game ${declared} yet.`, replayLink || root.dataset.frames);
    return;
  }
  if (root.dataset.live) {
    const drawer = DRAWERS[declared];
    if (!drawer) {
      root.dataset.state = "unsupported";
      showMessage(root, "No viewer for this game yet.");
      return;
    }
    await styled;
    mountLive(root, drawer, names, pageSeats(root));
    return;
  }
  root.dataset.state = "loading";
  showMessage(root, "loading replay…");
  let replay;
  try {
    if (!root.dataset.frames) throw new Error("no data-frames attribute");
    const response = await fetch(root.dataset.frames);
    if (!response.ok) throw new Error(`fetching ${root.dataset.frames}: HTTP ${response.status}`);
    replay = splitFrames(await response.json());
  } catch (error) {
    root.dataset.state = "error";
    showMessage(root, `Could not load the replay: ${error.message}`);
    return;
  }
  const game = declared || replay.game;
  const drawer = DRAWERS[game];
  if (!drawer) {
    root.dataset.state = "unsupported";
    showMessage(root, `No viewer for game ${game} yet.`, replayLink || root.dataset.frames);
    return;
  }
  await styled;
  try {
    buildPlayer(root, drawer, replay, names, pageSeats(root));
  } catch (error) {
    root.dataset.state = "error";
    showMessage(root, `Could not show the replay: ${error.message}`);
  }
}

function start() {
  const styled = linkStylesheet();
  const roots = new Set(document.querySelectorAll("#viewer, .viewer[data-frames]"));
  for (const root of roots) mount(root, styled);
  listenForKeys();
}

if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
else start();
