#!/usr/bin/env python3
"""Starter bot for Arena's generals games (Python 3, standard library only):
the Generals Competition ruleset, and classic generals.io in all three
formats (1v1, 2v2, free-for-all; docs/games/generals-classic.md).

Protocol, in short (see docs/protocol.md for the full text):
  * first line on stdin: "<player_id> <H> <W>"
  * then, every turn, a frame: one header line "<t> <my_land> <my_army>
    <opp_land> <opp_army>", then H lines of cell types, H lines of owners and
    H lines of armies (W integers per line);
  * after each frame we print exactly ONE line "<pass> <row> <col> <dir> <split>"
    and flush;
  * end of stdin means the game is over: exit quietly.

Classic games need two adjustments, made here without being told the game:
  * 2v2 and free-for-all announce themselves with a longer handshake,
    "<seat> <H> <W> <N> <team_0> ... <team_N-1>", and a header with every
    seat's land and army; owners are 0 neutral, 1 me, 2 an ally, 3 + s the
    opponent in seat s. The bot reads them into the 1v1 shape (allies are
    neither ours nor enemies, opponents are all "enemy").
  * classic has no castle building and no deathtouch: both are switched off
    as soon as the game is known to be classic (a multi-player handshake, or
    a neutral castle in sight, which the competition never has).

Strategy, in the order we check things every turn (see Bot.choose):
  1. Win now: if one of our cells next to the enemy general can take it (or
     touch it, from turn 800 on, when any move onto it wins), do it.
  2. Defend: capture enemy armies that threaten our general, or pull armies
     back home if we cannot.
  3. Build a castle when a cell of ours holds enough army, is far enough from
     our other structures to be cheap, and is not on the front line.
  4. Attack: our biggest army (the "main stack") walks towards a target: the
     enemy general if we have ever seen it (we remember it: fog hides it
     again later), otherwise the place it is most likely to be.
  5. Expand: capture a neutral plain (or a weak enemy cell) next to our land.
  6. Gather: move an army one step towards the main stack so it grows.

Everything is a few breadth-first searches over at most 21x21 cells, so a move
takes a few milliseconds.
"""

import sys
from collections import deque

# --- Protocol constants ------------------------------------------------------

# Cell types in a frame.
FOG, PLAIN, MOUNTAIN, CASTLE, GENERAL, FOG_STRUCTURE = 0, 1, 2, 3, 4, 5
# Owners in a frame (relative to us). ALLY is this bot's own code for a
# teammate's cell in 2v2 (the protocol's 2 there; see read_frame).
NEUTRAL, ME, ENEMY, ALLY = 0, 1, 2, 3
# Directions: (row delta, column delta), indexed by the protocol's dir field.
DELTAS = ((-1, 0), (1, 0), (0, -1), (0, 1))  # up, down, left, right
PASS_LINE = "1 0 0 0 0"

# --- Strategy knobs (tweak these first) --------------------------------------

DEATHTOUCH_TURN = 800       # from this turn any move onto the enemy general wins
MIN_GENERAL_DISTANCE = 17   # generals start at least this many steps apart
OPENING_TURNS = 24          # before this, only expand
PUSH_MIN_ARMY = 12          # the main stack marches once it is at least this big
CASTLE_MAX_PRICE = 41       # only build where the crowding surcharge is small
CASTLE_FIRST_TURN = 50
CASTLE_LAST_TURN = 600      # later castles would not pay back their price
MAX_CASTLES = 6
THREAT_RADIUS = 4           # enemy armies this close to our general are threats
GUARD_RADIUS = 6            # ...and this close, the general's army stays home
UNREACHABLE = 10 ** 6


class Frame:
    """One parsed frame. Grids are flat lists indexed by row * W + col."""

    def __init__(self, header, rows, h):
        self.t, self.my_land, self.my_army, self.opp_land, self.opp_army = header
        self.types = [v for row in rows[:h] for v in row]
        self.owner = [v for row in rows[h:2 * h] for v in row]
        self.army = [v for row in rows[2 * h:] for v in row]


def multi_frame(header, rows, h, seat, teams):
    """A 2v2 or free-for-all frame, read into the 1v1 shape."""
    t, totals = header[0], header[1:]
    land = totals[0::2]
    army = totals[1::2]
    mine = teams[seat]
    opp_land = sum(l for s, l in enumerate(land) if teams[s] != mine)
    opp_army = sum(a for s, a in enumerate(army) if teams[s] != mine)
    frame = Frame((t, land[seat], army[seat], opp_land, opp_army), rows, h)
    relative = {0: NEUTRAL, 1: ME, 2: ALLY}
    frame.owner = [relative.get(o, ENEMY) for o in frame.owner]
    return frame


