//! The long-running services (`arena coordinator`, `arena worker`, `arena
//! run`) raise their own soft limit on open descriptors to the hard limit:
//! every browser's live stream, gRPC connection and bot pipe holds one, and
//! the usual soft default of 1,024 would let a crowd of pages lock workers
//! out of registering. Bots are unaffected: the sandbox sets their own
//! limit in each bot's process.

/// Raises the soft `RLIMIT_NOFILE` to the hard one; returns the limit now
/// in force, or the error that kept it where it was.
pub fn raise_open_files_limit() -> std::io::Result<u64> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes one rlimit into the struct we own.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    if limit.rlim_cur < limit.rlim_max {
        let raised = libc::rlimit {
            rlim_cur: limit.rlim_max,
            rlim_max: limit.rlim_max,
        };
        // SAFETY: setrlimit reads one rlimit from a struct we own.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        limit = raised;
    }
    Ok(limit.rlim_cur)
}

/// [`raise_open_files_limit`] for a service starting up: a failure is
/// logged, never fatal (the service runs with what it has).
pub fn raise_for_service(service: &str) {
    match raise_open_files_limit() {
        Ok(limit) => tracing::debug!(service, limit, "open descriptors allowed"),
        Err(e) => tracing::warn!(service, error = %e, "cannot raise the open-descriptor limit"),
    }
}
