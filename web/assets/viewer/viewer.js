// Arena replay viewer: turns a `#viewer` element into a canvas player for a
// match's frames.json (the lines of `arena replay dump` as one JSON array).
//
// A game drawer is a module whose default export has:
//   prepare(states, names) -> model   (once; precompute everything per frame)
//                                     model.cols, model.rows: board size in cells
//   draw(ctx, model, index, view, cell)  ctx in CSS pixels, `cell` px per cell
//   legend(model, index) -> [{figures, out}] per seat (optional)
//   views(model, names) -> [{value, label}]  first one is the default (optional)
//   events(model, names) -> [{index, text, seat}]  timeline marks (optional)

import generals from "./games/generals.js";
import generalsFfa from "./games/generals-ffa.js";
import gridRoyale from "./games/grid-royale.js";
import ants from "./games/ants.js";
import { seatColour } from "./games/palette.js";

const DRAWERS = {
  generals: generals,
  "generals-classic": generals,
  "generals-ffa": generalsFfa,
  "grid-royale": gridRoyale,
  ants: ants,
};

// Turns per second; the last one advances every animation frame.
const SPEEDS = [1, 2, 4, 8, 16, 32, 60];
const DEFAULT_SPEED = 8;
// Largest cell in CSS pixels, so small boards do not become huge.
const MAX_CELL = 36;
// replaceState is rate limited by browsers; keep well below that.
const HASH_INTERVAL_MS = 100;

const STYLE = `
.viewer { font: 14px/1.4 system-ui, sans-serif; max-width: 100%; }
.viewer-stage { width: 100%; }
.viewer canvas { display: block; max-width: 100%; touch-action: manipulation; }
.viewer-controls { display: flex; flex-wrap: wrap; gap: 6px; align-items: center; margin: 6px 0; }
.viewer-controls button, .viewer-controls select { font: inherit; padding: 2px 8px; }
.viewer-timeline { position: relative; flex: 1 1 200px; min-width: 120px; }
.viewer-scrubber { width: 100%; margin: 0; }
.viewer-marks { position: relative; height: 8px; margin: 0 8px; }
.viewer-mark { position: absolute; top: 0; width: 4px; height: 8px; margin-left: -2px; padding: 0; border: 0; cursor: pointer; }
.viewer-turn { font-variant-numeric: tabular-nums; min-width: 8em; }
.viewer-legend { display: flex; flex-wrap: wrap; gap: 4px 14px; list-style: none; padding: 0; margin: 4px 0; }
.viewer-legend .out { opacity: 0.5; text-decoration: line-through; }
.viewer-swatch { display: inline-block; width: 12px; height: 12px; margin-right: 4px; vertical-align: -1px; border-radius: 2px; }
.viewer-figures { color: #555; margin-left: 4px; font-variant-numeric: tabular-nums; }
.viewer-events { list-style: none; padding: 0; margin: 4px 0; max-height: 8em; overflow-y: auto; }
.viewer-events button { font: inherit; background: none; border: 0; padding: 0; cursor: pointer; text-align: left; }
.viewer-events button:hover { text-decoration: underline; }
.viewer-status { color: #444; min-height: 1.4em; }
.viewer-message { padding: 1em; border: 1px dashed #aaa; }
`;

function injectStyle() {
  if (document.getElementById("viewer-style")) return;
  const style = document.createElement("style");
  style.id = "viewer-style";
  style.textContent = STYLE;
  document.head.appendChild(style);
}

// Small element builder: el("button", {class: "x", onclick}, "text").
function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (key === "class") node.className = value;
    else node.setAttribute(key, value);
  }
  node.append(...children);
  return node;
}

function seatNames(root) {
  try {
    const names = JSON.parse(root.dataset.seats || "[]");
    return Array.isArray(names) ? names.map(String) : [];
  } catch {
    return [];
  }
}

function showMessage(root, text, link) {
  const box = el("div", { class: "viewer-message" }, text);
  if (link) box.append(" ", el("a", { href: link, download: "" }, "download the replay"));
  root.replaceChildren(box);
}

