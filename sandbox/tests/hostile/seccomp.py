# Calls denied system calls directly through libc's syscall(2) with arguments
# that, without the filter, give a result other than EPERM (OK, EFAULT,
# EINVAL, EBADF, ENOSYS...), so EPERM can only come from seccomp. Prints
# name=RESULT where RESULT is OK or an errno name. Works on the host too, as
# the control.
import ctypes
import errno
import os
import threading

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
BAD = 1  # an unmapped address: EFAULT wherever the kernel reads through it

CLONE_NEWUSER = 0x10000000
SIGCHLD = 17


def name(err):
    return errno.errorcode.get(err, str(err))


def call(nr, *args):
    ctypes.set_errno(0)
    rc = libc.syscall(ctypes.c_long(nr), *[ctypes.c_long(a) for a in args])
    return "OK" if rc >= 0 else name(ctypes.get_errno())


def in_child(nr, *args):
    # For calls that change the caller (ptrace, unshare): run them in a child.
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.write(w, call(nr, *args).encode())
        os._exit(0)
    os.close(w)
    result = os.read(r, 100).decode()
    os.waitpid(pid, 0)
    return result


def clone_new_user():
    ctypes.set_errno(0)
    rc = libc.syscall(ctypes.c_long(56), ctypes.c_long(CLONE_NEWUSER | SIGCHLD),
                      ctypes.c_long(0), ctypes.c_long(0), ctypes.c_long(0), ctypes.c_long(0))
    if rc == 0:
        os._exit(0)
    if rc < 0:
        return name(ctypes.get_errno())
    os.waitpid(rc, 0)
    return "OK"


pid = os.getpid()
results = [
    ("ptrace", in_child(101, 0, 0, 0, 0)),  # PTRACE_TRACEME
    ("process_vm_readv", call(310, pid, 0, 0, 0, 0, 0)),
    ("process_vm_writev", call(311, pid, 0, 0, 0, 0, 0)),
    ("keyctl", call(250, 9999, 0, 0, 0, 0)),
    ("add_key", call(248, BAD, BAD, 0, 0, -3)),
    ("request_key", call(249, BAD, BAD, 0, 0)),
    ("bpf", call(321, 9999, 0, 0)),
    ("perf_event_open", call(298, 0, 0, -1, -1, 0)),
    ("userfaultfd", call(323, 1 | os.O_CLOEXEC)),  # UFFD_USER_MODE_ONLY
    ("mount", call(165, BAD, BAD, BAD, 0, 0)),
    ("umount2", call(166, BAD, 0xFFFF)),
    ("pivot_root", call(155, BAD, BAD)),
    ("chroot", call(161, BAD)),
    ("unshare", in_child(272, CLONE_NEWUSER)),
    ("setns", call(308, -1, 0)),
    ("kexec_load", call(246, 0, 0, 0, 0)),
    ("kexec_file_load", call(320, -1, -1, 0, 0, 0)),
    ("io_uring_setup", call(425, 1, 0)),
    ("io_uring_enter", call(426, -1, 0, 0, 0, 0, 0)),
    ("io_uring_register", call(427, -1, 0, 0, 0)),
    ("init_module", call(175, 0, 0, 0)),
    ("finit_module", call(313, -1, 0, 0)),
    ("delete_module", call(176, 0, 0)),
    ("open_by_handle_at", call(304, -1, 0, 0)),
    ("name_to_handle_at", call(303, -100, BAD, BAD, BAD, 0)),
    ("open_tree", call(428, -100, BAD, 0)),
    ("mount_setattr", call(442, -1, BAD, 0, BAD, 0)),
    ("personality", call(135, 0xFFFFFFFF)),
    ("iopl", call(172, 0)),
    ("ioperm", call(173, 0, 0, 0)),
    ("lookup_dcookie", call(212, 0, 0, 0)),
    ("clone_newuser", clone_new_user()),
    ("clone3", call(435, 0, 0)),
]
for key, result in results:
    print(f"{key}={result}")

# Threads (glibc tries clone3, gets ENOSYS, falls back to clone) and fork work.
out = []
threads = [threading.Thread(target=lambda i=i: out.append(i * i)) for i in range(4)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print(f"threads={sorted(out)}")
child = os.fork()
if child == 0:
    os._exit(7)
print(f"fork_status={os.waitstatus_to_exitcode(os.waitpid(child, 0)[1])}")
