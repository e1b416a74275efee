"""Answers every frame with a pass, but only after sleeping 200 ms (always late)."""
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
        time.sleep(0.2)
        sys.stdout.write("1 0 0 0 0\n")
        sys.stdout.flush()


if __name__ == "__main__":
    try:
        main()
    except (BrokenPipeError, KeyboardInterrupt):
        pass
