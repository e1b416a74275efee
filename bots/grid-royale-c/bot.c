/*
 * A starter bot for grid-royale in C11, libc only.
 *
 * It is the Python starter (bots/grid-royale-python/bot.py) line for line:
 * each unit mines the best ore it can reach soon, heads home once half full
 * (or when the match is about to end), banks, and goes out again. Moves never
 * put two of our units on one cell (except our base), never step next to an
 * enemy, and never leave the zone the border will leave us. We spawn while
 * the bank allows and the match is young. Given the same observation both
 * bots print the same reply, byte for byte.
 *
 * Protocol (docs/games/grid-royale.md): every line on stdin is one
 * observation (a JSON object); we answer each with exactly one line
 *   {"orders": [{"unit": ID, "do": "MOVE_N"}, ...], "spawn": true|false}
 * and flush. End of input ends the match. A line we cannot make sense of
 * gets {"orders": [], "spawn": false}. Blank lines get no reply.
 *
 * Builds two ways from this one file:
 *   clang --target=wasm32-wasi -O2 -o bot.wasm bot.c   (build.sh)
 *   gcc -O2 -o bot bot.c                               (a process bot)
 * Memory is bounded: fixed tables plus one line buffer of at most
 * LINE_LIMIT bytes (a longer line is skipped and answered with no orders).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Head home at half the cargo cap (RETURN_AT = 0.5 in the Python). */
#define RETURN_NUM 1
#define RETURN_DEN 2
/* How far a unit looks for ore. */
#define SEARCH_RADIUS 6
/* No spawns in the last this many turns: a unit would not pay back. */
#define NO_SPAWN_TAIL 150
/* More units than this crowd each other more than they mine. */
#define MAX_OWN_UNITS 12

/* What the parser accepts; an observation beyond these is refused. */
#define MAX_SIDE 128
#define MAX_UNITS 4096
#define MAX_SEATS 64
#define LINE_LIMIT (16L * 1024 * 1024)
#define MAX_DEPTH 64

typedef long long i64;

typedef struct {
    i64 id, owner, x, y, cargo;
} Unit;

typedef struct {
    i64 owner, x, y;
} Base;

/* One observation. Fields a line does not give keep their defaults. */
typedef struct {
    i64 turn, max_turns, you, width, height;
    i64 zx0, zy0, zx1, zy1;
    int have_zone;
    int ore_rows;
    int ore_cols[MAX_SIDE];
    i64 ore[MAX_SIDE][MAX_SIDE];
    int nbases;
    Base bases[MAX_SEATS];
    int nbanks;
    i64 banks[MAX_SEATS];
    int nunits;
    Unit units[MAX_UNITS];
    i64 cargo_cap, spawn_cost, move_cost_divisor, harvest_divisor, units_cap;
    i64 shrink_interval, min_zone;
    int have[7]; /* which of the seven params were given */
} Obs;

static Obs obs;

/* ---------------------------------------------------------------- JSON */

typedef struct {
    const char *p, *end;
} Parser;

static void ws(Parser *ps) {
    while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r'))
        ps->p++;
}

/* Consumes c (after white space) or fails. */
static int eat(Parser *ps, char c) {
    ws(ps);
    if (ps->p < ps->end && *ps->p == c) {
        ps->p++;
        return 1;
    }
    return 0;
}

/* A string into out (at most cap-1 bytes kept; the rest is dropped, and
 * escapes other than the simple ones are kept raw: enough for keys). */
static int string(Parser *ps, char *out, size_t cap) {
    size_t n = 0;
    if (!eat(ps, '"'))
        return 0;
    while (ps->p < ps->end) {
        char c = *ps->p++;
        if (c == '"') {
            if (cap)
                out[n < cap ? n : cap - 1] = '\0';
            return 1;
        }
        if ((unsigned char)c < 0x20)
            return 0;
        if (c == '\\') {
            if (ps->p >= ps->end)
                return 0;
            c = *ps->p++;
            if (c == 'u') {
                for (int i = 0; i < 4; i++) {
                    if (ps->p >= ps->end)
                        return 0;
                    char h = *ps->p++;
                    if (!((h >= '0' && h <= '9') || (h >= 'a' && h <= 'f') || (h >= 'A' && h <= 'F')))
                        return 0;
                }
                c = '?';
            } else if (!strchr("\"\\/bfnrt", c)) {
                return 0;
            }
        }
        if (n + 1 < cap)
            out[n++] = c;
    }
    return 0;
}

