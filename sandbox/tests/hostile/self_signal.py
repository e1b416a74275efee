# Sends itself the signal named by argv[1] with its default disposition,
# then says it survived and exits 3: outside a pid namespace, and inside
# one when it is not pid 1, it never gets that far.
import os
import signal
import sys

sig = getattr(signal, sys.argv[1])
if sig != signal.SIGKILL:
    signal.signal(sig, signal.SIG_DFL)
os.kill(os.getpid(), sig)
print("survived", flush=True)
sys.exit(3)
