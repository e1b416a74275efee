// The controls of one viewer: back / play / forward, the turn scrubber with
// a mark per event, the turn counter, the speed and view choices, the
// "hide result" switch, the link to the turn, the list of events, and the
// keyboard. They drive the playback state and show where it is.

import { el } from "./dom.js";
import { DEFAULT_SPEED, SPEEDS } from "./state.js";
import { turnUrl } from "./url.js";

const PLAY_LABEL = "▶ play";
const PAUSE_LABEL = "❚❚ pause";
// Vertical step between stacked timeline marks, in CSS pixels (a mark is
// 10 px tall).
const MARK_STEP = 11;
// Where the "hide result" choice is remembered, for every match.
const HIDE_RESULT_KEY = "arena-viewer-hide-result";

// Whether the result was hidden last time (false if storage is refused).
export function storedHideResult() {
  try {
    return localStorage.getItem(HIDE_RESULT_KEY) === "true";
  } catch {
    return false;
  }
}

function storeHideResult(hidden) {
  try {
    localStorage.setItem(HIDE_RESULT_KEY, String(hidden));
  } catch {
    // Private modes may refuse storage: the choice then lasts this page.
  }
}

// `views`: [{value, label}] (none: no view choice); `events`: [{index,
// text, seat, kind}]; `colours`: the seats' colours. Returns the controls
// bar, the event list (null without events) and the updates the player
// calls when the state changes.
export function createControls(playback, views, events, colours) {
  const last = playback.last;
  const playButton = el("button", { type: "button", class: "viewer-play", onclick: () => playback.toggle() }, PLAY_LABEL);
  const backButton = el("button", { type: "button", class: "viewer-back", title: "previous turn (←)", "aria-label": "previous turn", onclick: () => playback.step(-1) }, "◀");
  const forwardButton = el("button", { type: "button", class: "viewer-forward", title: "next turn (→)", "aria-label": "next turn", onclick: () => playback.step(1) }, "▶");
  const scrubber = el("input", { type: "range", class: "viewer-scrubber", min: "0", max: String(last), value: "0", step: "1", "aria-label": "turn" });
  scrubber.addEventListener("input", () => playback.show(Number(scrubber.value)));
  const timeline = el("div", { class: "viewer-timeline" }, scrubber);
  const counter = el("span", { class: "viewer-turn", "aria-live": "off" });
  const hideButton = el("button", {
    type: "button",
    class: "viewer-hide-result",
    title: "hide the result, the final placements and what has not happened yet",
    onclick: () => {
      playback.setHideResult(!playback.hideResult);
      storeHideResult(playback.hideResult);
    },
  }, "hide result");
  const link = el("a", { class: "viewer-link", href: turnUrl(0) }, "link to this turn");
  const bar = el("div", { class: "viewer-controls" }, backButton, playButton, forwardButton, timeline, counter, speedSelect(playback));
  if (views.length) bar.append(viewSelect(playback, views));
  bar.append(hideButton, link);

  let list = null;
  const shown = [];
  if (events.length) {
    const marks = el("div", { class: "viewer-marks" });
    list = el("ul", { class: "viewer-events" });
    addEvents(events, last, colours, marks, list, shown, (index) => playback.show(index));
    timeline.append(marks);
  }

  // With the result hidden, marks and events after the turn shown are too.
  function showSpoilers() {
    const hidden = playback.hideResult;
    hideButton.setAttribute("aria-pressed", String(hidden));
    hideButton.textContent = hidden ? "show result" : "hide result";
    for (const { index, nodes } of shown) {
      for (const node of nodes) node.hidden = hidden && index > playback.index;
    }
  }

  return {
    bar,
    events: list,
    showTurn() {
      scrubber.value = String(playback.index);
      counter.textContent = `turn ${playback.index} / ${last}`;
      link.href = turnUrl(playback.index);
      if (playback.hideResult) showSpoilers();
    },
    showPlaying(playing) {
      playButton.textContent = playing ? PAUSE_LABEL : PLAY_LABEL;
    },
    showSpoilers,
  };
}

function speedSelect(playback) {
  const select = el("select", { class: "viewer-speed", "aria-label": "speed" });
  for (const s of SPEEDS) select.append(el("option", { value: String(s) }, s === 60 ? "max" : `${s}/s`));
  select.value = String(DEFAULT_SPEED);
  select.addEventListener("change", () => playback.setSpeed(Number(select.value)));
  return select;
}