/* A JSON number that must be an integer (a fraction or exponent of zero,
 * as in 3.0, is accepted). Saturates far beyond any sane value. */
static int integer(Parser *ps, i64 *out) {
    ws(ps);
    int neg = 0;
    i64 v = 0;
    int digits = 0;
    if (ps->p < ps->end && *ps->p == '-') {
        neg = 1;
        ps->p++;
    }
    while (ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9') {
        if (v < 1000000000000000LL)
            v = v * 10 + (*ps->p - '0');
        ps->p++;
        digits++;
    }
    if (!digits)
        return 0;
    if (ps->p < ps->end && *ps->p == '.') {
        ps->p++;
        int frac = 0;
        while (ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9') {
            if (*ps->p != '0')
                return 0;
            ps->p++;
            frac++;
        }
        if (!frac)
            return 0;
    }
    if (ps->p < ps->end && (*ps->p == 'e' || *ps->p == 'E'))
        return 0;
    *out = neg ? -v : v;
    return 1;
}

static int literal(Parser *ps, const char *word) {
    size_t n = strlen(word);
    ws(ps);
    if ((size_t)(ps->end - ps->p) >= n && memcmp(ps->p, word, n) == 0) {
        ps->p += n;
        return 1;
    }
    return 0;
}

/* Skips any one value, without recursion (nesting up to MAX_DEPTH). */
static int skip(Parser *ps) {
    char stack[MAX_DEPTH];
    int depth = 0;
    for (;;) {
        ws(ps);
        if (ps->p >= ps->end)
            return 0;
        char c = *ps->p;
        /* A value. */
        if (c == '{' || c == '[') {
            if (depth == MAX_DEPTH)
                return 0;
            stack[depth++] = c == '{' ? '}' : ']';
            ps->p++;
            if (eat(ps, stack[depth - 1])) {
                depth--;
                goto after_value;
            }
            if (stack[depth - 1] == '}') {
                char key[2];
                if (!string(ps, key, sizeof key) || !eat(ps, ':'))
                    return 0;
            }
            continue;
        } else if (c == '"') {
            char dummy[1];
            if (!string(ps, dummy, sizeof dummy))
                return 0;
        } else if (c == '-' || (c >= '0' && c <= '9')) {
            ps->p++;
            while (ps->p < ps->end && strchr("0123456789.eE+-", *ps->p))
                ps->p++;
        } else if (!literal(ps, "true") && !literal(ps, "false") && !literal(ps, "null")) {
            return 0;
        }
    after_value:
        /* After a value: close containers or go on to the next element. */
        for (;;) {
            if (depth == 0)
                return 1;
            if (eat(ps, stack[depth - 1])) {
                depth--;
                continue;
            }
            if (!eat(ps, ','))
                return 0;
            if (stack[depth - 1] == '}') {
                char key[2];
                if (!string(ps, key, sizeof key) || !eat(ps, ':'))
                    return 0;
            }
            break;
        }
    }
}

/* Walks an object's members: calls member(key) positioned at each value,
 * which must consume it. */
typedef int (*MemberFn)(Parser *ps, const char *key, void *ctx);

static int object(Parser *ps, MemberFn member, void *ctx) {
    char key[32];
    if (!eat(ps, '{'))
        return 0;
    if (eat(ps, '}'))
        return 1;
    do {
        if (!string(ps, key, sizeof key) || !eat(ps, ':'))
            return 0;
        if (!member(ps, key, ctx))
            return 0;
    } while (eat(ps, ','));
    return eat(ps, '}');
}

/* Walks an array: calls element(i) at each element, which must consume it. */
typedef int (*ElementFn)(Parser *ps, int index, void *ctx);

static int array(Parser *ps, ElementFn element, void *ctx) {
    int i = 0;
    if (!eat(ps, '['))
        return 0;
    if (eat(ps, ']'))
        return 1;
    do {
        if (!element(ps, i++, ctx))
            return 0;
    } while (eat(ps, ','));
    return eat(ps, ']');
}

/* ------------------------------------------------ the observation's parts */

static int zone_member(Parser *ps, const char *key, void *ctx) {
    (void)ctx;
    if (!strcmp(key, "x0"))
        return integer(ps, &obs.zx0);
    if (!strcmp(key, "y0"))
        return integer(ps, &obs.zy0);
    if (!strcmp(key, "x1"))
        return integer(ps, &obs.zx1);
    if (!strcmp(key, "y1"))
        return integer(ps, &obs.zy1);
    return skip(ps);
}

