"""Random-legal test bot.

Each turn it lists its legal moves (an owned cell with army >= 2, towards an
in-bounds neighbour that is not a mountain or a fogged structure) and picks
one uniformly, with a random split. It passes when it has none.

The RNG is seeded from $BOT_SEED when set, else from the player id, so a game
is reproducible.
"""
import os
import random
import sys

DIRS = ((-1, 0), (1, 0), (0, -1), (0, 1))


def seed_from_env(pid):
    """$BOT_SEED as an int if it is one, as a string otherwise, else the player id."""
    seed = os.environ.get("BOT_SEED")
    if seed is None:
        return pid
    try:
        return int(seed)
    except ValueError:
        return seed


def main():
    inp = sys.stdin
    out = sys.stdout
    line = inp.readline()
    if not line:
        return
    # Classic 2v2 and free-for-all add the seat count and teams; owner 1 is
    # still "mine", so the same moves are legal.
    pid, h, w = [int(x) for x in line.split()[:3]]
    rng = random.Random(seed_from_env(pid))
    while True:
        header = inp.readline()
        if not header:
            return  # EOF: game over
        rows = [inp.readline().split() for _ in range(3 * h)]
        types = rows[:h]
        owner = rows[h:2 * h]
        army = rows[2 * h:]
        moves = []
        for r in range(h):
            for c in range(w):
                if owner[r][c] != "1" or int(army[r][c]) < 2:
                    continue
                for d, (dr, dc) in enumerate(DIRS):
                    rr, cc = r + dr, c + dc
                    if 0 <= rr < h and 0 <= cc < w and types[rr][cc] not in ("2", "5"):
                        moves.append((r, c, d))
        if moves:
            r, c, d = rng.choice(moves)
            out.write("0 %d %d %d %d\n" % (r, c, d, rng.randint(0, 1)))
        else:
            out.write("1 0 0 0 0\n")
        out.flush()


if __name__ == "__main__":
    try:
        main()
    except (BrokenPipeError, KeyboardInterrupt):
        pass
