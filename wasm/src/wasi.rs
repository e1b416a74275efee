//! The WASI preview 1 the guest sees: its three standard streams and
//! nothing of the machine.
//!
//! - fd 0 reads the frames, fd 1 takes the replies, fd 2 goes to the bot's
//!   log. No other descriptor exists and nothing is preopened, so no path
//!   can be opened: the file system is not there.
//! - Clocks answer fixed values (realtime: 2000-01-01T00:00:00Z; the
//!   monotonic and CPU clocks: zero), and `random_get` bytes come from a
//!   generator seeded by the match, so nothing of the host's time or
//!   entropy reaches the guest and a match replays bit for bit.
//! - `poll_oneoff` reports every subscription ready at once (a sleep
//!   returns immediately; time does not pass); `sched_yield` returns.
//! - Reading with nothing left to read, after answering, waits for the
//!   next frame; it is the only call that waits, and it costs no fuel.
//! - Every other WASI function answers ENOSYS.

use wasmtime::{Caller, Extern, Linker, Memory, Module, Val};

use crate::session::{Guest, GuestExit, lock, next_turn};

/// The import module of WASI preview 1.
pub const MODULE: &str = "wasi_snapshot_preview1";

/// Value kinds of WASI signatures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    I32,
    I64,
    Other,
}

use Kind::{I32, I64};

const ERRNO_SUCCESS: i32 = 0;
const ERRNO_BADF: i32 = 8;
const ERRNO_FAULT: i32 = 21;
const ERRNO_INVAL: i32 = 28;
const ERRNO_NOSYS: i32 = 52;
const ERRNO_SPIPE: i32 = 70;

/// Realtime clock's fixed answer, in nanoseconds since the Unix epoch.
pub const FIXED_REALTIME_NS: u64 = 946_684_800_000_000_000;

/// The functions the host implements, with their signatures.
const IMPLEMENTED: &[(&str, &[Kind], &[Kind])] = &[
    ("args_get", &[I32, I32], &[I32]),
    ("args_sizes_get", &[I32, I32], &[I32]),
    ("environ_get", &[I32, I32], &[I32]),
    ("environ_sizes_get", &[I32, I32], &[I32]),
    ("clock_res_get", &[I32, I32], &[I32]),
    ("clock_time_get", &[I32, I64, I32], &[I32]),
    ("fd_close", &[I32], &[I32]),
    ("fd_fdstat_get", &[I32, I32], &[I32]),
    ("fd_fdstat_set_flags", &[I32, I32], &[I32]),
    ("fd_prestat_get", &[I32, I32], &[I32]),
    ("fd_prestat_dir_name", &[I32, I32, I32], &[I32]),
    ("fd_read", &[I32, I32, I32, I32], &[I32]),
    ("fd_seek", &[I32, I64, I32, I32], &[I32]),
    ("fd_write", &[I32, I32, I32, I32], &[I32]),
    ("poll_oneoff", &[I32, I32, I32, I32], &[I32]),
    ("proc_exit", &[I32], &[]),
    ("random_get", &[I32, I32], &[I32]),
    ("sched_yield", &[], &[I32]),
];

/// The signature of a function the host implements, by name.
pub fn signature(name: &str) -> Option<(&'static [Kind], &'static [Kind])> {
    IMPLEMENTED
        .iter()
        .find(|(n, _, _)| *n == name)
        .map(|(_, params, results)| (*params, *results))
}

/// Defines the host functions for `module`: the implemented ones, and an
/// ENOSYS answer for every other WASI function it imports.
pub fn add_to_linker(linker: &mut Linker<Guest>, module: &Module) -> wasmtime::Result<()> {
    add_args_and_environ(linker)?;
    add_clocks_and_random(linker)?;
    add_fds(linker)?;
    add_proc(linker)?;
    add_unsupported(linker, module)
}