static int ore_cell(Parser *ps, int x, void *ctx) {
    int y = *(int *)ctx;
    if (x >= MAX_SIDE)
        return 0;
    obs.ore_cols[y] = x + 1;
    return integer(ps, &obs.ore[y][x]);
}

static int ore_row(Parser *ps, int y, void *ctx) {
    (void)ctx;
    if (y >= MAX_SIDE)
        return 0;
    obs.ore_rows = y + 1;
    obs.ore_cols[y] = 0;
    return array(ps, ore_cell, &y);
}

static int base_member(Parser *ps, const char *key, void *ctx) {
    Base *b = ctx;
    if (!strcmp(key, "owner"))
        return integer(ps, &b->owner);
    if (!strcmp(key, "x"))
        return integer(ps, &b->x);
    if (!strcmp(key, "y"))
        return integer(ps, &b->y);
    return skip(ps);
}

static int base_element(Parser *ps, int i, void *ctx) {
    (void)ctx;
    if (i >= MAX_SEATS)
        return 0;
    Base *b = &obs.bases[i];
    b->owner = b->x = b->y = -1;
    obs.nbases = i + 1;
    return object(ps, base_member, b);
}

static int bank_element(Parser *ps, int i, void *ctx) {
    (void)ctx;
    if (i >= MAX_SEATS)
        return 0;
    obs.nbanks = i + 1;
    return integer(ps, &obs.banks[i]);
}

static int unit_member(Parser *ps, const char *key, void *ctx) {
    Unit *u = ctx;
    if (!strcmp(key, "id"))
        return integer(ps, &u->id);
    if (!strcmp(key, "owner"))
        return integer(ps, &u->owner);
    if (!strcmp(key, "x"))
        return integer(ps, &u->x);
    if (!strcmp(key, "y"))
        return integer(ps, &u->y);
    if (!strcmp(key, "cargo"))
        return integer(ps, &u->cargo);
    return skip(ps);
}

static int unit_element(Parser *ps, int i, void *ctx) {
    (void)ctx;
    if (i >= MAX_UNITS)
        return 0;
    Unit *u = &obs.units[i];
    u->id = u->owner = u->x = u->y = u->cargo = -1;
    obs.nunits = i + 1;
    return object(ps, unit_member, u) && u->id >= 0 && u->owner >= 0 && u->cargo >= 0;
}

static const char *const PARAM_NAMES[7] = {
    "cargo_cap", "spawn_cost", "move_cost_divisor", "harvest_divisor", "units_cap", "shrink_interval", "min_zone",
};

static int params_member(Parser *ps, const char *key, void *ctx) {
    (void)ctx;
    i64 *slots[7] = {
        &obs.cargo_cap, &obs.spawn_cost, &obs.move_cost_divisor, &obs.harvest_divisor,
        &obs.units_cap, &obs.shrink_interval, &obs.min_zone,
    };
    for (int i = 0; i < 7; i++) {
        if (!strcmp(key, PARAM_NAMES[i])) {
            obs.have[i] = 1;
            return integer(ps, slots[i]);
        }
    }
    return skip(ps);
}

enum { F_TURN = 1, F_MAX = 2, F_YOU = 4, F_W = 8, F_H = 16, F_ORE = 32, F_BASES = 64, F_BANKS = 128, F_UNITS = 256, F_PARAMS = 512 };
#define F_ALL 1023

static int top_member(Parser *ps, const char *key, void *ctx) {
    int *seen = ctx;
    if (!strcmp(key, "turn"))
        return (*seen |= F_TURN), integer(ps, &obs.turn);
    if (!strcmp(key, "max_turns"))
        return (*seen |= F_MAX), integer(ps, &obs.max_turns);
    if (!strcmp(key, "you"))
        return (*seen |= F_YOU), integer(ps, &obs.you);
    if (!strcmp(key, "width"))
        return (*seen |= F_W), integer(ps, &obs.width);
    if (!strcmp(key, "height"))
        return (*seen |= F_H), integer(ps, &obs.height);
    if (!strcmp(key, "safe_zone"))
        return (obs.have_zone = 1), object(ps, zone_member, NULL);
    if (!strcmp(key, "ore"))
        return (*seen |= F_ORE), obs.ore_rows = 0, array(ps, ore_row, NULL);
    if (!strcmp(key, "bases"))
        return (*seen |= F_BASES), obs.nbases = 0, array(ps, base_element, NULL);
    if (!strcmp(key, "banks"))
        return (*seen |= F_BANKS), obs.nbanks = 0, array(ps, bank_element, NULL);
    if (!strcmp(key, "units"))
        return (*seen |= F_UNITS), obs.nunits = 0, array(ps, unit_element, NULL);
    if (!strcmp(key, "params"))
        return (*seen |= F_PARAMS), object(ps, params_member, NULL);
    return skip(ps);
}