class Bot:
    """Remembers what it has seen and picks one action per frame (choose)."""

    def __init__(self, player_id, h, w, classic=False):
        self.player_id = player_id
        self.h, self.w = h, w
        # Classic generals builds nothing and has no deathtouch.
        self.classic = classic
        self.deathtouch_turn = UNREACHABLE if classic else DEATHTOUCH_TURN
        n = h * w
        # neighbours[i] = [(dir, j), ...] for the in-bounds cells next to i.
        self.neighbours = []
        for i in range(n):
            r, c = divmod(i, w)
            lst = []
            for d, (dr, dc) in enumerate(DELTAS):
                rr, cc = r + dr, c + dc
                if 0 <= rr < h and 0 <= cc < w:
                    lst.append((d, rr * w + cc))
            self.neighbours.append(lst)

        # --- What we remember between turns (the frame only shows what we see now).
        self.blocked = [False] * n        # mountains (and unknown fogged structures)
        self.ever_seen = [False] * n      # cells we have seen at least once
        self.seen_open = [False] * n      # seen as plain/castle/general at least once
        self.enemy_seen = {}              # cell -> turn we last saw it owned by the enemy
        self.my_general = None
        self.enemy_general = None         # cell, once seen (generals never move)
        self.home_dist = None             # BFS distance from our general

    # --- Memory -----------------------------------------------------------------

    def observe(self, f):
        if not self.classic and any(
            ty == CASTLE and o == NEUTRAL for ty, o in zip(f.types, f.owner)
        ):
            self.classic = True
            self.deathtouch_turn = UNREACHABLE
        for i, ty in enumerate(f.types):
            if ty == FOG:
                continue
            if ty == MOUNTAIN:
                self.blocked[i] = True
            elif ty == FOG_STRUCTURE:
                # A mountain or a castle in fog. If we once saw the cell open,
                # the enemy has built a castle there: passable (if costly).
                self.blocked[i] = not self.seen_open[i]
            else:  # PLAIN, CASTLE, GENERAL: visible right now
                self.ever_seen[i] = True
                self.seen_open[i] = True
                self.blocked[i] = False
                if f.owner[i] == ENEMY:
                    self.enemy_seen[i] = f.t
                else:
                    self.enemy_seen.pop(i, None)
                if ty == GENERAL:
                    if f.owner[i] == ME:
                        self.my_general = i
                    elif f.owner[i] == ENEMY:
                        self.enemy_general = i
        if self.home_dist is None and self.my_general is not None:
            self.home_dist = self.bfs([self.my_general], self.passable)

    def passable(self, i):
        return not self.blocked[i]

    def bfs(self, sources, allowed):
        """Distances (in moves) from the nearest source over cells where allowed(i)."""
        dist = [UNREACHABLE] * (self.h * self.w)
        q = deque()
        for s in sources:
            dist[s] = 0
            q.append(s)
        nb = self.neighbours
        while q:
            i = q.popleft()
            nd = dist[i] + 1
            for _, j in nb[i]:
                if dist[j] > nd and allowed(j):
                    dist[j] = nd
                    q.append(j)
        return dist

    # --- Helpers ----------------------------------------------------------------

    def move(self, src, d, half=False):
        r, c = divmod(src, self.w)
        return "0 %d %d %d %d" % (r, c, d, 1 if half else 0)

    def build(self, cell):
        r, c = divmod(cell, self.w)
        return "2 %d %d 0 0" % (r, c)

    def castle_price(self, cell):
        """35 plus a surcharge for every structure of ours within 6 steps."""
        r, c = divmod(cell, self.w)
        price = 35
        for i in self.structures:
            rr, cc = divmod(i, self.w)
            price += max(0, 14 - 2 * (abs(rr - r) + abs(cc - c)))
        return price

    # --- Decision ---------------------------------------------------------------

    def choose(self, f):
        self.observe(f)
        self.mine = [i for i, o in enumerate(f.owner) if o == ME]
        self.structures = [i for i in self.mine if f.types[i] in (CASTLE, GENERAL)]
        if not self.mine:
            return PASS_LINE
        for step in (self.win_now, self.defend, self.build_castle, self.attack,
                     self.expand, self.gather_to_main):
            action = step(f)
            if action:
                return action
        return PASS_LINE

    def win_now(self, f):
        """Take the enemy general if a neighbouring cell of ours can."""
        eg = self.enemy_general
        if eg is None:
            return None
        for d, j in self.neighbours[eg]:
            if f.owner[j] != ME or f.army[j] < 2:
                continue
            sent = f.army[j] - 1
            visible = f.types[eg] == GENERAL
            if f.t >= self.deathtouch_turn or (visible and sent > f.army[eg]):
                return self.move(j, d ^ 1)  # d ^ 1 flips up<->down, left<->right
        return None

    def defend(self, f):
        """Deal with enemy armies close to our general."""
        home = self.my_general
        if home is None:
            return None
        threats = self.threats(f)
        if not threats:
            return None
        # First choice: capture the threatening cell. Capturing the cell an
        # attack starts from also cancels that attack (a "chase" goes first).
        # Our general may strike too, but not from turn 800: there a touch
        # onto our general beats a counter-attack from it.
        for _, e in threats:
            best = None
            for d, j in self.neighbours[e]:
                if f.owner[j] != ME or f.army[j] - 1 <= f.army[e]:
                    continue
                if j == home and f.t >= self.deathtouch_turn - 1:
                    continue
                if best is None or f.army[j] > f.army[best[1]]:
                    best = (d ^ 1, j)
            if best:
                return self.move(best[1], best[0])
        # Otherwise bring armies home, unless we are about to win elsewhere.
        if f.t >= self.deathtouch_turn and self.enemy_general is not None:
            return None
        return self.gather_to(f, home, radius=2 * THREAT_RADIUS)

    def threats(self, f):
        """Enemy cells that could take our general soon, most dangerous first."""
        home = self.my_general
        near = self.bfs([home], self.passable)
        found = []
        for i, o in enumerate(f.owner):
            if o != ENEMY or near[i] > THREAT_RADIUS or f.army[i] < 2:
                continue
            if f.t >= self.deathtouch_turn - 1 and near[i] == 1:
                # From turn 800 any army of 2+ next to our general can touch it.
                found.append((UNREACHABLE, i))
            elif f.army[i] - near[i] >= f.army[home]:
                # Roughly: it loses one unit per step on the way in.
                found.append((f.army[i], i))
        found.sort(reverse=True)
        return found

    def build_castle(self, f):
        """Turn a big army far from our other structures into a castle."""
        if self.classic or not (CASTLE_FIRST_TURN <= f.t <= CASTLE_LAST_TURN):
            return None
        if len(self.structures) - 1 >= MAX_CASTLES:  # minus our general
            return None
        best = None
        for i in self.mine:
            if f.types[i] != PLAIN or f.army[i] < 35:
                continue
            # Keep castles off the front line: no enemy cell in sight around it.
            if any(f.owner[j] == ENEMY for _, j in self.neighbours[i]):
                continue
            price = self.castle_price(i)
            # Keep enough left over for the army to go on marching.
            if price > CASTLE_MAX_PRICE or f.army[i] < price + PUSH_MIN_ARMY:
                continue
            if best is None or f.army[i] > f.army[best]:
                best = i
        return self.build(best) if best is not None else None

    def targets(self, f):
        """Cells the main stack should walk towards, best guess first."""
        if self.enemy_general is not None:
            return [self.enemy_general]
        # The general is on a cell we have never seen, at least 17 steps from ours.
        hd = self.home_dist
        candidates = [i for i in range(self.h * self.w)
                      if not self.ever_seen[i] and not self.blocked[i]
                      and hd is not None and MIN_GENERAL_DISTANCE <= hd[i] < UNREACHABLE]
        if not candidates:
            candidates = [i for i in range(self.h * self.w)
                          if not self.ever_seen[i] and not self.blocked[i]]
        if self.enemy_seen and candidates:
            # Enemy land grows out of its general: look next to what we saw.
            de = self.bfs(list(self.enemy_seen), self.passable)
            best = min(de[i] for i in candidates)
            return [i for i in candidates if de[i] == best]
        return candidates

    def main_stack(self, f):
        """Our biggest army. The general's own army stays home while enemy
        armies are around it (its army is what defends it)."""
        home = self.my_general
        guard = home is not None and f.t < self.deathtouch_turn and self.home_watched(f)
        best = None
        for i in self.mine:
            if guard and i == home:
                continue
            if best is None or f.army[i] > f.army[best]:
                best = i
        return best if best is not None else self.mine[0]

    def home_watched(self, f):
        """Is an enemy army of some size within GUARD_RADIUS of our general?"""
        near = self.bfs([self.my_general], self.passable)
        return any(o == ENEMY and f.army[i] >= 3 and near[i] <= GUARD_RADIUS
                   for i, o in enumerate(f.owner))

    def attack(self, f):
        """March the main stack one step towards the target."""
        if f.t < OPENING_TURNS:
            return None
        goal = self.targets(f)
        if not goal:
            return None
        main = self.main_stack(f)
        sent = f.army[main] - 1
        if f.army[main] < PUSH_MIN_ARMY and f.t < self.deathtouch_turn:
            return None
        dist = self.bfs(goal, self.passable)
        if dist[main] >= UNREACHABLE:
            return None
        # Step to the neighbour closest to the goal; among equals prefer our own
        # cells (free), then neutral ones, then the weakest enemy cell.
        best = None
        for d, j in self.neighbours[main]:
            if dist[j] >= dist[main]:
                continue
            if f.owner[j] == ME:
                cost = 0
            elif f.owner[j] == NEUTRAL:
                cost = 1
            else:
                cost = 2 + f.army[j]
            if best is None or cost < best[0]:
                best = (cost, d, j)
        if best is None:
            return None
        _, d, j = best
        if f.owner[j] == ENEMY and sent <= f.army[j]:
            return None  # too weak to break through: gather first
        return self.move(main, d)

    def expand(self, f):
        """Capture a neutral plain (or a weak enemy cell) next to our land."""
        goal = self.targets(f)
        dist = self.bfs(goal, self.passable) if goal else None
        best = None
        for i in self.mine:
            a = f.army[i]
            if a < 2:
                continue
            for d, j in self.neighbours[i]:
                if f.owner[j] == ME or f.types[j] in (MOUNTAIN, FOG_STRUCTURE):
                    continue
                # Scores are in tenths so that they stay integers.
                if f.owner[j] == ENEMY:
                    if a - 1 <= f.army[j]:
                        continue
                    score = 200 + 10 * f.army[j]   # shrinking the enemy is worth more
                else:
                    score = 100
                # Open ground (more neutral neighbours) keeps the frontier growing.
                score += 10 * sum(1 for _, k in self.neighbours[j]
                                  if f.owner[k] == NEUTRAL and f.types[k] == PLAIN)
                if dist is not None and dist[j] < dist[i]:
                    score += 30                    # towards the target
                # Prefer moving small armies: they have nothing better to do.
                score -= a
                if best is None or score > best[0]:
                    best = (score, i, d)
        if best is not None:
            return self.move(best[1], best[2])
        # Nothing can capture right now: walk the biggest army towards the
        # nearest neutral plain, over our own land.
        frontier = [j for j, o in enumerate(f.owner)
                    if o == NEUTRAL and f.types[j] == PLAIN]
        if not frontier:
            return None
        own = f.owner
        dist = self.bfs(frontier, lambda i: own[i] == ME)
        walker = None
        for i in self.mine:
            if f.army[i] < 2 or dist[i] >= UNREACHABLE:
                continue
            if walker is None or (f.army[i], -dist[i]) > (f.army[walker], -dist[walker]):
                walker = i
        if walker is None:
            return None
        for d, j in self.neighbours[walker]:
            if dist[j] == dist[walker] - 1:
                return self.move(walker, d)
        return None

    def gather_to_main(self, f):
        return self.gather_to(f, self.main_stack(f))

    def gather_to(self, f, root, radius=UNREACHABLE):
        """Move the biggest army (other than root's) one step towards root, over our land."""
        own = f.owner
        dist = self.bfs([root], lambda i: own[i] == ME)
        best = None
        for i in self.mine:
            if i == root or f.army[i] < 2 or dist[i] > radius or dist[i] >= UNREACHABLE:
                continue
            if best is None or f.army[i] > f.army[best]:
                best = i
        if best is None:
            return None
        for d, j in self.neighbours[best]:
            if dist[j] == dist[best] - 1:
                return self.move(best, d)
        return None


# --- Main loop ------------------------------------------------------------------

def read_ints(stream):
    line = stream.readline()
    if not line:
        raise EOFError
    return [int(x) for x in line.split()]


def main():
    stdin, stdout = sys.stdin, sys.stdout
    try:
        hello = read_ints(stdin)
    except EOFError:
        return
    player_id, h, w = hello[:3]
    # "<seat> <H> <W> <N> <teams...>": classic 2v2 or free-for-all.
    teams = hello[4:] if len(hello) > 3 else None
    bot = Bot(player_id, h, w, classic=teams is not None)
    while True:
        try:
            header = read_ints(stdin)
            rows = [read_ints(stdin) for _ in range(3 * h)]
        except EOFError:
            return  # the game is over
        try:
            if teams is None:
                frame = Frame(header, rows, h)
            else:
                frame = multi_frame(header, rows, h, player_id, teams)
            action = bot.choose(frame)
        except Exception as exc:  # never lose on a bug: pass instead
            print("error: %r" % (exc,), file=sys.stderr)
            action = PASS_LINE
        stdout.write(action + "\n")
        stdout.flush()


if __name__ == "__main__":
    try:
        main()
    except (BrokenPipeError, KeyboardInterrupt):
        pass
