//! Persistent worker threads, each owning one slice of environments.
//!
//! A call hands every worker its job, runs the first slice on the caller's
//! thread, and waits for all of them, so the borrowed inputs a job points to
//! outlive its use.

use std::ops::Range;
use std::sync::mpsc::{Receiver, RecvError, SyncSender, TryRecvError, sync_channel};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::slice::{Query, Slice};
use crate::vec_env::{Actions, EnvError};

/// A caller's actions as raw parts, to cross to a worker for one call.
#[derive(Clone, Copy)]
struct RawActions {
    flat: bool,
    ptr: *const i64,
    len: usize,
    seats: usize,
}

// SAFETY: the pointer is read only while the caller that owns the values
// waits for every worker's reply (see `Runner::step`).
unsafe impl Send for RawActions {}

impl RawActions {
    fn of(actions: &Actions<'_>) -> RawActions {
        let (flat, values, seats) = match *actions {
            Actions::Fields { values, seats } => (false, values, seats),
            Actions::Flat { values, seats } => (true, values, seats),
        };
        RawActions {
            flat,
            ptr: values.as_ptr(),
            len: values.len(),
            seats,
        }
    }

    /// # Safety
    ///
    /// The values this was made from must still be alive and unchanged.
    unsafe fn get<'a>(self) -> Actions<'a> {
        // SAFETY: by the caller's contract.
        let values = unsafe { std::slice::from_raw_parts(self.ptr, self.len) };
        if self.flat {
            Actions::Flat {
                values,
                seats: self.seats,
            }
        } else {
            Actions::Fields {
                values,
                seats: self.seats,
            }
        }
    }
}

/// How long a thread waiting for a job or a reply keeps asking before it
/// sleeps. Waking a sleeping thread on another core costs tens of
/// microseconds on small virtual machines, a good part of a step of a few
/// hundred boards; a training loop calls again within microseconds, so the
/// worker is still awake to take the next job. It yields while it asks, so
/// threads beyond the cores still get theirs, and sleeps past this.
const ASK_BEFORE_SLEEPING: Duration = Duration::from_micros(200);

/// The next message on `rx`: asked for until [`ASK_BEFORE_SLEEPING`] has
/// passed, then waited for.
fn receive<T>(rx: &Receiver<T>) -> Result<T, RecvError> {
    let start = Instant::now();
    loop {
        match rx.try_recv() {
            Ok(message) => return Ok(message),
            Err(TryRecvError::Disconnected) => return Err(RecvError),
            Err(TryRecvError::Empty) if start.elapsed() < ASK_BEFORE_SLEEPING => {
                std::thread::yield_now();
            }
            Err(TryRecvError::Empty) => return rx.recv(),
        }
    }
}

/// One call's work for a slice.
enum Job {
    Reset(Option<u64>),
    Step(RawActions),
    Query(usize, Query),
    Load(usize, Vec<u8>),
}

type Reply = Result<Vec<u8>, EnvError>;

fn run(slice: &mut dyn Slice, job: Job) -> Reply {
    match job {
        Job::Reset(seed) => slice.reset(seed).map(|()| Vec::new()),
        // SAFETY: `Runner::step` waits for this reply before its borrowed
        // actions go out of scope.
        Job::Step(actions) => slice.step(&unsafe { actions.get() }).map(|()| Vec::new()),
        Job::Query(env, query) => slice.query(env, &query),
        Job::Load(env, state) => slice.load(env, &state).map(|()| Vec::new()),
    }
}

struct Worker {
    range: Range<usize>,
    /// Capacity 1: a worker has at most one job outstanding.
    jobs: Option<SyncSender<Job>>,
    replies: Receiver<Reply>,
    thread: Option<JoinHandle<()>>,
}

/// Where the slices run: the first on the caller's thread, which would
/// otherwise only wait, and each other one on a persistent thread of its
/// own. With one slice nothing is handed off at all; with two, one
/// hand-off per call (cross-core wake-ups are the costly part of a call
/// on small machines).
pub struct Runner {
    local: (Range<usize>, Box<dyn Slice>),
    workers: Vec<Worker>,
}

