//! The Redis store's reads. None of them writes, so none needs a script:
//! each is a plain command or an atomic pipeline (`MULTI`/`EXEC`), and none
//! can see a script half-applied. Reads over a tournament's matches
//! (`status`, `matches`, `results`) fetch the match ids first, so they can
//! miss a round scheduled in between.

use redis::{AsyncCommands, FromRedisValue};

use super::{RedisStore, keys, present};
use crate::domain::{EntrantId, MatchRecord, Pairing};
use crate::store::error::{Result, StoreError, from_json};
use crate::store::types::{
    AttemptFailure, MatchInfo, MatchState, Status, TournamentSpec, WorkerInfo,
};

impl RedisStore {
    /// See [`Store::tournament`](crate::store::Store::tournament).
    pub async fn tournament(&self, id: &str) -> Result<Option<TournamentSpec>> {
        let (json, cancelled): (Option<String>, bool) = redis::pipe()
            .atomic()
            .get(keys::spec(id))
            .sismember(keys::CANCELLED, id)
            .query_async(&mut self.conn())
            .await?;
        let Some(json) = json else {
            return Ok(None);
        };
        let mut spec: TournamentSpec = from_json(&json, format!("tournament spec {id}"))?;
        spec.cancelled = cancelled;
        Ok(Some(spec))
    }

    /// See [`Store::pairing`](crate::store::Store::pairing).
    pub async fn pairing(&self, match_id: &str) -> Result<Option<Pairing>> {
        let json: Option<String> = self.conn().hget(keys::MATCH_PAIRING, match_id).await?;
        json.map(|json| from_json(&json, format!("pairing of {match_id}")))
            .transpose()
    }

    /// See [`Store::tournaments`](crate::store::Store::tournaments).
    pub async fn tournaments(&self) -> Result<Vec<String>> {
        let mut ids: Vec<String> = self.conn().smembers(keys::TOURNAMENTS).await?;
        ids.sort();
        Ok(ids)
    }

    /// See [`Store::rounds_scheduled`](crate::store::Store::rounds_scheduled).
    pub async fn rounds_scheduled(&self, tournament: &str) -> Result<u32> {
        let (exists, rounds): (bool, Option<u32>) = redis::pipe()
            .atomic()
            .sismember(keys::TOURNAMENTS, tournament)
            .get(keys::rounds(tournament))
            .query_async(&mut self.conn())
            .await?;
        known(tournament, exists)?;
        Ok(rounds.unwrap_or(0))
    }

    /// See [`Store::byes`](crate::store::Store::byes).
    pub async fn byes(&self, tournament: &str) -> Result<Vec<(u32, EntrantId)>> {
        let (exists, byes): (bool, Vec<String>) = redis::pipe()
            .atomic()
            .sismember(keys::TOURNAMENTS, tournament)
            .lrange(keys::byes(tournament), 0, -1)
            .query_async(&mut self.conn())
            .await?;
        known(tournament, exists)?;
        byes.iter()
            .map(|json| from_json(json, format!("bye in {tournament}")))
            .collect()
    }

    /// See [`Store::queue_len`](crate::store::Store::queue_len).
    pub async fn queue_len(&self) -> Result<usize> {
        Ok(self.conn().llen(keys::QUEUE).await?)
    }

    /// See [`Store::next_expiry`](crate::store::Store::next_expiry).
    pub async fn next_expiry(&self) -> Result<Option<u64>> {
        let first: Vec<(String, f64)> = self.conn().zrange_withscores(keys::LEASES, 0, 0).await?;
        first
            .first()
            .map(|(lease, score)| {
                // Scores are integers below 2^53 that Redis stores as doubles.
                if score.is_finite() && *score >= 0.0 {
                    Ok(*score as u64)
                } else {
                    Err(StoreError::Corrupt(format!(
                        "lease {lease} expires at {score}"
                    )))
                }
            })
            .transpose()
    }

    /// See [`Store::results`](crate::store::Store::results).
    pub async fn results(&self, tournament: &str) -> Result<Vec<MatchRecord>> {
        let ids = self.match_ids(tournament).await?;
        let records: Vec<Option<String>> = self.hmget(keys::RESULTS, &ids).await?;
        ids.iter()
            .zip(records)
            .filter_map(|(id, json)| {
                json.map(|json| from_json(&json, format!("record of match {id}")))
            })
            .collect()
    }

    /// See [`Store::replay`](crate::store::Store::replay).
    pub async fn replay(&self, match_id: &str) -> Result<Option<Vec<u8>>> {
        Ok(self.conn().get(keys::replay(match_id)).await?)
    }

