// Drawing one viewer's frames: the canvas sized to its container, the
// board drawn through the game's drawer, and the legend and status line of
// the frame. It draws what the playback state says is shown.

import { el } from "./dom.js";
import { describeTurn } from "./replay.js";
import { seatColour, seatName } from "./games/shared.js";

// Largest cell in CSS pixels, so small boards do not become huge.
const MAX_CELL = 36;

// The renderer's elements are `stage` (holding the canvas), `legend` and
// `status`; the player places them.
export function createRenderer(drawer, model, replay, names, playback) {
  const canvas = el("canvas", { class: "viewer-canvas", "aria-label": "replay board" });
  const stage = el("div", { class: "viewer-stage" }, canvas);
  const legend = el("ul", { class: "viewer-legend" });
  const status = el("div", { class: "viewer-status" });
  const ctx = canvas.getContext("2d");
  // Pixels per cell, and the turn on the canvas (-1: none yet).
  let cell = 0;
  let drawn = -1;

  // Sizes the canvas to the container width, in device pixels for
  // crispness; whether anything changed.
  function layout() {
    const width = stage.clientWidth || 600;
    // Fit the width, and most of the window height so the controls stay in
    // view; whole pixels per cell keep the grid free of seams.
    let next = Math.min(MAX_CELL, width / model.cols, (window.innerHeight * 0.8) / model.rows);
    if (next >= 6) next = Math.floor(next);
    const dpr = window.devicePixelRatio || 1;
    const cssW = Math.floor(next * model.cols);
    const cssH = Math.floor(next * model.rows);
    if (next === cell && canvas.width === Math.round(cssW * dpr)) return false;
    cell = next;
    canvas.style.width = `${cssW}px`;
    canvas.style.height = `${cssH}px`;
    canvas.width = Math.round(cssW * dpr);
    canvas.height = Math.round(cssH * dpr);
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    return true;
  }

  // Draws the turn shown; unless `force`, only if the canvas holds another.
  function frame(force) {
    const index = playback.index;
    if (!force && drawn === index) return;
    drawn = index;
    ctx.clearRect(0, 0, canvas.width, canvas.height);
    // A malformed state in one frame should not kill the player (or throw
    // out of an animation callback): say so and keep the controls working.
    try {
      drawer.draw(ctx, model, index, playback.view, cell);
      const rows = drawer.legend ? drawer.legend(model, index) : [];
      legend.replaceChildren(...legendItems(rows, names));
      status.textContent = describeTurn(replay, index, names);
    } catch (error) {
      status.textContent = `could not draw turn ${index}: ${error.message}`;
    }
  }

  // Sizes the canvas now, and again (redrawing) whenever the stage or the
  // window changes size.
  function fit() {
    layout();
    const relayout = () => {
      if (layout()) frame(true);
    };
    new ResizeObserver(relayout).observe(stage);
    window.addEventListener("resize", relayout);
  }

  return { stage, legend, status, fit, frame };
}

// One legend entry per seat: colour, name, and the drawer's figures.
function legendItems(rows, names) {
  const count = Math.max(rows.length, names.length);
  const items = [];
  for (let seat = 0; seat < count; seat++) {
    const row = rows[seat] || {};
    const item = el("li", { "data-seat": String(seat), class: row.out ? "out" : "" },
      el("span", { class: "viewer-swatch", style: `background:${seatColour(seat)}` }),
      seatName(names, seat));
    if (row.figures) item.append(el("span", { class: "viewer-figures" }, row.figures));
    items.push(item);
  }
  return items;
}
