//! The spare pool: cgroup leaves made ahead for the limits of recent
//! spawns (see [`SandboxConfig::spare_leaf`](super::SandboxConfig::spare_leaf)),
//! each with a confined process started ahead in it when it can be (see
//! [`crate::ready`]), which a spawn with the same limits takes.

use std::ffi::c_char;
use std::os::fd::AsRawFd;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use super::clone::{SETUP_TIMEOUT, read_report_within, seqpacket_pair, stage_error};
use super::{Policy, lock};
use crate::cgroup::{CgroupLimits, LeafCgroup};
use crate::child::{Inbox, Launch};
use crate::error::SandboxError;
use crate::handle::SandboxedChild;
use crate::ready::{ORDER_BYTES, ORDER_STRINGS, Order, ReadyChild, Spare};
use crate::rootfs;

/// How many spares a sandbox keeps, each for other limits (other cores):
/// one per seat of the matches a small worker plays at once.
pub const SPARES: usize = 4;

impl Policy {
    /// The first spare that `wanted` accepts, taken out of the list.
    pub(super) fn take_spare(&self, wanted: impl Fn(&Spare) -> bool) -> Option<Spare> {
        let mut spares = lock(&self.spares);
        let at = spares.iter().position(wanted)?;
        Some(spares.remove(at))
    }

    /// Every spare, dropped (their processes killed, their leaves removed).
    pub(super) fn drop_spares(&self) {
        let spares = std::mem::take(&mut *lock(&self.spares));
        drop(spares);
    }

    /// Makes sure a spare for `limits` exists, with a process started ahead
    /// in it when the shared root is in place; the oldest spare goes when
    /// there are more than [`SPARES`].
    pub(super) fn keep_spare(&self, limits: CgroupLimits, template: bool) {
        if lock(&self.spares).iter().any(|s| s.limits == limits) {
            return;
        }
        let Ok(leaf) = self.new_leaf("spare", &limits) else {
            // A spawn will make its own leaf, and say why if it cannot.
            return;
        };
        let ready = if template && !self.prestart_failed.load(Ordering::Relaxed) {
            self.prestart(&leaf)
        } else {
            None
        };
        let surplus: Vec<Spare> = {
            let mut spares = lock(&self.spares);
            spares.push(Spare {
                limits,
                ready,
                leaf,
            });
            let surplus = spares.len().saturating_sub(SPARES);
            spares.drain(..surplus).collect()
        };
        drop(surplus);
    }

    /// Sends `order` to a process started ahead for `limits`; `None` when
    /// none waits or the order does not fit (the command is then cloned
    /// the ordinary way).
    pub(super) fn start_prestarted(
        &self,
        order: &Order,
        limits: &CgroupLimits,
    ) -> Option<Result<SandboxedChild, SandboxError>> {
        if !self.config.spare_leaf || !order.fits_inbox() {
            return None;
        }
        let Spare {
            limits: spare_limits,
            ready,
            leaf,
        } = self.take_spare(|s| s.limits == *limits && s.ready.is_some())?;
        let ready = ready?;
        let started = Instant::now();
        if !ready.send(order) {
            // It died waiting; its leaf can still serve a cold spawn.
            drop(ready);
            lock(&self.spares).push(Spare {
                limits: spare_limits,
                ready: None,
                leaf,
            });
            return None;
        }
        let (pid, ends) = ready.hand_over()?;
        self.prestarted_spawns.fetch_add(1, Ordering::Relaxed);
        Some(self.finish_spawn(pid, ends, leaf, started))
    }

    /// Starts a process in `leaf` that does everything ahead of the command
    /// and waits for its order; `None` (logged once) if that fails.
    fn prestart(&self, leaf: &LeafCgroup) -> Option<ReadyChild> {
        let started = self.try_prestart(leaf);
        match started {
            Ok(ready) => Some(ready),
            Err(e) => {
                if !self.prestart_failed.swap(true, Ordering::Relaxed) {
                    tracing::warn!(
                        error = %e,
                        "cannot start a confined process ahead; every spawn clones its own"
                    );
                }
                None
            }
        }
    }

    fn try_prestart(&self, leaf: &LeafCgroup) -> Result<ReadyChild, SandboxError> {
        let (orders, inbox_socket) = seqpacket_pair().map_err(SandboxError::Pipe)?;
        // Room for the order, made before the clone so the child's copy is
        // its own; the parent's is freed once the clone is made.
        let mut buffer = vec![0u8; ORDER_BYTES];
        let mut pointers = vec![std::ptr::null::<c_char>(); ORDER_STRINGS];
        let inbox = Inbox {
            socket: inbox_socket.as_raw_fd(),
            buffer: buffer.as_mut_ptr(),
            buffer_len: buffer.len(),
            pointers: pointers.as_mut_ptr(),
            pointers_len: pointers.len(),
        };
        let steps = rootfs::plan_spawn(&self.config.root_dir, &self.root_spec())?;
        let (pid, ends) = self.clone_confined(leaf, &steps, Launch::Ordered(inbox))?;
        drop((inbox_socket, buffer, pointers));
        let ready = ReadyChild::new(pid, orders, ends);
        if ready.wait_ready(SETUP_TIMEOUT) {
            return Ok(ready);
        }
        // It has failed (the report is in the pipe) or is still stuck.
        Err(
            match ready
                .error_pipe()
                .map(|pipe| read_report_within(pipe, Duration::ZERO))
            {
                Some(Ok(Some((code, errno)))) => stage_error(code, errno),
                Some(Err(e)) => e,
                _ => SandboxError::SetupTimeout(SETUP_TIMEOUT),
            },
        )
    }
}
