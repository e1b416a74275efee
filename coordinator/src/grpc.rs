//! The gRPC services: thin adapters from wire types to [`Coordinator`]
//! calls. Authentication happens once, in an interceptor per service; every
//! error becomes a `Status` in one `From` impl.

use std::collections::BTreeSet;
use std::pin::Pin;
use std::sync::Arc;

use arena_proto::v1::admin_server::{Admin, AdminServer};
use arena_proto::v1::worker_server::{Worker, WorkerServer};
use arena_proto::v1::*;
use tokio_stream::Stream;
use tonic::service::interceptor::InterceptedService;
use tonic::{Request, Response, Status};

use crate::domain::{MatchRecord, SeatResult as DomainSeat, baseline_id};
use crate::service::{Coordinator, CoordinatorError, NewTournament, chain};
use crate::store::{AttemptEnd, CompleteOutcome, MatchState, StoreError, WorkerInfo};
use crate::tournament_file::TournamentFile;

/// Size of each chunk a submission is streamed in.
const CHUNK_BYTES: usize = 256 * 1024;

impl From<CoordinatorError> for Status {
    fn from(error: CoordinatorError) -> Status {
        let message = chain(&error);
        match error {
            CoordinatorError::UnknownTournament(_) | CoordinatorError::UnknownMatch(_) => {
                Status::not_found(message)
            }
            CoordinatorError::Cancelled(_) => Status::failed_precondition(message),
            CoordinatorError::UnknownSubmission(_)
            | CoordinatorError::DuplicateSubmission(_)
            | CoordinatorError::Invalid(_)
            | CoordinatorError::Game(_)
            | CoordinatorError::Rules(_)
            | CoordinatorError::Limits(_)
            | CoordinatorError::Teams(_)
            | CoordinatorError::InvalidResult(_)
            | CoordinatorError::Schedule(_) => Status::invalid_argument(message),
            CoordinatorError::Store(StoreError::AlreadyExists(_)) => {
                Status::already_exists(message)
            }
            CoordinatorError::UnregisteredWorker(_) | CoordinatorError::NotStuck(_) => {
                Status::failed_precondition(message)
            }
            CoordinatorError::Quarantined(_)
            | CoordinatorError::Store(StoreError::NotLeaseHolder { .. }) => {
                Status::permission_denied(message)
            }
            // Redis or the blob store unreachable: the caller should retry
            // (a worker keeps its lease alive while it retries a result).
            CoordinatorError::Store(StoreError::Redis(_)) | CoordinatorError::Attachments(_) => {
                Status::unavailable(message)
            }
            _ => Status::internal(message),
        }
    }
}

/// Bearer tokens admitted to each service.
#[derive(Clone, Debug, Default)]
pub struct Tokens {
    pub workers: BTreeSet<String>,
    pub admins: BTreeSet<String>,
}

/// Refuses calls without one of `allowed` as `authorization: Bearer <token>`.
#[derive(Clone)]
pub struct Auth {
    allowed: Arc<BTreeSet<String>>,
}

impl tonic::service::Interceptor for Auth {
    fn call(&mut self, request: Request<()>) -> Result<Request<()>, Status> {
        let presented = request
            .metadata()
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "));
        match presented {
            Some(token) if self.allowed.contains(token) => Ok(request),
            Some(_) => Err(Status::unauthenticated("invalid token")),
            None => Err(Status::unauthenticated("missing bearer token")),
        }
    }
}

/// The two services, each behind its own token check. Admin tokens are also
/// accepted by the worker service (an admin may run a worker).
pub fn services(
    coordinator: Arc<Coordinator>,
    tokens: &Tokens,
) -> (
    InterceptedService<WorkerServer<WorkerService>, Auth>,
    InterceptedService<AdminServer<AdminService>, Auth>,
) {
    let worker_auth = Auth {
        allowed: Arc::new(tokens.workers.union(&tokens.admins).cloned().collect()),
    };
    let admin_auth = Auth {
        allowed: Arc::new(tokens.admins.clone()),
    };
    (
        WorkerServer::with_interceptor(
            WorkerService {
                coordinator: Arc::clone(&coordinator),
            },
            worker_auth,
        ),
        AdminServer::with_interceptor(AdminService { coordinator }, admin_auth),
    )
}

