// The playback state of one viewer: the turn shown, whether it plays, at
// what speed, through which view, and whether the result is hidden. No DOM
// here: the controls and the renderer follow it through `on(kind, listener)`:
//   "turn"     (how)      the turn shown changed (see `show`)
//   "playing"  (playing)  playback started or stopped
//   "view"     (view)     another view was chosen
//   "spoilers" (hidden)   the result was hidden or shown again

// Turns per second; the last one advances every animation frame.
export const SPEEDS = [1, 2, 4, 8, 16, 32, 60];
export const DEFAULT_SPEED = 8;
const EVERY_FRAME = 60;

// Turns 0 (the initial state) … `last`; `view` is the view shown first
// (null for games with a single one); `hideResult` whether the result
// starts hidden.
export function createPlayback(last, view, hideResult) {
  const now = { index: 0, playing: false, speed: DEFAULT_SPEED, view, hideResult: Boolean(hideResult) };
  const listeners = { turn: [], playing: [], view: [], spoilers: [] };
  const emit = (kind, detail) => {
    for (const listener of listeners[kind]) listener(detail);
  };

  // Shows turn `index` (clamped). `how`: "play" while playing (no hash
  // writes), "open" on load or a hash change (the URL is left as the page
  // gave it), else "step": a user's step or jump, which also pauses.
  function show(index, how = "step") {
    now.index = Math.max(0, Math.min(last, index));
    if (how === "step" && now.playing) stop();
    emit("turn", how);
  }

  function step(delta) {
    show(now.index + delta);
  }

  // Plays from here (from the start once at the end), `speed` turns a
  // second, until the last turn or `stop`.
  function play() {
    if (now.index >= last) show(0, "play");
    now.playing = true;
    emit("playing", true);
    let since = performance.now();
    const tick = (time) => {
      if (!now.playing) return;
      const every = now.speed >= EVERY_FRAME;
      const due = every ? 1 : Math.floor(((time - since) * now.speed) / 1000);
      if (due > 0) {
        since = every ? time : since + (due * 1000) / now.speed;
        show(now.index + due, "play");
        if (now.index >= last) return stop();
      }
      requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
  }

  function stop() {
    now.playing = false;
    emit("playing", false);
  }

  function toggle() {
    if (now.playing) stop();
    else play();
  }

  return {
    last,
    get index() {
      return now.index;
    },
    get playing() {
      return now.playing;
    },
    get view() {
      return now.view;
    },
    get hideResult() {
      return now.hideResult;
    },
    on(kind, listener) {
      listeners[kind].push(listener);
    },
    show,
    step,
    play,
    stop,
    toggle,
    setSpeed(speed) {
      now.speed = speed;
    },
    setView(view) {
      now.view = view;
      emit("view", view);
    },
    setHideResult(hidden) {
      now.hideResult = Boolean(hidden);
      emit("spoilers", now.hideResult);
    },
  };
}
