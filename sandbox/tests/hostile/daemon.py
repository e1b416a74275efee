# Leaves a daemon behind: setsid, double fork, SIGTERM and SIGHUP ignored,
# stdio detached. Reports the daemon's pid, waits for a line on stdin, exits.
import os
import signal
import sys
import time

r, w = os.pipe()
first = os.fork()
if first == 0:
    os.setsid()
    if os.fork() > 0:
        os._exit(0)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    os.write(w, str(os.getpid()).encode())
    os.close(w)
    null = os.open("/dev/null", os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    while True:
        time.sleep(1)
os.close(w)
os.waitpid(first, 0)
daemon = int(os.read(r, 100))
print(f"daemon={daemon}")
print("ready", flush=True)
sys.stdin.readline()
print("leaving", flush=True)
