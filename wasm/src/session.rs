//! A guest played turn by turn.
//!
//! The guest is a WASI command: `_start` runs once, for the whole match,
//! reading frames from its stdin and writing replies to its stdout. It runs
//! as a wasmtime async call that this session polls by hand, with no
//! executor: polling runs the guest until it gives control back, and it
//! gives it back in exactly three ways, which are the three ends of a turn.
//!
//! - It completes the line that answers the current frame: the `fd_write`
//!   that completed it waits, unfinished, for the next turn. The fuel used
//!   is read right there, exactly.
//! - It asks for more input when it has read the whole frame without
//!   answering it: the `fd_read` waits for the next turn.
//! - It runs out of fuel: the store is set up so that the turn's budget is
//!   one fuel "yield interval", and wasmtime suspends the guest where it
//!   is. Its computation carries on, with the next turn's fuel, when the
//!   next turn is polled; a line it then writes for the old frame is
//!   dropped.
//!
//! Fuel is set at the start of each turn: `budget` to spend, as the yield
//! interval, plus `refill` (what the next budget is after a dry turn: the
//! allowance, the bank being empty) as the reserve. Running dry spends the
//! budget exactly, and wasmtime moves one interval, capped by the reserve,
//! which is the whole refill, into the active fuel before it yields: the
//! guest resumes with exactly the next turn's budget. When the guest waits
//! in a host call, the call sets the next turn's fuel itself as it
//! resumes. When it was suspended dry, the epoch callback gives it a new
//! reserve (see [`epoch_callback`]); the session triggers that by
//! advancing the engine's epoch just before it resumes the guest. Fuel
//! spent is read in the host call that completes a reply, where it is
//! exact; instructions run past a budget before the next check (at most a
//! basic block) are charged to the next turn. The same callback enforces
//! the wall backstop: a ticker thread advances the epoch every few
//! milliseconds.

use std::collections::VecDeque;
use std::future::Future;
use std::io::Write;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use wasmtime::{
    Engine, Linker, Module, Store, StoreContextMut, StoreLimits, StoreLimitsBuilder, Trap,
    UpdateDeadline,
};

use crate::config::HostLimits;
use crate::wasi;

/// How often the ticker advances the epoch: the wall backstop's resolution.
pub const EPOCH_TICK: Duration = Duration::from_millis(5);

/// How one turn ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TurnEnd {
    /// The line answering this turn's frame (without its newline), the fuel
    /// spent on the turn, and the lines written since the previous turn that
    /// answered nothing.
    Reply {
        line: Vec<u8>,
        fuel: u64,
        stray: u32,
    },
    /// The answering line was longer than the line cap.
    Overlong { fuel: u64, stray: u32 },
    /// The guest read all its input and asked for more without answering.
    NoReply { fuel: u64, stray: u32 },
    /// The turn's fuel ran out; the guest is suspended mid-computation.
    Exhausted { fuel: u64 },
    /// The turn's wall time ran out: the guest is finished.
    WallBackstop,
    /// The guest trapped (the message says why): it is finished.
    Trap { message: String },
    /// The guest exited (returned from `_start` or called `proc_exit`).
    Exit { code: i32 },
}

impl TurnEnd {
    /// Whether the guest can play on after this end.
    pub fn is_final(&self) -> bool {
        matches!(
            self,
            TurnEnd::WallBackstop | TurnEnd::Trap { .. } | TurnEnd::Exit { .. }
        )
    }
}

/// The host could not run the guest at all (not the guest's fault).
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    #[error("setting up the guest: {0}")]
    Setup(String),
    #[error("the guest has already finished")]
    Finished,
}

/// A turn-ending event a host call or the epoch callback records.
#[derive(Debug)]
enum Event {
    Reply { line: Vec<u8>, fuel: u64 },
    Overlong { fuel: u64 },
    NoReply { fuel: u64 },
}

/// The guest's state the session and the host calls share.
pub(crate) struct Shared {
    // Stdin: unread bytes, and where each frame ends (absolute offsets).
    input: VecDeque<u8>,
    read_offset: u64,
    frame_ends: VecDeque<u64>,
    frames_read: u64,
    input_closed: bool,
    // Stdout: the line being written.
    line: Vec<u8>,
    line_overlong: bool,
    line_cap: usize,
    // The turn.
    turn: u64,
    budget: u64,
    refill: u64,
    /// Fuel spent this turn is `turn_total` minus the store's fuel.
    turn_total: u64,
    /// The guest ran dry and its reserve for this turn is not set yet.
    needs_reset: bool,
    answered: bool,
    /// The newest frame a line has answered (late answers included).
    last_answered: u64,
    stray: u32,
    event: Option<Event>,
    wall_deadline: Instant,
    wall_breached: bool,
    /// Seeded bytes for `random_get`.
    rng: u64,
    stderr: Box<dyn Write + Send>,
}

