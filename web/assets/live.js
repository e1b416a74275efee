// Live updates for Arena's pages. The page's <main data-live="URL"> names a
// server-sent-events stream; each "snapshot" event carries
// {"items": [{"attr": "match", "key": "ID", "fields": {"state": "done"},
//             "order": 3, "show": {"rejudge": true}}]}
// Every field's text goes into the [data-field] element inside the element
// with data-ATTR="KEY"; "show" hides or shows its [data-show=NAME]
// children; "order" is the element's place among its siblings, and a
// container marked data-sorted keeps its children in that order. The page
// works without this script; it only spares a reload.
//
// A snapshot naming something the first snapshot did not (a round
// scheduled, a tournament created since the page was loaded) makes the
// page fetch itself again and swap its <main> in, so new rows appear with
// their buttons; if that fails, a notice offers a reload.
//
// An ES module (`<script type="module">`): it runs once the page is
// parsed, and nothing it declares reaches the page's globals.

import { closeOnLeaving } from "./streams.js";

const RELOAD_TEXT = "Something new was scheduled: reload to see it.";

// Whether the reload notice is up already.
let noticeShown = false;
// "attr key" of every item the page was built with (from the first
// snapshot, or the one after a refresh); null until then.
let known = null;
// Whether a refresh of the page's content is under way.
let refreshing = false;

// `value` escaped for a quoted attribute selector.
function quote(value) {
  return window.CSS && CSS.escape ? CSS.escape(value) : value.replace(/["\\]/g, "\\$&");
}

function itemKey(item) {
  return `${item.attr} ${item.key}`;
}

// Something new has no element: offer a reload.
function showReloadNotice(main) {
  if (noticeShown) return;
  noticeShown = true;
  const link = document.createElement("a");
  link.href = window.location.href;
  link.textContent = RELOAD_TEXT;
  const notice = document.createElement("p");
  notice.className = "notice";
  notice.appendChild(link);
  main.insertBefore(notice, main.firstChild);
}

// Puts `text` in `cell` when it differs, and highlights the change.
function updateCell(cell, text) {
  if (!cell || cell.textContent === text) return;
  cell.textContent = text;
  cell.classList.remove("changed");
  // Restart the highlight on every change.
  void cell.offsetWidth;
  cell.classList.add("changed");
}

// Writes one item into its element: fields, shown parts, order. False when
// the page has no element for it.
function applyItem(item) {
  const element = document.querySelector(`[data-${item.attr}="${quote(item.key)}"]`);
  if (!element) return false;
  for (const field of Object.keys(item.fields || {})) {
    updateCell(element.querySelector(`[data-field="${quote(field)}"]`), item.fields[field]);
  }
  for (const name of Object.keys(item.show || {})) {
    element.querySelectorAll(`[data-show="${quote(name)}"]`).forEach((part) => {
      part.hidden = !item.show[name];
    });
  }
  if (typeof item.order === "number") element.dataset.order = String(item.order);
  return true;
}

// Puts the children of every data-sorted container in data-order order,
// moving only when they are out of it (a move restarts no highlight).
function resort(main) {
  main.querySelectorAll("[data-sorted]").forEach((container) => {
    const rows = Array.from(container.children);
    const place = (row) => Number(row.dataset.order ?? Number.MAX_SAFE_INTEGER);
    const sorted = rows.slice().sort((a, b) => place(a) - place(b));
    if (sorted.every((row, i) => row === rows[i])) return;
    sorted.forEach((row) => container.appendChild(row));
  });
}

// Fetches the page again and swaps its <main> content in: new rows, with
// everything a reload would show. The stream stays as it is.
// `keys` are those of the snapshot that asked: the page fetched after it
// holds them all.
async function refresh(main, keys) {
  if (refreshing) return;
  refreshing = true;
  try {
    const response = await fetch(window.location.href, { headers: { accept: "text/html" } });
    if (!response.ok) throw new Error(`status ${response.status}`);
    const page = new DOMParser().parseFromString(await response.text(), "text/html");
    const fresh = page.querySelector("main[data-live]");
    if (!fresh) throw new Error("no live content in the page");
    main.innerHTML = fresh.innerHTML;
    known = keys;
  } catch {
    showReloadNotice(main);
  } finally {
    refreshing = false;
  }
}

function applySnapshot(main, snapshot) {
  const items = snapshot.items || [];
  items.forEach(applyItem);
  resort(main);
  if (known === null) {
    known = new Set(items.map(itemKey));
    return;
  }
  // Items filtered out of the page were in the first snapshot too; only
  // what is newer than the page needs it built again.
  if (items.some((item) => !known.has(itemKey(item)))) refresh(main, new Set(items.map(itemKey)));
}

function follow(main) {
  const source = new EventSource(main.getAttribute("data-live"));
  source.addEventListener("snapshot", (event) => {
    let snapshot;
    try {
      snapshot = JSON.parse(event.data);
    } catch {
      // A snapshot that does not parse is skipped; the next one replaces it.
      return;
    }
    applySnapshot(main, snapshot);
  });
  closeOnLeaving(source);
}

const main = document.querySelector("main[data-live]");
if (main && window.EventSource) follow(main);
