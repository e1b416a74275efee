"""Starts 8 threads that spin for the whole match, then passes every frame.

The threads hash a 1 MiB buffer over and over: hashlib drops the GIL for
inputs that large, so the 8 threads really run in parallel and would take
every CPU they are allowed. The main thread still answers each frame with a
pass, so the match goes on for as long as the game does."""
import hashlib
import sys
import threading

SPINNERS = 8
BUFFER = b"\x00" * (1 << 20)


def spin():
    while True:
        hashlib.sha256(BUFFER).digest()


def main():
    for _ in range(SPINNERS):
        threading.Thread(target=spin, daemon=True).start()
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
        sys.stdout.write("1 0 0 0 0\n")
        sys.stdout.flush()


if __name__ == "__main__":
    try:
        main()
    except (BrokenPipeError, KeyboardInterrupt):
        pass