impl Shared {
    /// Bytes the guest may read now, at most `max`.
    pub(crate) fn peek_input(&self, max: usize) -> Vec<u8> {
        self.input.iter().take(max).copied().collect()
    }

    pub(crate) fn has_input(&self) -> bool {
        !self.input.is_empty()
    }

    pub(crate) fn input_closed(&self) -> bool {
        self.input_closed
    }

    /// The guest took `n` bytes of input.
    pub(crate) fn consume_input(&mut self, n: usize) {
        let n = n.min(self.input.len());
        self.input.drain(..n);
        self.read_offset += n as u64;
        while self
            .frame_ends
            .front()
            .is_some_and(|&end| end <= self.read_offset)
        {
            self.frame_ends.pop_front();
            self.frames_read += 1;
        }
    }

    /// Takes what the guest wrote to stdout, given the fuel the store has
    /// left now; true when a line answered this turn's frame (the guest
    /// must then wait for the next turn).
    pub(crate) fn write_output(&mut self, bytes: &[u8], fuel_left: u64) -> bool {
        let mut answered_now = false;
        for chunk in bytes.split_inclusive(|&b| b == b'\n') {
            let (body, complete) = match chunk.strip_suffix(b"\n") {
                Some(body) => (body, true),
                None => (chunk, false),
            };
            if !self.line_overlong {
                if self.line.len() + body.len() > self.line_cap {
                    self.line_overlong = true;
                    self.line.clear();
                } else {
                    self.line.extend_from_slice(body);
                }
            }
            if complete {
                let line = std::mem::take(&mut self.line);
                let overlong = std::mem::replace(&mut self.line_overlong, false);
                answered_now |= self.finish_line(line, overlong, fuel_left);
            }
        }
        answered_now
    }

    /// Accounts one complete line. It answers the last frame the guest has
    /// read: if that is the current frame it is the reply; if an older
    /// frame that has no answer yet, a late answer (dropped); if a frame
    /// already answered, or no frame at all, a line nobody asked for.
    fn finish_line(&mut self, line: Vec<u8>, overlong: bool, fuel_left: u64) -> bool {
        let frame = self.frames_read;
        if frame == 0 || frame <= self.last_answered {
            self.stray += 1;
            return false;
        }
        self.last_answered = frame;
        if frame < self.turn {
            return false;
        }
        self.answered = true;
        let fuel = self.turn_total.saturating_sub(fuel_left);
        self.event = Some(if overlong {
            Event::Overlong { fuel }
        } else {
            Event::Reply { line, fuel }
        });
        true
    }

    /// The guest wants input and there is none: unless it answered, the
    /// turn ends unanswered.
    pub(crate) fn wait_for_input(&mut self, fuel_left: u64) {
        if !self.answered && self.event.is_none() {
            self.answered = true;
            let fuel = self.turn_total.saturating_sub(fuel_left);
            self.event = Some(Event::NoReply { fuel });
        }
    }

    pub(crate) fn stderr(&mut self) -> &mut (dyn Write + Send) {
        &mut *self.stderr
    }

    /// Fills `buf` from the seeded generator (splitmix64).
    pub(crate) fn random_bytes(&mut self, buf: &mut [u8]) {
        for chunk in buf.chunks_mut(8) {
            self.rng = self.rng.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = self.rng;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^= z >> 31;
            chunk.copy_from_slice(&z.to_le_bytes()[..chunk.len()]);
        }
    }
}

pub(crate) type SharedRef = Arc<Mutex<Shared>>;

pub(crate) fn lock(shared: &SharedRef) -> MutexGuard<'_, Shared> {
    shared.lock().unwrap_or_else(|p| p.into_inner())
}

/// The store's data.
pub struct Guest {
    pub(crate) shared: SharedRef,
    limits: StoreLimits,
}

/// Waits, inside a host call, until the session starts the next turn, then
/// sets that turn's fuel.
pub(crate) async fn next_turn(caller: &mut wasmtime::Caller<'_, Guest>) -> wasmtime::Result<()> {
    let shared = Arc::clone(&caller.data().shared);
    let turn = lock(&shared).turn;
    NextTurn {
        shared: &shared,
        turn,
    }
    .await;
    let (budget, refill) = {
        let mut s = lock(&shared);
        s.turn_total = s.budget + s.refill;
        s.needs_reset = false;
        (s.budget, s.refill)
    };
    caller.fuel_async_yield_interval(Some(budget.max(1)))?;
    caller.set_fuel(budget + refill)?;
    Ok(())
}

