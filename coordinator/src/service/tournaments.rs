//! Tournaments: creating one (checked against its game's registry entry,
//! its entrants' archives read for WebAssembly and model-graph bots),
//! scheduling its rounds as they fall due, and what organisers and pages ask
//! of it (status, standings, cancelling).

use arena_engine::Rules;
use arena_engine::registry::{self, GameEntry, LimitOverrides, Limits};
use tracing::field::Empty;

use super::ids::{match_id, tournament_id};
use super::{Coordinator, CoordinatorError, Result, entrant_ids, sides};
use crate::domain::{EntrantId, Format, MatchRecord, baseline_name};
use crate::schedule;
use crate::standings::{self, Standings};
use crate::store::{Entrant, LiveBoard, ScheduledMatch, Status, StoreError, TournamentSpec};
use crate::teams::{self, Sides, TeamError};

/// A tournament as submitted: entrants are submissions already uploaded.
/// `game`, `seats`, `rules` and `limits` are checked against the game's
/// registry entry again on creation (a [`TournamentFile`] has resolved them
/// already; resolving twice changes nothing).
///
/// [`TournamentFile`]: crate::tournament_file::TournamentFile
#[derive(Clone, Debug)]
pub struct NewTournament {
    /// Who may watch a running match's board.
    pub live_board: LiveBoard,
    pub name: String,
    /// A registered game's name.
    pub game: String,
    pub seats: usize,
    pub base_seed: u64,
    pub format: Format,
    /// The game's options; completed with the game's defaults on creation.
    pub rules: Rules,
    /// The limits every match is played under, complete.
    pub limits: Limits,
    /// (display name, submission hash), one per entrant.
    pub entrants: Vec<(String, String)>,
    /// Only workers reporting this environment id may play its matches.
    pub environment: Option<String>,
    /// The side each seat plays for. `None`, the usual: read from the game
    /// on creation ([`teams::probe`]). `Some(layout)` declares it: it must
    /// be the game's own layout where the game reports one, and is taken as
    /// given for a game that reports none (so a team layout can be played
    /// before its game reports it, as the tests do).
    pub teams: Option<Vec<u32>>,
    /// The wasm runtime (a fingerprint, `arena_wasm::fingerprint`) its
    /// WebAssembly seats must be played with: `arena tournament create` and
    /// `arena run` name their own unless the tournament file names one.
    /// `None`: any worker that runs wasm. Dropped on creation when no
    /// entrant is a WebAssembly bot (see [`crate::wasm`]).
    pub wasm_runtime: Option<String>,
    /// The model runtime (such as `tract-onnx-0.23.9`) its model-graph
    /// seats must be played with: `arena tournament create` and `arena run`
    /// name their own unless the tournament file names one. `None`: any
    /// worker that plays models. Dropped on creation when no entrant is a
    /// model-graph bot (see [`crate::model_graph`]).
    pub model_runtime: Option<String>,
}

/// Whether a status snapshot shows every round scheduled and every match
/// decided. Callers that also print the counts must decide from the same
/// snapshot, or a result landing in between shows "29/30 done, finished".
pub fn is_finished(status: &Status, rounds_total: u32) -> bool {
    status.rounds_scheduled >= rounds_total && status.queued + status.leased == 0
}