/* Parses and checks one observation; 0 when it is not one we can play. */
static int parse(const char *line, size_t len) {
    Parser ps = {line, line + len};
    int seen = 0;
    memset(obs.have, 0, sizeof obs.have);
    obs.have_zone = 0;
    obs.nbases = obs.nbanks = obs.nunits = obs.ore_rows = 0;
    if (!object(&ps, top_member, &seen))
        return 0;
    ws(&ps);
    if (ps.p != ps.end)
        return 0;
    if ((seen & F_ALL) != F_ALL || !obs.have_zone)
        return 0;
    for (int i = 0; i < 5; i++)
        if (!obs.have[i])
            return 0;
    if (!obs.have[5])
        obs.shrink_interval = 25;
    if (!obs.have[6])
        obs.min_zone = 8;
    if (obs.width < 1 || obs.width > MAX_SIDE || obs.height < 1 || obs.height > MAX_SIDE)
        return 0;
    if (obs.ore_rows != obs.height)
        return 0;
    for (int y = 0; y < obs.height; y++)
        if (obs.ore_cols[y] != obs.width)
            return 0;
    if (obs.move_cost_divisor <= 0 || obs.harvest_divisor <= 0 || obs.shrink_interval <= 0)
        return 0;
    if (obs.you < 0 || obs.you >= obs.nbanks)
        return 0;
    /* Turn counts far outside any match would only overflow the arithmetic. */
    if (obs.turn < -1000000000LL || obs.turn > 1000000000LL || obs.max_turns < -1000000000LL ||
        obs.max_turns > 1000000000LL)
        return 0;
    return 1;
}

/* ---------------------------------------------------------------- play */

typedef struct {
    i64 x0, y0, x1, y1;
} Box;

static const char *const MOVE_NAMES[5] = {"MOVE_N", "MOVE_E", "MOVE_S", "MOVE_W", "STAY"};
static const int MOVE_DX[4] = {0, 1, 0, -1};
static const int MOVE_DY[4] = {-1, 0, 1, 0};
enum { N = 0, E = 1, S = 2, W = 3, STAY = 4 };

/* The safe zone as it will be after `turns` more turns. */
static Box zone_after(i64 turns) {
    Box z = {obs.zx0, obs.zy0, obs.zx1, obs.zy1};
    for (i64 t = obs.turn; t < obs.turn + turns; t++) {
        if (t % obs.shrink_interval == 0 && z.x1 - z.x0 + 1 > obs.min_zone) {
            z.x0++;
            z.y0++;
            z.x1--;
            z.y1--;
        }
    }
    return z;
}

static int inside(Box b, i64 x, i64 y) { return b.x0 <= x && x <= b.x1 && b.y0 <= y && y <= b.y1; }

static int on_grid(i64 x, i64 y) { return x >= 0 && x < obs.width && y >= 0 && y < obs.height; }

/* The moves that bring (x, y) closer to (tx, ty), best first; returns how many. */
static int step_toward(i64 x, i64 y, i64 tx, i64 ty, int out[2]) {
    int n = 0;
    if (tx > x)
        out[n++] = E;
    if (tx < x)
        out[n++] = W;
    if (ty > y)
        out[n++] = S;
    if (ty < y)
        out[n++] = N;
    i64 ady = ty > y ? ty - y : y - ty, adx = tx > x ? tx - x : x - tx;
    if (ady > adx && n == 2) {
        int t = out[0];
        out[0] = out[1];
        out[1] = t;
    }
    return n;
}

static unsigned char threatened[MAX_SIDE][MAX_SIDE];
static unsigned char undecided[MAX_SIDE][MAX_SIDE];
static unsigned char reserved[MAX_SIDE][MAX_SIDE];
static unsigned char claimed[MAX_SIDE][MAX_SIDE];
static int mine[MAX_UNITS];
static int order_unit[MAX_UNITS];
static int order_move[MAX_UNITS];

static int cell_in(unsigned char set[MAX_SIDE][MAX_SIDE], i64 x, i64 y) { return on_grid(x, y) && set[y][x]; }

static void cell_set(unsigned char set[MAX_SIDE][MAX_SIDE], i64 x, i64 y, unsigned char v) {
    if (on_grid(x, y))
        set[y][x] = v;
}

