#!/bin/sh
# Passes every turn; first reports on stderr whether its directory is writable.
if ( echo x > /bot/scribble ) 2>/dev/null; then
    echo "bot dir: writable" >&2
else
    echo "bot dir: read-only" >&2
fi
echo "uid: $(id -u)" >&2
cat built.txt >&2
exec python3 -u -c '
import sys
pid, h, w = map(int, sys.stdin.readline().split())
while sys.stdin.readline():
    for _ in range(3 * h):
        sys.stdin.readline()
    print("1 0 0 0 0", flush=True)
'
