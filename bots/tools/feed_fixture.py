#!/usr/bin/env python3
"""Feed a bot the recorded frames of a fixture game and check its replies.

    feed_fixture.py FIXTURE.json.gz BOT_DIR [--seat 0|1] [--both] [--no-build]
                    [--timeout SECONDS] [--dump FILE]

Runs BOT_DIR/build.sh (if present, unless --no-build), starts BOT_DIR/run.sh
from BOT_DIR, writes the seat's handshake line, then every recorded
observation frame for that seat in turn order (the fixtures only record some
turns, so the bot sees a "sparse" game). After each frame it waits for exactly
one reply line and checks that it is well formed: five integers separated by
spaces/tabs, pass in {0,1,2}, and for a move dir in 0..=3 and split in {0,1}.
At the end it closes stdin and checks the bot exits cleanly with status 0.

Prints per-move latency (first move separately, since it may include
start-up) and exits non-zero if anything was wrong. --dump writes every reply
as "<seat> <turn>: <line>" to FILE, e.g. to diff two ports of one strategy.
"""

import argparse
import gzip
import json
import os
import select
import subprocess
import sys
import tempfile
import time


def well_formed(line):
    """Return None if `line` (bytes, without the newline) is a well-formed reply,
    else the reason it is not."""
    if len(line) > 4096:
        return "longer than 4096 bytes"
    try:
        text = line.decode("ascii")
    except UnicodeDecodeError:
        return "not ASCII"
    fields = text.replace("\t", " ").split()
    if len(fields) != 5:
        return "expected 5 fields, got %d" % len(fields)
    try:
        p, _r, _c, d, s = (int(f) for f in fields)
    except ValueError:
        return "non-integer field"
    if p not in (0, 1, 2):
        return "pass must be 0, 1 or 2"
    if p == 0 and not (0 <= d <= 3 and s in (0, 1)):
        return "move with dir outside 0..3 or split outside {0,1}"
    return None


def run_seat(fixture, bot_dir, seat, timeout):
    frames = fixture["observations"]
    turns = sorted(frames, key=int)
    # stderr goes to a temporary file: a pipe nobody drains would block a
    # chatty bot once it holds 64 KiB.
    err_file = tempfile.TemporaryFile()
    proc = subprocess.Popen(["./run.sh"], cwd=bot_dir, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=err_file)
    fd = proc.stdout.fileno()
    buf = b""
    latencies = []
    problems = []
    actions = {"move": 0, "pass": 0, "build": 0}
    replies = []

    proc.stdin.write(fixture["handshake"][seat].encode())
    proc.stdin.flush()
    for turn in turns:
        text = frames[turn][seat].encode()
        start = time.monotonic()
        try:
            proc.stdin.write(text)
            proc.stdin.flush()
        except BrokenPipeError:
            problems.append("turn %s: bot closed stdin / exited" % turn)
            break
        line = None
        limit = start + (10.0 if not latencies else timeout)
        while line is None:
            if b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                break
            left = limit - time.monotonic()
            if left <= 0:
                break
            ready, _, _ = select.select([fd], [], [], left)
            if ready:
                chunk = os.read(fd, 65536)
                if not chunk:
                    break
                buf += chunk
        elapsed = time.monotonic() - start
        if line is None:
            problems.append("turn %s: no reply within %.0f ms" % (turn, 1000 * (limit - start)))
            break
        latencies.append(elapsed)
        replies.append("%d %s: %s" % (seat, turn, line.decode(errors="replace")))
        why = well_formed(line)
        if why:
            problems.append("turn %s: malformed reply %r: %s" % (turn, line[:80], why))
        else:
            kind = int(line.split()[0])
            actions[("move", "pass", "build")[kind]] += 1
        if buf:
            problems.append("turn %s: extra output after the reply: %r" % (turn, buf[:80]))
            buf = b""

    # End of game: close stdin and expect a clean exit.
    try:
        proc.stdin.close()
    except BrokenPipeError:
        pass
    try:
        rc = proc.wait(timeout=3)
        if rc != 0:
            problems.append("exit status %d after EOF" % rc)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        problems.append("did not exit within 3 s of EOF")
    err_file.seek(0, os.SEEK_END)
    size = err_file.tell()
    err_file.seek(max(0, size - 4096))
    err = err_file.read()
    err_file.close()
    if size > 1 << 20:
        print("   note: %d bytes of stderr" % size)
    if b"Traceback" in err or b"panicked" in err:
        problems.append("stderr: " + err.decode(errors="replace")[-500:])
    return latencies, actions, problems, replies


def report(name, latencies, actions, problems):
    print("== %s" % name)
    if latencies:
        first = latencies[0] * 1000
        rest = sorted(l * 1000 for l in latencies[1:]) or [first]
        print("   %d replies, actions %s" % (len(latencies), actions))
        print("   first move %.1f ms; then p50 %.2f ms, p90 %.2f ms, max %.2f ms, mean %.2f ms"
              % (first, rest[len(rest) // 2], rest[int(len(rest) * 0.9)], rest[-1],
                 sum(rest) / len(rest)))
    for p in problems:
        print("   PROBLEM: " + p)
    return not problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("fixture")
    ap.add_argument("bot_dir")
    ap.add_argument("--seat", type=int, default=0, choices=(0, 1))
    ap.add_argument("--both", action="store_true", help="run both seats")
    ap.add_argument("--no-build", action="store_true")
    ap.add_argument("--timeout", type=float, default=0.150,
                    help="per-move limit after the first move (seconds)")
    ap.add_argument("--dump", help="write every reply line to this file")
    args = ap.parse_args()

    bot_dir = os.path.abspath(args.bot_dir)
    if not args.no_build and os.path.exists(os.path.join(bot_dir, "build.sh")):
        subprocess.run(["sh", "build.sh"], cwd=bot_dir, check=True)
    with gzip.open(args.fixture) as f:
        fixture = json.load(f)
    ok = True
    dumped = []
    for seat in ((0, 1) if args.both else (args.seat,)):
        lat, acts, probs, replies = run_seat(fixture, bot_dir, seat, args.timeout)
        dumped.extend(replies)
        name = "%s seat %d (%s, %dx%d, %d frames)" % (
            os.path.basename(args.fixture), seat, fixture["scenario"],
            fixture["height"], fixture["width"], len(fixture["observations"]))
        ok = report(name, lat, acts, probs) and ok
    if args.dump:
        with open(args.dump, "w") as f:
            f.write("\n".join(dumped) + "\n")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
