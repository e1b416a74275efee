//! The state as rows, for the on-disk store: what changed since the last
//! call ([`MemoryStore::take_changes`]), and a whole state rebuilt from
//! every row read back ([`MemoryStore::restore`]).
//!
//! Each table is one of the state's tracked collections, keyed like it.
//! Archives and replay manifests are stored as their bytes, the rest as
//! JSON. A tournament's row holds its spec, rounds and byes; its schedule
//! is rebuilt from its matches' `index`, and the lease indexes from the
//! leased slots, so no row is ever rewritten in full to add one match.

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

use super::tracked::Queue;
use super::{MatchEntry, MemoryStore, Slot, State, Tournament};
use crate::domain::EntrantId;
use crate::store::error::{Result, StoreError, from_json, to_json};
use crate::store::types::{TournamentSpec, WorkerInfo};

/// The tables of the on-disk store; each holds one tracked collection.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum Table {
    Tournaments,
    Matches,
    Replays,
    Submissions,
    Workers,
    LeaseEnds,
    Quarantined,
    EntrantTokens,
}

impl Table {
    pub(crate) const ALL: [Table; 8] = [
        Table::Tournaments,
        Table::Matches,
        Table::Replays,
        Table::Submissions,
        Table::Workers,
        Table::LeaseEnds,
        Table::Quarantined,
        Table::EntrantTokens,
    ];

    /// The table's name on disk.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Table::Tournaments => "tournaments",
            Table::Matches => "matches",
            Table::Replays => "replays",
            Table::Submissions => "submissions",
            Table::Workers => "workers",
            Table::LeaseEnds => "lease_ends",
            Table::Quarantined => "quarantined",
            Table::EntrantTokens => "entrant_tokens",
        }
    }
}

/// One row written or deleted (`value: None`).
#[derive(Debug)]
pub(crate) struct Row {
    pub table: Table,
    pub key: String,
    pub value: Option<Vec<u8>>,
}

/// Everything an operation (or a run of them) changed, as rows.
#[derive(Debug, Default)]
pub(crate) struct Changes {
    pub rows: Vec<Row>,
    /// Queue positions and the match now at each (`None`: free).
    pub queue: Vec<(i64, Option<String>)>,
}

impl Changes {
    pub(crate) fn is_empty(&self) -> bool {
        self.rows.is_empty() && self.queue.is_empty()
    }
}

/// A tournament's row: everything but its schedule.
#[derive(Serialize, Deserialize)]
struct TournamentRow {
    spec: TournamentSpec,
    rounds: u32,
    byes: Vec<(u32, EntrantId)>,
}

impl MemoryStore {
    /// Takes what changed since the last call (nothing, for a store that
    /// does not track) and hands it to `hand_in` while still holding the
    /// lock, so the changes end between two whole operations and are handed
    /// in in the order the operations ran. Returns what `hand_in` returned.
    pub(crate) fn hand_in_changes<T>(&self, hand_in: impl FnOnce(Changes) -> T) -> Result<T> {
        let mut state = self.lock();
        let changes = state.take_changes()?;
        Ok(hand_in(changes))
    }

    /// A tracking store holding exactly what `rows` and `queue` say, as
    /// read back from disk; a row that does not decode, or rows that break
    /// the state's invariants, are [`StoreError::Corrupt`] naming the row.
    pub(crate) fn restore(
        rows: impl IntoIterator<Item = (Table, String, Vec<u8>)>,
        queue: Vec<(i64, String)>,
    ) -> Result<Self> {
        let mut state = State::new(true);
        let mut schedules: Vec<(String, usize, String)> = Vec::new();
        for (table, key, value) in rows {
            match table {
                Table::Tournaments => {
                    let t: TournamentRow = decode(table, &key, &value)?;
                    let tournament = Tournament {
                        spec: t.spec,
                        rounds: t.rounds,
                        matches: Vec::new(),
                        byes: t.byes,
                    };
                    state.tournaments.insert(key, tournament);
                }
                Table::Matches => {
                    let entry: MatchEntry = decode(table, &key, &value)?;
                    schedules.push((entry.tournament.clone(), entry.index, key.clone()));
                    if let Slot::Leased {
                        lease_id,
                        expires_at_ms,
                        ..
                    } = &entry.slot
                    {
                        state.lease_match.insert(lease_id.clone(), key.clone());
                        state.expiries.insert((*expires_at_ms, lease_id.clone()));
                    }
                    state.matches.insert(key, entry);
                }
                Table::Replays => {
                    state.replays.insert(key, value);
                }
                Table::Submissions => {
                    state.submissions.insert(key, value);
                }
                Table::Workers => {
                    let worker: (WorkerInfo, u64) = decode(table, &key, &value)?;
                    state.workers.insert(key, worker);
                }
                Table::LeaseEnds => {
                    let ends: VecDeque<bool> = decode(table, &key, &value)?;
                    state.lease_ends.insert(key, ends);
                }
                Table::Quarantined => {
                    state.quarantined.insert(key, ());
                }
                Table::EntrantTokens => {
                    let submission =
                        String::from_utf8(value).map_err(|_| corrupt(table, &key, "not UTF-8"))?;
                    state.entrant_tokens.insert(key, submission);
                }
            }
        }
        rebuild_schedules(&mut state, schedules)?;
        for (_, match_id) in &queue {
            if !state
                .matches
                .get(match_id)
                .is_some_and(|m| matches!(m.slot, Slot::Queued))
            {
                return Err(StoreError::Corrupt(format!(
                    "the queue holds match {match_id}, which is not queued"
                )));
            }
        }
        state.queue = Queue::restore(queue);
        // Loading is not a change: nothing needs writing back.
        for table in Table::ALL {
            state.forget_changes(table);
        }
        Ok(Self::with_state(state))
    }

