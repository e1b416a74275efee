#!/bin/sh
# Reads everything it is sent and never answers. Its stdout stays open (a bot
# that closes stdout has left the game), and it exits at EOF, when the game ends.
exec python3 -c 'import sys
for _ in sys.stdin:
    pass'
