//! What WATCH needs from the keyspace: a version for every watched key, bumped
//! whenever a write command touches it (Redis's `touchWatchedKey`), when it
//! expires, and when FLUSHDB, FLUSHALL or SWAPDB replace a key that existed
//! (`touchAllWatchedKeysInDb`).
//!
//! The versions belong to a database *number*, as Redis's `watched_keys` stay
//! with their `redisDb` when SWAPDB swaps the data: a client watching `k` in db
//! 0 still watches db 0's `k` afterwards.
//!
//! Only watched keys are tracked, as in Redis's `watched_keys` dict, so a keyspace
//! nobody watches pays one empty-map check per write.

use std::collections::HashMap;

#[derive(Debug, Default)]
pub struct Watches {
    /// Watched key → (number of clients watching it, version).
    keys: HashMap<Vec<u8>, (usize, u64)>,
    /// Set while a write command runs: the watched keys it touched.
    recording: bool,
    touched: Vec<Vec<u8>>,
    clock: u64,
}

impl Watches {
    /// Starts watching `key`; returns its current version.
    pub fn watch(&mut self, key: &[u8]) -> u64 {
        let entry = self.keys.entry(key.to_vec()).or_insert((0, 0));
        entry.0 += 1;
        entry.1
    }

    pub fn unwatch(&mut self, key: &[u8]) {
        if let Some(entry) = self.keys.get_mut(key) {
            entry.0 -= 1;
            if entry.0 == 0 {
                self.keys.remove(key);
            }
        }
    }

    pub fn version(&self, key: &[u8]) -> u64 {
        self.keys.get(key).map_or(0, |e| e.1)
    }

    /// A write command is about to run.
    pub fn begin_write(&mut self) {
        self.recording = true;
    }

    /// The write command finished: every watched key it touched is modified.
    pub fn end_write(&mut self) {
        self.recording = false;
        for key in std::mem::take(&mut self.touched) {
            self.bump(&key);
        }
    }

    /// The keyspace gave `key` out for writing (or stored/removed it).
    pub fn note(&mut self, key: &[u8]) {
        if self.recording && !self.keys.is_empty() && self.keys.contains_key(key) {
            self.touched.push(key.to_vec());
        }
    }

    /// `key` expired and was deleted: modified whoever deleted it.
    pub fn expired(&mut self, key: &[u8]) {
        if !self.keys.is_empty() {
            self.bump(key);
        }
    }

    /// FLUSHDB/FLUSHALL/SWAPDB (`touchAllWatchedKeysInDb`): the watched keys
    /// for which `affected` holds (the ones that existed, in either database for
    /// SWAPDB) count as modified; a watched key that existed nowhere does not.
    pub fn touch_where(&mut self, mut affected: impl FnMut(&[u8]) -> bool) {
        if self.keys.is_empty() {
            return;
        }
        let keys: Vec<Vec<u8>> = self.keys.keys().filter(|k| affected(k)).cloned().collect();
        for key in keys {
            self.bump(&key);
        }
    }

    /// Every watched key, for a caller that checks them against two databases.
    pub fn watched_keys(&self) -> Vec<Vec<u8>> {
        self.keys.keys().cloned().collect()
    }

    /// Marks one watched key modified (SWAPDB, after its own checks).
    pub fn touch(&mut self, key: &[u8]) {
        self.bump(key);
    }

    fn bump(&mut self, key: &[u8]) {
        if let Some(entry) = self.keys.get_mut(key) {
            self.clock += 1;
            entry.1 = self.clock;
        }
    }
}