pub struct WorkerService {
    coordinator: Arc<Coordinator>,
}

type ChunkStream = Pin<Box<dyn Stream<Item = Result<SubmissionChunk, Status>> + Send>>;

#[tonic::async_trait]
impl Worker for WorkerService {
    async fn register(
        &self,
        request: Request<RegisterRequest>,
    ) -> Result<Response<RegisterResponse>, Status> {
        let r = request.into_inner();
        if r.worker_id.is_empty() {
            return Err(Status::invalid_argument("worker_id is empty"));
        }
        self.coordinator
            .register_worker(WorkerInfo {
                id: r.worker_id,
                cores: r.cores,
                memory_mb: r.memory_mb,
                environment_id: r.environment_id,
                cached: r.cached_builds,
                wasm_runtime: r.wasm_runtime,
                model_runtime: r.model_runtime,
                slots: r.slots,
            })
            .await?;
        let config = self.coordinator.config();
        Ok(Response::new(RegisterResponse {
            heartbeat_interval_ms: config.heartbeat_interval.as_millis() as u64,
            lease_ttl_ms: config.lease_ttl.as_millis() as u64,
            progress_interval_ms: config.progress_interval.as_millis() as u64,
        }))
    }

    async fn heartbeat(
        &self,
        request: Request<HeartbeatRequest>,
    ) -> Result<Response<HeartbeatResponse>, Status> {
        let r = request.into_inner();
        let lost = self
            .coordinator
            .heartbeat(&r.worker_id, &r.lease_ids, r.cached_builds)
            .await?;
        // Only leases the store just extended for this worker say how far
        // their matches have got.
        let extended: std::collections::BTreeSet<&str> = r
            .lease_ids
            .iter()
            .map(String::as_str)
            .filter(|id| !lost.iter().any(|l| l == id))
            .collect();
        self.coordinator.record_progress(
            &r.worker_id,
            r.progress
                .into_iter()
                .filter(|p| extended.contains(p.lease_id.as_str()))
                .map(|p| (p.match_id, p.turn)),
        );
        Ok(Response::new(HeartbeatResponse {
            lost_lease_ids: lost,
        }))
    }

    async fn lease(
        &self,
        request: Request<LeaseRequest>,
    ) -> Result<Response<LeaseResponse>, Status> {
        let r = request.into_inner();
        let leased = self.coordinator.lease(&r.worker_id).await?;
        Ok(Response::new(LeaseResponse {
            r#match: leased.map(leased_match).transpose()?,
        }))
    }

    type FetchSubmissionStream = ChunkStream;

    async fn fetch_submission(
        &self,
        request: Request<FetchSubmissionRequest>,
    ) -> Result<Response<ChunkStream>, Status> {
        let hash = request.into_inner().hash;
        let bytes = self
            .coordinator
            .store()
            .get_submission(&hash)
            .await
            .map_err(CoordinatorError::from)?
            .ok_or_else(|| Status::not_found(format!("no submission {hash}")))?;
        let chunks: Vec<Result<SubmissionChunk, Status>> = bytes
            .chunks(CHUNK_BYTES)
            .map(|c| Ok(SubmissionChunk { data: c.to_vec() }))
            .collect();
        Ok(Response::new(Box::pin(tokio_stream::iter(chunks))))
    }

