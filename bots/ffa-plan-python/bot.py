#!/usr/bin/env python3
"""A minimal plan bot for generals-ffa (Python 3, standard library only).

Protocol (see docs/games/generals-ffa.md):
  * first line on stdin: the handshake, one JSON object
    {"game":"generals-ffa","seat":s,"width":W,"height":H,"max_turns":T,"plan_every":8};
  * then, every plan_every turns, one frame: our seat's whole view as one
    JSON object (seat, turn, max_turns, width, height, cells, crown, alive);
  * after each frame we print exactly ONE plan as one JSON line and flush;
  * end of stdin means the game is over: exit quietly.

Strategy: sprawl-like. Always defend a threatened crown first. Once we
remember a live enemy crown, raid it; while our land is small, expand; when
an enemy is in sight and we are big enough, attack the nearest one. The
captain in the engine does the moving; we only pick the rule order.
"""

import json
import sys

# Our land, in percent of the board, below which expanding beats fighting.
EXPAND_UNTIL_PERCENT = 20
# Raid a known crown only with at least this many armies in total.
RAID_MIN_ARMY = 40
# Scout while the game is young: the map is mostly fog.
SCOUT_UNTIL_TURN = 48

# What we send when something goes wrong: the engine's own sprawl plan.
FALLBACK = {
    "rules": [
        {"when": "crown_threatened", "do": "defend"},
        {"when": {"land_below": 25}, "do": "expand"},
        {"when": "always", "do": "attack_nearest"},
        {"when": "always", "do": "expand"},
    ],
    "reserve": 0,
    "cities": "cheap",
    "scouts": 1,
}


def rule(when, do):
    return {"when": when, "do": do}


def choose(view):
    """One plan for the next window, from our view."""
    seat = view["seat"]
    cells = view["cells"]
    alive = view.get("alive", [True] * 4)
    land = army = 0
    enemy_visible = crown_known = False
    for cell in cells:
        owner = cell.get("owner")
        if owner == seat and cell.get("visible"):
            land += 1
            army += cell.get("army") or 0
        elif owner is not None and owner != seat:
            if cell.get("visible"):
                enemy_visible = True
            if cell.get("kind") == "crown" and 0 <= owner < len(alive) and alive[owner]:
                crown_known = True
    percent = 100 * land // max(1, len(cells))

    rules = [rule("crown_threatened", "defend")]
    if crown_known and army >= RAID_MIN_ARMY:
        rules.append(rule("crown_known", "raid_crown"))
    if enemy_visible and percent >= EXPAND_UNTIL_PERCENT:
        rules.append(rule("enemy_visible", "attack_nearest"))
    rules.append(rule({"land_below": 100}, "expand"))
    rules.append(rule("always", "attack_nearest"))
    rules.append(rule("always", "gather"))
    return {
        "rules": rules,
        "reserve": 0,
        # Cities pay back once we have armies to spare.
        "cities": "cheap" if army >= 60 else "never",
        "scouts": 1 if view.get("turn", 0) < SCOUT_UNTIL_TURN else 0,
    }


def main():
    stdin, stdout = sys.stdin, sys.stdout
    if not stdin.readline():
        return  # no handshake: nothing to play
    for line in stdin:
        try:
            plan = choose(json.loads(line))
        except Exception as exc:  # never fault on a bug: send the fallback
            print("error: %r" % (exc,), file=sys.stderr)
            plan = FALLBACK
        stdout.write(json.dumps(plan, separators=(",", ":")) + "\n")
        stdout.flush()


if __name__ == "__main__":
    try:
        main()
    except (BrokenPipeError, KeyboardInterrupt):
        pass
