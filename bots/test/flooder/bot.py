"""After the handshake, writes 'x' forever and never ends a line.

It never reads again; it ends when the runner closes its stdout (the write
fails) or kills it."""
import os
import sys


def main():
    if not sys.stdin.buffer.readline():
        return
    out = sys.stdout.buffer
    chunk = b"x" * 65536
    while True:
        out.write(chunk)
        out.flush()


if __name__ == "__main__":
    try:
        main()
    except (BrokenPipeError, KeyboardInterrupt):
        # Exit at once: a normal exit would flush stdout again and complain.
        os._exit(0)