    async fn report_result(
        &self,
        request: Request<ReportResultRequest>,
    ) -> Result<Response<ReportResultResponse>, Status> {
        let r = request.into_inner();
        let record = match_record(&r)?;
        let replay = (!r.replay.is_empty()).then_some(r.replay);
        let outcome = self
            .coordinator
            .report(
                &r.worker_id,
                &r.lease_id,
                record,
                replay,
                r.seat_logs,
                r.duration_s,
            )
            .await?;
        let outcome = match outcome {
            CompleteOutcome::Accepted => ReportOutcome::Accepted,
            CompleteOutcome::Duplicate => ReportOutcome::Duplicate,
            CompleteOutcome::StaleLease | CompleteOutcome::Unknown => ReportOutcome::StaleLease,
        };
        Ok(Response::new(ReportResultResponse {
            outcome: outcome as i32,
        }))
    }

    async fn report_failure(
        &self,
        request: Request<ReportFailureRequest>,
    ) -> Result<Response<ReportFailureResponse>, Status> {
        let r = request.into_inner();
        let ended = self
            .coordinator
            .fail(&r.worker_id, &r.match_id, &r.lease_id, &r.reason)
            .await?;
        Ok(Response::new(ReportFailureResponse {
            requeued: ended == Some(AttemptEnd::Requeued),
        }))
    }

    async fn report_progress(
        &self,
        request: Request<ProgressRequest>,
    ) -> Result<Response<ProgressResponse>, Status> {
        let r = request.into_inner();
        self.coordinator.record_boards(
            &r.worker_id,
            r.progress
                .into_iter()
                .map(|p| (p.match_id, p.turn, p.board)),
        );
        Ok(Response::new(ProgressResponse {}))
    }
}

/// A domain lease on the wire: seats with their baselines, and the
/// tournament's resolved rules and limits.
fn leased_match(m: crate::service::LeasedMatch) -> Result<arena_proto::v1::LeasedMatch, Status> {
    let rules_json = serde_json::to_string(&m.rules)
        .map_err(|e| Status::internal(format!("writing the rules as JSON: {e}")))?;
    let fuel = m.limits.fuel;
    Ok(arena_proto::v1::LeasedMatch {
        lease_id: m.lease.lease_id,
        match_id: m.lease.match_id,
        tournament_id: m.lease.tournament,
        game: m.game,
        seed: m.lease.pairing.seed,
        seats: m
            .seats
            .into_iter()
            .map(|seat| Seat {
                submission: seat.submission,
                name: seat.name,
                baseline: seat.baseline.unwrap_or_default(),
            })
            .collect(),
        attempt: m.lease.attempt,
        lease_ttl_ms: m.ttl.as_millis() as u64,
        move_ms: m.limits.move_ms,
        first_move_ms: m.limits.first_move_ms,
        fault_limit: m.limits.fault_limit,
        rules_json,
        reply_cap: m.limits.reply_cap,
        fuel_per_turn: fuel.map_or(0, |f| f.per_turn),
        fuel_bank: fuel.map_or(0, |f| f.bank),
        init_fuel: fuel.map_or(0, |f| f.init),
        fuel_wall_ms: fuel.map_or(0, |f| f.wall_ms),
        model_bytes: m.limits.model.map_or(0, |l| l.max_bytes),
        model_macs: m.limits.model.map_or(0, |l| l.max_macs),
    })
}

/// The wire forfeit as the engine's word; `None` for `FORFEIT_NONE`.
fn forfeit(kind: i32, seat: usize) -> Result<Option<arena_engine::Forfeit>, Status> {
    use arena_engine::Forfeit as F;
    Ok(match Forfeit::try_from(kind) {
        Ok(Forfeit::None) => None,
        Ok(Forfeit::Crash) => Some(F::Crash),
        Ok(Forfeit::Exit) => Some(F::Exit),
        Ok(Forfeit::Memory) => Some(F::Memory),
        Ok(Forfeit::Faults) => Some(F::Faults),
        Ok(Forfeit::BuildFailed) => Some(F::BuildFailed),
        Ok(Forfeit::Trap) => Some(F::Trap),
        Ok(Forfeit::WallBackstop) => Some(F::WallBackstop),
        Err(_) => {
            return Err(Status::invalid_argument(format!(
                "seat {seat}: unknown forfeit kind {kind}"
            )));
        }
    })
}

