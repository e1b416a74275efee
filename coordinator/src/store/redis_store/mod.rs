//! The production store: every piece of tournament state lives in Redis, so
//! a coordinator that restarts (or a second one taking over) picks up the
//! queue, the leases, the results and the schedule exactly where they were.
//! This type holds nothing but a connection.
//!
//! Layout: [`keys`] names every key (documented in `docs/redis-keys.md`).
//! `scripts` holds the Lua scripts that keep the invariants: each script
//! opens with its KEYS/ARGV contract and validates before it writes. This
//! file has the operations that write, each one script or one atomic
//! pipeline; `reads` has the ones that only read.

pub mod keys;
mod reads;
mod scripts;

use redis::aio::{ConnectionManager, ConnectionManagerConfig};

use self::scripts::SCRIPTS;
use super::error::{Result, StoreError, from_json, to_json};
use super::types::{
    CompleteOutcome, LEASE_EXPIRED, LEASE_PREFERENCE_WINDOW, Lease, ScheduledMatch, TournamentSpec,
    WorkerInfo,
};
use super::{check_record, check_submission_hash, expiry};
use crate::model::{EntrantId, MatchRecord};

/// The Redis backend. Clones share one multiplexed connection that
/// reconnects by itself.
#[derive(Clone)]
pub struct RedisStore {
    /// Cheap to clone; each operation clones it because commands need `&mut`.
    conn: ConnectionManager,
}

impl std::fmt::Debug for RedisStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisStore").finish_non_exhaustive()
    }
}

impl RedisStore {
    /// Connects to `url` (`redis://host:port/db` or `unix:///path/to.sock`)
    /// with the connection manager's defaults, including its 500 ms
    /// response timeout, which no store command comes near: none of them
    /// blocks.
    pub async fn connect(url: &str) -> Result<Self> {
        Self::connect_with_config(url, ConnectionManagerConfig::new()).await
    }

    /// Connects to `url` with explicit timeouts and retry policy.
    pub async fn connect_with_config(url: &str, config: ConnectionManagerConfig) -> Result<Self> {
        let client = redis::Client::open(url)?;
        let conn = ConnectionManager::new_with_config(client, config).await?;
        Ok(Self { conn })
    }

    /// Wraps a connection the caller already has.
    pub fn from_connection(conn: ConnectionManager) -> Self {
        Self { conn }
    }

    fn conn(&self) -> ConnectionManager {
        self.conn.clone()
    }

    /// See [`Store::create_tournament`](crate::store::Store::create_tournament).
    pub async fn create_tournament(&self, spec: TournamentSpec) -> Result<()> {
        let created_cancelled = spec.cancelled;
        // The stored spec never says cancelled: `arena:cancelled` does.
        let stored = TournamentSpec {
            cancelled: false,
            ..spec
        };
        let json = to_json(&stored, format!("tournament spec {}", stored.id))?;
        let created: i64 = SCRIPTS
            .create_tournament
            .key(keys::TOURNAMENTS)
            .key(keys::spec(&stored.id))
            .key(keys::CANCELLED)
            .key(keys::TOURNAMENT_ENV)
            .arg(&stored.id)
            .arg(json)
            .arg(if created_cancelled { "1" } else { "0" })
            .arg(stored.environment.as_deref().unwrap_or(""))
            .invoke_async(&mut self.conn())
            .await?;
        if created == 1 {
            Ok(())
        } else {
            Err(StoreError::AlreadyExists(stored.id))
        }
    }

    /// See [`Store::cancel`](crate::store::Store::cancel).
    pub async fn cancel(&self, id: &str) -> Result<usize> {
        let dropped: i64 = SCRIPTS
            .cancel
            .key(keys::TOURNAMENTS)
            .key(keys::CANCELLED)
            .key(keys::QUEUE)
            .key(keys::MATCH_TOURNAMENT)
            .key(keys::MATCH_STATE)
            .arg(id)
            .invoke_async(&mut self.conn())
            .await?;
        usize::try_from(dropped).map_err(|_| StoreError::UnknownTournament(id.to_owned()))
    }