impl Runner {
    /// Runs the first of `slices` on the caller's thread and the others on
    /// one thread each.
    pub fn new(slices: Vec<(Range<usize>, Box<dyn Slice>)>) -> Result<Runner, EnvError> {
        let mut slices = slices.into_iter();
        let local = slices
            .next()
            .ok_or_else(|| EnvError::Config("no environments to run".to_owned()))?;
        let mut workers = Vec::new();
        for (index, (range, mut slice)) in slices.enumerate() {
            let (job_tx, job_rx) = sync_channel::<Job>(1);
            let (reply_tx, reply_rx) = sync_channel::<Reply>(1);
            let thread = std::thread::Builder::new()
                .name(format!("arena-rl-{}", index + 1))
                .spawn(move || {
                    // Ends when the runner drops its sender.
                    while let Ok(job) = receive(&job_rx) {
                        if reply_tx.send(run(slice.as_mut(), job)).is_err() {
                            break;
                        }
                    }
                })
                .map_err(|e| EnvError::Worker(format!("cannot start a worker thread: {e}")))?;
            workers.push(Worker {
                range,
                jobs: Some(job_tx),
                replies: reply_rx,
                thread: Some(thread),
            });
        }
        Ok(Runner { local, workers })
    }

    /// Hands every worker a job made by `make`, runs one on the caller's
    /// slice meanwhile, and waits for all replies; the first error wins,
    /// after every worker has answered.
    fn all(&mut self, make: impl Fn() -> Job) -> Result<(), EnvError> {
        let sent: Vec<bool> = self
            .workers
            .iter()
            .map(|w| w.jobs.as_ref().is_some_and(|j| j.send(make()).is_ok()))
            .collect();
        let mut result = run(self.local.1.as_mut(), make()).map(|_| ());
        for (worker, ok) in self.workers.iter().zip(sent) {
            let reply = if ok {
                receive(&worker.replies).unwrap_or_else(|_| Err(stopped()))
            } else {
                Err(stopped())
            };
            if let (Ok(()), Err(e)) = (&result, reply) {
                result = Err(e);
            }
        }
        result
    }

    /// The one slice holding `env` runs `job`.
    fn one(&mut self, env: usize, job: Job) -> Reply {
        if self.local.0.contains(&env) {
            return run(self.local.1.as_mut(), job);
        }
        let worker = self
            .workers
            .iter()
            .find(|w| w.range.contains(&env))
            .ok_or(EnvError::Env(env))?;
        let jobs = worker.jobs.as_ref().ok_or_else(stopped)?;
        jobs.send(job).map_err(|_| stopped())?;
        receive(&worker.replies).unwrap_or_else(|_| Err(stopped()))
    }

    pub fn reset(&mut self, seed: Option<u64>) -> Result<(), EnvError> {
        self.all(|| Job::Reset(seed))
    }

    pub fn step(&mut self, actions: &Actions<'_>) -> Result<(), EnvError> {
        let raw = RawActions::of(actions);
        // `all` returns only after every worker replied: `actions` is
        // borrowed for the whole time any worker reads it.
        self.all(|| Job::Step(raw))
    }

    pub fn query(&mut self, env: usize, query: Query) -> Reply {
        self.one(env, Job::Query(env, query))
    }

    pub fn load(&mut self, env: usize, state: Vec<u8>) -> Result<(), EnvError> {
        self.one(env, Job::Load(env, state)).map(|_| ())
    }

    /// How many threads step the environments, the caller's included.
    pub fn threads(&self) -> usize {
        1 + self.workers.len()
    }
}

fn stopped() -> EnvError {
    EnvError::Worker("a worker thread stopped".to_owned())
}

impl Drop for Runner {
    fn drop(&mut self) {
        for worker in &mut self.workers {
            worker.jobs.take();
        }
        for worker in &mut self.workers {
            if let Some(thread) = worker.thread.take() {
                // A worker that panicked has nothing left to clean up.
                let _ = thread.join();
            }
        }
    }
}