impl Coordinator {
    /// Creates (or, for an identical tournament, finds) a tournament and
    /// schedules what can be scheduled. Returns its id, which is derived from
    /// its content: submitting the same tournament twice is harmless.
    pub async fn create_tournament(&self, mut new: NewTournament) -> Result<String> {
        let entry = registry::find(&new.game)?;
        entry.check_seats(new.seats)?;
        new.rules = entry.rules(&new.rules)?;
        // Complete already; this checks every limit is playable.
        new.limits = new.limits.with(&LimitOverrides::default())?;
        let layout = resolve_teams(entry, &new)?;
        let sides = Sides::new(new.seats, &layout)?.count();
        new.teams = Some(layout);
        if new.entrants.is_empty() {
            return Err(CoordinatorError::Invalid(
                "a tournament needs at least one entrant".into(),
            ));
        }
        // Baselines fill the seats entrants leave empty, if the game has
        // any. A team entrant plays every seat of its side, so a team game
        // needs one entrant per side.
        if new.entrants.len() < sides && fill_baseline(entry).is_none() {
            return Err(CoordinatorError::Invalid(format!(
                "{} entrants cannot fill {sides} {}",
                new.entrants.len(),
                if sides == new.seats { "seats" } else { "sides" },
            )));
        }
        let mut seen = std::collections::BTreeSet::new();
        for (_, hash) in &new.entrants {
            if baseline_name(hash).is_some() {
                return Err(CoordinatorError::UnknownSubmission(hash.clone()));
            }
            if !seen.insert(hash.clone()) {
                return Err(CoordinatorError::DuplicateSubmission(hash.clone()));
            }
            if !self.store.has_submission(hash).await? {
                return Err(CoordinatorError::UnknownSubmission(hash.clone()));
            }
        }
        let wasm_entrants = self.wasm_entrants(&new).await?;
        if wasm_entrants.is_empty() {
            new.wasm_runtime = None;
        }
        let model_entrants = self.model_entrants(&new).await?;
        if model_entrants.is_empty() {
            new.model_runtime = None;
        }
        let id = tournament_id(&new);
        let spec = TournamentSpec {
            id: id.clone(),
            name: new.name,
            game: new.game,
            format: new.format,
            seats: new.seats,
            base_seed: new.base_seed,
            entrants: new
                .entrants
                .into_iter()
                .map(|(name, hash)| Entrant { id: hash, name })
                .collect(),
            cancelled: false,
            rules: new.rules,
            limits: new.limits,
            environment: new.environment,
            teams: new.teams.unwrap_or_default(),
            wasm_entrants,
            wasm_runtime: new.wasm_runtime,
            model_entrants,
            model_runtime: new.model_runtime,
            live_board: new.live_board,
        };
        match self.store.create_tournament(spec).await {
            Ok(()) => {}
            // The same definition again is the same tournament, unless it
            // was cancelled: then creating it is refused, not a silent no-op.
            Err(StoreError::AlreadyExists(_)) => {
                if self.spec(&id).await?.cancelled {
                    return Err(CoordinatorError::Cancelled(id));
                }
            }
            Err(e) => return Err(e.into()),
        }
        self.advance(&id).await?;
        Ok(id)
    }

    /// The entrants of `new` that are WebAssembly bots, read off their
    /// archives ([`crate::wasm::is_wasm_archive`]); none in a game without
    /// fuel, whose archives are not read at all.
    async fn wasm_entrants(&self, new: &NewTournament) -> Result<Vec<EntrantId>> {
        if new.limits.fuel.is_none() {
            return Ok(Vec::new());
        }
        self.entrants_whose_archive(new, crate::wasm::is_wasm_archive)
            .await
    }

    /// The entrants of `new` that are model-graph bots, read off their
    /// archives ([`crate::model_graph::is_model_archive`]); none in a game
    /// without model limits, whose archives are not read for it at all.
    async fn model_entrants(&self, new: &NewTournament) -> Result<Vec<EntrantId>> {
        if new.limits.model.is_none() {
            return Ok(Vec::new());
        }
        self.entrants_whose_archive(new, crate::model_graph::is_model_archive)
            .await
    }

    /// The entrants of `new` whose submission archive passes `test`, in
    /// entrant order.
    async fn entrants_whose_archive(
        &self,
        new: &NewTournament,
        test: fn(&[u8]) -> bool,
    ) -> Result<Vec<EntrantId>> {
        let mut found = Vec::new();
        for (_, hash) in &new.entrants {
            let archive = self
                .store
                .get_submission(hash)
                .await?
                .ok_or_else(|| CoordinatorError::UnknownSubmission(hash.clone()))?;
            if test(&archive) {
                found.push(hash.clone());
            }
        }
        Ok(found)
    }