function viewSelect(playback, views) {
  const select = el("select", { class: "viewer-view", "aria-label": "view" });
  for (const v of views) select.append(el("option", { value: v.value }, v.label));
  select.addEventListener("change", () => playback.setView(select.value));
  return select;
}

// A timeline mark (into `marks`) and a list entry (into `list`) per event,
// each remembered in `shown` with its turn; clicking either shows the
// event's turn. An event of no seat is marked in the text colour.
function addEvents(events, last, colours, marks, list, shown, pick) {
  // Marks of one turn are stacked, so each stays visible and clickable.
  const stacked = new Map();
  for (const e of events) {
    const left = last ? (100 * e.index) / last : 0;
    const level = stacked.get(e.index) || 0;
    stacked.set(e.index, level + 1);
    const label = `turn ${e.index}: ${e.text}`;
    const data = { "data-index": String(e.index), "data-kind": e.kind || "event" };
    if (e.seat != null) data["data-seat"] = String(e.seat);
    const place = `left:${left}%;top:${level * MARK_STEP}px`;
    const style = e.seat == null ? place : `${place};background:${colours.fill(e.seat)}`;
    const mark = el("button", { type: "button", class: "viewer-mark", title: label, "aria-label": label, style, ...data, onclick: () => pick(e.index) });
    const dot = e.seat == null ? "" : el("span", { class: "viewer-swatch", style: `background:${colours.fill(e.seat)}` });
    const item = el("li", data, el("button", { type: "button", onclick: () => pick(e.index) }, dot, label));
    marks.append(mark);
    list.append(item);
    shown.push({ index: e.index, nodes: [mark, item] });
  }
  const levels = Math.max(1, ...stacked.values());
  marks.style.height = `${levels * MARK_STEP}px`;
}

// Keys. Each viewer element's key handler: it returns whether it used the key.
const KEY_HANDLERS = new WeakMap();

// ArrowLeft / ArrowRight step a turn, Space plays or pauses `root`'s playback.
export function bindKeys(root, playback) {
  KEY_HANDLERS.set(root, (event) => {
    if (event.key === "ArrowLeft") playback.step(-1);
    else if (event.key === "ArrowRight") playback.step(1);
    else if (event.key === " ") playback.toggle();
    else return false;
    return true;
  });
}

// The page's one keyboard listener, for every viewer on it.
export function listenForKeys() {
  document.addEventListener("keydown", onKey);
  document.addEventListener("keyup", onKeyUp);
}

// Inputs that take typed text keep every key.
const TEXT_INPUTS = new Set(["text", "search", "email", "url", "tel", "password", "number", "date", "time", "datetime-local", "month", "week"]);

// Whether `key` belongs to `target`: every key of a field one types into;
// the arrows of a page's own choice or slider outside every viewer; Space
// on a page's own button, link or box outside every viewer (it presses
// them). The viewer's own controls (buttons, scrubber, choices) keep none.
function keepsKeys(target, key) {
  if (!(target instanceof Element)) return false;
  if (target.closest("textarea, [contenteditable]:not([contenteditable=false])")) return true;
  if (target instanceof HTMLInputElement && TEXT_INPUTS.has(target.type)) return true;
  if (target.closest(".viewer")) return false;
  if (key === " ") return target.closest("button, a[href], summary, input, select, [role=button]") !== null;
  return target instanceof HTMLSelectElement || (target instanceof HTMLInputElement && target.type === "range");
}

// Keys drive the viewer holding the focus, else the first one on the page.
// Used keys are not passed on, so a focused scrubber or choice does not
// also move by itself.
function onKey(event) {
  if (event.altKey || event.ctrlKey || event.metaKey || keepsKeys(event.target, event.key)) return;
  const focused = event.target instanceof Element ? event.target.closest(".viewer") : null;
  const root = focused && KEY_HANDLERS.has(focused) ? focused : [...document.querySelectorAll(".viewer, #viewer")].find((v) => KEY_HANDLERS.has(v));
  if (root && KEY_HANDLERS.get(root)(event)) event.preventDefault();
}

// Space on a focused button (or other control) would also click it on key
// up; the key handler already acted, so the click is suppressed.
function onKeyUp(event) {
  if (event.key === " " && event.target instanceof Element && !keepsKeys(event.target, " ") && event.target.closest(".viewer")) {
    event.preventDefault();
  }
}
