# Lists the processes this sandbox can see, with a child alive, and what it
# can learn about pid 1 (the sandbox's init).
import os
import time

child = os.fork()
if child == 0:
    time.sleep(30)
    os._exit(0)
entries = sorted(int(d) for d in os.listdir("/proc") if d.isdigit())
print(f"self={os.getpid()}")
print(f"child={child}")
print("pids=" + ",".join(str(p) for p in entries))
with open("/proc/1/cmdline", "rb") as f:
    print("pid1_cmdline=" + f.read().replace(b"\0", b" ").decode().strip())
os.kill(child, 9)
os.waitpid(child, 0)
with open("/proc/1/comm") as f:
    print("pid1_name=" + f.read().strip())
for what, look in (("environ", lambda: open("/proc/1/environ", "rb").read()),
                   ("fds", lambda: os.listdir("/proc/1/fd"))):
    try:
        look()
        print(f"pid1_{what}=readable")
    except OSError as e:
        import errno
        print(f"pid1_{what}=" + errno.errorcode.get(e.errno, str(e.errno)))
