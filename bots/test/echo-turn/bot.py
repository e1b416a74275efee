"""Answers each frame with `1 <t> 0 0 0`: a pass whose (ignored) row field is
the frame's turn number. At t == 3 it sleeps 300 ms first, so that reply is
late. A runner that pairs replies with frames correctly records, for every
accepted reply, row == turn."""
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
        t = int(header.split()[0])
        if t == 3:
            time.sleep(0.3)
        sys.stdout.write("1 %d 0 0 0\n" % t)
        sys.stdout.flush()


if __name__ == "__main__":
    try:
        main()
    except (BrokenPipeError, KeyboardInterrupt):
        pass