static i64 bx, by;
static Box next_zone;

/* Whether a unit may step onto (cx, cy) this turn. */
static int is_free(i64 cx, i64 cy) {
    if (!on_grid(cx, cy) || !inside(next_zone, cx, cy))
        return 0;
    if (threatened[cy][cx])
        return 0;
    if (cx == bx && cy == by)
        return 1;
    return !reserved[cy][cx] && !undecided[cy][cx];
}

/* Decides a turn; returns the number of orders, or -1 to refuse. */
static int decide(int *spawn) {
    const i64 me = obs.you;
    const Base *base = NULL;
    for (int i = 0; i < obs.nbases; i++) {
        if (obs.bases[i].owner == me) {
            base = &obs.bases[i];
            break;
        }
    }
    if (!base)
        return -1;
    bx = base->x;
    by = base->y;
    const i64 cap = obs.cargo_cap;
    const i64 turns_left = obs.max_turns - obs.turn + 1;
    next_zone = zone_after(1);
    const Box later_zone = zone_after(SEARCH_RADIUS + 4);

    int nmine = 0;
    for (int i = 0; i < obs.nunits; i++) {
        if (obs.units[i].owner != me)
            continue;
        /* Our own units must stand on the grid: we read their cells. */
        if (!on_grid(obs.units[i].x, obs.units[i].y))
            return -1;
        mine[nmine++] = i;
    }

    memset(threatened, 0, sizeof threatened);
    memset(undecided, 0, sizeof undecided);
    memset(reserved, 0, sizeof reserved);
    memset(claimed, 0, sizeof claimed);
    /* Cells an enemy stands on or can reach this turn. */
    for (int i = 0; i < obs.nunits; i++) {
        const Unit *u = &obs.units[i];
        if (u->owner == me)
            continue;
        cell_set(threatened, u->x, u->y, 1);
        for (int m = 0; m < 4; m++)
            cell_set(threatened, u->x + MOVE_DX[m], u->y + MOVE_DY[m], 1);
    }
    for (int k = 0; k < nmine; k++)
        cell_set(undecided, obs.units[mine[k]].x, obs.units[mine[k]].y, 1);

    /* Loaded units first: they have the most to lose (a stable sort). */
    for (int k = 1; k < nmine; k++) {
        int v = mine[k], j = k;
        while (j > 0 && obs.units[mine[j - 1]].cargo < obs.units[v].cargo) {
            mine[j] = mine[j - 1];
            j--;
        }
        mine[j] = v;
    }

    for (int k = 0; k < nmine; k++) {
        const Unit *u = &obs.units[mine[k]];
        const i64 x = u->x, y = u->y, cargo = u->cargo;
        undecided[y][x] = 0;
        const i64 here = obs.ore[y][x];
        const i64 cost = here / obs.move_cost_divisor;

        const i64 distance_home = (bx > x ? bx - x : x - bx) + (by > y ? by - y : y - by);
        const int going_home =
            cargo * RETURN_DEN >= cap * RETURN_NUM || (cargo > 0 && turns_left <= distance_home + 2);
        i64 tx, ty;
        if (going_home) {
            tx = bx;
            ty = by;
        } else {
            /* The best harvest rate nearby, discounted by distance. */
            i64 bestx = x, besty = y;
            double best_score = (double)(here / obs.harvest_divisor) / 1.0;
            if (x == bx && y == by)
                best_score = -1.0;
            const i64 ylo = y - SEARCH_RADIUS > 0 ? y - SEARCH_RADIUS : 0;
            const i64 yhi = y + SEARCH_RADIUS + 1 < obs.height ? y + SEARCH_RADIUS + 1 : obs.height;
            const i64 xlo = x - SEARCH_RADIUS > 0 ? x - SEARCH_RADIUS : 0;
            const i64 xhi = x + SEARCH_RADIUS + 1 < obs.width ? x + SEARCH_RADIUS + 1 : obs.width;
            for (i64 cy = ylo; cy < yhi; cy++) {
                for (i64 cx = xlo; cx < xhi; cx++) {
                    if (claimed[cy][cx] || (cx == bx && cy == by) || !inside(later_zone, cx, cy))
                        continue;
                    i64 gain = obs.ore[cy][cx] / obs.harvest_divisor;
                    if (gain > cap - cargo)
                        gain = cap - cargo;
                    const i64 d = (cx > x ? cx - x : x - cx) + (cy > y ? cy - y : y - cy);
                    const double score = (double)gain / ((double)d + 1.0);
                    if (score > best_score) {
                        bestx = cx;
                        besty = cy;
                        best_score = score;
                    }
                }
            }
            tx = bestx;
            ty = besty;
            cell_set(claimed, tx, ty, 1);
        }

        int choice = STAY;
        int options[2];
        if ((x != tx || y != ty) && cargo >= cost) {
            const int n = step_toward(x, y, tx, ty, options);
            for (int i = 0; i < n; i++) {
                if (is_free(x + MOVE_DX[options[i]], y + MOVE_DY[options[i]])) {
                    choice = options[i];
                    break;
                }
            }
        }
        if (choice == STAY && !inside(next_zone, x, y) && cargo >= cost) {
            /* The border is coming: any safe step inward. Python's // floors. */
            i64 sx = next_zone.x0 + next_zone.x1, sy = next_zone.y0 + next_zone.y1;
            const i64 cx = sx >= 0 ? sx / 2 : -((-sx + 1) / 2);
            const i64 cy = sy >= 0 ? sy / 2 : -((-sy + 1) / 2);
            const int n = step_toward(x, y, cx, cy, options);
            for (int i = 0; i < n; i++) {
                if (!cell_in(reserved, x + MOVE_DX[options[i]], y + MOVE_DY[options[i]])) {
                    choice = options[i];
                    break;
                }
            }
        }
        if (choice == STAY)
            reserved[y][x] = 1;
        else
            cell_set(reserved, x + MOVE_DX[choice], y + MOVE_DY[choice], 1);
        order_unit[k] = mine[k];
        order_move[k] = choice;
    }

    const i64 own_cap = obs.units_cap < MAX_OWN_UNITS ? obs.units_cap : MAX_OWN_UNITS;
    *spawn = obs.banks[me] >= obs.spawn_cost && nmine < own_cap && turns_left > NO_SPAWN_TAIL;
    return nmine;
}

