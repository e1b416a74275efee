# Probes the filesystem view. argv[1:] are host paths that must be invisible.
# Prints key=value lines; failures as errno names.
import errno
import os
import sys


def ename(e):
    return errno.errorcode.get(e.errno, str(e.errno))


def write(path, data=b"x"):
    try:
        with open(path, "wb") as f:
            f.write(data)
        return "OK"
    except OSError as e:
        return ename(e)


def mkdir(path):
    try:
        os.mkdir(path)
        return "OK"
    except OSError as e:
        return ename(e)


print("write_bot=" + write("/bot/written-inside.txt", b"built inside"))
print("mkdir_bot=" + mkdir("/bot/dir-inside"))
print("write_root=" + write("/evil"))
print("mkdir_root=" + mkdir("/evil-dir"))
print("write_usr=" + write("/usr/evil"))
print("write_etc_passwd=" + write("/etc/passwd"))
print("write_proc_sys=" + write("/proc/sys/kernel/hostname", b"evil"))
print("write_tmp=" + write("/tmp/ok"))
print("write_dev_shm=" + write("/dev/shm/ok"))
print("write_dev_null=" + write("/dev/null"))
print("write_dev=" + write("/dev/evil"))

# Fill /tmp with 2 MiB files (each below the file size limit) until it is full.
result = "OK"
filled = 0
for i in range(64):
    try:
        with open(f"/tmp/fill{i}", "wb") as f:
            f.write(b"\0" * (2 << 20))
        filled += 2 << 20
    except OSError as e:
        result = ename(e)
        break
print("tmp_fill=" + result)
print(f"tmp_filled={filled}")
st = os.statvfs("/tmp")
print(f"tmp_size={st.f_blocks * st.f_frsize}")

for path in ["/sys", "/root", "/home", "/work", "/etc/shadow", "/etc/gshadow", "/run", "/var", "/boot", "/.old-root"] + sys.argv[1:]:
    print(f"exists:{path}={os.path.lexists(path)}")
print("ls_root=" + ",".join(sorted(os.listdir("/"))))
print("ls_etc=" + ",".join(sorted(os.listdir("/etc"))))
print("ls_dev=" + ",".join(sorted(os.listdir("/dev"))))