struct NextTurn<'a> {
    shared: &'a SharedRef,
    turn: u64,
}

impl Future for NextTurn<'_> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<()> {
        // The session polls again only once it has started a turn.
        if lock(self.shared).turn > self.turn {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    }
}

/// The guest's run: `_start`, as one future owning its store.
type Run = Pin<Box<dyn Future<Output = wasmtime::Result<()>> + Send>>;

/// Why the guest's run ended early on purpose.
#[derive(Debug)]
pub(crate) struct GuestExit(pub(crate) i32);

impl std::fmt::Display for GuestExit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the guest exited with status {}", self.0)
    }
}

impl std::error::Error for GuestExit {}

/// A guest, from instantiation to its end.
pub struct Session {
    engine: Engine,
    shared: SharedRef,
    /// Before the first turn: what the run is made of.
    pending_start: Option<(Store<Guest>, Linker<Guest>, Module)>,
    run: Option<Run>,
    /// The last turn ended with the guest dry.
    dry: bool,
    finished: bool,
    _ticker: Ticker,
}

impl Session {
    /// A guest for `module` (compiled by `engine`), its stderr into `stderr`,
    /// its `random_get` seeded by `seed`. Nothing runs until the first turn.
    pub fn new(
        engine: &Engine,
        module: Module,
        limits: &HostLimits,
        seed: u64,
        stderr: Box<dyn Write + Send>,
    ) -> Result<Session, SessionError> {
        let shared = Arc::new(Mutex::new(Shared {
            input: VecDeque::new(),
            read_offset: 0,
            frame_ends: VecDeque::new(),
            frames_read: 0,
            input_closed: false,
            line: Vec::new(),
            line_overlong: false,
            line_cap: limits.line_cap,
            turn: 0,
            budget: 0,
            refill: 0,
            turn_total: 0,
            needs_reset: false,
            answered: false,
            last_answered: 0,
            stray: 0,
            event: None,
            wall_deadline: Instant::now(),
            wall_breached: false,
            rng: seed,
            stderr,
        }));
        let store_limits = StoreLimitsBuilder::new()
            .memory_size(limits.memory_bytes)
            .table_elements(limits.table_elements)
            .instances(1)
            .memories(1)
            .tables(4)
            .build();
        let mut store = Store::new(
            engine,
            Guest {
                shared: Arc::clone(&shared),
                limits: store_limits,
            },
        );
        store.limiter(|guest| &mut guest.limits);
        store.epoch_deadline_callback(epoch_callback);
        store.set_epoch_deadline(1);
        let mut linker = Linker::new(engine);
        wasi::add_to_linker(&mut linker, &module)
            .map_err(|e| SessionError::Setup(format!("{e:#}")))?;
        Ok(Session {
            engine: engine.clone(),
            shared,
            pending_start: Some((store, linker, module)),
            run: None,
            dry: false,
            finished: false,
            _ticker: Ticker::start(engine.clone()),
        })
    }

    /// Plays one turn: `frame` becomes readable on the guest's stdin, and
    /// the guest may spend `budget` fuel and `wall` time on its answer.
    /// `refill` is what the next turn's budget will be if this one runs
    /// dry (the allowance, as the bank is then empty).
    pub fn turn(
        &mut self,
        frame: &[u8],
        budget: u64,
        refill: u64,
        wall: Duration,
    ) -> Result<TurnEnd, SessionError> {
        if self.finished {
            return Err(SessionError::Finished);
        }
        let refill = refill.max(1);
        let budget = {
            let mut s = lock(&self.shared);
            // A guest that ran dry resumes with its previous refill as its
            // active fuel: that is this turn's budget, whatever was asked.
            let budget = if self.dry { s.refill } else { budget.max(1) };
            s.turn += 1;
            s.input.extend(frame);
            let end = s.read_offset + s.input.len() as u64;
            s.frame_ends.push_back(end);
            s.budget = budget;
            s.refill = refill;
            s.answered = false;
            s.stray = 0;
            s.event = None;
            s.wall_deadline = Instant::now() + wall;
            if self.dry {
                s.needs_reset = true;
                s.turn_total = budget + refill;
            }
            budget
        };
        if self.dry {
            // The guest's next loop or call runs the epoch callback, which
            // gives it this turn's reserve.
            self.engine.increment_epoch();
        }
        if let Some((store, linker, module)) = self.pending_start.take() {
            self.run = Some(start(store, linker, module, budget, refill, &self.shared)?);
        }
        let Some(run) = self.run.as_mut() else {
            return Err(SessionError::Finished);
        };
        let mut context = Context::from_waker(Waker::noop());
        // One poll runs the guest until it gives control back: a turn's end.
        match run.as_mut().poll(&mut context) {
            Poll::Ready(result) => {
                self.finished = true;
                self.run = None;
                Ok(self.ended(result))
            }
            Poll::Pending => {
                let mut s = lock(&self.shared);
                let stray = s.stray;
                let end = match s.event.take() {
                    Some(Event::Reply { line, fuel }) => TurnEnd::Reply { line, fuel, stray },
                    Some(Event::Overlong { fuel }) => TurnEnd::Overlong { fuel, stray },
                    Some(Event::NoReply { fuel }) => TurnEnd::NoReply { fuel, stray },
                    // A fuel yield: the budget is spent.
                    None => TurnEnd::Exhausted { fuel: budget },
                };
                self.dry = matches!(end, TurnEnd::Exhausted { .. });
                Ok(end)
            }
        }
    }

