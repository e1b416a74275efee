//! The production store: every piece of tournament state lives in Redis, so
//! a coordinator that restarts (or a second one taking over) picks up the
//! queue, the leases, the results and the schedule exactly where they were.
//! This type holds nothing but a connection.
//!
//! Layout: [`keys`] names every key (documented in `docs/redis-keys.md`).
//! `scripts` holds the Lua scripts that keep the invariants, each with the
//! one list of its KEYS: each script opens with its KEYS/ARGV contract and
//! validates before it writes. `retry` retries a command once over a failed
//! connection, and `sentinel` finds the primary behind Redis Sentinel. This
//! file has the operations that write, each one script or one atomic
//! pipeline; `reads` has the ones that only read.

pub mod keys;
mod reads;
mod retry;
mod scripts;
mod sentinel;

use redis::AsyncCommands;
use redis::aio::{ConnectionManager, ConnectionManagerConfig};

use self::retry::{Link, Retrying};
use self::scripts::{Id, SCRIPTS};
use self::sentinel::SentinelLink;
use self::sentinel::url::{SentinelUrl, is_sentinel_url};
use super::error::{Result, StoreError, from_json, to_json};
use super::types::{
    AttemptEnd, CompleteOutcome, ExpiredLease, FailedLease, LEASE_EXPIRED, LEASE_PREFERENCE_WINDOW,
    Lease, QuarantineRule, Reported, ScheduledMatch, TournamentSpec, WorkerInfo,
};
use super::{LeaseGrant, check_record, check_submission_hash, expiry};
use crate::domain::{EntrantId, MatchRecord};

/// The Redis backend. Clones share one multiplexed connection that
/// reconnects by itself: to the same address for a single server, to the
/// primary the sentinels name now behind Sentinel.
#[derive(Clone)]
pub struct RedisStore {
    /// Cheap to clone; each operation clones it because commands need `&mut`.
    conn: Link,
}

impl std::fmt::Debug for RedisStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisStore").finish_non_exhaustive()
    }
}

/// How long a command to a single server may take to answer. A dead
/// server shows as a dropped connection at once; a late answer means a busy
/// one (a loaded host, a long schedule script), and a command that timed
/// out is sent once more ([`retry`]) though it may already have run. The
/// connection manager's 500 ms made that happen under load: a worker's
/// accepted report then came back `duplicate`, and a lease ran twice.
pub const DIRECT_RESPONSE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

impl RedisStore {
    /// Connects to `url`: one server (`redis://host:port/db` or
    /// `unix:///path/to.sock`) with a [`DIRECT_RESPONSE_TIMEOUT`] response
    /// timeout; or the primary behind Sentinel
    /// (`redis+sentinel://host1:26379,host2:26379/master[/db]`, see
    /// `sentinel::url`), with the short timeout failover needs.
    pub async fn connect(url: &str) -> Result<Self> {
        if is_sentinel_url(url) {
            let url = SentinelUrl::parse(url).map_err(redis::RedisError::from)?;
            let conn = SentinelLink::connect(&url).await?;
            return Ok(Self {
                conn: Link::Sentinel(conn),
            });
        }
        let config =
            ConnectionManagerConfig::new().set_response_timeout(Some(DIRECT_RESPONSE_TIMEOUT));
        Self::connect_with_config(url, config).await
    }

    /// Connects to the single server at `url` with explicit timeouts and
    /// retry policy (a Sentinel URL is refused here: see [`Self::connect`]).
    pub async fn connect_with_config(url: &str, config: ConnectionManagerConfig) -> Result<Self> {
        let client = redis::Client::open(url)?;
        let conn = ConnectionManager::new_with_config(client, config).await?;
        Ok(Self::from_connection(conn))
    }

    /// Wraps a connection the caller already has.
    pub fn from_connection(conn: ConnectionManager) -> Self {
        Self {
            conn: Link::Direct(conn),
        }
    }