/// The program's arguments (only its name) and an empty environment.
fn add_args_and_environ(linker: &mut Linker<Guest>) -> wasmtime::Result<()> {
    linker.func_wrap(
        MODULE,
        "args_sizes_get",
        |mut c: Caller<'_, Guest>, argc: i32, size: i32| {
            // One argument, the program's name.
            errno(
                write_u32(&mut c, argc, 1)
                    .and_then(|()| write_u32(&mut c, size, ARGV0.len() as u32)),
            )
        },
    )?;
    linker.func_wrap(
        MODULE,
        "args_get",
        |mut c: Caller<'_, Guest>, argv: i32, buf: i32| {
            errno(
                write_u32(&mut c, argv, buf as u32).and_then(|()| write_bytes(&mut c, buf, ARGV0)),
            )
        },
    )?;
    linker.func_wrap(
        MODULE,
        "environ_sizes_get",
        |mut c: Caller<'_, Guest>, n: i32, size: i32| {
            errno(write_u32(&mut c, n, 0).and_then(|()| write_u32(&mut c, size, 0)))
        },
    )?;
    linker.func_wrap(
        MODULE,
        "environ_get",
        |_: Caller<'_, Guest>, _: i32, _: i32| ERRNO_SUCCESS,
    )?;
    Ok(())
}

/// The fixed clocks, the match-seeded `random_get`, and the calls that
/// would wait for time: `poll_oneoff` and `sched_yield`.
fn add_clocks_and_random(linker: &mut Linker<Guest>) -> wasmtime::Result<()> {
    linker.func_wrap(
        MODULE,
        "clock_res_get",
        |mut c: Caller<'_, Guest>, id: i32, out: i32| {
            if !(0..=3).contains(&id) {
                return ERRNO_INVAL;
            }
            errno(write_u64(&mut c, out, 1))
        },
    )?;
    linker.func_wrap(
        MODULE,
        "clock_time_get",
        |mut c: Caller<'_, Guest>, id: i32, _precision: i64, out: i32| {
            let value = match id {
                0 => FIXED_REALTIME_NS,
                1..=3 => 0,
                _ => return ERRNO_INVAL,
            };
            errno(write_u64(&mut c, out, value))
        },
    )?;
    linker.func_wrap(
        MODULE,
        "random_get",
        |mut c: Caller<'_, Guest>, buf: i32, len: i32| {
            let Ok(len) = usize::try_from(len) else {
                return ERRNO_INVAL;
            };
            let mut bytes = vec![0u8; len.min(1 << 20)];
            if bytes.len() < len {
                return ERRNO_INVAL;
            }
            lock(&c.data().shared).random_bytes(&mut bytes);
            errno(write_bytes(&mut c, buf, &bytes))
        },
    )?;
    linker.func_wrap(MODULE, "sched_yield", |_: Caller<'_, Guest>| ERRNO_SUCCESS)?;
    linker.func_wrap(
        MODULE,
        "poll_oneoff",
        |mut c: Caller<'_, Guest>, subs: i32, events: i32, n: i32, nevents: i32| {
            errno(poll_oneoff(&mut c, subs, events, n, nevents))
        },
    )?;
    Ok(())
}

/// The three standard streams: no other descriptor, nothing preopened.
fn add_fds(linker: &mut Linker<Guest>) -> wasmtime::Result<()> {
    linker.func_wrap(MODULE, "fd_close", |_: Caller<'_, Guest>, fd: i32| {
        if is_stdio(fd) {
            ERRNO_SUCCESS
        } else {
            ERRNO_BADF
        }
    })?;
    linker.func_wrap(
        MODULE,
        "fd_fdstat_get",
        |mut c: Caller<'_, Guest>, fd: i32, out: i32| {
            if !is_stdio(fd) {
                return ERRNO_BADF;
            }
            // filetype character_device (2), no flags, every right.
            let mut stat = [0u8; 24];
            stat[0] = 2;
            stat[8..16].copy_from_slice(&u64::MAX.to_le_bytes());
            stat[16..24].copy_from_slice(&u64::MAX.to_le_bytes());
            errno(write_bytes(&mut c, out, &stat))
        },
    )?;
    linker.func_wrap(
        MODULE,
        "fd_fdstat_set_flags",
        |_: Caller<'_, Guest>, fd: i32, _: i32| {
            if is_stdio(fd) {
                ERRNO_NOSYS
            } else {
                ERRNO_BADF
            }
        },
    )?;
    linker.func_wrap(
        MODULE,
        "fd_prestat_get",
        |_: Caller<'_, Guest>, _: i32, _: i32| ERRNO_BADF,
    )?;
    linker.func_wrap(
        MODULE,
        "fd_prestat_dir_name",
        |_: Caller<'_, Guest>, _: i32, _: i32, _: i32| ERRNO_BADF,
    )?;
    linker.func_wrap(
        MODULE,
        "fd_seek",
        |_: Caller<'_, Guest>, fd: i32, _: i64, _: i32, _: i32| {
            if is_stdio(fd) {
                ERRNO_SPIPE
            } else {
                ERRNO_BADF
            }
        },
    )?;
    linker.func_wrap_async(
        MODULE,
        "fd_write",
        |mut c: Caller<'_, Guest>, (fd, iovs, count, written): (i32, i32, i32, i32)| {
            Box::new(async move { fd_write(&mut c, fd, iovs, count, written).await })
        },
    )?;
    linker.func_wrap_async(
        MODULE,
        "fd_read",
        |mut c: Caller<'_, Guest>, (fd, iovs, count, read): (i32, i32, i32, i32)| {
            Box::new(async move { fd_read(&mut c, fd, iovs, count, read).await })
        },
    )?;
    Ok(())
}