    /// See [`Store::schedule_round`](crate::store::Store::schedule_round).
    pub async fn schedule_round(
        &self,
        tournament: &str,
        round: u32,
        matches: Vec<ScheduledMatch>,
        byes: Vec<EntrantId>,
    ) -> Result<bool> {
        let mut script = SCRIPTS.schedule_round.prepare_invoke();
        script
            .key(keys::TOURNAMENTS)
            .key(keys::CANCELLED)
            .key(keys::rounds(tournament))
            .key(keys::matches(tournament))
            .key(keys::byes(tournament))
            .key(keys::QUEUE)
            .key(keys::MATCH_TOURNAMENT)
            .key(keys::MATCH_ROUND)
            .key(keys::MATCH_PAIRING)
            .key(keys::MATCH_SEATS)
            .key(keys::MATCH_STATE)
            .key(keys::MATCH_ATTEMPT)
            .arg(tournament)
            .arg(round)
            .arg(matches.len());
        for m in &matches {
            let what = format!("pairing of match {}", m.match_id);
            script
                .arg(&m.match_id)
                .arg(to_json(&m.pairing, what.clone())?)
                .arg(to_json(&m.pairing.seats, what)?);
        }
        for bye in &byes {
            script.arg(to_json(&(round, bye), format!("bye of {bye}"))?);
        }
        let (code, detail): (i64, String) = script.invoke_async(&mut self.conn()).await?;
        match code {
            1 => Ok(true),
            0 => Ok(false),
            -1 => Err(StoreError::UnknownTournament(tournament.to_owned())),
            -2 => Err(StoreError::Cancelled(tournament.to_owned())),
            -3 => Err(StoreError::RoundOutOfOrder {
                tournament: tournament.to_owned(),
                expected: parse(&detail, "next round")?,
                got: round,
            }),
            -4 => Err(StoreError::DuplicateMatch(detail)),
            other => Err(StoreError::Corrupt(format!(
                "schedule_round script returned {other}"
            ))),
        }
    }

    /// See [`Store::lease`](crate::store::Store::lease).
    pub async fn lease(
        &self,
        worker: &str,
        now_ms: u64,
        ttl_ms: u64,
        cached: &[EntrantId],
        environment: &str,
    ) -> Result<Option<Lease>> {
        let expires_at_ms = expiry(now_ms, ttl_ms);
        let reply: Option<Vec<Option<String>>> = SCRIPTS
            .lease
            .key(keys::QUEUE)
            .key(keys::MATCH_SEATS)
            .key(keys::MATCH_STATE)
            .key(keys::MATCH_ATTEMPT)
            .key(keys::MATCH_LEASE)
            .key(keys::MATCH_WORKER)
            .key(keys::LEASE_MATCH)
            .key(keys::LEASES)
            .key(keys::LEASE_SEQ)
            .key(keys::MATCH_TOURNAMENT)
            .key(keys::MATCH_ROUND)
            .key(keys::MATCH_PAIRING)
            .key(keys::TOURNAMENT_ENV)
            .arg(worker)
            .arg(expires_at_ms)
            .arg(LEASE_PREFERENCE_WINDOW)
            .arg(environment)
            .arg(cached)
            .invoke_async(&mut self.conn())
            .await?;
        let Some(reply) = reply else {
            return Ok(None);
        };
        let [lease_id, match_id, attempt, tournament, round, pairing] =
            <[Option<String>; 6]>::try_from(reply).map_err(|reply| {
                StoreError::Corrupt(format!("lease script returned {} values", reply.len()))
            })?;
        let match_id = present(match_id, "leased match id")?;
        let what = |field: &str| format!("{field} of match {match_id}");
        Ok(Some(Lease {
            lease_id: present(lease_id, "lease id")?,
            tournament: present(tournament, &what("tournament"))?,
            round: parse(&present(round, &what("round"))?, &what("round"))?,
            pairing: from_json(&present(pairing, &what("pairing"))?, what("pairing"))?,
            attempt: parse(&present(attempt, &what("attempt"))?, &what("attempt"))?,
            expires_at_ms,
            match_id,
        }))
    }

    /// See [`Store::extend`](crate::store::Store::extend).
    pub async fn extend(&self, lease_id: &str, now_ms: u64, ttl_ms: u64) -> Result<bool> {
        let extended: i64 = SCRIPTS
            .extend
            .key(keys::LEASE_MATCH)
            .key(keys::MATCH_LEASE)
            .key(keys::MATCH_STATE)
            .key(keys::MATCH_TOURNAMENT)
            .key(keys::CANCELLED)
            .key(keys::LEASES)
            .arg(lease_id)
            .arg(now_ms)
            .arg(expiry(now_ms, ttl_ms))
            .invoke_async(&mut self.conn())
            .await?;
        Ok(extended == 1)
    }

    /// See [`Store::expire`](crate::store::Store::expire).
    pub async fn expire(&self, now_ms: u64) -> Result<Vec<String>> {
        Ok(SCRIPTS
            .expire
            .key(keys::LEASES)
            .key(keys::LEASE_MATCH)
            .key(keys::MATCH_LEASE)
            .key(keys::MATCH_WORKER)
            .key(keys::MATCH_STATE)
            .key(keys::MATCH_ATTEMPT)
            .key(keys::MATCH_TOURNAMENT)
            .key(keys::CANCELLED)
            .key(keys::QUEUE)
            .key(keys::MATCH_ERROR)
            .arg(now_ms)
            .arg(LEASE_EXPIRED)
            .invoke_async(&mut self.conn())
            .await?)
    }

