#!/usr/bin/env bash
# Runs one command inside a QEMU guest whose cgroups are pure v2, and exits
# with the command's exit status.
#
#   tests/guest/run.sh [--timeout SECONDS] [--memory MIB] [--cpus N] [--] COMMAND [ARG...]
#
# The guest is Debian's generic kernel (tests/guest/kernel.sh fetches and
# caches it) booted with `cgroup_no_v1=all` in software emulation, with a
# busybox initramfs packed here from tests/guest/init, the kernel's virtio,
# 9p and overlay modules, and /bin/busybox (Debian's busybox-static). Its
# root is the host's own root filesystem, read-only over virtio-9p, under a
# tmpfs overlay: the command sees the host's files (the freshly built
# binaries included), and whatever it writes stays in the guest's memory.
# There is no network but loopback, and no disk image.
#
# The command runs as root, in the directory run.sh was started in (seen
# as on the host, also under /tmp or /var/tmp), with PATH, HOME=/root
# (the host's, writable in memory like everything else), TMPDIR=/tmp (an
# empty tmpfs but for that directory) and the variables named in
# ARENA_GUEST_ENV (space-separated) plus a few of the host's (RUST_BACKTRACE,
# RUST_LOG, LANG, LC_ALL, TZ, ARENA_BIN). Its stdout and stderr reach this
# script's stdout as they are written (the guest's second serial port); the
# kernel's own console (the first serial port) goes to a log that is printed
# only when the guest fails. Its exit status comes back through a writable 9p
# share of a temporary directory.
#
# Exit status: the command's; 124 when the time limit (default 600 s)
# passed, then the guest is killed; 125 when the guest could not run the
# command (no status came back). The guest is always powered off (or
# killed) and every temporary file removed, also on failure, timeout or a
# signal to this script.
#
# Software emulation: one host core per virtual CPU, a process start costs
# about 0.1 s. /dev/kvm is not used (on these machines it does not
# accelerate).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

timeout_s=600
memory_mib=2048
cpus=2
while [ "$#" -gt 0 ]; do
    case "$1" in
        --timeout) timeout_s=$2; shift 2 ;;
        --memory) memory_mib=$2; shift 2 ;;
        --cpus) cpus=$2; shift 2 ;;
        --) shift; break ;;
        -*) echo "run.sh: unknown option $1" >&2; exit 2 ;;
        *) break ;;
    esac
done
if [ "$#" -eq 0 ]; then
    echo "usage: tests/guest/run.sh [--timeout SECONDS] [--memory MIB] [--cpus N] [--] COMMAND [ARG...]" >&2
    exit 2
fi

qemu=$(command -v qemu-system-x86_64 || true)
[ -n "$qemu" ] || { echo "run.sh: qemu-system-x86_64 is missing (Debian: qemu-system-x86)" >&2; exit 125; }
[ -x /bin/busybox ] || { echo "run.sh: /bin/busybox is missing (Debian: busybox-static)" >&2; exit 125; }
cwd=$(pwd -P)
case "$cwd" in
    /proc* | /sys* | /dev* | /run*)
        echo "run.sh: the guest cannot see $cwd (it has its own $cwd); start from the repository" >&2
        exit 2 ;;
esac
kernel=$("$here/kernel.sh")

tmp=$(mktemp -d "${TMPDIR:-/tmp}/arena-guest.XXXXXX")
qemu_pid=""
# shellcheck disable=SC2317 # run by the EXIT trap
cleanup() {
    local status=$?
    if [ -n "$qemu_pid" ] && kill -0 "$qemu_pid" 2>/dev/null; then
        kill -KILL "$qemu_pid" 2>/dev/null || true
        wait "$qemu_pid" 2>/dev/null || true
    fi
    rm -rf "$tmp"
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

# The initramfs: busybox, the first stage, the modules in load order.
root="$tmp/initramfs"
mkdir -p "$root/bin" "$root/dev" "$root/proc" "$root/sys" "$root/modules"
cp /bin/busybox "$root/bin/busybox"
cp "$here/init" "$root/init"
chmod 0755 "$root/init"
cp "$kernel"/modules/* "$root/modules/"
if [ "$(id -u)" -eq 0 ]; then
    mknod -m 0600 "$root/dev/console" c 5 1
fi
(cd "$root" && find . | /bin/busybox cpio -o -H newc 2>/dev/null) > "$tmp/initramfs.cpio"

# The shared directory: the command in, the status out.
share="$tmp/share"
mkdir "$share"
# The guest has empty tmpfs on /tmp and /var/tmp; a working directory under
# them (a checkout in /tmp, as some CI runners make) is kept visible there.
case "$cwd" in
    /tmp/* | /var/tmp/*) printf '%s\n' "$cwd" > "$share/keep" ;;
esac
{
    echo "# written by tests/guest/run.sh"
    echo "cd $(printf '%q' "$cwd") || exit 125"
    printf 'export HOME=/root USER=root LOGNAME=root TMPDIR=/tmp\n'
    for name in PATH RUST_BACKTRACE RUST_LOG LANG LC_ALL TZ ARENA_BIN ${ARENA_GUEST_ENV:-}; do
        if [ -n "${!name+set}" ]; then
            printf 'export %s=%q\n' "$name" "${!name}"
        fi
    done
    printf 'exec'
    printf ' %q' "$@"
    printf '\n'
} > "$share/command"

append="console=ttyS0 cgroup_no_v1=all panic=-1 quiet loglevel=4 mitigations=off"
append+=" rdinit=/init arena.stage2=$here/stage2.sh"
# qemu dies with this script even when it is SIGKILLed (no trap runs then).
setpriv --pdeathsig KILL -- "$qemu" \
    -nodefaults -no-user-config -no-reboot \
    -machine pc -accel tcg,thread=multi -cpu max -smp "$cpus" -m "$memory_mib" \
    -display none -monitor none \
    -kernel "$kernel/vmlinuz" -initrd "$tmp/initramfs.cpio" -append "$append" \
    -chardev "file,id=console,path=$tmp/console.log" -serial chardev:console \
    -chardev stdio,id=output,signal=off -serial chardev:output \
    -virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
    -virtfs "local,path=$share,mount_tag=arena_out,security_model=none" \
    < /dev/null &
qemu_pid=$!

deadline=$((SECONDS + timeout_s))
while kill -0 "$qemu_pid" 2>/dev/null; do
    if [ "$SECONDS" -ge "$deadline" ]; then
        echo "run.sh: the guest ran past ${timeout_s} s; killing it" >&2
        kill -KILL "$qemu_pid" 2>/dev/null || true
        wait "$qemu_pid" 2>/dev/null || true
        qemu_pid=""
        echo "--- guest console (last 40 lines) ---" >&2
        tail -n 40 "$tmp/console.log" >&2 || true
        exit 124
    fi
    # Waits for qemu's exit (checked every 0.2 s) or one second, whichever
    # comes first, then looks at the deadline again.
    timeout 1 tail -s 0.2 --pid="$qemu_pid" -f /dev/null 2>/dev/null || true
done
qemu_status=0
wait "$qemu_pid" || qemu_status=$?
qemu_pid=""

if [ ! -f "$share/status" ]; then
    echo "run.sh: the guest gave no exit status (qemu exited with $qemu_status)" >&2
    echo "--- guest console (last 40 lines) ---" >&2
    tail -n 40 "$tmp/console.log" >&2 || true
    exit 125
fi
status=$(cat "$share/status")
exit "$status"