/// `proc_exit`: ends the guest with its code.
fn add_proc(linker: &mut Linker<Guest>) -> wasmtime::Result<()> {
    linker.func_wrap(MODULE, "proc_exit", |_: Caller<'_, Guest>, code: i32| {
        Err::<(), _>(wasmtime::Error::new(GuestExit(code)))
    })?;
    Ok(())
}

/// An ENOSYS answer for every WASI function `module` imports that the host
/// does not implement.
fn add_unsupported(linker: &mut Linker<Guest>, module: &Module) -> wasmtime::Result<()> {
    for import in module.imports() {
        if import.module() != MODULE || signature(import.name()).is_some() {
            continue;
        }
        if let Some(ty) = import.ty().func() {
            linker.func_new(MODULE, import.name(), ty.clone(), |_, _, results| {
                if let Some(first) = results.first_mut() {
                    *first = Val::I32(ERRNO_NOSYS);
                }
                Ok(())
            })?;
        }
    }
    Ok(())
}

const ARGV0: &[u8] = b"bot\0";

fn is_stdio(fd: i32) -> bool {
    (0..=2).contains(&fd)
}

/// A guest pointer that does not fit its memory.
struct Fault;

fn errno(result: Result<(), Fault>) -> i32 {
    match result {
        Ok(()) => ERRNO_SUCCESS,
        Err(Fault) => ERRNO_FAULT,
    }
}

fn memory(c: &mut Caller<'_, Guest>) -> Result<Memory, Fault> {
    match c.get_export("memory") {
        Some(Extern::Memory(memory)) => Ok(memory),
        _ => Err(Fault),
    }
}

fn write_bytes(c: &mut Caller<'_, Guest>, at: i32, bytes: &[u8]) -> Result<(), Fault> {
    let memory = memory(c)?;
    memory
        .write(c, at as u32 as usize, bytes)
        .map_err(|_| Fault)
}

fn write_u32(c: &mut Caller<'_, Guest>, at: i32, value: u32) -> Result<(), Fault> {
    write_bytes(c, at, &value.to_le_bytes())
}

fn write_u64(c: &mut Caller<'_, Guest>, at: i32, value: u64) -> Result<(), Fault> {
    write_bytes(c, at, &value.to_le_bytes())
}

fn read_bytes(c: &mut Caller<'_, Guest>, at: u32, len: u32) -> Result<Vec<u8>, Fault> {
    let memory = memory(c)?;
    let mut bytes = vec![0u8; len as usize];
    memory
        .read(&*c, at as usize, &mut bytes)
        .map_err(|_| Fault)?;
    Ok(bytes)
}

/// The (pointer, length) pairs of an iovec array.
fn iovecs(c: &mut Caller<'_, Guest>, iovs: i32, count: i32) -> Result<Vec<(u32, u32)>, Fault> {
    let count = u32::try_from(count).map_err(|_| Fault)?;
    if count > 1024 {
        return Err(Fault);
    }
    let raw = read_bytes(c, iovs as u32, count * 8)?;
    Ok(raw
        .chunks_exact(8)
        .map(|pair| {
            let ptr = u32::from_le_bytes([pair[0], pair[1], pair[2], pair[3]]);
            let len = u32::from_le_bytes([pair[4], pair[5], pair[6], pair[7]]);
            (ptr, len)
        })
        .collect())
}

