"""Passes instantly every turn, except at t == 3, where it sleeps 300 ms first.
It answers every frame exactly once, in order."""
import sys
import time


def main():
    line = sys.stdin.readline()
    if not line:
        return
    h = int(line.split()[1])
    while True:
        header = sys.stdin.readline()
        if not header:
            return
        for _ in range(3 * h):
            sys.stdin.readline()
        if int(header.split()[0]) == 3:
            time.sleep(0.3)
        sys.stdout.write("1 0 0 0 0\n")
        sys.stdout.flush()


if __name__ == "__main__":
    try:
        main()
    except (BrokenPipeError, KeyboardInterrupt):
        pass
