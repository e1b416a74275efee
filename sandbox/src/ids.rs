//! Unprivileged identities: a distinct uid (and equal gid) for each confined
//! process alive at once, so no two can signal, trace or read each other.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

/// First uid handed out; far above the range distributions give to people
/// and services, below the 16-bit "nobody" values.
pub const DEFAULT_FIRST_UID: u32 = 61_000;
/// How many slots a pool has by default.
pub const DEFAULT_SLOTS: u32 = 1_000;

#[derive(Debug, thiserror::Error)]
#[error("all {0} sandbox uids are in use")]
pub struct UidsExhausted(pub u32);

/// A range of uids, leased one per confined process.
#[derive(Clone, Debug)]
pub struct UidPool {
    first: u32,
    slots: u32,
    used: Arc<Mutex<BTreeSet<u32>>>,
}

impl Default for UidPool {
    fn default() -> Self {
        Self::new(DEFAULT_FIRST_UID, DEFAULT_SLOTS)
    }
}

impl UidPool {
    pub fn new(first: u32, slots: u32) -> Self {
        Self {
            first,
            slots,
            used: Arc::new(Mutex::new(BTreeSet::new())),
        }
    }

    /// The lowest free uid, held until the lease drops.
    pub fn lease(&self) -> Result<UidLease, UidsExhausted> {
        let mut used = self.used.lock().unwrap_or_else(|p| p.into_inner());
        let uid = (self.first..self.first + self.slots)
            .find(|uid| !used.contains(uid))
            .ok_or(UidsExhausted(self.slots))?;
        used.insert(uid);
        Ok(UidLease {
            uid,
            used: Arc::clone(&self.used),
        })
    }
}

/// One leased uid; its gid is the same number.
#[derive(Debug)]
pub struct UidLease {
    uid: u32,
    used: Arc<Mutex<BTreeSet<u32>>>,
}

impl UidLease {
    pub fn uid(&self) -> u32 {
        self.uid
    }
}

impl Drop for UidLease {
    fn drop(&mut self) {
        let mut used = self.used.lock().unwrap_or_else(|p| p.into_inner());
        used.remove(&self.uid);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn concurrent_leases_are_distinct_and_return_on_drop() {
        let pool = UidPool::new(100, 2);
        let a = pool.lease().unwrap();
        let b = pool.lease().unwrap();
        assert_ne!(a.uid(), b.uid());
        assert!(pool.lease().is_err());
        let freed = a.uid();
        drop(a);
        assert_eq!(pool.lease().unwrap().uid(), freed);
    }
}
