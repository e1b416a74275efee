//! A connection to whichever server Redis Sentinel currently names as the
//! primary. The connection manager used for a single server reconnects to
//! the address it was built with, which after a failover is a dead server
//! or a demoted replica; this link instead forgets its connection whenever
//! the primary is lost (the connection failed, timed out, or the server
//! answered READONLY because it is a replica now) and asks the sentinels
//! again before the next command.
//!
//! Layout: [`url`] reads the `redis+sentinel://` URL; this file holds the
//! link. The one retry of a failed command is not here but in `retry`,
//! which wraps this link like it wraps the connection manager: its second
//! try is the first command after the forget, so it goes to the primary
//! the sentinels name now.
//!
//! While no primary can be found (the old one is dead and the sentinels
//! have not promoted a replica yet) every command fails with the lookup's
//! error, which the gRPC layer reports as UNAVAILABLE and workers retry.

pub mod url;

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use redis::aio::{ConnectionLike, MultiplexedConnection};
use redis::sentinel::{SentinelClient, SentinelClientBuilder, SentinelServerType};
use redis::{
    AsyncConnectionConfig, Cmd, ConnectionAddr, ErrorKind, Pipeline, RedisError, RedisFuture,
    RedisResult, Value,
};

use self::url::SentinelUrl;
use super::retry::connection_failed;

/// How long one lookup may take: asking the sentinels, checking the
/// primary's role, connecting to it. A sentinel or primary that does not
/// answer (a partition rather than a crash) fails the lookup after this
/// rather than holding every store operation.
const LOOKUP_TIMEOUT: Duration = Duration::from_secs(5);

/// Connecting to the primary once it is named.
const CONNECTION_TIMEOUT: Duration = Duration::from_secs(2);

/// The same response timeout as the connection manager's default: no store
/// command blocks, so a reply this late means the server is gone.
const RESPONSE_TIMEOUT: Duration = Duration::from_millis(500);

impl From<url::SentinelUrlError> for RedisError {
    fn from(error: url::SentinelUrlError) -> RedisError {
        RedisError::from((
            ErrorKind::InvalidClientConfig,
            "invalid redis+sentinel:// URL",
            error.to_string(),
        ))
    }
}

/// A connection that follows the primary through failovers. Cheap to clone;
/// clones share the connection and the sentinels.
#[derive(Clone)]
pub(super) struct SentinelLink(Arc<Shared>);

struct Shared {
    /// Asks the sentinels. An async mutex because a lookup awaits; holding
    /// it across the lookup also means the operations that lost the primary
    /// together wait for one lookup instead of each running their own.
    sentinels: tokio::sync::Mutex<SentinelClient>,
    /// The primary in use, if one has been found since it was last lost.
    /// A std mutex, held only to copy or replace the value, never across
    /// an `.await`.
    current: Mutex<Current>,
    /// The master name, for the log.
    master: String,
    /// The database selected on every primary, for `get_db`.
    db: i64,
}

#[derive(Default)]
struct Current {
    /// `None` after the primary was lost, until the next lookup.
    primary: Option<Primary>,
    /// Counts lookups, so a command that failed on an old primary does not
    /// forget a newer one another command has already found.
    generation: u64,
}

#[derive(Clone)]
struct Primary {
    /// Which lookup found it.
    generation: u64,
    /// Where it is, for the log.
    address: String,
    conn: MultiplexedConnection,
}

impl SentinelLink {
    /// Builds the sentinel client for `url` and finds the primary once, so a
    /// wrong master name or unreachable sentinels fail at startup.
    pub(super) async fn connect(url: &SentinelUrl) -> RedisResult<SentinelLink> {
        let addresses = url
            .sentinels
            .iter()
            .map(|(host, port)| ConnectionAddr::Tcp(host.clone(), *port));
        let mut builder =
            SentinelClientBuilder::new(addresses, &url.master, SentinelServerType::Master)?
                .set_client_to_redis_db(url.db);
        if let Some(username) = &url.username {
            builder = builder.set_client_to_redis_username(username);
        }
        if let Some(password) = &url.password {
            builder = builder.set_client_to_redis_password(password);
        }
        if let Some(username) = &url.sentinel_username {
            builder = builder.set_client_to_sentinel_username(username);
        }
        if let Some(password) = &url.sentinel_password {
            builder = builder.set_client_to_sentinel_password(password);
        }
        let link = SentinelLink(Arc::new(Shared {
            sentinels: tokio::sync::Mutex::new(builder.build()?),
            current: Mutex::new(Current::default()),
            master: url.master.clone(),
            db: url.db,
        }));
        link.primary().await?;
        Ok(link)
    }