/// The wire result as a domain record; the round comes from the match id.
/// A seat names a submission or a baseline, never both; a baseline seat
/// becomes the entrant id `baseline:NAME`. Whether the record fits its
/// match is the coordinator's check ([`crate::report::check`]).
fn match_record(r: &ReportResultRequest) -> Result<MatchRecord, Status> {
    let round = crate::service::match_round(&r.match_id)
        .ok_or_else(|| Status::invalid_argument(format!("malformed match id {:?}", r.match_id)))?;
    if r.seats.len() < 2 {
        return Err(Status::invalid_argument(
            "a result needs at least two seats",
        ));
    }
    let seats = r
        .seats
        .iter()
        .enumerate()
        .map(|(seat, s)| {
            let (entrant, baseline) = match (s.submission.as_str(), s.baseline.as_str()) {
                (submission, "") => (submission.to_owned(), None),
                ("", baseline) => (baseline_id(baseline), Some(baseline.to_owned())),
                (submission, baseline) => {
                    return Err(Status::invalid_argument(format!(
                        "seat {seat}: names both submission {submission} and baseline {baseline:?}"
                    )));
                }
            };
            Ok(DomainSeat {
                entrant,
                rank: s.rank,
                score: s.score,
                team: s.team,
                forfeit: forfeit(s.forfeit_kind, seat)?,
                baseline,
                stats: seat_stats(s),
                timeouts: s.timeouts,
                malformed: s.malformed,
                moves: s.moves,
            })
        })
        .collect::<Result<_, Status>>()?;
    Ok(MatchRecord {
        match_id: r.match_id.clone(),
        round,
        seats,
        reason: r.reason.clone(),
        turns: r.turns,
        worker: String::new(),
    })
}

/// A seat's stats as the record keeps them: the game's counters, and the
/// runner's counts the domain record has no field for under the names of
/// [`crate::domain`]'s `*_STAT` constants. `illegal` comes from its field,
/// or, from a worker older than the field, from the `illegal_replies` stat
/// such workers wrote; the fuel keys only when the seat used fuel (a
/// WebAssembly seat), the strikes only when a model-graph seat had any.
fn seat_stats(s: &arena_proto::v1::SeatResult) -> std::collections::BTreeMap<String, u64> {
    use crate::domain::{
        FUEL_EXHAUSTED_STAT, FUEL_MAX_STAT, FUEL_P50_STAT, ILLEGAL_STAT, LATENCY_P50_STAT,
        LATENCY_P99_STAT, STRIKE_STAT,
    };
    // Milliseconds on the wire, whole microseconds among the counters.
    let micros = |ms: f64| {
        if ms.is_finite() && ms > 0.0 {
            (ms * 1000.0).round().min(u64::MAX as f64) as u64
        } else {
            0
        }
    };
    let mut stats: std::collections::BTreeMap<String, u64> =
        s.stats.iter().map(|(k, v)| (k.clone(), *v)).collect();
    for (key, value) in [
        (ILLEGAL_STAT, u64::from(s.illegal)),
        (FUEL_EXHAUSTED_STAT, u64::from(s.fuel_exhausted)),
        (FUEL_P50_STAT, s.fuel_p50),
        (FUEL_MAX_STAT, s.fuel_max),
        (STRIKE_STAT, u64::from(s.strike)),
        (LATENCY_P50_STAT, micros(s.latency_p50_ms)),
        (LATENCY_P99_STAT, micros(s.latency_p99_ms)),
    ] {
        if value > 0 {
            stats.insert(key.to_owned(), value);
        }
    }
    stats
}

pub struct AdminService {
    coordinator: Arc<Coordinator>,
}

