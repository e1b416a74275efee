"""Passes every turn, but first writes 1 MiB of text to stderr each turn."""
import sys

BLOCK = ("stderr flood " * 80 + "\n").encode()  # 1041 bytes
PER_TURN = 1 << 20


def main():
    line = sys.stdin.readline()
    if not line:
        return
    h = int(line.split()[1])
    err = sys.stderr.buffer
    text = (BLOCK * (PER_TURN // len(BLOCK) + 1))[:PER_TURN]
    while True:
        if not sys.stdin.readline():
            return
        for _ in range(3 * h):
            sys.stdin.readline()
        err.write(text)
        err.flush()
        sys.stdout.write("1 0 0 0 0\n")
        sys.stdout.flush()


if __name__ == "__main__":
    try:
        main()
    except (BrokenPipeError, KeyboardInterrupt):
        pass
