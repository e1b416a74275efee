# One x32-ABI system call: getpid (39) with the x32 bit set.
import ctypes

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
print("before", flush=True)
rc = libc.syscall(ctypes.c_long(0x40000000 | 39))
print(f"after rc={rc} errno={ctypes.get_errno()}", flush=True)
