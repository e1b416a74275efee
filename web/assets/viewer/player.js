// One viewer's player, put together on its element: the playback state
// (state.js), the renderer drawing the turn it shows (render.js), the
// controls driving it (controls.js), and the URL kept in step (url.js).

import { bindKeys, createControls } from "./controls.js";
import { createRenderer } from "./render.js";
import { createPlayback } from "./state.js";
import { hashTurn, hashWriter, onHashTurn } from "./url.js";

export function buildPlayer(root, drawer, replay, names) {
  const model = drawer.prepare(replay.states, names);
  const views = drawer.views ? drawer.views(model, names) : [];
  const events = drawer.events ? drawer.events(model, names) : [];
  const playback = createPlayback(replay.states.length - 1, views.length ? views[0].value : null);
  const render = createRenderer(drawer, model, replay, names, playback);
  const controls = createControls(playback, views, events);
  root.replaceChildren(render.stage, controls.bar, render.legend, render.status);
  if (controls.events) root.append(controls.events);

  // Stepping, scrubbing and pausing write `#turn=N`; playing does not.
  const writeHash = hashWriter(() => playback.index);
  playback.on("playing", (playing) => {
    controls.showPlaying(playing);
    if (!playing) writeHash();
  });
  playback.on("turn", (how) => {
    controls.showTurn();
    root.dataset.turn = String(playback.index);
    if (how === "step") writeHash();
    render.frame(false);
  });
  playback.on("view", () => render.frame(true));
  bindKeys(root, playback);

  render.fit();
  const start = hashTurn();
  playback.show(start == null ? 0 : start, "open");
  onHashTurn((turn) => {
    if (turn !== playback.index) playback.show(turn, "open");
  });
  root.dataset.ready = "true";
  root.dataset.state = "ready";
}