    /// Whether both stores hold the same state (tests compare a store
    /// with what was read back from its disk).
    pub(crate) fn same_state(&self, other: &MemoryStore) -> bool {
        *self.lock() == *other.lock()
    }
}

impl State {
    fn take_changes(&mut self) -> Result<Changes> {
        let state = self;
        let mut rows = Vec::new();
        for (key, t) in state.tournaments.take_dirty() {
            let value = match t {
                Some(t) => Some(json(
                    &TournamentRow {
                        spec: t.spec.clone(),
                        rounds: t.rounds,
                        byes: t.byes.clone(),
                    },
                    &key,
                )?),
                None => None,
            };
            rows.push(row(Table::Tournaments, key, value));
        }
        for (key, entry) in state.matches.take_dirty() {
            let value = entry.map(|e| json(e, &key)).transpose()?;
            rows.push(row(Table::Matches, key, value));
        }
        for (key, bytes) in state.replays.take_dirty() {
            rows.push(row(Table::Replays, key, bytes.cloned()));
        }
        for (key, bytes) in state.submissions.take_dirty() {
            rows.push(row(Table::Submissions, key, bytes.cloned()));
        }
        for (key, worker) in state.workers.take_dirty() {
            let value = worker.map(|w| json(w, &key)).transpose()?;
            rows.push(row(Table::Workers, key, value));
        }
        for (key, ends) in state.lease_ends.take_dirty() {
            let value = ends.map(|e| json(e, &key)).transpose()?;
            rows.push(row(Table::LeaseEnds, key, value));
        }
        for (key, present) in state.quarantined.take_dirty() {
            rows.push(row(Table::Quarantined, key, present.map(|()| Vec::new())));
        }
        for (key, submission) in state.entrant_tokens.take_dirty() {
            let value = submission.map(|s| s.as_bytes().to_vec());
            rows.push(row(Table::EntrantTokens, key, value));
        }
        let queue = state.queue.take_changes();
        Ok(Changes { rows, queue })
    }

    fn forget_changes(&mut self, table: Table) {
        match table {
            Table::Tournaments => drop(self.tournaments.take_dirty()),
            Table::Matches => drop(self.matches.take_dirty()),
            Table::Replays => drop(self.replays.take_dirty()),
            Table::Submissions => drop(self.submissions.take_dirty()),
            Table::Workers => drop(self.workers.take_dirty()),
            Table::LeaseEnds => drop(self.lease_ends.take_dirty()),
            Table::Quarantined => drop(self.quarantined.take_dirty()),
            Table::EntrantTokens => drop(self.entrant_tokens.take_dirty()),
        }
    }
}

/// Puts every match back in its tournament's schedule, in schedule order;
/// a match of an unknown tournament, or two in one place, is corruption.
fn rebuild_schedules(state: &mut State, mut schedules: Vec<(String, usize, String)>) -> Result<()> {
    schedules.sort();
    for (tournament, index, match_id) in schedules {
        let t = state.tournaments.get_mut(&tournament).ok_or_else(|| {
            StoreError::Corrupt(format!(
                "match {match_id} belongs to tournament {tournament}, which is not stored"
            ))
        })?;
        if t.matches.len() != index {
            return Err(StoreError::Corrupt(format!(
                "tournament {tournament}: match {match_id} is at place {index} of a schedule \
                 with {} matches before it",
                t.matches.len()
            )));
        }
        t.matches.push(match_id);
    }
    Ok(())
}

fn row(table: Table, key: String, value: Option<Vec<u8>>) -> Row {
    Row { table, key, value }
}

fn json<T: Serialize>(value: &T, key: &str) -> Result<Vec<u8>> {
    Ok(to_json(value, key)?.into_bytes())
}

fn decode<T: serde::de::DeserializeOwned>(table: Table, key: &str, value: &[u8]) -> Result<T> {
    let text = std::str::from_utf8(value).map_err(|_| corrupt(table, key, "not UTF-8"))?;
    from_json(text, format!("{} row {key:?}", table.name()))
        .map_err(|e| corrupt(table, key, &error_chain(&e)))
}

fn corrupt(table: Table, key: &str, why: &str) -> StoreError {
    StoreError::Corrupt(format!("{} row {key:?}: {why}", table.name()))
}

fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}
