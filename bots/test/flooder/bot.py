"""After the handshake, writes 'x' forever and never ends a line."""
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
        pass
