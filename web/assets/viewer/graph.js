// The graph beside the board (`canvas.viewer-graph`): one small chart per
// figure the game graphs (land and army, or its own score), a line per seat
// in its colour over the turns, and a cursor at the turn shown. Clicking a
// chart shows the turn under the pointer. With the result hidden, the lines
// stop at the turn shown and the scale is that of the turns drawn.

import { el } from "./dom.js";

// Height of one chart and the gap below it, in CSS pixels.
const CHART = 72;
const GAP = 14;
// Room for a chart's label and its top value.
const LABEL = 14;

export function createGraph(seats, colours, pick) {
  const metrics = seats.metrics.filter((m) => m.graph);
  if (metrics.length === 0 || seats.last === 0) return null;
  const height = metrics.length * (CHART + GAP + LABEL);
  const canvas = el("canvas", { class: "viewer-graph", role: "img", title: "click to show that turn" });
  canvas.style.height = `${height}px`;
  const ctx = canvas.getContext("2d");
  let shown = { index: 0, hideResult: false };

  // The turn under a click, from its x position.
  canvas.addEventListener("click", (event) => {
    const box = canvas.getBoundingClientRect();
    const share = Math.min(1, Math.max(0, (event.clientX - box.left) / Math.max(1, box.width)));
    pick(Math.round(share * seats.last));
  });

  function value(index, seat, key) {
    const row = seats.rows[index] && seats.rows[index][seat];
    const v = row ? row.values[key] : null;
    return typeof v === "number" && Number.isFinite(v) ? v : null;
  }

  function draw() {
    const { index, hideResult } = shown;
    const width = canvas.clientWidth || 280;
    const dpr = window.devicePixelRatio || 1;
    if (canvas.width !== Math.round(width * dpr) || canvas.height !== Math.round(height * dpr)) {
      canvas.width = Math.round(width * dpr);
      canvas.height = Math.round(height * dpr);
    }
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, width, height);
    const style = getComputedStyle(canvas);
    const ink = style.color;
    const rule = style.getPropertyValue("--viewer-line").trim() || "#999";
    const upto = hideResult ? index : seats.last;
    const x = (i) => (i / seats.last) * (width - 1);
    const values = {};
    metrics.forEach((metric, m) => {
      const top = m * (CHART + GAP + LABEL) + LABEL;
      let max = 1;
      for (let i = 0; i <= upto; i++) {
        for (let seat = 0; seat < seats.count; seat++) max = Math.max(max, value(i, seat, metric.key) ?? 0);
      }
      const y = (v) => top + CHART - (v / max) * CHART;
      ctx.fillStyle = ink;
      ctx.font = "12px system-ui, sans-serif";
      ctx.textBaseline = "bottom";
      ctx.textAlign = "left";
      ctx.fillText(metric.label, 0, top - 1);
      ctx.textAlign = "right";
      ctx.fillText(String(max), width, top - 1);
      ctx.strokeStyle = rule;
      ctx.lineWidth = 1;
      ctx.beginPath();
      ctx.moveTo(0, top + CHART + 0.5);
      ctx.lineTo(width, top + CHART + 0.5);
      ctx.stroke();
      values[metric.key] = [];
      for (let seat = 0; seat < seats.count; seat++) {
        ctx.strokeStyle = colours.fill(seat);
        ctx.lineWidth = 1.75;
        ctx.beginPath();
        let started = false;
        for (let i = 0; i <= upto; i++) {
          const v = value(i, seat, metric.key);
          if (v == null) continue;
          if (started) ctx.lineTo(x(i), y(v));
          else ctx.moveTo(x(i), y(v));
          started = true;
        }
        ctx.stroke();
        values[metric.key].push(value(index, seat, metric.key));
      }
    });
    // The cursor: the turn shown, across each chart (not its labels).
    ctx.strokeStyle = ink;
    ctx.lineWidth = 1;
    ctx.beginPath();
    const cursor = Math.round(x(index)) + 0.5;
    metrics.forEach((_, m) => {
      const top = m * (CHART + GAP + LABEL) + LABEL;
      ctx.moveTo(cursor, top);
      ctx.lineTo(cursor, top + CHART);
    });
    ctx.stroke();
    canvas.dataset.turn = String(index);
    canvas.dataset.values = JSON.stringify(values);
    canvas.setAttribute("aria-label", `graph of ${metrics.map((m) => m.label).join(" and ")} per seat, at turn ${index}`);
  }

  new ResizeObserver(() => draw()).observe(canvas);
  // A change of light or dark theme changes the text and rule colours.
  window.matchMedia("(prefers-color-scheme: dark)").addEventListener("change", () => draw());

  return {
    element: canvas,
    show(index, hideResult) {
      shown = { index, hideResult };
      draw();
    },
  };
}
