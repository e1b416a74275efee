//! The spawner thread: every clone happens on this one thread, which the
//! sandbox owns for its lifetime (see [`Sandbox`](super::Sandbox) for why).
//! It builds the shared root once, then serves [`Job`]s: spawns, refills of
//! the spare pool, and dropping it.

use std::sync::atomic::Ordering;
use std::sync::{Arc, mpsc};
use std::thread::JoinHandle;
use std::time::Instant;

use super::Policy;
use super::clone::{read_report, stage_error};
use crate::cgroup::{CgroupLimits, LeafCgroup};
use crate::child::{self, Launch};
use crate::error::SandboxError;
use crate::handle::{Parts, SandboxedChild};
use crate::ready::{self, ChildEnds, Order};
use crate::rootfs;

/// What the spawner thread does.
pub(super) enum Job {
    /// One spawn, and where its answer goes.
    Spawn(
        SpawnRequest,
        mpsc::SyncSender<Result<SandboxedChild, SandboxError>>,
    ),
    /// Keep a spare for these limits, now that one was used.
    Refill(CgroupLimits),
    /// Drop every spare, after every job sent before this one.
    DropSpares(mpsc::SyncSender<()>),
}

/// A spawn as the spawner thread needs it: the command encoded once, the
/// limits of its leaf, and the leaf's label.
pub(super) struct SpawnRequest {
    pub(super) order: Order,
    pub(super) limits: CgroupLimits,
    pub(super) label: String,
}

/// Starts the spawner thread for `policy`; the sender of its jobs, which
/// stops it when dropped.
pub(super) fn start(
    policy: &Arc<Policy>,
) -> Result<(mpsc::Sender<Job>, JoinHandle<()>), SandboxError> {
    let (jobs, requests) = mpsc::channel::<Job>();
    let shared = Arc::clone(policy);
    let spawner = std::thread::Builder::new()
        .name("arena-spawner".to_owned())
        .spawn(move || serve(&shared, requests))
        .map_err(SandboxError::SpawnerThread)?;
    Ok((jobs, spawner))
}

/// The spawner thread's loop: prepares the shared root, serves every job
/// until the sandbox drops its sender, then drops the spares.
fn serve(shared: &Policy, requests: mpsc::Receiver<Job>) {
    let template = shared.prepare_template();
    for job in requests {
        match job {
            Job::Spawn(request, reply) => {
                let spawned = shared.spawn_on_this_thread(&request, template);
                // The caller may have given up waiting; nothing to do then.
                let _ = reply.send(spawned);
                // Made while the caller goes on with its child.
                if shared.config.spare_leaf {
                    shared.keep_spare(request.limits, template);
                }
            }
            Job::Refill(limits) => shared.keep_spare(limits, template),
            Job::DropSpares(done) => {
                shared.drop_spares();
                let _ = done.send(());
            }
        }
    }
    shared.drop_spares();
}

impl Policy {
    /// Builds the shared part of every root once, on the spawner thread
    /// (see [`child::prepare_template`]), so a spawn only mounts its own
    /// directory, `/tmp`, `/dev/shm` and `/proc`. Whether it worked; if not,
    /// every child builds its whole root, as slowly as before.
    fn prepare_template(&self) -> bool {
        let steps = match rootfs::plan_template(&self.config.root_dir, &self.root_spec()) {
            Ok(steps) => steps,
            Err(e) => {
                tracing::warn!(error = %e, "cannot plan the shared root; every spawn builds its own");
                return false;
            }
        };
        // SAFETY: this is the spawner thread, which owns its mount namespace.
        match unsafe { child::prepare_template(&steps) } {
            Ok(()) => true,
            Err((stage, errno)) => {
                tracing::warn!(
                    ?stage,
                    error = %std::io::Error::from_raw_os_error(errno),
                    "cannot prepare the shared root; every spawn builds its own"
                );
                false
            }
        }
    }

    /// A spawn on the spawner thread: in a process started ahead if one
    /// waits with these limits, else cloned here into a spare or fresh leaf.
    fn spawn_on_this_thread(
        &self,
        request: &SpawnRequest,
        template: bool,
    ) -> Result<SandboxedChild, SandboxError> {
        let limits = &request.limits;
        if let Some(spawned) = self.start_prestarted(&request.order, limits) {
            return spawned;
        }
        let leaf = match self.take_spare(|s| s.limits == *limits && s.ready.is_none()) {
            Some(spare) => spare.leaf,
            None => self.new_leaf(&request.label, limits)?,
        };
        self.spawn_here(&request.order, leaf, template)
    }

    /// Spawns `order` on the calling thread (the spawner thread) into
    /// `leaf`, on the shared root when `template` says it is in place.
    fn spawn_here(
        &self,
        order: &Order,
        leaf: LeafCgroup,
        template: bool,
    ) -> Result<SandboxedChild, SandboxError> {
        let spec = self.root_spec();
        let steps = if template {
            rootfs::plan_spawn(&self.config.root_dir, &spec)?
        } else {
            rootfs::plan(&self.config.root_dir, &spec)?
        };
        let mut pointers = vec![std::ptr::null(); order.pointers_needed()];
        let program =
            ready::decode(order.as_bytes(), &mut pointers).ok_or(SandboxError::UnreadableOrder)?;
        self.cold_spawns.fetch_add(1, Ordering::Relaxed);
        let started = Instant::now();
        let (pid, ends) = self.clone_confined(&leaf, &steps, Launch::Now(program))?;
        self.finish_spawn(pid, ends, leaf, started)
    }

    /// The handle of a child whose setup is under way, once its setup
    /// report says the bot exec'd.
    pub(super) fn finish_spawn(
        &self,
        pid: libc::pid_t,
        ends: ChildEnds,
        leaf: LeafCgroup,
        started: Instant,
    ) -> Result<SandboxedChild, SandboxError> {
        let ChildEnds {
            stdio,
            error,
            report,
            parent_alive,
        } = ends;
        let mut child = SandboxedChild::new(Parts {
            pid,
            stdio,
            cgroup: leaf,
            report,
            started,
            parent_alive,
        });
        match read_report(&error) {
            Ok(None) => Ok(child),
            Ok(Some((code, errno))) => {
                child.kill_and_reap();
                Err(stage_error(code, errno))
            }
            Err(e) => {
                child.kill_and_reap();
                Err(e)
            }
        }
    }
}
