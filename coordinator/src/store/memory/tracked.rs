//! Containers that remember what changed in them, so the on-disk store
//! can write exactly the rows an operation touched.
//!
//! Reads go through `Deref` to the plain collection; every way to change
//! one goes through a method here that first notes the key. A store that
//! keeps nothing on disk builds them untracked and pays nothing but a
//! branch. Nothing outside `memory` can reach the collections, so no
//! mutation can bypass the note.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::ops::Deref;

/// A map by string key whose changed keys are noted while tracking.
#[derive(Debug)]
pub(super) struct Tracked<V> {
    map: BTreeMap<String, V>,
    /// Keys changed since the last [`Tracked::take_dirty`]; `None` when
    /// not tracking.
    dirty: Option<BTreeSet<String>>,
}

impl<V> Tracked<V> {
    pub(super) fn new(track: bool) -> Self {
        Tracked {
            map: BTreeMap::new(),
            dirty: track.then(BTreeSet::new),
        }
    }

    fn note(&mut self, key: &str) {
        if let Some(dirty) = &mut self.dirty
            && !dirty.contains(key)
        {
            dirty.insert(key.to_owned());
        }
    }

    pub(super) fn get_mut(&mut self, key: &str) -> Option<&mut V> {
        if self.map.contains_key(key) {
            self.note(key);
        }
        self.map.get_mut(key)
    }

    pub(super) fn insert(&mut self, key: String, value: V) -> Option<V> {
        self.note(&key);
        self.map.insert(key, value)
    }

    pub(super) fn remove(&mut self, key: &str) -> Option<V> {
        let removed = self.map.remove(key);
        if removed.is_some() {
            self.note(key);
        }
        removed
    }

    /// The value at `key`, inserted by `make` if absent.
    pub(super) fn get_or_insert_with(&mut self, key: &str, make: impl FnOnce() -> V) -> &mut V {
        self.note(key);
        self.map.entry(key.to_owned()).or_insert_with(make)
    }

    /// The keys changed since the last call, each with its value now
    /// (`None`: removed).
    pub(super) fn take_dirty(&mut self) -> Vec<(String, Option<&V>)> {
        let keys = match &mut self.dirty {
            Some(dirty) => std::mem::take(dirty),
            None => return Vec::new(),
        };
        keys.into_iter()
            .map(|key| {
                let value = self.map.get(&key);
                (key, value)
            })
            .collect()
    }
}

impl<V> Deref for Tracked<V> {
    type Target = BTreeMap<String, V>;

    fn deref(&self) -> &Self::Target {
        &self.map
    }
}

impl<V: PartialEq> PartialEq for Tracked<V> {
    fn eq(&self, other: &Self) -> bool {
        self.map == other.map
    }
}

/// The match queue: ids in leasing order, each with a position that orders
/// it on disk. Positions only grow at the back and shrink at the front, so
/// the order of the positions is the order of the queue.
#[derive(Debug)]
pub(super) struct Queue {
    items: VecDeque<(i64, String)>,
    /// The position the next `push_front` takes, and the one after the
    /// next `push_back`'s; they only move outwards, so no position is
    /// reused while the store is open.
    front: i64,
    back: i64,
    /// Positions changed since the last [`Queue::take_changes`], with the
    /// match now there (`None`: removed); `None` when not tracking.
    changes: Option<BTreeMap<i64, Option<String>>>,
}

impl Queue {
    pub(super) fn new(track: bool) -> Self {
        Queue {
            items: VecDeque::new(),
            front: -1,
            back: 0,
            changes: track.then(BTreeMap::new),
        }
    }

    /// A queue in the order of `items`' positions, as read back from disk.
    pub(super) fn restore(mut items: Vec<(i64, String)>) -> Self {
        items.sort_by_key(|(position, _)| *position);
        let front = items.first().map_or(-1, |(p, _)| p - 1);
        let back = items.last().map_or(0, |(p, _)| p + 1);
        Queue {
            items: items.into(),
            front,
            back,
            changes: Some(BTreeMap::new()),
        }
    }

    fn note(&mut self, position: i64, now: Option<&str>) {
        if let Some(changes) = &mut self.changes {
            changes.insert(position, now.map(str::to_owned));
        }
    }

    pub(super) fn push_front(&mut self, match_id: String) {
        let position = self.front;
        self.front -= 1;
        self.note(position, Some(&match_id));
        self.items.push_front((position, match_id));
    }

    pub(super) fn push_back(&mut self, match_id: String) {
        let position = self.back;
        self.back += 1;
        self.note(position, Some(&match_id));
        self.items.push_back((position, match_id));
    }

    pub(super) fn remove(&mut self, index: usize) -> Option<String> {
        let (position, match_id) = self.items.remove(index)?;
        self.note(position, None);
        Some(match_id)
    }

    /// Keeps the ids `keep` says yes to, in order.
    pub(super) fn retain(&mut self, mut keep: impl FnMut(&String) -> bool) {
        let mut removed = Vec::new();
        self.items.retain(|(position, match_id)| {
            let kept = keep(match_id);
            if !kept {
                removed.push(*position);
            }
            kept
        });
        for position in removed {
            self.note(position, None);
        }
    }

    pub(super) fn iter(&self) -> impl Iterator<Item = &String> {
        self.items.iter().map(|(_, id)| id)
    }

    pub(super) fn get(&self, index: usize) -> Option<&String> {
        self.items.get(index).map(|(_, id)| id)
    }

    pub(super) fn len(&self) -> usize {
        self.items.len()
    }

    /// The positions changed since the last call, with the match now at
    /// each (`None`: free).
    pub(super) fn take_changes(&mut self) -> Vec<(i64, Option<String>)> {
        match &mut self.changes {
            Some(changes) => std::mem::take(changes).into_iter().collect(),
            None => Vec::new(),
        }
    }
}

impl PartialEq for Queue {
    /// The same ids in the same order; positions are how the order is
    /// written down, not part of it.
    fn eq(&self, other: &Self) -> bool {
        self.iter().eq(other.iter())
    }
}