    /// Total rounds of a tournament.
    pub fn rounds_total(spec: &TournamentSpec) -> Result<u32> {
        Ok(match spec.format {
            Format::RoundRobin {
                cycles,
                games_per_pairing,
            } => {
                let rounds = schedule::round_robin_round_count_by_side(
                    &entrant_ids(spec),
                    &sides(spec)?,
                    cycles,
                    games_per_pairing,
                    fill_baseline(registry::find(&spec.game)?),
                )?;
                rounds as u32
            }
            Format::Swiss { rounds } => rounds,
        })
    }

    /// Schedules the next rounds once they can be: a round-robin all at
    /// once, Swiss one round after the previous one is complete. Safe to call
    /// any number of times (the store ignores a round scheduled twice).
    #[tracing::instrument(
        name = "advance",
        skip_all,
        fields(tournament = %id, round = Empty, scheduled = Empty)
    )]
    pub async fn advance(&self, id: &str) -> Result<()> {
        // What is scheduled is read first, and cheaply: after most results
        // there is nothing to schedule, and only then is the whole spec
        // (whether the tournament is cancelled) read.
        let known = self.known(id).await?;
        let scheduled = self.store.rounds_scheduled(id).await?;
        match known.spec.format {
            Format::RoundRobin { .. } => {
                if scheduled >= Self::rounds_total(&known.spec)? {
                    known.set_all_scheduled();
                    return Ok(());
                }
            }
            Format::Swiss { rounds } => {
                if scheduled >= rounds {
                    return Ok(());
                }
            }
        }
        let spec = self.spec(id).await?;
        if spec.cancelled {
            return Ok(());
        }
        let ids = entrant_ids(&spec);
        let sides = known.sides.clone();
        let baseline = fill_baseline(registry::find(&spec.game)?);
        match spec.format {
            Format::RoundRobin {
                cycles,
                games_per_pairing,
            } => {
                // The whole schedule is known up front; rounds already
                // queued (all of them, or those queued before a crash cut
                // the scheduling short) are skipped, the rest queued.
                let total = Self::rounds_total(&spec)?;
                if scheduled < total {
                    let base_seed = spec.base_seed;
                    let rounds = off_the_runtime(move || {
                        schedule::round_robin_by_side(
                            &ids,
                            &sides,
                            cycles,
                            games_per_pairing,
                            base_seed,
                            baseline,
                        )
                    })
                    .await??;
                    let count = rounds.len();
                    for (index, round) in rounds.into_iter().enumerate().skip(scheduled as usize) {
                        self.schedule(id, index as u32, round).await?;
                    }
                    let span = tracing::Span::current();
                    span.record("round", count.saturating_sub(1));
                    span.record("scheduled", count.saturating_sub(scheduled as usize));
                }
            }
            Format::Swiss { rounds } => {
                if scheduled >= rounds {
                    return Ok(());
                }
                let status = self.store.status(id).await?;
                if status.queued + status.leased > 0 {
                    return Ok(());
                }
                let history = self.store.results(id).await?;
                let base_seed = spec.base_seed;
                let round = off_the_runtime(move || {
                    schedule::swiss_round_by_side(
                        scheduled, &ids, &history, &sides, base_seed, baseline,
                    )
                })
                .await??;
                self.schedule(id, scheduled, round).await?;
                let span = tracing::Span::current();
                span.record("round", scheduled);
                span.record("scheduled", 1);
            }
        }
        Ok(())
    }

    async fn schedule(&self, id: &str, round: u32, plan: crate::domain::Round) -> Result<()> {
        let matches = plan
            .pairings
            .into_iter()
            .enumerate()
            .map(|(index, pairing)| ScheduledMatch {
                match_id: match_id(id, round, index),
                pairing,
            })
            .collect();
        self.store
            .schedule_round(id, round, matches, plan.byes)
            .await?;
        Ok(())
    }

    pub async fn status(&self, id: &str) -> Result<(Status, u32)> {
        let spec = self.spec(id).await?;
        Ok((self.store.status(id).await?, Self::rounds_total(&spec)?))
    }

    pub async fn standings(&self, id: &str) -> Result<Standings> {
        let played = self.played(id).await?;
        Ok(standings::compute_by_side(
            &played.entrants,
            &played.results,
            &played.byes,
            &played.sides,
        )?)
    }

    /// The standings as they stood after each round that has a result,
    /// `(round, standings)` in round order (rounds 0-based): what the
    /// results and byes of that round and the ones before it give.
    pub async fn standings_by_round(&self, id: &str) -> Result<Vec<(u32, Standings)>> {
        let played = self.played(id).await?;
        let mut rounds: Vec<u32> = played.results.iter().map(|r| r.round).collect();
        rounds.sort_unstable();
        rounds.dedup();
        rounds
            .into_iter()
            .map(|round| Ok((round, played.standings_up_to(round)?)))
            .collect()
    }

    /// What the standings of tournament `id` are computed from.
    async fn played(&self, id: &str) -> Result<Played> {
        let spec = self.spec(id).await?;
        Ok(Played {
            entrants: spec
                .entrants
                .iter()
                .map(|e| (e.id.clone(), e.name.clone()))
                .collect(),
            results: self.store.results(id).await?,
            byes: self.store.byes(id).await?,
            sides: sides(&spec)?,
        })
    }

    pub async fn cancel(&self, id: &str) -> Result<()> {
        self.spec(id).await?;
        self.store.cancel(id).await?;
        Ok(())
    }
}

