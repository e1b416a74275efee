//! What the coordinator keeps of each tournament between calls, so that a
//! lease or a report does not decode the tournament's spec from the store
//! every time (with a thousand entrants the spec is a hundred kilobytes of
//! JSON, and every lease and every report needs it).
//!
//! Only what never changes is kept: a stored spec is written once, when the
//! tournament is created, and never rewritten (its `cancelled` flag lives
//! elsewhere and is always read from the store afresh). The one derived
//! fact that can change, "every round of this round robin is queued", only
//! ever goes from false to true in the store, and is used only to skip
//! scheduling after a result: the periodic recovery step still asks the
//! store, so rounds a Redis crash lost are queued again.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use crate::domain::EntrantId;
use crate::store::TournamentSpec;
use crate::teams::Sides;

/// One tournament as created.
#[derive(Debug)]
pub(super) struct Known {
    /// The spec as stored; its `cancelled` flag is not to be trusted.
    pub spec: TournamentSpec,
    /// Display name by entrant id, for the seats of a lease.
    pub names: HashMap<EntrantId, String>,
    /// The sides of its matches, from the stored team layout.
    pub sides: Sides,
    /// Set once every round of a round robin has been seen queued.
    all_scheduled: AtomicBool,
}

impl Known {
    pub fn new(spec: TournamentSpec, sides: Sides) -> Known {
        Known {
            names: spec
                .entrants
                .iter()
                .map(|e| (e.id.clone(), e.name.clone()))
                .collect(),
            spec,
            sides,
            all_scheduled: AtomicBool::new(false),
        }
    }

    /// Whether every round was seen queued (only ever set for a round robin).
    pub fn all_scheduled(&self) -> bool {
        self.all_scheduled.load(Ordering::Relaxed)
    }

    pub fn set_all_scheduled(&self) {
        self.all_scheduled.store(true, Ordering::Relaxed);
    }
}

/// Known tournaments by id. Entries are added on first use and never
/// removed: tournaments are never deleted, and each entry is small beside
/// the tournament's matches. The lock is a `std` one, held only to look up
/// or insert, never across an `.await`.
#[derive(Debug, Default)]
pub(super) struct KnownTournaments {
    by_id: Mutex<HashMap<String, Arc<Known>>>,
}

impl KnownTournaments {
    pub fn get(&self, id: &str) -> Option<Arc<Known>> {
        self.lock().get(id).cloned()
    }

    /// Keeps `known` unless another call got there first; returns the kept one.
    pub fn insert(&self, known: Known) -> Arc<Known> {
        let mut by_id = self.lock();
        Arc::clone(
            by_id
                .entry(known.spec.id.clone())
                .or_insert_with(|| Arc::new(known)),
        )
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Known>>> {
        // The map is consistent after every insert: a panic elsewhere
        // cannot leave it half-written.
        self.by_id.lock().unwrap_or_else(PoisonError::into_inner)
    }
}
