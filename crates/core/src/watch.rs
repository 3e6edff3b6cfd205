//! What WATCH needs from the keyspace: for every watched key, the clients that
//! watch it and what happened to the key since, as Redis's `watched_keys` dict
//! of `watchedKey` lists (multi.c).
//!
//! Each watcher has two marks, the ones Redis keeps:
//! - `stale` (`wk->expired`): the key was already past its TTL when WATCHed. Its
//!   deletion (by a lookup, the expire cycle, DEL, a flush) is no logical change,
//!   so it clears the mark instead of dirtying the transaction; EXEC does not
//!   count such a key as "expired since WATCH".
//! - `dirty` (`CLIENT_DIRTY_CAS`, kept per watcher here and read per client):
//!   a write touched the key (`touchWatchedKey`, after which Redis unwatches all
//!   of the client's keys: [`Dirty::Unwatched`]), or FLUSHDB/FLUSHALL/SWAPDB
//!   replaced it (`touchAllWatchedKeysInDb`, the keys stay watched:
//!   [`Dirty::Flagged`]).
//!
//! Touches are applied when they happen, with the key's presence at that moment,
//! in the order the clients WATCHed — the order matters for one Redis quirk kept
//! here: a write meeting a stale watcher whose key is still there stops the walk,
//! so the watchers after it are not dirtied (`break` in touchWatchedKey).
//!
//! The watchers belong to a database *number*, as Redis's `watched_keys` stay
//! with their `redisDb` when SWAPDB swaps the data: a client watching `k` in db
//! 0 still watches db 0's `k` afterwards.
//!
//! One difference from Redis: when a write dirties a client, Redis removes the
//! client's watchers in every database at once; here the ones in this database
//! are marked [`Dirty::Unwatched`] at once, and those in other databases are
//! skipped by whoever reads them (the client is dirty, which is all EXEC needs).

use std::collections::HashMap;

use crate::server::ClientId;

/// Whether a watcher's transaction is already condemned, and how.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dirty {
    No,
    /// FLUSHDB/FLUSHALL/SWAPDB touched the key; the client still watches it.
    Flagged,
    /// A write touched the key: Redis unwatched all of the client's keys.
    Unwatched,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Watcher {
    pub client: ClientId,
    pub stale: bool,
    pub dirty: Dirty,
}

/// What SWAPDB finds for a watched key in the database swapped in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Incoming {
    Absent,
    Expired,
    Live,
}

#[derive(Debug, Default)]
pub struct Watches {
    /// Watched key → its watchers, in WATCH order.
    keys: HashMap<Vec<u8>, Vec<Watcher>>,
    /// Set while a write command runs: the watched keys it touched.
    recording: bool,
    touched: Vec<Vec<u8>>,
}

impl Watches {
    /// `client` starts watching `key`; `stale` says it is already past its TTL.
    pub fn watch(&mut self, key: &[u8], client: ClientId, stale: bool) {
        self.keys.entry(key.to_vec()).or_default().push(Watcher {
            client,
            stale,
            dirty: Dirty::No,
        });
    }

    pub fn unwatch(&mut self, key: &[u8], client: ClientId) {
        if let Some(watchers) = self.keys.get_mut(key) {
            watchers.retain(|w| w.client != client);
            if watchers.is_empty() {
                self.keys.remove(key);
            }
        }
    }

    /// `client`'s watcher of `key`, if it watches it here.
    pub fn watcher(&self, key: &[u8], client: ClientId) -> Option<Watcher> {
        self.keys
            .get(key)?
            .iter()
            .find(|w| w.client == client)
            .copied()
    }

    /// A write command is about to run.
    pub fn begin_write(&mut self) {
        self.recording = true;
    }

    /// The write command finished: every watched key it touched is signalled,
    /// `present` telling whether the key exists now.
    pub fn end_write(&mut self, present: impl Fn(&[u8]) -> bool) {
        self.recording = false;
        for key in std::mem::take(&mut self.touched) {
            let here = present(&key);
            self.signal(&key, here);
        }
    }

    /// The keyspace gave `key` out for writing (or stored/removed it).
    pub fn note(&mut self, key: &[u8]) {
        if self.recording && !self.keys.is_empty() && self.keys.contains_key(key) {
            self.touched.push(key.to_vec());
        }
    }

    /// `key` expired and was deleted.
    pub fn expired(&mut self, key: &[u8]) {
        if !self.keys.is_empty() {
            self.signal(key, false);
        }
    }

    /// A command outside the write path stored `key` (MOVE/COPY into another
    /// database): `signalModifiedKey` with the key present.
    pub fn touch(&mut self, key: &[u8]) {
        if !self.keys.is_empty() {
            self.signal(key, true);
        }
    }

    /// `touchWatchedKey`: `key` was modified; `present` says whether it exists
    /// after the modification.
    fn signal(&mut self, key: &[u8], present: bool) {
        let Some(watchers) = self.keys.get_mut(key) else {
            return;
        };
        let mut dropped = Vec::new();
        for w in watchers.iter_mut() {
            if w.dirty == Dirty::Unwatched {
                continue;
            }
            if w.stale {
                if !present {
                    // An already expired key is now deleted: no logical change.
                    w.stale = false;
                    continue;
                }
                break;
            }
            w.dirty = Dirty::Unwatched;
            dropped.push(w.client);
        }
        for client in dropped {
            self.drop_client(client);
        }
    }