    /// See [`Store::complete`](crate::store::Store::complete).
    pub async fn complete(
        &self,
        match_id: &str,
        lease_id: &str,
        record: MatchRecord,
        replay: Option<Vec<u8>>,
    ) -> Result<CompleteOutcome> {
        check_record(match_id, &record)?;
        let json = to_json(&record, format!("record of match {match_id}"))?;
        let outcome: i64 = SCRIPTS
            .complete
            .key(keys::MATCH_TOURNAMENT)
            .key(keys::MATCH_STATE)
            .key(keys::MATCH_LEASE)
            .key(keys::MATCH_WORKER)
            .key(keys::LEASE_MATCH)
            .key(keys::LEASES)
            .key(keys::RESULTS)
            .key(keys::replay(match_id))
            .arg(match_id)
            .arg(lease_id)
            .arg(json)
            .arg(if replay.is_some() { "1" } else { "0" })
            .arg(replay.unwrap_or_default())
            .invoke_async(&mut self.conn())
            .await?;
        match outcome {
            0 => Ok(CompleteOutcome::Accepted),
            1 => Ok(CompleteOutcome::Duplicate),
            2 => Ok(CompleteOutcome::StaleLease),
            3 => Ok(CompleteOutcome::Unknown),
            other => Err(StoreError::Corrupt(format!(
                "complete script returned {other}"
            ))),
        }
    }

    /// See [`Store::fail`](crate::store::Store::fail).
    pub async fn fail(&self, match_id: &str, lease_id: &str, reason: &str) -> Result<bool> {
        let ended: i64 = SCRIPTS
            .fail
            .key(keys::MATCH_STATE)
            .key(keys::MATCH_LEASE)
            .key(keys::MATCH_WORKER)
            .key(keys::LEASE_MATCH)
            .key(keys::LEASES)
            .key(keys::MATCH_ATTEMPT)
            .key(keys::MATCH_TOURNAMENT)
            .key(keys::CANCELLED)
            .key(keys::QUEUE)
            .key(keys::MATCH_ERROR)
            .arg(match_id)
            .arg(lease_id)
            .arg(reason)
            .invoke_async(&mut self.conn())
            .await?;
        Ok(ended == 1)
    }

    /// See [`Store::register_worker`](crate::store::Store::register_worker).
    pub async fn register_worker(&self, info: WorkerInfo, now_ms: u64) -> Result<()> {
        let cached = to_json(&info.cached, format!("cache of worker {}", info.id))?;
        let bare = WorkerInfo {
            cached: Vec::new(),
            ..info
        };
        let json = to_json(&bare, format!("worker {}", bare.id))?;
        let () = redis::pipe()
            .atomic()
            .hset(keys::WORKERS, &bare.id, json)
            .ignore()
            .hset(keys::WORKER_CACHED, &bare.id, cached)
            .ignore()
            .zadd(keys::WORKER_SEEN, &bare.id, now_ms)
            .ignore()
            .query_async(&mut self.conn())
            .await?;
        Ok(())
    }

    /// See [`Store::heartbeat_worker`](crate::store::Store::heartbeat_worker).
    pub async fn heartbeat_worker(
        &self,
        id: &str,
        now_ms: u64,
        cached: Vec<EntrantId>,
    ) -> Result<bool> {
        let cached = to_json(&cached, format!("cache of worker {id}"))?;
        let known: i64 = SCRIPTS
            .heartbeat
            .key(keys::WORKERS)
            .key(keys::WORKER_CACHED)
            .key(keys::WORKER_SEEN)
            .arg(id)
            .arg(now_ms)
            .arg(cached)
            .invoke_async(&mut self.conn())
            .await?;
        Ok(known == 1)
    }

    /// See [`Store::put_submission`](crate::store::Store::put_submission).
    pub async fn put_submission(&self, hash: &str, bytes: Vec<u8>) -> Result<()> {
        check_submission_hash(hash, &bytes)?;
        // NX: a blob is immutable once stored; rewriting identical bytes
        // would only cost bandwidth.
        let _: Option<String> = redis::cmd("SET")
            .arg(keys::submission(hash))
            .arg(bytes)
            .arg("NX")
            .query_async(&mut self.conn())
            .await?;
        Ok(())
    }
}

/// A value the layout says must be there.
pub(super) fn present<T>(value: Option<T>, what: &str) -> Result<T> {
    value.ok_or_else(|| StoreError::Corrupt(format!("{what} is missing")))
}

/// A number stored as text.
pub(super) fn parse<T: std::str::FromStr>(text: &str, what: &str) -> Result<T> {
    text.parse()
        .map_err(|_| StoreError::Corrupt(format!("{what} is {text:?}, not a number")))
}
