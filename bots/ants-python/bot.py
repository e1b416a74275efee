#!/usr/bin/env python3
"""A starter Ants bot as a process (Python 3, standard library only).

Ants is played mostly by model graphs (see docs/games/ants.md); a
tournament may also let process bots play, and this one is for local
development and for entrants who write code.

Protocol (docs/games/ants.md):
  * the first line is the handshake (a JSON object with "game"); every
    later line is one observation: turn, rows, cols, map (rows of
    characters: '?' never seen, '%' water, '.' land in view, ',' land seen
    before), ants [[row, col, owner]], mine [[row, col]] (our ants in mine
    order), food [[row, col]], hills [[row, col, owner]], hive, scores;
    owner 0 is us;
  * after each observation print ONE line, {"orders": "..."}: one character
    per ant of "mine", in that order, N E S W or - (stay), and flush;
  * end of stdin means the match is over.

Strategy: every ant heads for the nearest food it knows of by breadth-first
search over land it has seen, an ant with no food to chase walks toward the
nearest square it has never seen, and no two of our ants ever end on one
square (that would kill both).
"""

import json
import sys
from collections import deque

STEPS = (("N", -1, 0), ("E", 0, 1), ("S", 1, 0), ("W", 0, -1))


def plan(obs):
    rows, cols = obs["rows"], obs["cols"]
    grid = obs["map"]
    food = {(r, c) for r, c in obs["food"]}
    mine = [tuple(a) for a in obs["mine"]]

    def passable(r, c):
        return grid[r][c] != "%"

    def first_step_toward(start, goal_test, limit=400):
        """The first move of a shortest path to a square passing goal_test."""
        seen = {start}
        queue = deque()
        for name, dr, dc in STEPS:
            nxt = ((start[0] + dr) % rows, (start[1] + dc) % cols)
            if passable(*nxt) and nxt not in seen:
                seen.add(nxt)
                queue.append((nxt, name))
        while queue and len(seen) < limit:
            (r, c), name = queue.popleft()
            if goal_test(r, c):
                return name
            for _, dr, dc in STEPS:
                nxt = ((r + dr) % rows, (c + dc) % cols)
                if nxt not in seen and passable(*nxt):
                    seen.add(nxt)
                    queue.append((nxt, name))
        return None

    taken = set()
    orders = []
    for ant in mine:
        # Standing next to food gathers it: a move onto food is refused anyway.
        wants = first_step_toward(ant, lambda r, c: (r, c) in food)
        if wants is None:
            wants = first_step_toward(ant, lambda r, c: grid[r][c] == "?")
        def free(dest):
            return dest not in taken and dest not in food and passable(*dest)

        choice, dest = "-", ant
        for name, dr, dc in STEPS:
            step = ((ant[0] + dr) % rows, (ant[1] + dc) % cols)
            if name == wants and free(step):
                choice, dest = name, step
        if choice == "-" and ant in taken:
            # Our square is already another ant's destination: step aside.
            for name, dr, dc in STEPS:
                step = ((ant[0] + dr) % rows, (ant[1] + dc) % cols)
                if free(step):
                    choice, dest = name, step
                    break
        taken.add(dest)
        orders.append(choice)
    return "".join(orders)


def main():
    for line in sys.stdin:
        obs = json.loads(line)
        if "game" in obs:
            continue
        print(json.dumps({"orders": plan(obs)}), flush=True)


if __name__ == "__main__":
    main()