#[tonic::async_trait]
impl Admin for AdminService {
    async fn create_tournament(
        &self,
        request: Request<CreateTournamentRequest>,
    ) -> Result<Response<CreateTournamentResponse>, Status> {
        let text = request.into_inner().spec_toml;
        let file = TournamentFile::parse(&text).map_err(|e| Status::invalid_argument(chain(&e)))?;
        // Over the wire, each bot's `path` names an uploaded submission hash.
        let entrants = file
            .bots
            .iter()
            .map(|b| (b.name.clone(), b.path.display().to_string()))
            .collect();
        let id = self
            .coordinator
            .create_tournament(NewTournament {
                name: file.name,
                game: file.game,
                seats: file.seats,
                base_seed: file.seed,
                format: file.format,
                rules: file.rules,
                limits: file.limits,
                entrants,
                environment: file.environment,
                teams: Some(file.teams),
                wasm_runtime: file.wasm_runtime,
                model_runtime: file.model_runtime,
                live_board: file.live_board,
            })
            .await?;
        Ok(Response::new(CreateTournamentResponse {
            tournament_id: id,
        }))
    }

    async fn upload_submission(
        &self,
        request: Request<UploadSubmissionRequest>,
    ) -> Result<Response<UploadSubmissionResponse>, Status> {
        let r = request.into_inner();
        if r.archive.is_empty() {
            return Err(Status::invalid_argument("empty archive"));
        }
        let hash = crate::submission_id(&r.archive);
        self.coordinator
            .store()
            .put_submission(&hash, r.archive)
            .await
            .map_err(CoordinatorError::from)?;
        let entrant_token = self.coordinator.issue_entrant_token(&hash).await?;
        Ok(Response::new(UploadSubmissionResponse {
            hash,
            entrant_token,
        }))
    }

    async fn upload_submission_chunks(
        &self,
        request: Request<tonic::Streaming<UploadSubmissionChunk>>,
    ) -> Result<Response<UploadSubmissionResponse>, Status> {
        const LIMIT: u64 = arena_proto::MAX_SUBMISSION_BYTES;
        let mut chunks = request.into_inner();
        let mut archive = Vec::new();
        while let Some(chunk) = chunks.message().await? {
            // Checked before the bytes are kept: a client that sends more
            // never makes the coordinator hold more than the limit.
            let total = (archive.len() as u64).saturating_add(chunk.data.len() as u64);
            if total > LIMIT {
                return Err(Status::resource_exhausted(format!(
                    "the submission archive is larger than {LIMIT} bytes (2 GiB), \
                     the most a submission may be"
                )));
            }
            archive.extend_from_slice(&chunk.data);
        }
        if archive.is_empty() {
            return Err(Status::invalid_argument("empty archive"));
        }
        let hash = crate::submission_id(&archive);
        self.coordinator
            .store()
            .put_submission(&hash, archive)
            .await
            .map_err(CoordinatorError::from)?;
        let entrant_token = self.coordinator.issue_entrant_token(&hash).await?;
        Ok(Response::new(UploadSubmissionResponse {
            hash,
            entrant_token,
        }))
    }

    async fn status(
        &self,
        request: Request<StatusRequest>,
    ) -> Result<Response<StatusResponse>, Status> {
        let id = request.into_inner().tournament_id;
        let (status, rounds_total) = self.coordinator.status(&id).await?;
        let finished = crate::service::is_finished(&status, rounds_total);
        let workers = self.coordinator.live_workers().await?;
        Ok(Response::new(StatusResponse {
            total: status.total as u64,
            queued: status.queued as u64,
            leased: status.leased as u64,
            done: status.done as u64,
            rounds_scheduled: status.rounds_scheduled,
            rounds_total,
            cancelled: status.cancelled,
            finished,
            workers_connected: workers.len() as u32,
            stuck: status.stuck as u64,
            dropped: status.dropped as u64,
        }))
    }

