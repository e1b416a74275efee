// Live updates for Arena's pages. The page's <main data-live="URL"> names a
// server-sent-events stream; each "snapshot" event carries
// {"items": [{"attr": "match", "key": "ID", "fields": {"state": "done"}}]}
// and every field's text goes into the [data-field] element inside the
// element with data-ATTR="KEY". The page works without this script; it
// only spares a reload.
//
// An ES module (`<script type="module">`): it runs once the page is
// parsed, and nothing it declares reaches the page's globals.

const RELOAD_TEXT = "Something new was scheduled: reload to see it.";

// Whether the reload notice is up already.
let noticeShown = false;

// `value` escaped for a quoted attribute selector.
function quote(value) {
  return window.CSS && CSS.escape ? CSS.escape(value) : value.replace(/["\\]/g, "\\$&");
}

// Something new (a round scheduled, a tournament created) has no element
// yet: offer a reload rather than build rows here.
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

// Writes one item's fields into its element; false when the page has none.
function applyItem(item) {
  const element = document.querySelector(`[data-${item.attr}="${quote(item.key)}"]`);
  if (!element) return false;
  for (const field of Object.keys(item.fields)) {
    updateCell(element.querySelector(`[data-field="${quote(field)}"]`), item.fields[field]);
  }
  return true;
}

function applySnapshot(main, snapshot) {
  let missing = false;
  (snapshot.items || []).forEach((item) => {
    if (!applyItem(item)) missing = true;
  });
  if (missing) showReloadNotice(main);
}

function follow(main) {
  const source = new EventSource(main.getAttribute("data-live"));
  source.addEventListener("snapshot", (event) => {
    try {
      applySnapshot(main, JSON.parse(event.data));
    } catch {
      // A snapshot that does not parse is skipped; the next one replaces it.
    }
  });
}

const main = document.querySelector("main[data-live]");
if (main && window.EventSource) follow(main);
