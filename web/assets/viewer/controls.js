// The controls of one viewer: back / play / forward, the turn scrubber with
// a mark per event, the turn counter, the speed and view choices, the link
// to the turn, the list of events, and the keyboard. They drive the
// playback state and show where it is.

import { el } from "./dom.js";
import { DEFAULT_SPEED, SPEEDS } from "./state.js";
import { turnUrl } from "./url.js";
import { seatColour } from "./games/shared.js";

const PLAY_LABEL = "▶ play";
const PAUSE_LABEL = "❚❚ pause";
// Timeline colour of an event no seat caused.
const NO_SEAT_COLOUR = "#666";

// `views`: [{value, label}] (none: no view choice); `events`: [{index,
// text, seat}]. Returns the controls bar, the event list (null without
// events) and the two updates the player calls when the state changes.
export function createControls(playback, views, events) {
  const last = playback.last;
  const playButton = el("button", { type: "button", class: "viewer-play", onclick: () => playback.toggle() }, PLAY_LABEL);
  const backButton = el("button", { type: "button", class: "viewer-back", title: "previous turn (←)", onclick: () => playback.step(-1) }, "◀");
  const forwardButton = el("button", { type: "button", class: "viewer-forward", title: "next turn (→)", onclick: () => playback.step(1) }, "▶");
  const scrubber = el("input", { type: "range", class: "viewer-scrubber", min: "0", max: String(last), value: "0", step: "1", "aria-label": "turn" });
  scrubber.addEventListener("input", () => playback.show(Number(scrubber.value)));
  const timeline = el("div", { class: "viewer-timeline" }, scrubber);
  const counter = el("span", { class: "viewer-turn", "aria-live": "off" });
  const link = el("a", { class: "viewer-link", href: turnUrl(0) }, "link to this turn");
  const bar = el("div", { class: "viewer-controls" }, backButton, playButton, forwardButton, timeline, counter, speedSelect(playback));
  if (views.length) bar.append(viewSelect(playback, views));
  bar.append(link);

  let list = null;
  if (events.length) {
    const marks = el("div", { class: "viewer-marks" });
    list = el("ul", { class: "viewer-events" });
    addEvents(events, last, marks, list, (index) => playback.show(index));
    timeline.append(marks);
  }

  return {
    bar,
    events: list,
    showTurn() {
      scrubber.value = String(playback.index);
      counter.textContent = `turn ${playback.index} / ${last}`;
      link.href = turnUrl(playback.index);
    },
    showPlaying(playing) {
      playButton.textContent = playing ? PAUSE_LABEL : PLAY_LABEL;
    },
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

// A timeline mark (into `marks`) and a list entry (into `list`) per event;
// clicking either shows the event's turn.
function addEvents(events, last, marks, list, pick) {
  for (const e of events) {
    const colour = e.seat == null ? NO_SEAT_COLOUR : seatColour(e.seat);
    const left = last ? (100 * e.index) / last : 0;
    const label = `turn ${e.index}: ${e.text}`;
    marks.append(el("button", { type: "button", class: "viewer-mark", title: label, style: `left:${left}%;background:${colour}`, onclick: () => pick(e.index) }));
    const item = el("button", { type: "button", style: `color:${colour}`, onclick: () => pick(e.index) }, label);
    list.append(el("li", {}, item));
  }
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

function inFormField(target) {
  return target instanceof Element && (target.closest("input, select, textarea, [contenteditable]") !== null);
}

// Keys drive the viewer holding the focus, else the first one on the page.
function onKey(event) {
  if (event.altKey || event.ctrlKey || event.metaKey || inFormField(event.target)) return;
  const focused = event.target instanceof Element ? event.target.closest(".viewer") : null;
  const root = focused && KEY_HANDLERS.has(focused) ? focused : [...document.querySelectorAll(".viewer, #viewer")].find((v) => KEY_HANDLERS.has(v));
  if (root && KEY_HANDLERS.get(root)(event)) event.preventDefault();
}

// Space on a focused button would also click it on key up; the key handler
// already acted, so the click is suppressed.
function onKeyUp(event) {
  if (event.key === " " && event.target instanceof HTMLButtonElement && event.target.closest(".viewer")) {
    event.preventDefault();
  }
}