    async fn standings(
        &self,
        request: Request<StandingsRequest>,
    ) -> Result<Response<StandingsResponse>, Status> {
        let id = request.into_inner().tournament_id;
        let standings = self.coordinator.standings(&id).await?;
        Ok(Response::new(StandingsResponse {
            json: standings.to_json(),
            csv: standings.to_csv(),
        }))
    }

    async fn matches(
        &self,
        request: Request<MatchesRequest>,
    ) -> Result<Response<MatchesResponse>, Status> {
        let id = request.into_inner().tournament_id;
        let matches = self
            .coordinator
            .store()
            .matches(&id)
            .await
            .map_err(CoordinatorError::from)?;
        Ok(Response::new(MatchesResponse {
            matches: matches
                .into_iter()
                .map(|m| {
                    let mut worker = String::new();
                    let (state, reason, ranks) = match m.state {
                        MatchState::Queued => ("queued", String::new(), Vec::new()),
                        MatchState::Leased { worker: holder, .. } => {
                            worker = holder;
                            ("leased", String::new(), Vec::new())
                        }
                        MatchState::Done { reason, ranks } => ("done", reason, ranks),
                        MatchState::Dropped => ("dropped", String::new(), Vec::new()),
                        MatchState::Stuck => ("stuck", String::new(), Vec::new()),
                    };
                    MatchSummary {
                        match_id: m.match_id,
                        round: m.round,
                        seats: m.pairing.seats,
                        state: state.to_owned(),
                        attempt: m.attempt,
                        reason,
                        ranks,
                        failures: m
                            .failures
                            .into_iter()
                            .map(|f| AttemptFailure {
                                attempt: f.attempt,
                                worker: f.worker,
                                reason: f.reason,
                            })
                            .collect(),
                        worker,
                    }
                })
                .collect(),
        }))
    }

    async fn cancel(
        &self,
        request: Request<CancelRequest>,
    ) -> Result<Response<CancelResponse>, Status> {
        self.coordinator
            .cancel(&request.into_inner().tournament_id)
            .await?;
        Ok(Response::new(CancelResponse {}))
    }

    async fn requeue(
        &self,
        request: Request<RequeueRequest>,
    ) -> Result<Response<RequeueResponse>, Status> {
        self.coordinator
            .requeue(&request.into_inner().match_id)
            .await?;
        Ok(Response::new(RequeueResponse {}))
    }

    async fn workers(
        &self,
        _request: Request<WorkersRequest>,
    ) -> Result<Response<WorkersResponse>, Status> {
        let workers = self.coordinator.workers().await?;
        Ok(Response::new(WorkersResponse {
            workers: workers
                .into_iter()
                .map(|w| WorkerSummary {
                    worker_id: w.info.id,
                    cores: w.info.cores,
                    memory_mb: w.info.memory_mb,
                    environment_id: w.info.environment_id,
                    alive: w.alive,
                    quarantined: w.quarantined,
                    cached_builds: w.info.cached.len() as u32,
                })
                .collect(),
        }))
    }

    async fn release_worker(
        &self,
        request: Request<ReleaseWorkerRequest>,
    ) -> Result<Response<ReleaseWorkerResponse>, Status> {
        self.coordinator
            .release_worker(&request.into_inner().worker_id)
            .await?;
        Ok(Response::new(ReleaseWorkerResponse {}))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_model_seats_strikes_are_kept_among_its_stats_and_only_when_any() {
        let struck = arena_proto::v1::SeatResult {
            strike: 4,
            illegal: 1,
            ..Default::default()
        };
        let stats = seat_stats(&struck);
        assert_eq!(stats.get(crate::domain::STRIKE_STAT), Some(&4));
        assert_eq!(stats.get(crate::domain::ILLEGAL_STAT), Some(&1));
        assert!(!stats.contains_key(crate::domain::FUEL_EXHAUSTED_STAT));
        let clean = seat_stats(&arena_proto::v1::SeatResult::default());
        assert!(clean.is_empty(), "{clean:?}");
    }
}