    /// See [`Store::status`](crate::store::Store::status).
    pub async fn status(&self, tournament: &str) -> Result<Status> {
        let (exists, ids, rounds, cancelled): (bool, Vec<String>, Option<u32>, bool) =
            redis::pipe()
                .atomic()
                .sismember(keys::TOURNAMENTS, tournament)
                .lrange(keys::matches(tournament), 0, -1)
                .get(keys::rounds(tournament))
                .sismember(keys::CANCELLED, tournament)
                .query_async(&mut self.conn())
                .await?;
        known(tournament, exists)?;
        let states: Vec<Option<String>> = self.hmget(keys::MATCH_STATE, &ids).await?;
        let mut status = Status {
            total: ids.len(),
            rounds_scheduled: rounds.unwrap_or(0),
            cancelled,
            ..Status::default()
        };
        for (id, state) in ids.iter().zip(states) {
            match state.as_deref() {
                Some("queued") => status.queued += 1,
                Some("leased") => status.leased += 1,
                Some("done") => status.done += 1,
                Some("dropped") => status.dropped += 1,
                Some("stuck") => status.stuck += 1,
                other => {
                    return Err(StoreError::Corrupt(format!(
                        "match {id} is in state {other:?}"
                    )));
                }
            }
        }
        Ok(status)
    }

    /// See [`Store::matches`](crate::store::Store::matches).
    pub async fn matches(&self, tournament: &str) -> Result<Vec<MatchInfo>> {
        let ids = self.match_ids(tournament).await?;
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let hmget = |key: &str| {
            let mut cmd = redis::cmd("HMGET");
            cmd.arg(key).arg(&ids);
            cmd
        };
        let (rounds, pairings, states, attempts, workers, errors, records): Columns = redis::pipe()
            .atomic()
            .add_command(hmget(keys::MATCH_ROUND))
            .add_command(hmget(keys::MATCH_PAIRING))
            .add_command(hmget(keys::MATCH_STATE))
            .add_command(hmget(keys::MATCH_ATTEMPT))
            .add_command(hmget(keys::MATCH_WORKER))
            .add_command(hmget(keys::MATCH_FAILURES))
            .add_command(hmget(keys::RESULTS))
            .query_async(&mut self.conn())
            .await?;
        let lengths = [
            rounds.len(),
            pairings.len(),
            states.len(),
            attempts.len(),
            workers.len(),
            errors.len(),
            records.len(),
        ];
        if lengths.iter().any(|&len| len != ids.len()) {
            return Err(StoreError::Corrupt("short HMGET reply".into()));
        }
        let mut infos = Vec::with_capacity(ids.len());
        for (i, id) in ids.into_iter().enumerate() {
            let what = |field: &str| format!("{field} of match {id}");
            let attempt = present(attempts[i], &what("attempt"))?;
            let state = match states[i].as_deref() {
                Some("queued") => MatchState::Queued,
                Some("leased") => MatchState::Leased {
                    worker: present(workers[i].clone(), &what("worker"))?,
                    attempt,
                },
                Some("done") => {
                    let json = present(records[i].as_deref(), &what("record"))?;
                    let record: MatchRecord = from_json(json, what("record"))?;
                    MatchState::Done {
                        ranks: record.seats.iter().map(|s| s.rank).collect(),
                        reason: record.reason,
                    }
                }
                Some("dropped") => MatchState::Dropped,
                Some("stuck") => MatchState::Stuck,
                other => {
                    return Err(StoreError::Corrupt(format!(
                        "match {id} is in state {other:?}"
                    )));
                }
            };
            let pairing: Pairing = from_json(
                present(pairings[i].as_deref(), &what("pairing"))?,
                what("pairing"),
            )?;
            let failures: Vec<AttemptFailure> = match errors[i].as_deref() {
                Some(json) => from_json(json, what("failures"))?,
                None => Vec::new(),
            };
            infos.push(MatchInfo {
                round: present(rounds[i], &what("round"))?,
                pairing,
                state,
                attempt,
                last_error: failures.last().map(|f| f.reason.clone()),
                failures,
                match_id: id,
            });
        }
        Ok(infos)
    }

    /// See [`Store::worker`](crate::store::Store::worker).
    pub async fn worker(&self, id: &str) -> Result<Option<WorkerInfo>> {
        let (info, cached): (Option<String>, Option<String>) = redis::pipe()
            .atomic()
            .hget(keys::WORKERS, id)
            .hget(keys::WORKER_CACHED, id)
            .query_async(&mut self.conn())
            .await?;
        info.map(|info| worker_info(id, &info, cached.as_deref()))
            .transpose()
    }

    /// See [`Store::workers`](crate::store::Store::workers).
    pub async fn workers(&self, now_ms: u64, alive_within_ms: u64) -> Result<Vec<WorkerInfo>> {
        let oldest = now_ms.saturating_sub(alive_within_ms);
        let mut ids: Vec<String> = self
            .conn()
            .zrangebyscore(keys::WORKER_SEEN, oldest, "+inf")
            .await?;
        ids.sort();
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let (infos, caches): (Vec<Option<String>>, Vec<Option<String>>) = redis::pipe()
            .atomic()
            .cmd("HMGET")
            .arg(keys::WORKERS)
            .arg(&ids)
            .cmd("HMGET")
            .arg(keys::WORKER_CACHED)
            .arg(&ids)
            .query_async(&mut self.conn())
            .await?;
        ids.iter()
            .zip(infos.into_iter().zip(caches))
            .map(|(id, (info, cached))| {
                let info = present(info, &format!("worker {id}"))?;
                worker_info(id, &info, cached.as_deref())
            })
            .collect()
    }

