//! Persistent worker threads, each owning one slice of environments.
//!
//! A call hands every worker its job and waits for all of them, so the
//! borrowed inputs a job points to outlive its use. With one thread the
//! slices run on the caller's thread instead, with no hand-off at all.

use std::ops::Range;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::thread::JoinHandle;

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

pub struct Worker {
    range: Range<usize>,
    /// Capacity 1: a worker has at most one job outstanding.
    jobs: Option<SyncSender<Job>>,
    replies: Receiver<Reply>,
    thread: Option<JoinHandle<()>>,
}

/// Where the slices run.
pub enum Runner {
    /// On the caller's thread.
    Inline(Vec<(Range<usize>, Box<dyn Slice>)>),
    /// One persistent thread per slice.
    Threads(Vec<Worker>),
}

impl Runner {
    /// Runs `slices` inline when there is one, else on one thread each.
    pub fn new(slices: Vec<(Range<usize>, Box<dyn Slice>)>) -> Result<Runner, EnvError> {
        if slices.len() <= 1 {
            return Ok(Runner::Inline(slices));
        }
        let mut workers = Vec::new();
        for (index, (range, mut slice)) in slices.into_iter().enumerate() {
            let (job_tx, job_rx) = sync_channel::<Job>(1);
            let (reply_tx, reply_rx) = sync_channel::<Reply>(1);
            let thread = std::thread::Builder::new()
                .name(format!("arena-rl-{index}"))
                .spawn(move || {
                    // Ends when the runner drops its sender.
                    while let Ok(job) = job_rx.recv() {
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
        Ok(Runner::Threads(workers))
    }

    /// Hands every slice a job made by `make` and waits for all replies;
    /// the first error wins, after every worker has answered.
    fn all(&mut self, make: impl Fn() -> Job) -> Result<(), EnvError> {
        match self {
            Runner::Inline(slices) => {
                for (_, slice) in slices {
                    run(slice.as_mut(), make())?;
                }
                Ok(())
            }
            Runner::Threads(workers) => {
                let mut sent = Vec::with_capacity(workers.len());
                for worker in workers.iter() {
                    let ok = worker.jobs.as_ref().is_some_and(|j| j.send(make()).is_ok());
                    sent.push(ok);
                }
                let mut result = Ok(());
                for (worker, ok) in workers.iter().zip(sent) {
                    let reply = if ok {
                        worker.replies.recv().unwrap_or_else(|_| Err(stopped()))
                    } else {
                        Err(stopped())
                    };
                    if let (Ok(()), Err(e)) = (&result, reply) {
                        result = Err(e);
                    }
                }
                result
            }
        }
    }

    /// The one slice holding `env` runs `job`.
    fn one(&mut self, env: usize, job: Job) -> Reply {
        match self {
            Runner::Inline(slices) => {
                let (_, slice) = slices
                    .iter_mut()
                    .find(|(r, _)| r.contains(&env))
                    .ok_or(EnvError::Env(env))?;
                run(slice.as_mut(), job)
            }
            Runner::Threads(workers) => {
                let worker = workers
                    .iter()
                    .find(|w| w.range.contains(&env))
                    .ok_or(EnvError::Env(env))?;
                let jobs = worker.jobs.as_ref().ok_or_else(stopped)?;
                jobs.send(job).map_err(|_| stopped())?;
                worker.replies.recv().unwrap_or_else(|_| Err(stopped()))
            }
        }
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

    /// How many threads step the environments (1 when inline).
    pub fn threads(&self) -> usize {
        match self {
            Runner::Inline(_) => 1,
            Runner::Threads(workers) => workers.len(),
        }
    }
}

fn stopped() -> EnvError {
    EnvError::Worker("a worker thread stopped".to_owned())
}

impl Drop for Runner {
    fn drop(&mut self) {
        if let Runner::Threads(workers) = self {
            for worker in workers.iter_mut() {
                worker.jobs.take();
            }
            for worker in workers.iter_mut() {
                if let Some(thread) = worker.thread.take() {
                    // A worker that panicked has nothing left to clean up.
                    let _ = thread.join();
                }
            }
        }
    }
}
