// The page URL's part in the viewer: `#turn=N` opens turn N, and the turn
// shown is written back with history.replaceState.

// replaceState is rate limited by browsers; keep well below that.
const HASH_INTERVAL_MS = 100;

// The turn the page's hash names, or null.
export function hashTurn() {
  const match = /(?:^#|&)turn=(\d+)/.exec(location.hash);
  return match ? Number(match[1]) : null;
}

// The page's URL opening at `turn`.
export function turnUrl(turn) {
  const base = location.href.split("#")[0];
  return `${base}#turn=${turn}`;
}

// A function that writes `#turn=N`, N being `currentTurn()` when it
// writes: at once, or, within HASH_INTERVAL_MS of the last write, once that
// has passed (a later call replaces a pending one).
export function hashWriter(currentTurn) {
  let lastAt = 0;
  let timer = 0;
  return () => {
    clearTimeout(timer);
    const wait = HASH_INTERVAL_MS - (performance.now() - lastAt);
    const write = () => {
      lastAt = performance.now();
      history.replaceState(history.state, "", `#turn=${currentTurn()}`);
    };
    if (wait <= 0) write();
    else timer = setTimeout(write, wait);
  };
}

// Calls `open(turn)` each time the hash changes to name a turn: following
// a "link to this turn" on the same page only changes the hash.
export function onHashTurn(open) {
  window.addEventListener("hashchange", () => {
    const turn = hashTurn();
    if (turn != null) open(turn);
  });
}
