"""Answers the first frame with a pass, then exits with status 0 as soon as the
second frame starts arriving."""
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
    sys.stdout.write("1 0 0 0 0\n")
    sys.stdout.flush()
    sys.stdin.readline()  # the second frame's header
    sys.exit(0)


if __name__ == "__main__":
    try:
        main()
    except (BrokenPipeError, KeyboardInterrupt):
        pass
