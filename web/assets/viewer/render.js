// Drawing one viewer's turn: the canvas sized to its container, the board
// drawn through the game's drawer, the per-seat panel (panel.js), the graph
// (graph.js) and the status line. It draws what the playback state says is
// shown, and keeps the result out of sight while the state hides it.

import { el } from "./dom.js";
import { createGraph } from "./graph.js";
import { createPanel } from "./panel.js";
import { describeResult, describeTurn } from "./replay.js";

// Largest cell in CSS pixels, so small boards do not become huge.
const MAX_CELL = 36;
// Window height kept free of the board: the page above it and the status
// line below.
const ROOM = 170;

// The renderer's elements are `stage` (holding the canvas), `side` (the
// panel and the graph) and `status`; the player places them.
export function createRenderer(drawer, model, replay, names, seats, colours, playback) {
  const canvas = el("canvas", { class: "viewer-canvas", "aria-label": "replay board" });
  const stage = el("div", { class: "viewer-stage" }, canvas);
  const panel = createPanel(seats, names, colours);
  const graph = createGraph(seats, colours, (index) => playback.show(index));
  const side = el("div", { class: "viewer-side" }, panel.element);
  if (graph) side.append(graph.element);
  const turnText = el("span", { class: "viewer-happened" });
  const resultText = el("span", { class: "viewer-result" });
  const status = el("div", { class: "viewer-status", "aria-live": "polite" }, turnText, resultText);
  const ctx = canvas.getContext("2d");
  // Pixels per cell, and the turn and spoiler setting on the canvas (-1: none yet).
  let cell = 0;
  let drawn = -1;
  let drawnHidden = null;

  // Sizes the canvas to the stage's width, in device pixels for
  // crispness; whether anything changed.
  function layout() {
    const width = stage.clientWidth || 600;
    // Fit the width, and the window height less room for the rest, so
    // the whole board shows; whole pixels per cell keep the grid free of
    // seams.
    const tall = Math.max(240, window.innerHeight - ROOM);
    let next = Math.min(MAX_CELL, width / model.cols, tall / model.rows);
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
    const hidden = playback.hideResult;
    if (!force && drawn === index && drawnHidden === hidden) return;
    drawn = index;
    drawnHidden = hidden;
    ctx.clearRect(0, 0, canvas.width, canvas.height);
    // A malformed state in one frame should not kill the player (or throw
    // out of an animation callback): say so and keep the controls working.
    try {
      drawer.draw(ctx, model, index, playback.view, cell);
      panel.show(index, hidden);
      if (graph) graph.show(index, hidden);
      turnText.textContent = describeTurn(replay, index, names);
      let result = "";
      if (index === seats.last) result = hidden ? "last turn (result hidden)" : describeResult(replay, seats, names);
      resultText.textContent = result;
    } catch (error) {
      turnText.textContent = `could not draw turn ${index}: ${error.message}`;
      resultText.textContent = "";
    }
  }

  // Sizes the canvas now, and again (redrawing) whenever the stage or the
  // window changes size, until `signal` (optional) aborts.
  function fit(signal) {
    layout();
    const relayout = () => {
      if (layout()) frame(true);
    };
    const observer = new ResizeObserver(relayout);
    observer.observe(stage);
    window.addEventListener("resize", relayout, { signal });
    if (signal) signal.addEventListener("abort", () => observer.disconnect());
  }

  return { stage, side, status, legend: panel.element, fit, frame };
}