    /// Redis's `unwatchAllKeys` after dirtying a client: every watcher of the
    /// client in this database stops counting.
    fn drop_client(&mut self, client: ClientId) {
        for watchers in self.keys.values_mut() {
            for w in watchers.iter_mut().filter(|w| w.client == client) {
                w.dirty = Dirty::Unwatched;
            }
        }
    }

    /// FLUSHDB/FLUSHALL (`touchAllWatchedKeysInDb` without a database swapped
    /// in): each watched key for which `existed` holds is replaced by nothing,
    /// so it loses its stale mark if it had one and otherwise dirties its
    /// watchers ([`Watches::swapped`] with nothing coming in).
    pub fn flushed(&mut self, mut existed: impl FnMut(&[u8]) -> bool) {
        let gone: Vec<Vec<u8>> = self.keys.keys().filter(|k| existed(k)).cloned().collect();
        for key in gone {
            self.swapped(&key, true, Incoming::Absent);
        }
    }

    /// SWAPDB (`touchAllWatchedKeysInDb(emptied, replaced_with)`): `key` was
    /// `here` before the swap (physically) and what comes in is `incoming`.
    pub fn swapped(&mut self, key: &[u8], here: bool, incoming: Incoming) {
        if !here && incoming == Incoming::Absent {
            return;
        }
        let Some(watchers) = self.keys.get_mut(key) else {
            return;
        };
        for w in watchers.iter_mut() {
            if w.dirty == Dirty::Unwatched {
                continue;
            }
            if w.stale {
                match incoming {
                    // The expired key is gone: no logical change.
                    Incoming::Absent => {
                        w.stale = false;
                        continue;
                    }
                    Incoming::Expired => continue,
                    Incoming::Live => {}
                }
            } else if !here && incoming == Incoming::Expired {
                // A missing key is replaced by an expired one.
                w.stale = true;
                continue;
            }
            if w.dirty == Dirty::No {
                w.dirty = Dirty::Flagged;
            }
        }
    }

    /// Every watched key, for a caller that checks them against two databases.
    pub fn watched_keys(&self) -> Vec<Vec<u8>> {
        self.keys.keys().cloned().collect()
    }

    /// Every watched key with its watchers (INFO's `total_watched_keys`).
    pub fn iter(&self) -> impl Iterator<Item = (&[u8], &[Watcher])> {
        self.keys.iter().map(|(k, w)| (k.as_slice(), w.as_slice()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_dirties_every_watcher_and_unwatches_the_client() {
        let mut w = Watches::default();
        w.watch(b"a", 1, false);
        w.watch(b"b", 1, false);
        w.watch(b"a", 2, false);
        w.begin_write();
        w.note(b"a");
        w.end_write(|_| true);
        assert_eq!(w.watcher(b"a", 1).unwrap().dirty, Dirty::Unwatched);
        assert_eq!(w.watcher(b"a", 2).unwrap().dirty, Dirty::Unwatched);
        // Client 1's other key stops counting too.
        assert_eq!(w.watcher(b"b", 1).unwrap().dirty, Dirty::Unwatched);
    }

    #[test]
    fn deleting_a_stale_key_is_no_change_but_a_second_touch_is() {
        let mut w = Watches::default();
        w.watch(b"k", 1, true);
        w.expired(b"k");
        let after = w.watcher(b"k", 1).unwrap();
        assert!(!after.stale);
        assert_eq!(after.dirty, Dirty::No);
        w.touch(b"k");
        assert_eq!(w.watcher(b"k", 1).unwrap().dirty, Dirty::Unwatched);
    }

    #[test]
    fn a_write_meeting_a_live_stale_watcher_stops_the_walk() {
        // touchWatchedKey's `break`: the watcher after the stale one is spared.
        let mut w = Watches::default();
        w.watch(b"k", 1, true);
        w.watch(b"k", 2, false);
        w.touch(b"k");
        assert_eq!(w.watcher(b"k", 1).unwrap().dirty, Dirty::No);
        assert!(w.watcher(b"k", 1).unwrap().stale);
        assert_eq!(w.watcher(b"k", 2).unwrap().dirty, Dirty::No);
    }

    #[test]
    fn a_flush_keeps_the_keys_watched_and_spares_stale_ones() {
        let mut w = Watches::default();
        w.watch(b"live", 1, false);
        w.watch(b"old", 2, true);
        w.watch(b"gone", 3, false);
        w.flushed(|k| k != b"gone");
        assert_eq!(w.watcher(b"live", 1).unwrap().dirty, Dirty::Flagged);
        assert_eq!(w.watcher(b"old", 2).unwrap().dirty, Dirty::No);
        assert_eq!(w.watcher(b"gone", 3).unwrap().dirty, Dirty::No);
    }

    #[test]
    fn swapdb_follows_touch_all_watched_keys_in_db() {
        let mut w = Watches::default();
        w.watch(b"k", 1, false);
        w.swapped(b"k", false, Incoming::Expired);
        assert!(
            w.watcher(b"k", 1).unwrap().stale,
            "missing → expired becomes stale"
        );
        w.swapped(b"k", true, Incoming::Expired);
        assert_eq!(w.watcher(b"k", 1).unwrap().dirty, Dirty::No);
        w.swapped(b"k", true, Incoming::Absent);
        assert!(!w.watcher(b"k", 1).unwrap().stale);
        assert_eq!(w.watcher(b"k", 1).unwrap().dirty, Dirty::No);
        w.swapped(b"k", false, Incoming::Live);
        assert_eq!(w.watcher(b"k", 1).unwrap().dirty, Dirty::Flagged);
    }
}