    fn current(&self) -> MutexGuard<'_, Current> {
        // Nothing panics while holding the lock; recover the value anyway.
        self.0.current.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The primary in use, looking it up first if it was lost.
    async fn primary(&self) -> RedisResult<Primary> {
        if let Some(primary) = self.current().primary.clone() {
            return Ok(primary);
        }
        let mut sentinels = self.0.sentinels.lock().await;
        // Another operation may have found it while this one waited.
        if let Some(primary) = self.current().primary.clone() {
            return Ok(primary);
        }
        let (address, conn) = tokio::time::timeout(LOOKUP_TIMEOUT, lookup(&mut sentinels))
            .await
            .map_err(|_| {
                RedisError::from(std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    format!(
                        "no primary for {:?} from the sentinels within {LOOKUP_TIMEOUT:?}",
                        self.0.master
                    ),
                ))
            })??;
        let mut current = self.current();
        current.generation += 1;
        let primary = Primary {
            generation: current.generation,
            address,
            conn,
        };
        tracing::info!(
            master = %self.0.master,
            address = %primary.address,
            "following the Redis primary the sentinels name"
        );
        current.primary = Some(primary.clone());
        Ok(primary)
    }

    /// Drops `primary` after `error` if it says the primary is gone or
    /// demoted, so the next command looks it up again.
    fn check(&self, primary: &Primary, error: &RedisError) {
        if !(connection_failed(error) || error.is_timeout()) {
            return;
        }
        let mut current = self.current();
        if current
            .primary
            .as_ref()
            .is_some_and(|p| p.generation == primary.generation)
        {
            tracing::warn!(
                master = %self.0.master,
                address = %primary.address,
                "lost the Redis primary ({error}); asking the sentinels again"
            );
            current.primary = None;
        }
    }
}

/// Asks the sentinels for the primary (the redis crate checks that the
/// server it names answers ROLE as a master) and connects to it.
async fn lookup(sentinels: &mut SentinelClient) -> RedisResult<(String, MultiplexedConnection)> {
    let client = sentinels.async_get_client().await?;
    let address = client.get_connection_info().addr().to_string();
    let config = AsyncConnectionConfig::new()
        .set_connection_timeout(Some(CONNECTION_TIMEOUT))
        .set_response_timeout(Some(RESPONSE_TIMEOUT));
    let conn = client
        .get_multiplexed_async_connection_with_config(&config)
        .await?;
    Ok((address, conn))
}

impl ConnectionLike for SentinelLink {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        Box::pin(async move {
            let mut primary = self.primary().await?;
            let result = primary.conn.req_packed_command(cmd).await;
            if let Err(error) = &result {
                self.check(&primary, error);
            }
            result
        })
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        Box::pin(async move {
            let mut primary = self.primary().await?;
            let result = primary
                .conn
                .req_packed_commands(pipeline, offset, count)
                .await;
            if let Err(error) = &result {
                self.check(&primary, error);
            }
            result
        })
    }

    fn get_db(&self) -> i64 {
        self.0.db
    }
}

#[cfg(test)]
mod tests {
    use redis::{ErrorKind, RedisError};

    use super::url::{SentinelUrl, SentinelUrlError};

    #[test]
    fn a_bad_url_is_a_client_config_error_that_says_why() {
        let error = SentinelUrl::parse("redis+sentinel://s1:26379").unwrap_err();
        assert_eq!(error, SentinelUrlError::NoMaster);
        let error = RedisError::from(error);
        assert_eq!(error.kind(), ErrorKind::InvalidClientConfig);
        let text = error.to_string();
        assert!(text.contains("redis+sentinel://"), "{text}");
        assert!(text.contains("no master name"), "{text}");
    }
}
