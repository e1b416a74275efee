# Catches the signals named in argv[1:], reports each as got=NUMBER, and
# exits 0 once it has seen them all. The handler only records (a print in
# it could be re-entered by the next signal); the loop reports.
import signal
import sys
import time

wanted = {getattr(signal, name) for name in sys.argv[1:]}
seen = set()
reported = set()
for sig in wanted:
    signal.signal(sig, lambda sig, _frame: seen.add(sig))
print("ready", flush=True)
while reported != wanted:
    for sig in sorted(seen - reported):
        print(f"got={sig}", flush=True)
        reported.add(sig)
    time.sleep(0.01)
print("all", flush=True)