    /// The connection for one operation; its commands are retried once if
    /// the connection fails (see `retry`).
    fn conn(&self) -> Retrying {
        Retrying(self.conn.clone())
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
        let mut script = SCRIPTS
            .create_tournament
            .keyed(&[(Id::Tournament, &stored.id)])?;
        script
            .arg(&stored.id)
            .arg(json)
            .arg(if created_cancelled { "1" } else { "0" })
            .arg(stored.environment.as_deref().unwrap_or(""))
            .arg(stored.wasm_runtime.as_deref().unwrap_or(""))
            .arg(stored.model_runtime.as_deref().unwrap_or(""))
            .arg(stored.wasm_entrants.len());
        for entrant in stored.wasm_entrants.iter().chain(&stored.model_entrants) {
            script.arg(entrant);
        }
        let created: i64 = script.invoke_async(&mut self.conn()).await?;
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
            .keyed(&[])?
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
        let mut script = SCRIPTS
            .schedule_round
            .keyed(&[(Id::Tournament, tournament)])?;
        script.arg(tournament).arg(round).arg(matches.len());
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

    /// See [`Store::lease_worker`](crate::store::Store::lease_worker): one
    /// script checks the worker, reads its cache and environment, and
    /// leases, so the Lease call costs one round trip.
    pub async fn lease_worker(
        &self,
        worker: &str,
        lease_id: &str,
        now_ms: u64,
        ttl_ms: u64,
        alive_since_ms: u64,
    ) -> Result<LeaseGrant> {
        let expires_at_ms = expiry(now_ms, ttl_ms);
        let reply: std::result::Result<Option<Vec<Option<String>>>, redis::RedisError> = SCRIPTS
            .lease_worker
            .keyed(&[])?
            .arg(worker)
            .arg(lease_id)
            .arg(expires_at_ms)
            .arg(LEASE_PREFERENCE_WINDOW)
            .arg(alive_since_ms)
            .invoke_async(&mut self.conn())
            .await;
        let reply = match reply {
            Err(e) if e.code() == Some("ARENA_DUPLICATE_LEASE") => {
                return Err(StoreError::DuplicateLease(lease_id.to_owned()));
            }
            reply => reply?,
        };
        match reply.as_deref() {
            None => Ok(LeaseGrant::Empty),
            Some([Some(refusal)]) if refusal == "unregistered" => Ok(LeaseGrant::Unregistered),
            Some([Some(refusal)]) if refusal == "quarantined" => Ok(LeaseGrant::Quarantined),
            Some(_) => Ok(LeaseGrant::Granted(lease_reply(
                worker,
                expires_at_ms,
                reply.unwrap_or_default(),
            )?)),
        }
    }

    /// See [`Store::expire`](crate::store::Store::expire).
    pub async fn expire(&self, now_ms: u64, max_attempts: u32) -> Result<Vec<ExpiredLease>> {
        let flat: Vec<String> = SCRIPTS
            .expire
            .keyed(&[])?
            .arg(now_ms)
            .arg(LEASE_EXPIRED)
            .arg(max_attempts)
            .invoke_async(&mut self.conn())
            .await?;
        if !flat.len().is_multiple_of(3) {
            return Err(StoreError::Corrupt(format!(
                "expire script returned {} values",
                flat.len()
            )));
        }
        flat.chunks_exact(3)
            .map(|ended| {
                let end = match ended[2].as_str() {
                    "requeued" => AttemptEnd::Requeued,
                    "stuck" => AttemptEnd::Stuck,
                    "dropped" => AttemptEnd::Dropped,
                    other => {
                        return Err(StoreError::Corrupt(format!(
                            "expire script ended a lease as {other:?}"
                        )));
                    }
                };
                Ok(ExpiredLease {
                    match_id: ended[0].clone(),
                    worker: ended[1].clone(),
                    end,
                })
            })
            .collect()
    }

    /// See [`Store::report`](crate::store::Store::report): `complete.lua`
    /// with its seat check and lease count, one round trip.
    pub async fn report(
        &self,
        worker: &str,
        match_id: &str,
        lease_id: &str,
        record: MatchRecord,
        replay: Option<Vec<u8>>,
        quarantine: Option<QuarantineRule>,
    ) -> Result<Reported> {
        check_record(match_id, &record)?;
        let json = to_json(&record, format!("record of match {match_id}"))?;
        let mut script = SCRIPTS
            .complete
            .keyed(&[(Id::Match, match_id), (Id::Worker, worker)])?;
        script
            .arg(match_id)
            .arg(lease_id)
            .arg(json)
            .arg(if replay.is_some() { "1" } else { "0" })
            .arg(replay.unwrap_or_default())
            .arg(worker)
            .arg(quarantine_window(quarantine));
        for seat in &record.seats {
            script.arg(&seat.entrant);
        }
        let outcome: i64 = script.invoke_async(&mut self.conn()).await?;
        match outcome {
            0 => Ok(Reported::Checked(CompleteOutcome::Accepted)),
            1 => Ok(Reported::Checked(CompleteOutcome::Duplicate)),
            2 => Ok(Reported::Checked(CompleteOutcome::StaleLease)),
            3 => Ok(Reported::Checked(CompleteOutcome::Unknown)),
            4 => Err(not_holder(lease_id, worker)),
            5 => Ok(Reported::WrongSeats),
            other => Err(StoreError::Corrupt(format!(
                "complete script returned {other}"
            ))),
        }
    }

    /// See [`Store::fail_counted`](crate::store::Store::fail_counted):
    /// `fail.lua` with its lease count, one round trip.
    pub async fn fail_counted(
        &self,
        worker: &str,
        match_id: &str,
        lease_id: &str,
        reason: &str,
        max_attempts: u32,
        quarantine: Option<QuarantineRule>,
    ) -> Result<Option<FailedLease>> {
        let (ended, quarantined): (i64, i64) = SCRIPTS
            .fail
            .keyed(&[(Id::Worker, worker)])?
            .arg(match_id)
            .arg(lease_id)
            .arg(reason)
            .arg(worker)
            .arg(max_attempts)
            .arg(quarantine_window(quarantine))
            .arg(quarantine.map_or(0, |rule| rule.failures))
            .invoke_async(&mut self.conn())
            .await?;
        let end = match ended {
            0 => return Ok(None),
            -1 => return Err(not_holder(lease_id, worker)),
            1 => AttemptEnd::Requeued,
            2 => AttemptEnd::Stuck,
            3 => AttemptEnd::Dropped,
            other => {
                return Err(StoreError::Corrupt(format!("fail script returned {other}")));
            }
        };
        Ok(Some(FailedLease {
            end,
            quarantined: quarantined == 1,
        }))
    }

    /// See [`Store::requeue`](crate::store::Store::requeue).
    pub async fn requeue(&self, match_id: &str) -> Result<bool> {
        let code: i64 = SCRIPTS
            .requeue
            .keyed(&[])?
            .arg(match_id)
            .invoke_async(&mut self.conn())
            .await?;
        self.queued_again(match_id, code, "requeue").await
    }

    /// See [`Store::release_leases`](crate::store::Store::release_leases).
    pub async fn release_leases(&self, tournament: &str, reason: &str) -> Result<usize> {
        let released: i64 = SCRIPTS
            .release
            .keyed(&[(Id::Tournament, tournament)])?
            .arg(tournament)
            .arg(reason)
            .invoke_async(&mut self.conn())
            .await?;
        usize::try_from(released).map_err(|_| StoreError::UnknownTournament(tournament.to_owned()))
    }

    /// See [`Store::rejudge`](crate::store::Store::rejudge).
    pub async fn rejudge(&self, match_id: &str) -> Result<bool> {
        let code: i64 = SCRIPTS
            .rejudge
            .keyed(&[(Id::Match, match_id)])?
            .arg(match_id)
            .invoke_async(&mut self.conn())
            .await?;
        self.queued_again(match_id, code, "rejudge").await
    }

    /// What `requeue.lua` and `rejudge.lua` answered: 1 queued again, 0
    /// not in the state they take a match from, -1 no such match, -2 its
    /// tournament is cancelled.
    async fn queued_again(&self, match_id: &str, code: i64, script: &str) -> Result<bool> {
        match code {
            1 => Ok(true),
            0 => Ok(false),
            -1 => Err(StoreError::UnknownMatch(match_id.to_owned())),
            -2 => {
                let tournament: Option<String> =
                    self.conn().hget(keys::MATCH_TOURNAMENT, match_id).await?;
                Err(StoreError::Cancelled(tournament.unwrap_or_default()))
            }
            other => Err(StoreError::Corrupt(format!(
                "{script} script returned {other}"
            ))),
        }
    }

    /// See [`Store::put_entrant_token`](crate::store::Store::put_entrant_token).
    pub async fn put_entrant_token(&self, digest: &str, submission: &str) -> Result<()> {
        let () = self
            .conn()
            .hset(keys::ENTRANT_TOKENS, digest, submission)
            .await?;
        Ok(())
    }

    /// See [`Store::entrant_token`](crate::store::Store::entrant_token).
    pub async fn entrant_token(&self, digest: &str) -> Result<Option<String>> {
        Ok(self.conn().hget(keys::ENTRANT_TOKENS, digest).await?)
    }

    /// See [`Store::record_lease_end`](crate::store::Store::record_lease_end).
    pub async fn record_lease_end(&self, worker: &str, failed: bool, window: u32) -> Result<u32> {
        Ok(SCRIPTS
            .lease_end
            .keyed(&[(Id::Worker, worker)])?
            .arg(if failed { "1" } else { "0" })
            .arg(window)
            .invoke_async(&mut self.conn())
            .await?)
    }

    /// See [`Store::set_quarantined`](crate::store::Store::set_quarantined).
    pub async fn set_quarantined(&self, worker: &str, quarantined: bool) -> Result<()> {
        let mut pipe = redis::pipe();
        pipe.atomic();
        if quarantined {
            pipe.sadd(keys::QUARANTINED, worker).ignore();
        } else {
            pipe.srem(keys::QUARANTINED, worker)
                .ignore()
                .del(keys::lease_ends(worker))
                .ignore();
        }
        let () = pipe.query_async(&mut self.conn()).await?;
        Ok(())
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

    /// See [`Store::heartbeat_leases`](crate::store::Store::heartbeat_leases).
    pub async fn heartbeat_leases(
        &self,
        worker: &str,
        now_ms: u64,
        ttl_ms: u64,
        cached: Vec<EntrantId>,
        lease_ids: &[String],
    ) -> Result<Option<Vec<String>>> {
        let cached = to_json(&cached, format!("cache of worker {worker}"))?;
        let mut reply: Vec<String> = SCRIPTS
            .heartbeat_leases
            .keyed(&[])?
            .arg(worker)
            .arg(now_ms)
            .arg(cached)
            .arg(expiry(now_ms, ttl_ms))
            .arg(lease_ids)
            .invoke_async(&mut self.conn())
            .await?;
        let code = if reply.is_empty() {
            String::new()
        } else {
            reply.remove(0)
        };
        match code.as_str() {
            "1" => Ok(Some(reply)),
            "0" => Ok(None),
            "-1" => Err(not_holder(
                reply.first().map(String::as_str).unwrap_or_default(),
                worker,
            )),
            other => Err(StoreError::Corrupt(format!(
                "heartbeat_leases script returned {other:?}"
            ))),
        }
    }

    /// See [`Store::put_submission`](crate::store::Store::put_submission).
    ///
    /// A submission may be up to 2 GiB, more than one Redis value can hold
    /// (512 MB by default) and more than one command should carry, so it
    /// is written in chunks to a key of its own, which is renamed into
    /// place only once whole and read back against its hash: a reader never
    /// sees half a submission, and a stored one is never a wrong one.
    ///
    /// Each chunk goes to its own index once (`lua/push_chunk.lua`), so a
    /// command retried after a stalled reply cannot store a chunk twice. A
    /// submission already stored is read back and kept if its hash holds;
    /// one whose bytes do not match its name (written before chunks were
    /// idempotent) is replaced by these.
    pub async fn put_submission(&self, hash: &str, bytes: Vec<u8>) -> Result<()> {
        check_submission_hash(hash, &bytes)?;
        // A stored copy is kept if its hash holds (the same bytes again cost
        // nothing more), and replaced if it does not.
        let replace = match self.get_submission(hash).await? {
            Some(stored) if check_submission_hash(hash, &stored).is_ok() => return Ok(()),
            Some(_) => true,
            None => false,
        };
        let target = keys::submission(hash);
        let mut suffix = [0u8; 8];
        getrandom::fill(&mut suffix)
            .map_err(|e| StoreError::Corrupt(format!("randomness: {e}")))?;
        let suffix: String = suffix.iter().map(|b| format!("{b:02x}")).collect();
        let upload_id = format!("{hash}-{suffix}");
        let upload = keys::upload(&upload_id);
        let written = self
            .write_chunks(&upload_id, &target, hash, &bytes, replace)
            .await;
        if written.is_err() {
            let _: redis::RedisResult<i64> = self.conn().del(&upload).await;
        }
        written
    }

    /// Pushes `bytes` to the upload key of `upload_id` chunk by chunk, reads
    /// the upload back against `hash`, then renames it to `target`: over the
    /// stored copy when `replace` (it failed its hash), else only if `target`
    /// is still absent (a concurrent upload of the same bytes may have
    /// stored it; then this copy is dropped).
    async fn write_chunks(
        &self,
        upload_id: &str,
        target: &str,
        hash: &str,
        bytes: &[u8],
        replace: bool,
    ) -> Result<()> {
        let upload = keys::upload(upload_id);
        let upload = upload.as_str();
        // An empty archive is one empty chunk, so that it has a key too.
        let empty: &[u8] = &[];
        let chunks: Vec<&[u8]> = if bytes.is_empty() {
            vec![empty]
        } else {
            bytes.chunks(SUBMISSION_CHUNK).collect()
        };
        for (index, chunk) in chunks.iter().enumerate() {
            let length: usize = SCRIPTS
                .push_chunk
                .keyed(&[(Id::Upload, upload_id)])?
                .arg(index)
                .arg(*chunk)
                .arg(UPLOAD_TTL_S)
                .invoke_async(&mut self.conn())
                .await?;
            if length != index + 1 {
                return Err(StoreError::Corrupt(format!(
                    "upload of submission {hash}: chunk {index} landed at {}",
                    length.saturating_sub(1)
                )));
            }
        }
        let read_back = self.read_chunks(upload).await?;
        if read_back.is_none_or(|b| check_submission_hash(hash, &b).is_err()) {
            return Err(StoreError::Corrupt(format!(
                "upload of submission {hash} does not read back as written"
            )));
        }
        let moved: bool = if replace {
            let () = redis::cmd("RENAME")
                .arg(upload)
                .arg(target)
                .query_async(&mut self.conn())
                .await?;
            true
        } else {
            redis::cmd("RENAMENX")
                .arg(upload)
                .arg(target)
                .query_async(&mut self.conn())
                .await?
        };
        if moved {
            let _: bool = self.conn().persist(target).await?;
        } else {
            let _: i64 = self.conn().del(upload).await?;
        }
        Ok(())
    }
}

/// The largest piece of a submission one Redis command carries.
pub const SUBMISSION_CHUNK: usize = 8 << 20;

/// How long a half-written submission may sit before Redis drops it.
const UPLOAD_TTL_S: i64 = 3600;

/// A lease from what `take.lua` returns for a granted one.
fn lease_reply(worker: &str, expires_at_ms: u64, reply: Vec<Option<String>>) -> Result<Lease> {
    let [lease_id, match_id, attempt, tournament, round, pairing] =
        <[Option<String>; 6]>::try_from(reply).map_err(|reply| {
            StoreError::Corrupt(format!("lease script returned {} values", reply.len()))
        })?;
    let match_id = present(match_id, "leased match id")?;
    let what = |field: &str| format!("{field} of match {match_id}");
    Ok(Lease {
        lease_id: present(lease_id, "lease id")?,
        worker: worker.to_owned(),
        tournament: present(tournament, &what("tournament"))?,
        round: parse(&present(round, &what("round"))?, &what("round"))?,
        pairing: from_json(&present(pairing, &what("pairing"))?, what("pairing"))?,
        attempt: parse(&present(attempt, &what("attempt"))?, &what("attempt"))?,
        expires_at_ms,
        match_id,
    })
}

/// The window a script counts a lease's end in: 0 (no count) without a
/// rule, and never 0 with one (a window keeps at least one ending).
fn quarantine_window(rule: Option<QuarantineRule>) -> u32 {
    rule.map_or(0, |rule| rule.window.max(1))
}

/// The refusal of a lease call from a worker the lease was not granted to.
fn not_holder(lease_id: &str, worker: &str) -> StoreError {
    StoreError::NotLeaseHolder {
        lease_id: lease_id.to_owned(),
        worker: worker.to_owned(),
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
