#!/usr/bin/env bash
# What the pure cgroup-v2 leg runs, on a host (or in the guest of
# tests/guest/run.sh) whose /sys/fs/cgroup is cgroup v2 alone:
#
#   1. the real-cgroup tests (sandbox/tests/cgroup_real.rs), told to expect
#      the `unified` layout: memory cap and OOM count, pids cap, CPU quota,
#      cpuset pinning, cgroup.kill and clean-up;
#   2. the hostile-bot sandbox suite (sandbox/tests/hostile.rs), whole;
#   3. one sandboxed `arena play` of every registered game (`arena games`),
#      with a process bot in every game; Grid Royale with four seats, so two
#      bots share each CPU under a `cpu.max` quota, one of them the C starter
#      built by its build.sh into WebAssembly (the wasm host in the sandbox);
#      Ants with a model-graph seat (the model host in the sandbox); and one
#      match whose bot grabs too much memory, which must forfeit with the
#      verdict `memory`.
#
#   tests/guest/suite.sh CGROUP_REAL_TEST_BINARY HOSTILE_TEST_BINARY ARENA_BINARY
#
# Run from the repository root (the bots are found there). Every step runs
# even when an earlier one failed; the exit status is 1 if any failed.
# Emulation is slow, so the matches are short and the limits loose
# (--memory-mb 512, --move-ms 5000).
set -uo pipefail

if [ "$#" -ne 3 ]; then
    echo "usage: tests/guest/suite.sh CGROUP_REAL_TEST_BINARY HOSTILE_TEST_BINARY ARENA_BINARY" >&2
    exit 2
fi
cgroup_real=$1
hostile=$2
arena=$3

failed=()
step_started=0
begin() {
    echo
    echo "=== cgroup v2 leg: $1"
    step_started=$SECONDS
}
end() {
    local name=$1 status=$2
    if [ "$status" -eq 0 ]; then
        echo "=== cgroup v2 leg: $name passed ($((SECONDS - step_started)) s)"
    else
        echo "=== cgroup v2 leg: $name FAILED (exit $status, $((SECONDS - step_started)) s)"
        failed+=("$name")
    fi
}

kind=$(stat -fc %T /sys/fs/cgroup 2>/dev/null || echo missing)
if [ "$kind" != cgroup2fs ]; then
    echo "cgroup v2 leg: /sys/fs/cgroup is $kind, not a pure cgroup v2 hierarchy" >&2
    exit 1
fi
echo "cgroup v2 leg: kernel $(uname -r), $(nproc) CPU(s), /sys/fs/cgroup offers: $(cat /sys/fs/cgroup/cgroup.controllers)"

begin "real-cgroup tests ($cgroup_real)"
status=0
ARENA_EXPECT_CGROUP=unified "$cgroup_real" --test-threads=2 || status=$?
end cgroup_real "$status"

begin "hostile-bot suite ($hostile)"
status=0
"$hostile" --test-threads=2 || status=$?
end hostile "$status"

# The bots of each game's match, and its rules: short matches, since every
# bot reply costs emulated process time. A game missing here fails the leg,
# so a newly registered game cannot go untested.
declare -A seats=(
    [generals]="bots/starter-python bots/test/random"
    [generals-classic]="bots/starter-python bots/test/random"
    [generals-ffa]="bots/ffa-plan-python baseline:sprawl baseline:crown baseline:sprawl"
    [grid-royale]="bots/grid-royale-c bots/grid-royale-python bots/grid-royale-python bots/grid-royale-python"
    [ants]="bots/ants-models/starter bots/ants-python"
)
declare -A rules=(
    [generals]=""
    [generals-classic]="max_turns=300"
    [generals-ffa]="blitz=true"
    [grid-royale]="max_turns=60"
    [ants]="map=duel,max_turns=100"
)

work=$(mktemp -d "${TMPDIR:-/tmp}/arena-v2-leg.XXXXXX")
trap 'rm -rf "$work"' EXIT

# play NAME GAME RULES EXPECTED_FORFEITS MEMORY_MIB BOT...
play() {
    local name=$1 game=$2 game_rules=$3 forfeits=$4 memory=$5
    shift 5
    begin "arena play --game $game $* (rules: ${game_rules:-defaults})"
    local status=0
    "$arena" play --game "$game" --rules "$game_rules" --seed 7 --json \
        --memory-mb "$memory" --move-ms 5000 --cache-dir "$work/builds" \
        "$@" > "$work/$name.json" || status=$?
    if [ "$status" -eq 0 ]; then
        python3 tests/guest/check_result.py "$work/$name.json" "$forfeits" || status=$?
    fi
    end "$name" "$status"
}

games=$("$arena" games | awk '/^[^ ]/ { print $1 }')
if [ -z "$games" ]; then
    echo "cgroup v2 leg: \`arena games\` listed no games" >&2
    failed+=("arena games")
fi
for game in $games; do
    if [ -z "${seats[$game]+set}" ]; then
        echo "=== cgroup v2 leg: no bots for game $game: add it to tests/guest/suite.sh"
        failed+=("play $game")
        continue
    fi
    # shellcheck disable=SC2086
    play "play-$game" "$game" "${rules[$game]}" "" 512 ${seats[$game]}
done

# The memory verdict through the whole stack: the hog forfeits with `memory`.
play play-memory-hog generals "" "0:memory" 128 worker/tests/bots/memory-hog bots/test/random

echo
if [ "${#failed[@]}" -gt 0 ]; then
    echo "cgroup v2 leg: FAILED: ${failed[*]} ($SECONDS s in the suite)"
    exit 1
fi
echo "cgroup v2 leg: all passed ($SECONDS s in the suite)"
