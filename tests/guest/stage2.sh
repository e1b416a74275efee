#!/bin/bash
# The guest's second stage: pid 1 after tests/guest/init switched root into
# the host's filesystem (a read-only 9p lower layer under a tmpfs overlay).
# Mounts what a pure cgroup-v2 machine has, runs the command run.sh left in
# the shared directory with its output on the second serial port (run.sh
# streams that to its stdout), writes the command's exit status into the
# shared directory and powers the guest off.
set -u

log() { echo "guest: $*" > /dev/ttyS0; }

power_off() {
    sync
    umount /run/arena-guest 2>/dev/null
    # Power off now (the kernel's own path, no init system to ask). If pid 1
    # ever returned instead, the kernel panics, and `panic=-1` together with
    # qemu's -no-reboot ends the machine just the same.
    echo o > /proc/sysrq-trigger
    while :; do sleep 1; done
}

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t cgroup2 -o nsdelegate cgroup2 /sys/fs/cgroup
mkdir -p /dev/pts /dev/shm
mount -t devpts -o newinstance,ptmxmode=0666 devpts /dev/pts
mount -t tmpfs -o mode=1777 tmpfs /dev/shm

mkdir -p /run/arena-guest
if ! mount -t 9p -o trans=virtio,version=9p2000.L,cache=none,msize=512000 \
    arena_out /run/arena-guest; then
    log "cannot mount the shared directory"
    power_off
fi

# Empty temporary directories, as a fresh machine has; but a working
# directory under them that run.sh named in `keep` (a checkout in /tmp)
# stays as the host's root shows it: set aside, then moved back on top.
keep=""
if [ -s /run/arena-guest/keep ]; then
    keep=$(cat /run/arena-guest/keep)
    mkdir -p /run/arena-keep
    mount --bind "$keep" /run/arena-keep || log "cannot keep $keep"
fi
mount -t tmpfs -o mode=1777 tmpfs /tmp
mount -t tmpfs -o mode=1777 tmpfs /var/tmp
if [ -n "$keep" ]; then
    mkdir -p "$keep"
    mount --move /run/arena-keep "$keep" || log "cannot put $keep back"
fi
hostname arena-guest
ip link set lo up

# Offer every controller a pure v2 host has to the groups below the root, as
# systemd does on such a host (Arena enables what it needs further down).
if ! echo "+cpuset +cpu +memory +pids" > /sys/fs/cgroup/cgroup.subtree_control; then
    log "cannot enable cpuset cpu memory pids in /sys/fs/cgroup/cgroup.subtree_control"
fi

stty -F /dev/ttyS1 raw -echo 2>/dev/null
# The command (run.sh wrote it: environment, working directory, argv) runs in
# a session of its own, stdin from /dev/null, stdout and stderr into a pipe to
# ttyS1: a pipe, as in CI, so no test decides it writes to a terminal.
log "running the command"
setsid --wait /bin/bash /run/arena-guest/command < /dev/null 2>&1 | cat > /dev/ttyS1
status=${PIPESTATUS[0]}
log "the command exited with status $status"
echo "$status" > /run/arena-guest/status.tmp
mv /run/arena-guest/status.tmp /run/arena-guest/status
power_off
