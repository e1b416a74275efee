#!/usr/bin/env bash
# The pure cgroup-v2 leg of ./test.sh: runs tests/guest/suite.sh (the
# real-cgroup tests, the hostile-bot suite and one sandboxed `arena play` of
# every game) on a pure cgroup v2 hierarchy, and fails when any of it fails.
#
#   tests/guest/leg.sh
#
# On a host whose /sys/fs/cgroup is already pure cgroup v2 it runs the suite
# right here. Otherwise (this machine and CI: v1 controllers plus a
# controller-less cgroup2 mount) it boots the QEMU guest of
# tests/guest/run.sh, which runs the same suite on the same binaries. The
# binaries are the debug builds `cargo test --workspace` just made; cargo
# only locates them here (or builds what is missing, with the same features).
#
# ARENA_GUEST_TIMEOUT (seconds, default 270) bounds the guest; the guest is
# killed past it and the leg fails. Prints its wall time at the end.
set -euo pipefail
cd "$(dirname "$0")/../.."
started=$SECONDS

# The binaries `cargo test --workspace` just built, by target name: the two
# sandbox test binaries and `arena`. Asked of the same workspace-wide build,
# so cargo finds them up to date instead of building a second `arena` with
# another feature set.
binaries=$(cargo test --workspace --locked --quiet --no-run --message-format=json | python3 -c '
import json, sys
for line in sys.stdin:
    message = json.loads(line)
    target = message.get("target", {})
    if message.get("reason") != "compiler-artifact" or not message.get("executable"):
        continue
    # A binary is listed twice: itself, and its unit tests (profile "test").
    testing = message.get("profile", {}).get("test")
    if (target.get("kind") == ["test"]) or (target.get("kind") == ["bin"] and not testing):
        print(target["name"], message["executable"])
')
binary_of() {
    local path
    path=$(awk -v name="$1" '$1 == name { print $2 }' <<< "$binaries")
    if [ -z "$path" ] || [ ! -x "$path" ]; then
        echo "cgroup v2 leg: cargo built no binary $1" >&2
        exit 1
    fi
    echo "$path"
}
cgroup_real=$(binary_of cgroup_real)
hostile=$(binary_of hostile)
arena=$(binary_of arena)
echo "cgroup v2 leg: binaries ready after $((SECONDS - started)) s"

status=0
if [ "$(stat -fc %T /sys/fs/cgroup 2>/dev/null)" = cgroup2fs ]; then
    echo "cgroup v2 leg: this host is pure cgroup v2; running the suite here, without a guest"
    tests/guest/suite.sh "$cgroup_real" "$hostile" "$arena" || status=$?
else
    echo "cgroup v2 leg: this host is not pure cgroup v2; running the suite in a QEMU guest"
    tests/guest/run.sh --timeout "${ARENA_GUEST_TIMEOUT:-270}" -- \
        tests/guest/suite.sh "$cgroup_real" "$hostile" "$arena" || status=$?
fi
echo "cgroup v2 leg: exit status $status, wall time $((SECONDS - started)) s"
exit "$status"
