//! Tournaments: creating, cancelling, and scheduling their rounds.

use std::collections::HashSet;

use super::{MatchEntry, MemoryStore, Slot, Tournament};
use crate::domain::EntrantId;
use crate::store::error::{Result, StoreError};
use crate::store::types::{ScheduledMatch, TournamentSpec};

impl MemoryStore {
    /// See [`Store::create_tournament`](crate::store::Store::create_tournament).
    pub async fn create_tournament(&self, spec: TournamentSpec) -> Result<()> {
        let mut state = self.lock();
        if state.tournaments.contains_key(&spec.id) {
            return Err(StoreError::AlreadyExists(spec.id));
        }
        let tournament = Tournament {
            spec: spec.clone(),
            rounds: 0,
            matches: Vec::new(),
            byes: Vec::new(),
        };
        state.tournaments.insert(spec.id, tournament);
        Ok(())
    }

    /// See [`Store::tournament`](crate::store::Store::tournament).
    pub async fn tournament(&self, id: &str) -> Result<Option<TournamentSpec>> {
        Ok(self.lock().tournaments.get(id).map(|t| t.spec.clone()))
    }

    /// See [`Store::tournaments`](crate::store::Store::tournaments).
    pub async fn tournaments(&self) -> Result<Vec<String>> {
        Ok(self.lock().tournaments.keys().cloned().collect())
    }

    /// See [`Store::cancel`](crate::store::Store::cancel).
    pub async fn cancel(&self, id: &str) -> Result<usize> {
        let mut guard = self.lock();
        let state = &mut *guard;
        let tournament = state
            .tournaments
            .get_mut(id)
            .ok_or_else(|| StoreError::UnknownTournament(id.to_owned()))?;
        tournament.spec.cancelled = true;
        let matches = &mut state.matches;
        let mut dropped = 0;
        state
            .queue
            .retain(|match_id| match matches.get_mut(match_id) {
                Some(entry) if entry.tournament == id => {
                    entry.slot = Slot::Dropped;
                    dropped += 1;
                    false
                }
                _ => true,
            });
        Ok(dropped)
    }

    /// See [`Store::schedule_round`](crate::store::Store::schedule_round).
    pub async fn schedule_round(
        &self,
        tournament: &str,
        round: u32,
        matches: Vec<ScheduledMatch>,
        byes: Vec<EntrantId>,
    ) -> Result<bool> {
        let mut guard = self.lock();
        let state = &mut *guard;
        let t = state
            .tournaments
            .get_mut(tournament)
            .ok_or_else(|| StoreError::UnknownTournament(tournament.to_owned()))?;
        if round < t.rounds {
            return Ok(false);
        }
        if t.spec.cancelled {
            return Err(StoreError::Cancelled(tournament.to_owned()));
        }
        if round > t.rounds {
            return Err(StoreError::RoundOutOfOrder {
                tournament: tournament.to_owned(),
                expected: t.rounds,
                got: round,
            });
        }
        let mut fresh = HashSet::new();
        for m in &matches {
            if state.matches.contains_key(&m.match_id) || !fresh.insert(m.match_id.as_str()) {
                return Err(StoreError::DuplicateMatch(m.match_id.clone()));
            }
        }
        t.rounds = round + 1;
        t.byes.extend(byes.into_iter().map(|e| (round, e)));
        for m in matches {
            let index = t.matches.len();
            t.matches.push(m.match_id.clone());
            state.queue.push_back(m.match_id.clone());
            let entry = MatchEntry {
                tournament: tournament.to_owned(),
                round,
                index,
                pairing: m.pairing,
                attempt: 1,
                slot: Slot::Queued,
                failures: Vec::new(),
                strikes: 0,
                kept: None,
            };
            state.matches.insert(m.match_id, entry);
        }
        Ok(true)
    }

    /// See [`Store::rounds_scheduled`](crate::store::Store::rounds_scheduled).
    pub async fn rounds_scheduled(&self, tournament: &str) -> Result<u32> {
        let state = self.lock();
        Ok(state.get_tournament(tournament)?.rounds)
    }

    /// See [`Store::byes`](crate::store::Store::byes).
    pub async fn byes(&self, tournament: &str) -> Result<Vec<(u32, EntrantId)>> {
        let state = self.lock();
        Ok(state.get_tournament(tournament)?.byes.clone())
    }
}