    /// The game is over for the guest: its stdin reaches end of file. It is
    /// not run again; dropping the session frees it.
    pub fn close_input(&mut self) {
        lock(&self.shared).input_closed = true;
    }

    fn ended(&self, result: wasmtime::Result<()>) -> TurnEnd {
        let error = match result {
            Ok(()) => return TurnEnd::Exit { code: 0 },
            Err(error) => error,
        };
        if let Some(GuestExit(code)) = error.downcast_ref::<GuestExit>() {
            return TurnEnd::Exit { code: *code };
        }
        if lock(&self.shared).wall_breached {
            return TurnEnd::WallBackstop;
        }
        let message = match error.downcast_ref::<Trap>() {
            Some(Trap::OutOfFuel) => {
                "ran out of fuel before the host could suspend it (a very long stretch of code \
                 without a loop or call)"
                    .to_owned()
            }
            Some(trap) => format!("{trap}: {error:?}"),
            None => format!("{error:#}"),
        };
        TurnEnd::Trap { message }
    }
}

/// Instantiates the guest and starts `_start`, with the first turn's fuel.
fn start(
    mut store: Store<Guest>,
    linker: Linker<Guest>,
    module: Module,
    budget: u64,
    refill: u64,
    shared: &SharedRef,
) -> Result<Run, SessionError> {
    let setup = |e: wasmtime::Error| SessionError::Setup(format!("{e:#}"));
    store
        .fuel_async_yield_interval(Some(budget))
        .map_err(setup)?;
    store.set_fuel(budget + refill).map_err(setup)?;
    lock(shared).turn_total = budget + refill;
    Ok(Box::pin(async move {
        let instance = linker.instantiate_async(&mut store, &module).await?;
        let start = instance.get_typed_func::<(), ()>(&mut store, "_start")?;
        start.call_async(&mut store, ()).await
    }))
}

/// Runs whenever the guest passes an epoch check after the epoch advanced:
/// the wall backstop, and the reserve of a turn that began with the guest
/// dry.
///
/// A dry guest resumes with exactly its new budget as its active fuel (see
/// [`Session::turn`]) and no reserve, so running dry again would trap. The
/// callback gives it the reserve a running-dry needs, and a yield interval
/// no smaller, so that running dry again refills exactly one budget and
/// yields. It cannot set the active fuel itself: compiled code keeps that
/// in a register across the epoch check and writes it back over whatever
/// the callback stored, which is also why only the reserve is relied on.
fn epoch_callback(mut store: StoreContextMut<'_, Guest>) -> wasmtime::Result<UpdateDeadline> {
    let shared = Arc::clone(&store.data().shared);
    let mut s = lock(&shared);
    if Instant::now() >= s.wall_deadline {
        s.wall_breached = true;
        return Err(wasmtime::Error::msg(
            "the turn's wall-clock backstop ran out",
        ));
    }
    if s.needs_reset {
        s.needs_reset = false;
        let refill = s.refill;
        drop(s);
        store.fuel_async_yield_interval(Some(refill))?;
        // The active part of this is overwritten; the reserve stays.
        store.set_fuel(refill + refill)?;
    }
    Ok(UpdateDeadline::Continue(1))
}

/// Advances the engine's epoch every [`EPOCH_TICK`] until dropped.
struct Ticker {
    stop: Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Ticker {
    fn start(engine: Engine) -> Ticker {
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let thread = std::thread::Builder::new()
            .name("wasm-epoch".to_owned())
            .spawn(move || {
                while !flag.load(std::sync::atomic::Ordering::Relaxed) {
                    std::thread::sleep(EPOCH_TICK);
                    engine.increment_epoch();
                }
            })
            .ok();
        Ticker { stop, thread }
    }
}

impl Drop for Ticker {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
