"""Reads the handshake and the first frame, then dies with SIGABRT."""
import os
import sys


def main():
    line = sys.stdin.readline()
    if not line:
        return
    h = int(line.split()[1])
    if not sys.stdin.readline():
        return
    for _ in range(3 * h):
        sys.stdin.readline()
    os.abort()


if __name__ == "__main__":
    main()
