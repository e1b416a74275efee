//! One retry for a command that failed because the connection did. After a
//! Redis restart the first command on the old connection fails ("broken
//! pipe") while the connection manager reconnects; sending it once more on
//! the new connection is what keeps a transient blip from failing a worker's
//! report. Behind Sentinel the same retry is what reaches a new primary: the
//! failed command made the link forget the old one, so the second try asks
//! the sentinels first (see `sentinel`). Anything else (a refused script, a
//! type error, Redis still down on the second try) is returned as it is.
//!
//! READONLY counts as a connection failure: it is what a primary demoted to
//! replica by a failover answers to a write, and the command belongs on the
//! new primary. A single server never answers it unless an operator made it
//! a replica, and then the second try fails the same way.
//!
//! Every store command goes through this wrapper, so no call site has to
//! remember to retry. A command that reached Redis before the connection
//! died may run twice; each store operation is written to tolerate that
//! (a second `complete` is a duplicate, a second `schedule_round` a no-op,
//! a second lease only leaves a lease that runs out).

use redis::aio::{ConnectionLike, ConnectionManager};
use redis::{Cmd, ErrorKind, Pipeline, RedisError, RedisFuture, ServerErrorKind, Value};

use super::sentinel::SentinelLink;

/// How the store reaches Redis: one server's address, or through Sentinel.
#[derive(Clone)]
pub(super) enum Link {
    /// A fixed address; the manager reconnects to it by itself.
    Direct(ConnectionManager),
    /// Whichever server the sentinels name as the primary.
    Sentinel(SentinelLink),
}

impl ConnectionLike for Link {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        match self {
            Link::Direct(conn) => conn.req_packed_command(cmd),
            Link::Sentinel(conn) => conn.req_packed_command(cmd),
        }
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        match self {
            Link::Direct(conn) => conn.req_packed_commands(pipeline, offset, count),
            Link::Sentinel(conn) => conn.req_packed_commands(pipeline, offset, count),
        }
    }

    fn get_db(&self) -> i64 {
        match self {
            Link::Direct(conn) => conn.get_db(),
            Link::Sentinel(conn) => conn.get_db(),
        }
    }
}

/// A link whose commands are retried once on a connection failure. Cheap
/// to clone, like the link.
#[derive(Clone)]
pub(super) struct Retrying(pub(super) Link);

/// Whether `error` says the connection failed (or reached a server that is
/// no longer the primary) rather than the command.
pub(super) fn connection_failed(error: &RedisError) -> bool {
    error.is_io_error()
        || error.is_connection_dropped()
        || error.is_connection_refusal()
        || read_only(error)
}

/// READONLY, on its own, from a script, or from a command of a pipeline or
/// of a transaction (whose EXEC then reports EXECABORT with it inside).
fn read_only(error: &RedisError) -> bool {
    error.kind() == ErrorKind::Server(ServerErrorKind::ReadOnly)
        || error.clone().into_server_errors().is_some_and(|errors| {
            errors
                .iter()
                .any(|(_, e)| e.kind() == Some(ServerErrorKind::ReadOnly))
        })
}

impl ConnectionLike for Retrying {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        Box::pin(async move {
            match self.0.req_packed_command(cmd).await {
                Err(error) if connection_failed(&error) => self.0.req_packed_command(cmd).await,
                done => done,
            }
        })
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        Box::pin(async move {
            match self.0.req_packed_commands(pipeline, offset, count).await {
                Err(error) if connection_failed(&error) => {
                    self.0.req_packed_commands(pipeline, offset, count).await
                }
                done => done,
            }
        })
    }

    fn get_db(&self) -> i64 {
        self.0.get_db()
    }
}

#[cfg(test)]
mod tests {
    use redis::{ErrorKind, RedisError, Value};

    use super::connection_failed;

    /// A server error as the parser makes it from a `-CODE detail` reply.
    fn server_error(line: &str) -> RedisError {
        let reply = format!("-{line}\r\n");
        match redis::parse_redis_value(reply.as_bytes()) {
            Ok(Value::ServerError(error)) => error.into(),
            other => panic!("{line:?} parsed as {other:?}"),
        }
    }

    #[test]
    fn read_only_is_a_connection_failure() {
        assert!(connection_failed(&server_error(
            "READONLY You can't write against a read only replica."
        )));
        // A write inside a script on a replica.
        assert!(connection_failed(&server_error(
            "READONLY You can't write against a read only replica. script: 67ed, on @user_script:1."
        )));
    }

    #[test]
    fn command_errors_are_not() {
        assert!(!connection_failed(&server_error(
            "WRONGTYPE Operation against a key holding the wrong kind of value"
        )));
        assert!(!connection_failed(&server_error("ERR unknown command")));
        assert!(!connection_failed(&RedisError::from((
            ErrorKind::InvalidClientConfig,
            "invalid redis+sentinel:// URL",
        ))));
    }

    #[test]
    fn io_errors_are() {
        let refused = std::io::Error::from(std::io::ErrorKind::ConnectionRefused);
        assert!(connection_failed(&RedisError::from(refused)));
        let reset = std::io::Error::from(std::io::ErrorKind::ConnectionReset);
        assert!(connection_failed(&RedisError::from(reset)));
    }
}