/// At most this much of one write is taken at once.
const MAX_WRITE: u32 = 1 << 20;

async fn fd_write(
    c: &mut Caller<'_, Guest>,
    fd: i32,
    iovs: i32,
    count: i32,
    written: i32,
) -> wasmtime::Result<i32> {
    if fd != 1 && fd != 2 {
        return Ok(ERRNO_BADF);
    }
    let mut bytes = Vec::new();
    let Ok(vecs) = iovecs(c, iovs, count) else {
        return Ok(ERRNO_FAULT);
    };
    for (ptr, len) in vecs {
        let room = MAX_WRITE.saturating_sub(bytes.len() as u32);
        match read_bytes(c, ptr, len.min(room)) {
            Ok(part) => bytes.extend_from_slice(&part),
            Err(Fault) => return Ok(ERRNO_FAULT),
        }
    }
    if write_u32(c, written, bytes.len() as u32).is_err() {
        return Ok(ERRNO_FAULT);
    }
    let fuel_left = c.get_fuel()?;
    let shared = std::sync::Arc::clone(&c.data().shared);
    if fd == 2 {
        let mut s = lock(&shared);
        // The log is the worker's to cap; a failed write loses log only.
        let _ = s.stderr().write_all(&bytes);
        return Ok(ERRNO_SUCCESS);
    }
    let answered = lock(&shared).write_output(&bytes, fuel_left);
    if answered {
        next_turn(c).await?;
    }
    Ok(ERRNO_SUCCESS)
}

async fn fd_read(
    c: &mut Caller<'_, Guest>,
    fd: i32,
    iovs: i32,
    count: i32,
    read: i32,
) -> wasmtime::Result<i32> {
    if fd != 0 {
        return Ok(ERRNO_BADF);
    }
    let Ok(vecs) = iovecs(c, iovs, count) else {
        return Ok(ERRNO_FAULT);
    };
    let wanted: usize = vecs.iter().map(|(_, len)| *len as usize).sum();
    let shared = std::sync::Arc::clone(&c.data().shared);
    loop {
        let (available, closed) = {
            let s = lock(&shared);
            (s.has_input(), s.input_closed())
        };
        if available || closed || wanted == 0 {
            break;
        }
        let fuel_left = c.get_fuel()?;
        lock(&shared).wait_for_input(fuel_left);
        next_turn(c).await?;
    }
    let bytes = lock(&shared).peek_input(wanted);
    let mut taken = 0usize;
    for (ptr, len) in vecs {
        let part = &bytes[taken..bytes.len().min(taken + len as usize)];
        if part.is_empty() {
            break;
        }
        if write_bytes(c, ptr as i32, part).is_err() {
            return Ok(ERRNO_FAULT);
        }
        taken += part.len();
    }
    if write_u32(c, read, taken as u32).is_err() {
        return Ok(ERRNO_FAULT);
    }
    lock(&shared).consume_input(taken);
    Ok(ERRNO_SUCCESS)
}

/// Every subscription fires at once: clocks as elapsed, streams as ready.
fn poll_oneoff(
    c: &mut Caller<'_, Guest>,
    subs: i32,
    events: i32,
    n: i32,
    nevents: i32,
) -> Result<(), Fault> {
    let n = u32::try_from(n).map_err(|_| Fault)?;
    if n == 0 || n > 1024 {
        return Err(Fault);
    }
    // subscription: userdata u64, tag u8 (0 clock, 1 fd_read, 2 fd_write), ... 48 bytes.
    let raw = read_bytes(c, subs as u32, n * 48)?;
    let mut out = Vec::with_capacity(n as usize * 32);
    for sub in raw.chunks_exact(48) {
        // event: userdata u64, error u16, type u8, pad, fd_readwrite (nbytes u64, flags u16).
        let mut event = [0u8; 32];
        event[0..8].copy_from_slice(&sub[0..8]);
        event[10] = sub[8];
        if sub[8] != 0 {
            event[16..24].copy_from_slice(&1u64.to_le_bytes());
        }
        out.extend_from_slice(&event);
    }
    write_bytes(c, events, &out)?;
    write_u32(c, nevents, n)
}
