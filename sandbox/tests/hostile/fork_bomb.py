# A fork bomb with a supervisor. Pid 1 forks one bomber; every bomber forks
# forever (parent and child both keep going) and, when fork fails, reports the
# errno name on a non-blocking pipe. Pid 1 samples how many processes /proc
# shows for argv[1] seconds, prints what it saw, then waits to be killed.
import errno
import os
import sys
import time

seconds = float(sys.argv[1])
r, w = os.pipe()
os.set_blocking(w, False)
if os.fork() == 0:
    os.close(r)
    while True:
        try:
            os.fork()
        except OSError as e:
            try:
                os.write(w, (errno.errorcode.get(e.errno, str(e.errno)) + "\n").encode())
            except OSError:
                pass
            time.sleep(0.01)
os.close(w)
os.set_blocking(r, False)
most = 0
seen = b""
deadline = time.monotonic() + seconds
while time.monotonic() < deadline:
    try:
        most = max(most, sum(1 for d in os.listdir("/proc") if d.isdigit()))
    except OSError:
        pass
    try:
        seen += os.read(r, 1 << 16)
    except (BlockingIOError, InterruptedError):
        pass
    time.sleep(0.005)
print(f"max_procs={most}")
print("fork_errors=" + ",".join(sorted(set(seen.decode().split()))))
print("done", flush=True)
while True:
    time.sleep(60)