    /// See [`Store::worker_seen`](crate::store::Store::worker_seen).
    pub async fn worker_seen(&self, id: &str) -> Result<Option<u64>> {
        let (registered, seen): (bool, Option<f64>) = redis::pipe()
            .atomic()
            .hexists(keys::WORKERS, id)
            .zscore(keys::WORKER_SEEN, id)
            .query_async(&mut self.conn())
            .await?;
        // Scores are integers below 2^53 that Redis stores as doubles.
        Ok(seen
            .filter(|at| registered && at.is_finite() && *at >= 0.0)
            .map(|at| at as u64))
    }

    /// See [`Store::quarantined`](crate::store::Store::quarantined).
    pub async fn quarantined(&self) -> Result<Vec<String>> {
        let mut ids: Vec<String> = self.conn().smembers(keys::QUARANTINED).await?;
        ids.sort();
        Ok(ids)
    }

    /// See [`Store::is_quarantined`](crate::store::Store::is_quarantined).
    pub async fn is_quarantined(&self, worker: &str) -> Result<bool> {
        Ok(self.conn().sismember(keys::QUARANTINED, worker).await?)
    }

    /// The bytes of the chunk list at `key`, `None` if there is none. One
    /// chunk a command, so no reply is larger than a chunk.
    pub(super) async fn read_chunks(&self, key: &str) -> Result<Option<Vec<u8>>> {
        let count: usize = self.conn().llen(key).await?;
        if count == 0 {
            return Ok(None);
        }
        let mut bytes = Vec::new();
        for index in 0..count {
            let chunk: Option<Vec<u8>> = self.conn().lindex(key, index as isize).await?;
            let chunk = present(chunk, &format!("chunk {index} of {key}"))?;
            bytes.extend_from_slice(&chunk);
        }
        Ok(Some(bytes))
    }

    /// See [`Store::get_submission`](crate::store::Store::get_submission).
    pub async fn get_submission(&self, hash: &str) -> Result<Option<Vec<u8>>> {
        let key = keys::submission(hash);
        let kind: String = redis::cmd("TYPE")
            .arg(&key)
            .query_async(&mut self.conn())
            .await?;
        match kind.as_str() {
            "none" => Ok(None),
            // Stored whole, before submissions were chunked.
            "string" => Ok(self.conn().get(&key).await?),
            "list" => self.read_chunks(&key).await,
            other => Err(StoreError::Corrupt(format!(
                "submission {hash} is stored as a {other}"
            ))),
        }
    }

    /// See [`Store::has_submission`](crate::store::Store::has_submission).
    pub async fn has_submission(&self, hash: &str) -> Result<bool> {
        Ok(self.conn().exists(keys::submission(hash)).await?)
    }

    /// A known tournament's match ids in schedule order.
    async fn match_ids(&self, tournament: &str) -> Result<Vec<String>> {
        let (exists, ids): (bool, Vec<String>) = redis::pipe()
            .atomic()
            .sismember(keys::TOURNAMENTS, tournament)
            .lrange(keys::matches(tournament), 0, -1)
            .query_async(&mut self.conn())
            .await?;
        known(tournament, exists)?;
        Ok(ids)
    }

    /// `HMGET key fields...`, answering an empty list for no fields (which
    /// Redis itself would reject).
    async fn hmget<T: FromRedisValue>(&self, key: &str, fields: &[String]) -> Result<Vec<T>> {
        if fields.is_empty() {
            return Ok(Vec::new());
        }
        let values: Vec<T> = redis::cmd("HMGET")
            .arg(key)
            .arg(fields)
            .query_async(&mut self.conn())
            .await?;
        if values.len() != fields.len() {
            return Err(StoreError::Corrupt(format!("short HMGET reply from {key}")));
        }
        Ok(values)
    }
}

/// The per-match hashes `matches` reads, one column each, in the order it
/// asks for them: round, pairing, state, attempt, worker, failures, record.
type Columns = (
    Vec<Option<u32>>,
    Vec<Option<String>>,
    Vec<Option<String>>,
    Vec<Option<u32>>,
    Vec<Option<String>>,
    Vec<Option<String>>,
    Vec<Option<String>>,
);

/// A worker from its two fields: the registration in [`keys::WORKERS`] and
/// the build cache kept apart in [`keys::WORKER_CACHED`].
fn worker_info(id: &str, info: &str, cached: Option<&str>) -> Result<WorkerInfo> {
    let mut info: WorkerInfo = from_json(info, format!("worker {id}"))?;
    if let Some(cached) = cached {
        info.cached = from_json(cached, format!("cache of worker {id}"))?;
    }
    Ok(info)
}

/// `Err(UnknownTournament)` unless `exists`.
fn known(tournament: &str, exists: bool) -> Result<()> {
    if exists {
        Ok(())
    } else {
        Err(StoreError::UnknownTournament(tournament.to_owned()))
    }
}