/// A tournament's entrants, results, byes and sides: what its standings are
/// computed from.
struct Played {
    entrants: Vec<(EntrantId, String)>,
    results: Vec<MatchRecord>,
    byes: Vec<(u32, EntrantId)>,
    sides: Sides,
}

impl Played {
    /// The standings from the results and byes of rounds up to `round`.
    fn standings_up_to(&self, round: u32) -> Result<Standings> {
        let results: Vec<MatchRecord> = self
            .results
            .iter()
            .filter(|r| r.round <= round)
            .cloned()
            .collect();
        let byes: Vec<(u32, EntrantId)> = self
            .byes
            .iter()
            .filter(|(r, _)| *r <= round)
            .cloned()
            .collect();
        Ok(standings::compute_by_side(
            &self.entrants,
            &results,
            &byes,
            &self.sides,
        )?)
    }
}

/// The team layout a new tournament is played with: the game's own, read
/// off a match it makes for these seats and rules, or the one `new`
/// declares when the game reports none (see [`NewTournament::teams`]).
fn resolve_teams(entry: &GameEntry, new: &NewTournament) -> Result<Vec<u32>> {
    if let Some(given) = &new.teams {
        Sides::new(new.seats, given)?;
    }
    let game = teams::probe(entry, new.seats, &new.rules)?;
    match &new.teams {
        Some(given) if !game.is_empty() && *given != game => Err(TeamError::NotTheGames {
            game,
            given: given.clone(),
        }
        .into()),
        Some(given) if game.is_empty() => Ok(given.clone()),
        _ => Ok(game),
    }
}

/// Runs a pure scheduling computation on tokio's blocking pool: pairing a
/// large Swiss field or laying out a large round robin takes long enough to
/// stall every lease, heartbeat and report an async thread would serve.
async fn off_the_runtime<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(CoordinatorError::SchedulingTask)
}

/// The baseline that fills seats the field leaves empty: the game's first,
/// or `None` for a game without baselines (whose fields must fill every seat).
fn fill_baseline(entry: &GameEntry) -> Option<&'static str> {
    entry.baselines.first().copied()
}
