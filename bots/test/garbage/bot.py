"""Answers every frame with one random line that is never a valid action.

Each line starts with a letter, so it can never parse as five integers, and
contains random printable text plus random high bytes (not valid UTF-8 as a
whole), but never a newline before the terminator.
"""
import os
import random
import sys

ALPHABET = b"abcdefghijklmnopqrstuvwxyz!?#@%&*()[]{}<>=+-_.,;:'\"/\\|~^$ \t0123456789"


def main():
    inp = sys.stdin.buffer
    out = sys.stdout.buffer
    line = inp.readline()
    if not line:
        return
    pid, h = int(line.split()[0]), int(line.split()[1])
    rng = random.Random(os.environ.get("BOT_SEED", str(pid)))
    while True:
        if not inp.readline():
            return
        for _ in range(3 * h):
            inp.readline()
        n = rng.randint(0, 60)
        body = bytes(rng.choice(ALPHABET) for _ in range(n))
        body += bytes(rng.randint(0x80, 0xFF) for _ in range(rng.randint(0, 8)))
        out.write(b"x" + body + b"\n")
        out.flush()


if __name__ == "__main__":
    try:
        main()
    except (BrokenPipeError, KeyboardInterrupt):
        pass
