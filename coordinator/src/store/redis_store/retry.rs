//! One retry for a command that failed because the connection did. After a
//! Redis restart the first command on the old connection fails ("broken
//! pipe") while the connection manager reconnects; sending it once more on
//! the new connection is what keeps a transient blip from failing a worker's
//! report. Anything else (a refused script, a type error, Redis still down
//! on the second try) is returned as it is.
//!
//! Every store command goes through this wrapper, so no call site has to
//! remember to retry. A command that reached Redis before the connection
//! died may run twice; each store operation is written to tolerate that
//! (a second `complete` is a duplicate, a second `schedule_round` a no-op,
//! a second lease only leaves a lease that runs out).

use redis::aio::{ConnectionLike, ConnectionManager};
use redis::{Cmd, Pipeline, RedisError, RedisFuture, Value};

/// A connection manager whose commands are retried once on a connection
/// failure. Cheap to clone, like the manager.
#[derive(Clone)]
pub(super) struct Retrying(pub(super) ConnectionManager);

/// Whether `error` says the connection failed rather than the command.
fn connection_failed(error: &RedisError) -> bool {
    error.is_io_error() || error.is_connection_dropped() || error.is_connection_refusal()
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
