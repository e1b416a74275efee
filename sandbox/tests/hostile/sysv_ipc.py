# Looks for the host's SysV shared memory segment with key argv[1].
import ctypes
import errno

libc = ctypes.CDLL(None, use_errno=True)
key = int(__import__("sys").argv[1])
ctypes.set_errno(0)
shmid = libc.shmget(ctypes.c_int(key), ctypes.c_size_t(0), ctypes.c_int(0))
print("shmget=" + ("OK" if shmid >= 0 else errno.errorcode[ctypes.get_errno()]))
with open("/proc/sysvipc/shm") as f:
    print(f"sysvipc_shm_entries={len(f.readlines()) - 1}")
