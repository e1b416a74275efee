#!/usr/bin/env python3
"""A starter bot for grid-royale (Python 3, standard library only).

Protocol (see docs/games/grid-royale.md):
  * every line on stdin is one observation, a JSON object (turn, max_turns,
    you, width, height, safe_zone, ore[y][x], bases, banks, units, params,
    fuel);
  * after each one we print exactly ONE reply line and flush:
    {"orders": [{"unit": ID, "do": "MOVE_N"|"MOVE_E"|"MOVE_S"|"MOVE_W"|"STAY"}],
     "spawn": true|false};
  * end of stdin means the match is over: exit quietly.

Strategy: each unit mines the best ore it can reach soon, heads home once
half full (or when the match is about to end), banks, and goes out again.
Moves never put two of our units on one cell (except our base), never step
next to an enemy, and never leave the zone the border will leave us. We
spawn while the bank allows and the match is young.
"""

import json
import sys

MOVES = {"MOVE_N": (0, -1), "MOVE_E": (1, 0), "MOVE_S": (0, 1), "MOVE_W": (-1, 0)}
# Head home at this share of the cargo cap.
RETURN_AT = 0.5
# How far a unit looks for ore.
SEARCH_RADIUS = 6
# No spawns in the last this many turns: a unit would not pay back.
NO_SPAWN_TAIL = 150
# More units than this crowd each other more than they mine.
MAX_UNITS = 12


def zone_after(obs, turns):
    """The safe zone as it will be after `turns` more turns (inclusive box)."""
    z = obs["safe_zone"]
    x0, y0, x1, y1 = z["x0"], z["y0"], z["x1"], z["y1"]
    interval = obs["params"].get("shrink_interval", 25)
    min_zone = obs["params"].get("min_zone", 8)
    for t in range(obs["turn"], obs["turn"] + turns):
        if t % interval == 0 and x1 - x0 + 1 > min_zone:
            x0, y0, x1, y1 = x0 + 1, y0 + 1, x1 - 1, y1 - 1
    return x0, y0, x1, y1


def inside(box, x, y):
    return box[0] <= x <= box[2] and box[1] <= y <= box[3]


def step_toward(x, y, tx, ty):
    """The moves that bring (x, y) closer to (tx, ty), best first."""
    options = []
    if tx > x:
        options.append("MOVE_E")
    if tx < x:
        options.append("MOVE_W")
    if ty > y:
        options.append("MOVE_S")
    if ty < y:
        options.append("MOVE_N")
    if abs(ty - y) > abs(tx - x):
        options.reverse()
    return options


def decide(obs):
    me = obs["you"]
    ore = obs["ore"]
    width, height = obs["width"], obs["height"]
    p = obs["params"]
    cap = p["cargo_cap"]
    base = next(b for b in obs["bases"] if b["owner"] == me)
    bx, by = base["x"], base["y"]
    turns_left = obs["max_turns"] - obs["turn"] + 1
    next_zone = zone_after(obs, 1)
    later_zone = zone_after(obs, SEARCH_RADIUS + 4)

    mine = [u for u in obs["units"] if u["owner"] == me]
    # Cells an enemy stands on or can reach this turn.
    threatened = set()
    for u in obs["units"]:
        if u["owner"] != me:
            threatened.add((u["x"], u["y"]))
            for dx, dy in MOVES.values():
                threatened.add((u["x"] + dx, u["y"] + dy))

    undecided = {(u["x"], u["y"]) for u in mine}
    reserved = set()
    claimed = set()
    orders = []
    # Loaded units first: they have the most to lose.
    for u in sorted(mine, key=lambda u: -u["cargo"]):
        x, y, cargo = u["x"], u["y"], u["cargo"]
        undecided.discard((x, y))
        here = ore[y][x]
        cost = here // p["move_cost_divisor"]

        distance_home = abs(bx - x) + abs(by - y)
        going_home = cargo >= cap * RETURN_AT or (cargo > 0 and turns_left <= distance_home + 2)
        if (x, y) == (bx, by) or going_home:
            target = (bx, by) if going_home else None
        else:
            target = None
        if target is None:
            # The best harvest rate nearby, discounted by distance.
            best, best_score = (x, y), (here // p["harvest_divisor"]) / 1.0
            if (x, y) == (bx, by):
                best_score = -1.0
            for ty in range(max(0, y - SEARCH_RADIUS), min(height, y + SEARCH_RADIUS + 1)):
                for tx in range(max(0, x - SEARCH_RADIUS), min(width, x + SEARCH_RADIUS + 1)):
                    if (tx, ty) in claimed or (tx, ty) == (bx, by) or not inside(later_zone, tx, ty):
                        continue
                    gain = min(ore[ty][tx] // p["harvest_divisor"], cap - cargo)
                    score = gain / (abs(tx - x) + abs(ty - y) + 1.0)
                    if score > best_score:
                        best, best_score = (tx, ty), score
            target = best
            claimed.add(target)

        def free(cell):
            cx, cy = cell
            if not (0 <= cx < width and 0 <= cy < height) or not inside(next_zone, cx, cy):
                return False
            if cell in threatened:
                return False
            if cell == (bx, by):
                return True
            return cell not in reserved and cell not in undecided

        choice = "STAY"
        if (x, y) != target and cargo >= cost:
            for move in step_toward(x, y, *target):
                dx, dy = MOVES[move]
                if free((x + dx, y + dy)):
                    choice = move
                    break
        if choice == "STAY" and not inside(next_zone, x, y) and cargo >= cost:
            # The border is coming: any safe step inward.
            cx, cy = (next_zone[0] + next_zone[2]) // 2, (next_zone[1] + next_zone[3]) // 2
            for move in step_toward(x, y, cx, cy):
                dx, dy = MOVES[move]
                if (x + dx, y + dy) not in reserved:
                    choice = move
                    break
        if choice == "STAY":
            reserved.add((x, y))
        else:
            dx, dy = MOVES[choice]
            reserved.add((x + dx, y + dy))
        orders.append({"unit": u["id"], "do": choice})

    spawn = (
        obs["banks"][me] >= p["spawn_cost"]
        and len(mine) < min(p["units_cap"], MAX_UNITS)
        and turns_left > NO_SPAWN_TAIL
    )
    return {"orders": orders, "spawn": spawn}


def main():
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            reply = decide(json.loads(line))
        except Exception as error:  # a bug here must not cost the seat
            print(f"grid-royale bot: {error!r}", file=sys.stderr)
            reply = {"orders": [], "spawn": False}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
