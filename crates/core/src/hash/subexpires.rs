//! The hashes of one database that have fields with a TTL, by the time their next
//! field expires (Redis's `db->subexpires`), and the active expiry of fields.
//!
//! Redis registers a hash here with the expiry time of its earliest field, and
//! only updates that time when it moves by at least 4 seconds
//! (`HASH_NEW_EXPIRE_DIFF_THRESHOLD`), so a registered time may be a little late;
//! the hash value itself remembers the time it is registered with
//! ([`super::Hash::subexpire_time`]), and this index follows it: the keyspace
//! re-registers a hash whenever one is stored under a key, and forgets a key that
//! is deleted.
//!
//! Active expiry ([`active_expire`], from the server's active expire cycle) takes
//! the hashes whose registered time has come, deletes up to 1000 expired fields
//! per database and cycle (`HFE_DB_BASE_ACTIVE_EXPIRE_FIELDS_PER_SEC / hz`), then
//! registers each hash again with its next field's time, or not at all when no
//! field has a TTL any more. A hash left without fields is deleted.
//!
//! Unlike Redis's `ebuckets` (a radix tree of buckets), the index is a sorted set
//! of (time, key) beside a map from key to time.

use std::collections::{BTreeSet, HashMap};

use crate::keyspace::{Keyspace, Value};

/// Fields expired per database and active cycle (10000 per second at `hz 10`).
pub const FIELDS_PER_CYCLE: usize = 1000;

#[derive(Debug, Default)]
pub struct Subexpires {
    by_time: BTreeSet<(u64, Vec<u8>)>,
    by_key: HashMap<Vec<u8>, u64>,
}

impl Subexpires {
    pub fn is_empty(&self) -> bool {
        self.by_key.is_empty()
    }

    /// Number of hashes registered (INFO's `subexpiry`).
    pub fn len(&self) -> usize {
        self.by_key.len()
    }

    /// Registers `key` at `at`, or forgets it (`None`).
    pub fn set(&mut self, key: &[u8], at: Option<u64>) {
        if let Some(old) = self.by_key.get(key) {
            if Some(*old) == at {
                return;
            }
            self.by_time.remove(&(*old, key.to_vec()));
            self.by_key.remove(key);
        }
        if let Some(t) = at {
            self.by_key.insert(key.to_vec(), t);
            self.by_time.insert((t, key.to_vec()));
        }
    }

    /// The registered time of `key`.
    pub fn get(&self, key: &[u8]) -> Option<u64> {
        self.by_key.get(key).copied()
    }

    pub fn clear(&mut self) {
        self.by_time.clear();
        self.by_key.clear();
    }

    /// The earliest registered key if its time is at most `now`.
    fn next_due(&self, now: u64) -> Option<(u64, Vec<u8>)> {
        self.by_time.first().filter(|(t, _)| *t <= now).cloned()
    }
}

/// One run of active field expiry over a database at `now` (Unix ms): returns
/// how many fields expired.
pub fn active_expire(ks: &mut Keyspace, now: i64, quota: usize) -> usize {
    let now = now.max(0) as u64;
    let mut left = quota;
    // Hashes whose next time is still due after their turn wait for the next run.
    let mut again: Vec<(Vec<u8>, u64)> = Vec::new();
    while left > 0 {
        let Some((at, key)) = ks.subexpires.next_due(now) else {
            break;
        };
        ks.subexpires.set(&key, None);
        // A stale entry: the key was replaced by a value registered otherwise.
        let current = match ks.peek(&key) {
            Some(Value::Hash(h)) => h.subexpire_time(),
            _ => None,
        };
        if current != Some(at) {
            if let Some(t) = current {
                ks.subexpires.set(&key, Some(t));
            }
            continue;
        }
        let Some(Value::Hash(hash)) = ks.get_mut(&key) else {
            continue;
        };
        let expired = hash.expire_fields(now, left);
        left -= expired;
        let next = hash.subexpire_time();
        let empty = hash.is_empty();
        if expired > 0 {
            // `keyModified`: whoever WATCHes the key sees it changed.
            ks.watches.expired(&key);
            ks.notify(crate::server::notify::HASH, "hexpired", &key);
        }
        if empty {
            ks.remove(&key);
            ks.notify(crate::server::notify::GENERIC, "del", &key);
        } else if let Some(t) = next {
            if t <= now {
                again.push((key, t));
            } else {
                ks.subexpires.set(&key, Some(t));
            }
        }
    }
    for (key, t) in again {
        ks.subexpires.set(&key, Some(t));
    }
    quota - left
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registrations_follow_the_latest_time() {
        let mut s = Subexpires::default();
        s.set(b"a", Some(10));
        s.set(b"b", Some(5));
        s.set(b"a", Some(3));
        assert_eq!(s.len(), 2);
        assert_eq!(s.next_due(4), Some((3, b"a".to_vec())));
        s.set(b"a", None);
        assert_eq!(s.next_due(4), None);
        assert_eq!(s.next_due(5), Some((5, b"b".to_vec())));
        s.clear();
        assert!(s.is_empty());
    }
}
