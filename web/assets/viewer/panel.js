// The per-seat panel beside the board (`ul.viewer-legend`): one entry per
// seat with its colour, name, the game's figures at the turn shown, its
// faults so far, how it left the match and, on the last turn, its final
// place. The entries are built once and their text updated every turn.

import { el } from "./dom.js";
import { faultCount } from "./reasons.js";
import { fateShown, fateText, place } from "./seats.js";
import { seatName } from "./games/shared.js";

export function createPanel(seats, names, colours) {
  const list = el("ul", { class: "viewer-legend viewer-panel", "aria-label": "seats" });
  const entries = [];
  for (let seat = 0; seat < seats.count; seat++) {
    const stats = {};
    const figures = el("span", { class: "viewer-figures" });
    for (const metric of seats.metrics) {
      stats[metric.key] = el("span", { class: "viewer-stat", "data-stat": metric.key });
      figures.append(stats[metric.key]);
    }
    stats.faults = el("span", { class: "viewer-stat", "data-stat": "faults" });
    figures.append(stats.faults);
    const placed = el("span", { class: "viewer-place" });
    const fate = el("span", { class: "viewer-fate" });
    const note = el("span", { class: "viewer-note" });
    const item = el("li", { "data-seat": String(seat) },
      el("span", { class: "viewer-swatch", style: `background:${colours.fill(seat)}` }),
      el("span", { class: "viewer-name" }, seatName(names, seat)),
      placed, figures, fate, note);
    list.append(item);
    entries.push({ item, stats, placed, fate, note });
  }

  // Shows turn `index`; `hideResult` keeps what has not happened yet, and
  // the placements, out of sight.
  function show(index, hideResult) {
    const rows = seats.rows[index] || [];
    const faults = seats.faults[index] || [];
    const final = index === seats.last && !hideResult && seats.ranks != null;
    entries.forEach((entry, seat) => {
      const row = rows[seat] || { values: {} };
      for (const metric of seats.metrics) {
        const value = row.values[metric.key];
        setStat(entry.stats[metric.key], metric.label, value);
      }
      const seatFaults = faults[seat] || { total: 0, kinds: {} };
      setStat(entry.stats.faults, "faults", seatFaults.total);
      entry.stats.faults.title = Object.entries(seatFaults.kinds).map(([kind, n]) => faultCount(kind, n)).join(", ");
      const fate = fateShown(seats, seat, index, hideResult);
      entry.fate.textContent = fate ? (fate.past ? fateText(fate) : `later ${fateText(fate)}`) : "";
      entry.fate.classList.toggle("viewer-future", Boolean(fate && !fate.past));
      entry.item.classList.toggle("out", Boolean(fate && fate.past));
      if (fate && fate.past) entry.item.dataset.fate = fate.kind;
      else delete entry.item.dataset.fate;
      const rank = final ? seats.ranks[seat] : null;
      entry.placed.textContent = rank == null ? "" : place(rank);
      if (rank == null) delete entry.item.dataset.place;
      else entry.item.dataset.place = String(rank + 1);
      entry.item.classList.toggle("winner", rank === 0);
      entry.note.textContent = row.note || "";
    });
  }

  return { element: list, show };
}

function setStat(span, label, value) {
  const known = typeof value === "number" && Number.isFinite(value);
  span.dataset.value = known ? String(value) : "";
  span.textContent = `${label} ${known ? value : "–"}`;
}