// The dump's lines: a header with the initial state, one entry per turn,
// then the result. Index 0 is the initial state, index n the state after turn n.
function splitFrames(frames) {
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

function hashTurn() {
  const match = /(?:^#|&)turn=(\d+)/.exec(location.hash);
  return match ? Number(match[1]) : null;
}

function turnUrl(turn) {
  const base = location.href.split("#")[0];
  return `${base}#turn=${turn}`;
}

async function mount(root) {
  const names = seatNames(root);
  const replayLink = root.dataset.replay || null;
  const declared = root.dataset.game || "";
  if (declared && !DRAWERS[declared]) {
    root.dataset.state = "unsupported";
    showMessage(root, `No viewer for game ${declared} yet.`, replayLink || root.dataset.frames);
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
  try {
    buildPlayer(root, drawer, replay, names);
  } catch (error) {
    root.dataset.state = "error";
    showMessage(root, `Could not show the replay: ${error.message}`);
  }
}

function buildPlayer(root, drawer, replay, names) {
  const model = drawer.prepare(replay.states, names);
  const last = replay.states.length - 1;
  const views = drawer.views ? drawer.views(model, names) : [];
  const events = drawer.events ? drawer.events(model, names) : [];
  const player = {
    index: 0,
    view: views.length ? views[0].value : null,
    playing: false,
    speed: DEFAULT_SPEED,
    drawn: -1,
    lastHashAt: 0,
    hashTimer: 0,
  };

  const canvas = el("canvas", { class: "viewer-canvas", "aria-label": "replay board" });
  const stage = el("div", { class: "viewer-stage" }, canvas);
  const playButton = el("button", { type: "button", class: "viewer-play", onclick: () => toggle() }, "▶ play");
  const backButton = el("button", { type: "button", class: "viewer-back", title: "previous turn (←)", onclick: () => step(-1) }, "◀");
  const forwardButton = el("button", { type: "button", class: "viewer-forward", title: "next turn (→)", onclick: () => step(1) }, "▶");
  const scrubber = el("input", { type: "range", class: "viewer-scrubber", min: "0", max: String(last), value: "0", step: "1", "aria-label": "turn" });
  scrubber.addEventListener("input", () => show(Number(scrubber.value)));
  const marks = el("div", { class: "viewer-marks" });
  const timeline = el("div", { class: "viewer-timeline" }, scrubber, marks);
  const speed = el("select", { class: "viewer-speed", "aria-label": "speed" });
  for (const s of SPEEDS) speed.append(el("option", { value: String(s) }, s === 60 ? "max" : `${s}/s`));
  speed.value = String(DEFAULT_SPEED);
  speed.addEventListener("change", () => (player.speed = Number(speed.value)));
  const counter = el("span", { class: "viewer-turn", "aria-live": "off" });
  const link = el("a", { class: "viewer-link", href: turnUrl(0) }, "link to this turn");
  const controls = el("div", { class: "viewer-controls" }, backButton, playButton, forwardButton, timeline, counter, speed);
  if (views.length) {
    const viewSelect = el("select", { class: "viewer-view", "aria-label": "view" });
    for (const v of views) viewSelect.append(el("option", { value: v.value }, v.label));
    viewSelect.addEventListener("change", () => {
      player.view = viewSelect.value;
      draw(true);
    });
    controls.append(viewSelect);
  }
  controls.append(link);
  const legend = el("ul", { class: "viewer-legend" });
  const status = el("div", { class: "viewer-status" });
  const eventList = buildEvents(events, last, marks, (index) => show(index));
  root.replaceChildren(stage, controls, legend, status);
  if (events.length) root.append(eventList);
  else marks.remove();

  const ctx = canvas.getContext("2d");
  let cell = 0;

  // Size the canvas to the container width, in device pixels for crispness.
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

  function draw(force) {
    if (!force && player.drawn === player.index) return;
    player.drawn = player.index;
    ctx.clearRect(0, 0, canvas.width, canvas.height);
    // A malformed state in one frame should not kill the player (or throw
    // out of an animation callback): say so and keep the controls working.
    try {
      drawer.draw(ctx, model, player.index, player.view, cell);
      drawLegend();
      drawStatus();
    } catch (error) {
      status.textContent = `could not draw turn ${player.index}: ${error.message}`;
    }
  }

  function drawLegend() {
    const rows = drawer.legend ? drawer.legend(model, player.index) : [];
    legend.replaceChildren(...legendItems(rows, names));
  }

  function drawStatus() {
    status.textContent = describeTurn(replay, player.index, names);
  }

  // `how`: "play" while playing (no hash writes), "open" on load (the URL
  // is left as the page gave it), else a user's step or jump.
  function show(index, how = "step") {
    player.index = Math.max(0, Math.min(last, index));
    if (how === "step" && player.playing) stop();
    scrubber.value = String(player.index);
    counter.textContent = `turn ${player.index} / ${last}`;
    root.dataset.turn = String(player.index);
    link.href = turnUrl(player.index);
    if (how === "step") updateHash();
    draw(false);
  }

  function updateHash() {
    clearTimeout(player.hashTimer);
    const wait = HASH_INTERVAL_MS - (performance.now() - player.lastHashAt);
    const write = () => {
      player.lastHashAt = performance.now();
      history.replaceState(history.state, "", `#turn=${player.index}`);
    };
    if (wait <= 0) write();
    else player.hashTimer = setTimeout(write, wait);
  }

  function step(delta) {
    show(player.index + delta);
  }

  function play() {
    if (player.index >= last) show(0, "play");
    player.playing = true;
    playButton.textContent = "❚❚ pause";
    let since = performance.now();
    const tick = (now) => {
      if (!player.playing) return;
      const due = player.speed >= 60 ? 1 : Math.floor(((now - since) * player.speed) / 1000);
      if (due > 0) {
        since = player.speed >= 60 ? now : since + (due * 1000) / player.speed;
        show(player.index + due, "play");
        if (player.index >= last) return stop();
      }
      requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
  }

  function stop() {
    player.playing = false;
    playButton.textContent = "▶ play";
    updateHash();
  }

  function toggle() {
    if (player.playing) stop();
    else play();
  }

  player.keys = (event) => {
    if (event.key === "ArrowLeft") step(-1);
    else if (event.key === "ArrowRight") step(1);
    else if (event.key === " ") toggle();
    else return false;
    return true;
  };
  root.viewerKeys = player.keys;

  layout();
  const relayout = () => {
    if (layout()) draw(true);
  };
  new ResizeObserver(relayout).observe(stage);
  window.addEventListener("resize", relayout);
  const start = hashTurn();
  show(start == null ? 0 : start, "open");
  // Following a "link to this turn" on the same page only changes the hash.
  window.addEventListener("hashchange", () => {
    const turn = hashTurn();
    if (turn != null && turn !== player.index) show(turn, "open");
  });
  root.dataset.ready = "true";
  root.dataset.state = "ready";
}

// Timeline marks (into `marks`) and the clickable list of events.
function buildEvents(events, last, marks, pick) {
  const list = el("ul", { class: "viewer-events" });
  for (const e of events) {
    const colour = e.seat == null ? "#666" : seatColour(e.seat);
    const left = last ? (100 * e.index) / last : 0;
    const label = `turn ${e.index}: ${e.text}`;
    marks.append(el("button", { type: "button", class: "viewer-mark", title: label, style: `left:${left}%;background:${colour}`, onclick: () => pick(e.index) }));
    const item = el("button", { type: "button", style: `color:${colour}`, onclick: () => pick(e.index) }, label);
    list.append(el("li", {}, item));
  }
  return list;
}

// One legend entry per seat: colour, name, and the drawer's figures.
function legendItems(rows, names) {
  const count = Math.max(rows.length, names.length);
  const items = [];
  for (let seat = 0; seat < count; seat++) {
    const row = rows[seat] || {};
    const item = el("li", { "data-seat": String(seat), class: row.out ? "out" : "" },
      el("span", { class: "viewer-swatch", style: `background:${seatColour(seat)}` }),
      names[seat] || `seat ${seat}`);
    if (row.figures) item.append(el("span", { class: "viewer-figures" }, row.figures));
    items.push(item);
  }
  return items;
}

// Forfeits and faults of the shown turn, and the result on the last one.
function describeTurn(replay, index, names) {
  const turn = replay.turns[index];
  const parts = [];
  const name = (seat) => names[seat] || `seat ${seat}`;
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

function inFormField(target) {
  return target instanceof Element && (target.closest("input, select, textarea, [contenteditable]") !== null);
}

// One keyboard handler for the page: it drives the viewer holding the focus,
// else the first one on the page.
function onKey(event) {
  if (event.altKey || event.ctrlKey || event.metaKey || inFormField(event.target)) return;
  const focused = event.target instanceof Element ? event.target.closest(".viewer") : null;
  const root = focused && focused.viewerKeys ? focused : [...document.querySelectorAll(".viewer, #viewer")].find((v) => v.viewerKeys);
  if (root && root.viewerKeys(event)) event.preventDefault();
}

// Space on a focused button would also click it on key up; the key handler
// already acted, so the click is suppressed.
function onKeyUp(event) {
  if (event.key === " " && event.target instanceof HTMLButtonElement && event.target.closest(".viewer")) {
    event.preventDefault();
  }
}

function start() {
  injectStyle();
  const roots = new Set(document.querySelectorAll("#viewer, .viewer[data-frames]"));
  for (const root of roots) mount(root);
  document.addEventListener("keydown", onKey);
  document.addEventListener("keyup", onKeyUp);
}

if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
else start();
