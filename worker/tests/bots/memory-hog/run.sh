#!/bin/sh
# Answers the first frame with a pass, then grabs far more memory than any bot
# may have, touching every page.
exec python3 -u -c '
import sys
pid, h, w = map(int, sys.stdin.readline().split())
for _ in range(1 + 3 * h):
    sys.stdin.readline()
print("1 0 0 0 0", flush=True)
hog = []
while True:
    hog.append(bytearray(16 << 20))
'
