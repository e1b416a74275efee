//! The launcher a leased match plays through: the worker's launcher with
//! two things added for the daemon.
//!
//! * A seat whose submission arrived but is not a runnable bot (an archive
//!   with a special file, a path too long, a link climbing out) fails its
//!   build with the reason, so the runner forfeits it `build_failed` by the
//!   same path as a failing `build.sh`: the entrant's fault is a result,
//!   never a requeue.
//! * The match can be abandoned at once when its lease is lost: every bot
//!   it started is killed (its whole sandbox, so the runner sees the seats
//!   end and returns, freeing their cores and cgroups), a build in progress
//!   is stopped, and nothing more is started.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use crate::launcher::{
    BotExit, BotHandle, BotSpec, BuildReport, LaunchError, LaunchedBot, Launcher,
};

/// A bot's handle, held by its seat and (weakly) by [`Abandon`].
type SharedHandle = Arc<Mutex<Box<dyn BotHandle>>>;
type WeakHandle = Weak<Mutex<Box<dyn BotHandle>>>;

/// Ends a match's bots from another thread.
#[derive(Default)]
pub struct Abandon {
    abandoned: AtomicBool,
    /// The bots started so far; dead ones are dropped by their seat.
    bots: Mutex<Vec<WeakHandle>>,
}

impl Abandon {
    /// Kills every bot of the match and refuses to start more. Blocks on
    /// the sandbox's teardown writes: call it off the async runtime.
    pub fn abandon(&self) {
        self.abandoned.store(true, Ordering::SeqCst);
        let bots: Vec<_> = lock(&self.bots).iter().filter_map(Weak::upgrade).collect();
        for bot in bots {
            if let Err(e) = lock(&bot).kill() {
                tracing::warn!(error = %e, "cannot kill a bot of an abandoned match");
            }
        }
    }

    pub fn is_abandoned(&self) -> bool {
        self.abandoned.load(Ordering::SeqCst)
    }
}

/// See the module documentation.
pub struct LeasedLauncher {
    inner: Arc<dyn Launcher + Send + Sync>,
    /// Seats whose submission is refused: placeholder directory → why.
    refused: BTreeMap<PathBuf, String>,
    abandon: Arc<Abandon>,
}

impl LeasedLauncher {
    pub fn new(
        inner: Arc<dyn Launcher + Send + Sync>,
        refused: BTreeMap<PathBuf, String>,
        abandon: Arc<Abandon>,
    ) -> Self {
        Self {
            inner,
            refused,
            abandon,
        }
    }

    fn check(&self, bot: &BotSpec) -> Result<(), LaunchError> {
        if self.abandon.is_abandoned() {
            return Err(LaunchError::io(
                "play",
                &bot.dir,
                std::io::Error::other("the match was abandoned: its lease is lost"),
            ));
        }
        Ok(())
    }
}

impl LeasedLauncher {
    /// Registers a started seat so an abandoned lease kills it.
    fn track(&self, launched: LaunchedBot) -> LaunchedBot {
        let shared: SharedHandle = Arc::new(Mutex::new(launched.handle));
        lock(&self.abandon.bots).push(Arc::downgrade(&shared));
        // Abandoned while it started: it goes too.
        if self.abandon.is_abandoned() {
            let _ = lock(&shared).kill();
        }
        LaunchedBot {
            stdin: launched.stdin,
            stdout: launched.stdout,
            stderr: launched.stderr,
            handle: Box::new(Shared(shared)),
        }
    }
}

impl Launcher for LeasedLauncher {
    fn launch(&self, bot: &BotSpec, seat: usize) -> Result<LaunchedBot, LaunchError> {
        self.check(bot)?;
        let launched = self.inner.launch(bot, seat)?;
        Ok(self.track(launched))
    }

    fn launch_program(
        &self,
        bot: &BotSpec,
        seat: usize,
        program: &std::path::Path,
        args: &[std::ffi::OsString],
    ) -> Result<LaunchedBot, LaunchError> {
        self.check(bot)?;
        let launched = self.inner.launch_program(bot, seat, program, args)?;
        Ok(self.track(launched))
    }

    fn build(&self, bot: &BotSpec, wall_limit: Duration) -> Result<BuildReport, LaunchError> {
        if let Some(reason) = self.refused.get(&bot.dir) {
            return Ok(BuildReport::failed(
                reason.clone(),
                std::time::Instant::now(),
            ));
        }
        self.check(bot)?;
        let abandon = Arc::clone(&self.abandon);
        let report = self
            .inner
            .build_cancellable(bot, wall_limit, &move || abandon.is_abandoned())?;
        self.check(bot)?;
        Ok(report)
    }
}

/// A bot handle the seat and [`Abandon`] share.
struct Shared(SharedHandle);

impl BotHandle for Shared {
    fn try_wait(&mut self) -> std::io::Result<Option<BotExit>> {
        lock(&self.0).try_wait()
    }

    fn kill(&mut self) -> std::io::Result<()> {
        lock(&self.0).kill()
    }

    // The seat calls this only after `kill`, so holding the lock while the
    // process is reaped never keeps `Abandon` waiting for long.
    fn wait(&mut self) -> std::io::Result<BotExit> {
        lock(&self.0).wait()
    }
}

fn lock<T: ?Sized>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}
