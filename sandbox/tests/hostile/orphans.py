# Leaves argv[1] zombie grandchildren: a child forks them, each blocks on a
# pipe until the child is gone and then exits, orphaned, so only pid 1 can
# reap it. Then watches /proc for up to argv[2] seconds until no process
# other than pid 1 and itself is left (zombies count), and reports what it
# saw last.
import os
import sys
import time

count = int(sys.argv[1])
seconds = float(sys.argv[2])
child = os.fork()
if child == 0:
    r, w = os.pipe()
    forked = 0
    for _ in range(count):
        if os.fork() == 0:
            os.close(w)
            os.read(r, 1)  # EOF once the child is gone
            os._exit(0)
        forked += 1
    print(f"forked={forked}", flush=True)
    os._exit(0)
os.waitpid(child, 0)


def others():
    """pid -> state of every process but pid 1 and this one."""
    found = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) in (1, os.getpid()):
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                found[int(entry)] = f.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            pass  # gone between the listing and the read
    return found


deadline = time.monotonic() + seconds
most_zombies = 0
while True:
    left = others()
    zombies = sum(1 for state in left.values() if state == "Z")
    most_zombies = max(most_zombies, zombies)
    if not left or time.monotonic() > deadline:
        break
    time.sleep(0.01)
print(f"left={len(left)}")
print(f"zombies={zombies}")
print(f"most_zombies_seen={most_zombies}")
