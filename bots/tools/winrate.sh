#!/usr/bin/env bash
# Play N games between two bots with the `arena` binary and print BOT_A's score.
#
#   bots/tools/winrate.sh [-n N] [-s FIRST_SEED] [-j JOBS] [-a ARENA] BOT_A BOT_B
#
# Game i (i = 0..N-1) uses seed FIRST_SEED+i; BOT_A sits in seat 0 when i is
# even and in seat 1 when i is odd, so both bots play both seats.
# Defaults: N=50, FIRST_SEED=1, JOBS=1, ARENA=target/release/arena (relative to
# the repository root) or `arena` on PATH. Each bot's build.sh runs once up
# front; arena runs it again per game, so it should be quick when up to date.
# Extra arena flags can go in $ARENA_FLAGS (e.g. ARENA_FLAGS="--move-ms 300").
set -euo pipefail

n=50
first=1
jobs=1
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
arena="$root/target/release/arena"
[[ -x "$arena" ]] || arena="$(command -v arena || true)"

usage() { sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
while getopts "n:s:j:a:h" opt; do
    case "$opt" in
        n) n="$OPTARG" ;;
        s) first="$OPTARG" ;;
        j) jobs="$OPTARG" ;;
        a) arena="$OPTARG" ;;
        *) usage ;;
    esac
done
shift $((OPTIND - 1))
[[ $# -eq 2 ]] || usage
[[ -n "$arena" && -x "$arena" ]] || { echo "no arena binary (build it: cargo build --release -p arena-cli)" >&2; exit 1; }
bot_a="$(cd "$1" && pwd)"
bot_b="$(cd "$2" && pwd)"

for bot in "$bot_a" "$bot_b"; do
    if [[ -f "$bot/build.sh" ]]; then (cd "$bot" && sh build.sh) >&2; fi
done

out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT

play_one() {  # $1 = game index
    local i=$1 seed=$((first + $1))
    if (( i % 2 == 0 )); then
        "$arena" play "$bot_a" "$bot_b" --json --seed "$seed" ${ARENA_FLAGS:-} > "$out/$i.json"
        echo 0 > "$out/$i.seat"
    else
        "$arena" play "$bot_b" "$bot_a" --json --seed "$seed" ${ARENA_FLAGS:-} > "$out/$i.json"
        echo 1 > "$out/$i.seat"
    fi
}
export -f play_one
export arena bot_a bot_b first out

seq 0 $((n - 1)) | xargs -P "$jobs" -I{} bash -c 'play_one {}'

python3 - "$out" "$n" "$(basename "$bot_a")" "$(basename "$bot_b")" <<'EOF'
import json, os, sys
out, n, name_a, name_b = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
wins = draws = losses = 0
reasons = {}
notes = []
lat = []  # BOT_A's latency summary per game
for i in range(n):
    seat = int(open(os.path.join(out, "%d.seat" % i)).read())
    r = json.load(open(os.path.join(out, "%d.json" % i)))
    w = r.get("winner")
    key = "win" if w == seat else ("draw" if w is None else "loss")
    reasons[(key, r.get("reason"))] = reasons.get((key, r.get("reason")), 0) + 1
    if key == "win":
        wins += 1
    elif key == "draw":
        draws += 1
    else:
        losses += 1
    if key != "win":
        notes.append("seed %s (A in seat %d): %s by %s after %s turns"
                     % (r.get("seed"), seat, key, r.get("reason"), r.get("turns")))
    for p in r.get("players", []):
        if p.get("seat") == seat and p.get("latency_ms"):
            lat.append(p["latency_ms"])
        f = p.get("faults", {})
        if f.get("timeout") or f.get("malformed") or p.get("forfeit"):
            notes.append("seed %s seat %d %s: faults %s forfeit %s"
                         % (r.get("seed"), p["seat"], p["bot"], f, p.get("forfeit")))
print("%s vs %s: %d games, %d wins, %d draws, %d losses -> win rate %.1f%%, score %.1f%%"
      % (name_a, name_b, n, wins, draws, losses, 100.0 * wins / n,
         100.0 * (wins + 0.5 * draws) / n))
if lat:
    p50s = sorted(l["p50"] for l in lat)
    print("  %s latency: median of per-game p50 %.3f ms, worst per-game p99 %.3f ms, worst max %.3f ms (max includes the first move)"
          % (name_a, p50s[len(p50s) // 2], max(l["p99"] for l in lat), max(l["max"] for l in lat)))
print("  outcomes: " + ", ".join("%s/%s: %d" % (k[0], k[1], v) for k, v in sorted(reasons.items())))
for line in notes:
    print("  " + line)
EOF
