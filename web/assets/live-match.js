// A running match's page: follows the match's stream (the element with
// data-match-live="URL", see web/src/live_match.rs). "turn" and "board"
// events move the page's turn ([data-live-turn]); a "board" is handed to
// the viewer in live mode (#viewer[data-live]) as an "arena-live-board"
// DOM event, so the viewer knows nothing of the stream; "ended" reloads the
// page, which then shows the result and the replay. The page works without
// this script; it only spares reloads.

import { closeOnLeaving } from "./streams.js";

function start() {
  const section = document.querySelector("[data-match-live]");
  if (!section || !window.EventSource) return;
  const source = new EventSource(section.dataset.matchLive);
  const showTurn = (turn) => {
    for (const node of document.querySelectorAll("[data-live-turn]")) node.textContent = String(turn);
  };
  const read = (event) => {
    try {
      return JSON.parse(event.data);
    } catch {
      return null;
    }
  };
  source.addEventListener("turn", (event) => {
    const data = read(event);
    if (data && Number.isInteger(data.turn)) showTurn(data.turn);
  });
  source.addEventListener("board", (event) => {
    const data = read(event);
    if (!data || !Number.isInteger(data.turn)) return;
    showTurn(data.turn);
    const viewer = document.querySelector("#viewer[data-live]");
    if (viewer && data.board && typeof data.board === "object") {
      viewer.dispatchEvent(new CustomEvent("arena-live-board", { detail: data.board }));
    }
  });
  source.addEventListener("ended", () => {
    source.close();
    window.location.reload();
  });
  closeOnLeaving(source);
}

if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
else start();
