// Reasons in words: every code the engines and the worker put in a replay,
// in one table. Three kinds of code reach the viewer:
//   - why the match ended (the result's `reason`), from the games' rules
//     (engine/src/*/rules.rs, end.rs, score.rs) and the referee;
//   - why a seat forfeited (arena_engine::Forfeit, engine/src/verdict.rs);
//   - which fault replaced a reply (arena_engine::FaultKind, same file).
// A code missing here is shown with its underscores as spaces.

export const REASONS = {
  // How a match ended.
  general_captured: "general captured",
  deathtouch: "deathtouch (a move onto the enemy general, late in the game)",
  double_deathtouch_draw: "draw: both generals touched on the same turn",
  double_capture: "both generals captured on the same turn; the second mover wins",
  double_capture_draw: "draw: both generals captured on the same turn",
  turn_cap_draw: "draw at the turn cap",
  turn_cap: "turn cap reached",
  turn_limit: "turn limit reached",
  last_crown_standing: "last crown standing",
  last_general_standing: "last general standing",
  last_team_standing: "last team standing",
  last_standing: "last player standing",
  all_forfeited: "every seat forfeited",
  forfeit: "ended by forfeits",
  extermination: "every colony was wiped out",
  lone_survivor: "one colony survived alone",
  rank_stabilized: "the placings could no longer change",
  // Why a seat forfeited.
  crash: "crashed",
  exit: "exited before the end",
  memory: "ran out of memory",
  faults: "too many faults",
  build_failed: "its build failed",
  trap: "its WebAssembly trapped",
  wall_backstop: "overran its wall-clock backstop",
  // Which fault replaced a reply.
  timeout: "timed out",
  malformed: "malformed reply",
  illegal: "illegal reply",
  fuel_exhausted: "ran out of fuel",
  strike: "model strike",
};

// `code` in words.
export function inWords(code) {
  if (code == null || code === "") return "unknown";
  const text = String(code);
  return Object.prototype.hasOwnProperty.call(REASONS, text) ? REASONS[text] : text.replace(/_/g, " ");
}

// The plural noun of a fault kind, for counts ("2 timeouts").
const FAULT_NOUNS = {
  timeout: ["timeout", "timeouts"],
  malformed: ["malformed reply", "malformed replies"],
  illegal: ["illegal reply", "illegal replies"],
  fuel_exhausted: ["turn out of fuel", "turns out of fuel"],
  strike: ["strike", "strikes"],
};

// "2 timeouts", "1 malformed reply".
export function faultCount(kind, count) {
  const nouns = FAULT_NOUNS[kind] || [inWords(kind), inWords(kind)];
  return `${count} ${count === 1 ? nouns[0] : nouns[1]}`;
}