/* ---------------------------------------------------------------- I/O */

static void reply(int n, int spawn) {
    fputs("{\"orders\": [", stdout);
    for (int k = 0; k < n; k++)
        printf("%s{\"unit\": %lld, \"do\": \"%s\"}", k ? ", " : "", obs.units[order_unit[k]].id,
               MOVE_NAMES[order_move[k]]);
    printf("], \"spawn\": %s}\n", spawn ? "true" : "false");
    fflush(stdout);
}

static int complaints = 0;

static void complain(const char *what, long line_number) {
    /* A few lines of log at most, whatever the input. */
    if (complaints < 5)
        fprintf(stderr, "grid-royale-c: line %ld: %s; no orders this turn\n", line_number, what);
    else if (complaints == 5)
        fprintf(stderr, "grid-royale-c: more bad lines; not logging them\n");
    complaints++;
}

static void handle(const char *line, size_t len, int too_long, long line_number) {
    /* Blank lines are not observations: no reply, as in the Python starter. */
    size_t i = 0;
    while (i < len && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r'))
        i++;
    if (i == len && !too_long)
        return;
    int spawn = 0, n = -1;
    if (too_long)
        complain("line too long", line_number);
    else if (!parse(line, len))
        complain("not an observation I understand", line_number);
    else if ((n = decide(&spawn)) < 0)
        complain("no base or unit of mine where I can play", line_number);
    if (n < 0) {
        n = 0;
        spawn = 0;
    }
    reply(n, spawn);
}

int main(void) {
    char *line = NULL;
    size_t len = 0, cap = 0;
    int too_long = 0, c;
    long line_number = 0;
    /* Our own line splitting: any length, NUL bytes included. getc, unlike
     * fread, returns as soon as the line is in: no waiting for more. */
    while ((c = getc(stdin)) != EOF) {
        if (c == '\n') {
            line_number++;
            handle(line ? line : "", too_long ? 0 : len, too_long, line_number);
            len = 0;
            too_long = 0;
            continue;
        }
        if (too_long)
            continue;
        if (len + 1 > (size_t)LINE_LIMIT) {
            too_long = 1;
            continue;
        }
        if (len + 1 > cap) {
            size_t want = cap ? cap * 2 : 1 << 16;
            char *grown = realloc(line, want);
            if (!grown) {
                too_long = 1;
                continue;
            }
            line = grown;
            cap = want;
        }
        line[len++] = (char)c;
    }
    if (len > 0 || too_long)
        handle(line, too_long ? 0 : len, too_long, line_number + 1);
    free(line);
    return 0;
}
