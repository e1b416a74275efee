# Reports the process's identity, capabilities and privilege-raising attempts.
import errno
import os
import socket


def ename(e):
    return errno.errorcode.get(e.errno, str(e.errno))


def attempt(label, fn):
    try:
        fn()
        print(f"{label}=OK")
    except OSError as e:
        print(f"{label}={ename(e)}")


status = {}
with open("/proc/self/status") as f:
    for line in f:
        key, _, value = line.partition(":")
        status[key] = " ".join(value.split())
for key in ["Uid", "Gid", "Groups", "CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb",
            "NoNewPrivs", "Seccomp", "Seccomp_filters"]:
    print(f"{key}={status.get(key, '?')}")
print("getgroups=" + ",".join(str(g) for g in os.getgroups()))
attempt("setuid0", lambda: os.setuid(0))
attempt("setgid0", lambda: os.setgid(0))
attempt("setgroups0", lambda: os.setgroups([0]))
attempt("sethostname", lambda: socket.sethostname("evil"))
print("hostname=" + socket.gethostname())
with open("/proc/sys/kernel/hostname") as f:
    print("proc_hostname=" + f.read().strip())
print("open_fds=" + ",".join(sorted(os.listdir("/proc/self/fd"), key=int)))
with open("/proc/self/environ", "rb") as f:
    print("environ=" + "|".join(e.decode() for e in f.read().split(b"\0") if e))
with open("/proc/self/cgroup") as f:
    print("cgroup_paths=" + ",".join(sorted({line.strip().split(":", 2)[2] for line in f})))
