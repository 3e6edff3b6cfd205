//! The keyspace: named values, each with a type and an optional expiry time.
//!
//! Like Redis, an expired key is removed two ways: lazily, when it is looked up (so
//! a key past its deadline is never seen by a command), and actively, by
//! [`Keyspace::active_expire_cycle`], which the server runs periodically (Redis:
//! `activeExpireCycle` from `serverCron`, 10 times a second) so that keys nobody
//! reads again still go away and DBSIZE drops.
//!
//! The active cycle follows Redis 6+'s shape: it walks the keys that have a TTL
//! with a cursor (Redis scans its `expires` dict), 20 keys per round, deletes the
//! expired ones, and starts another round only while more than 10% of a round
//! was expired and its time budget lasts.
//!
//! Each entry also remembers whether Redis's key object would carry an expiry
//! slot: Redis 8 keeps the deadline inside the object holding the key, adds the
//! 8-byte slot when a TTL is first set (or up front for keys of 128 bytes or
//! more), and does not shrink the object when the TTL goes away. MEMORY USAGE
//! counts that slot. Overwriting a value either keeps the old object (when
//! `dbSetValue` swaps the new content in) or builds a new one, with a slot only if
//! the TTL is kept; [`Keyspace::set_value`] takes that choice from the caller.

use std::collections::HashMap;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crate::hash::Hash;
use crate::memory::KEY_LEN_WITH_EXPIRE_SLOT;
use crate::set::Set;
use crate::strings::StringValue;
use crate::watch::Watches;
use crate::zset::Zset;

/// A value stored under a key. More types arrive with the labs that need them.
#[derive(Debug)]
pub enum Value {
    /// Boxed: a zset carries its skiplist header and generator inline.
    Zset(Box<Zset>),
    Hash(Hash),
    String(StringValue),
    Set(Set),
}

impl Value {
    /// The name TYPE reports.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Zset(_) => "zset",
            Value::Hash(_) => "hash",
            Value::String(_) => "string",
            Value::Set(_) => "set",
        }
    }
}

#[derive(Debug)]
struct Entry {
    value: Value,
    /// Absolute expiry time in Unix milliseconds.
    expires_at_ms: Option<i64>,
    /// Whether Redis's key object for this entry has an expiry slot.
    expire_slot: bool,
}

/// Wall-clock time in Unix milliseconds, the clock Redis uses for expiry
/// (frozen at its start while a script runs: [`crate::scripting::clock`]).
pub fn now_ms() -> i64 {
    if let Some(ms) = crate::scripting::clock::frozen_ms() {
        return ms;
    }
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// Keys examined per round of the active cycle
/// (`ACTIVE_EXPIRE_CYCLE_KEYS_PER_LOOP`).
pub const KEYS_PER_LOOP: usize = 20;
/// Another round runs while more than this share of a round had expired
/// (`ACTIVE_EXPIRE_CYCLE_ACCEPTABLE_STALE`, 10%).
const ACCEPTABLE_STALE_PERCENT: usize = 10;

#[derive(Debug, Default)]
pub struct Keyspace {
    entries: HashMap<Vec<u8>, Entry>,
    /// The keys that have a TTL (Redis's `expires` dict), in a vector so the
    /// active cycle can walk them with a cursor; `volatile_pos` finds a key's slot.
    volatile: Vec<Vec<u8>>,
    volatile_pos: HashMap<Vec<u8>, usize>,
    cursor: usize,
    /// Versions of WATCHed keys (see [`crate::watch`]).
    pub watches: Watches,
}

/// What one active expire cycle did.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ExpireCycleStats {
    pub examined: usize,
    pub expired: usize,
}

impl Keyspace {
    pub fn new() -> Keyspace {
        Keyspace::default()
    }

    /// Drops `key` if its deadline has passed, so callers only see live keys.
    fn expire_if_due(&mut self, key: &[u8]) {
        let due = matches!(self.entries.get(key), Some(e) if e.expires_at_ms.is_some_and(|t| t <= now_ms()));
        if due {
            self.delete(key);
            self.watches.expired(key);
        }
    }

    /// Removes a key and its TTL bookkeeping.
    fn delete(&mut self, key: &[u8]) -> bool {
        self.watches.note(key);
        self.forget_ttl(key);
        self.entries.remove(key).is_some()
    }

    fn track_ttl(&mut self, key: &[u8]) {
        if !self.volatile_pos.contains_key(key) {
            self.volatile_pos.insert(key.to_vec(), self.volatile.len());
            self.volatile.push(key.to_vec());
        }
    }

    fn forget_ttl(&mut self, key: &[u8]) {
        if let Some(pos) = self.volatile_pos.remove(key) {
            self.volatile.swap_remove(pos);
            if let Some(moved) = self.volatile.get(pos) {
                self.volatile_pos.insert(moved.clone(), pos);
            }
        }
    }

    /// Number of keys with a TTL (INFO's `expires=`).
    pub fn volatile_len(&self) -> usize {
        self.volatile.len()
    }

    /// One active expire cycle at `now_ms`: rounds of [`KEYS_PER_LOOP`] keys with a
    /// TTL from the cursor on, deleting the expired ones, until a round finds at
    /// most 10% expired, every key with a TTL was examined, or `budget` is spent.
    pub fn active_expire_cycle(&mut self, now_ms: i64, budget: Duration) -> ExpireCycleStats {
        let started = Instant::now();
        let mut stats = ExpireCycleStats::default();
        let total = self.volatile.len();
        while !self.volatile.is_empty() && stats.examined < total {
            let mut round_expired = 0;
            let mut round = 0;
            while round < KEYS_PER_LOOP && !self.volatile.is_empty() && stats.examined < total {
                if self.cursor >= self.volatile.len() {
                    self.cursor = 0;
                }
                let key = &self.volatile[self.cursor];
                let deadline = self.entries.get(key).and_then(|e| e.expires_at_ms);
                round += 1;
                stats.examined += 1;
                if deadline.is_none() {
                    // Cannot happen while every deadline goes through
                    // `put_deadline`; if it ever did, the key is kept, not lost.
                    debug_assert!(false, "a key without a TTL in the expires list");
                    let key = key.clone();
                    self.forget_ttl(&key);
                } else if deadline.is_some_and(|t| t <= now_ms) {
                    // swap_remove brings the last key into this slot: the
                    // cursor stays to examine it.
                    let key = key.clone();
                    self.delete(&key);
                    self.watches.expired(&key);
                    round_expired += 1;
                } else {
                    self.cursor += 1;
                }
            }
            stats.expired += round_expired;
            if round_expired * 100 <= round * ACCEPTABLE_STALE_PERCENT
                || started.elapsed() >= budget
            {
                break;
            }
        }
        stats
    }

    pub fn get(&mut self, key: &[u8]) -> Option<&Value> {
        self.expire_if_due(key);
        self.entries.get(key).map(|e| &e.value)
    }

    /// Reads `key` without the lazy-expiry check, for a command that has already
    /// looked its keys up with [`Keyspace::get`] and needs several values borrowed at
    /// once (the ZUNION family).
    pub fn peek(&self, key: &[u8]) -> Option<&Value> {
        self.entries.get(key).map(|e| &e.value)
    }

    pub fn get_mut(&mut self, key: &[u8]) -> Option<&mut Value> {
        self.expire_if_due(key);
        self.watches.note(key);
        self.entries.get_mut(key).map(|e| &mut e.value)
    }

    /// Stores a new value with no expiry, replacing whatever was there.
    pub fn insert(&mut self, key: &[u8], value: Value) {
        self.watches.note(key);
        self.forget_ttl(key);
        self.entries.insert(
            key.to_vec(),
            Entry {
                value,
                expires_at_ms: None,
                expire_slot: key.len() >= KEY_LEN_WITH_EXPIRE_SLOT,
            },
        );
    }

    /// `setKey` / `dbSetValue`: stores `value`, keeping the TTL if `keep_ttl`.
    /// `reuse_object` says Redis keeps the existing key object (and so its expiry
    /// slot); otherwise a new object gets a slot only for a kept TTL.
    pub fn set_value(&mut self, key: &[u8], value: Value, keep_ttl: bool, reuse_object: bool) {
        self.expire_if_due(key);
        self.watches.note(key);
        let long_key = key.len() >= KEY_LEN_WITH_EXPIRE_SLOT;
        match self.entries.get_mut(key) {
            None => self.insert(key, value),
            Some(e) => {
                let expiry = if keep_ttl { e.expires_at_ms } else { None };
                e.expire_slot = if reuse_object {
                    e.expire_slot
                } else {
                    expiry.is_some() || long_key
                };
                e.value = value;
                self.put_deadline(key, expiry);
            }
        }
    }

    /// The one place an entry's deadline changes: the entry and the active
    /// cycle's list of keys with a TTL (Redis's `expires` dict) always agree.
    /// (A key whose TTL was cleared on the entry but left in that list was once
    /// deleted by the next cycle: the data-loss bug this function exists to
    /// prevent.)
    fn put_deadline(&mut self, key: &[u8], at_ms: Option<i64>) {
        let Some(e) = self.entries.get_mut(key) else {
            self.forget_ttl(key);
            return;
        };
        e.expires_at_ms = at_ms;
        e.expire_slot |= at_ms.is_some();
        match at_ms {
            Some(_) => self.track_ttl(key),
            None => self.forget_ttl(key),
        }
    }

    /// Whether the key object of `key` carries an expiry slot.
    pub fn has_expire_slot(&self, key: &[u8]) -> bool {
        self.entries.get(key).is_some_and(|e| e.expire_slot)
    }

    pub fn remove(&mut self, key: &[u8]) -> bool {
        self.expire_if_due(key);
        self.delete(key)
    }

    pub fn contains(&mut self, key: &[u8]) -> bool {
        self.get(key).is_some()
    }

    /// Sets the absolute expiry of an existing key; returns false if there is no key.
    pub fn set_expiry(&mut self, key: &[u8], at_ms: Option<i64>) -> bool {
        self.expire_if_due(key);
        self.watches.note(key);
        if !self.entries.contains_key(key) {
            return false;
        }
        self.put_deadline(key, at_ms);
        true
    }

    pub fn expiry(&mut self, key: &[u8]) -> Option<Option<i64>> {
        self.expire_if_due(key);
        self.entries.get(key).map(|e| e.expires_at_ms)
    }

    /// Number of keys, counting ones that expired but were not looked up yet (as
    /// Redis's DBSIZE does).
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn clear(&mut self) {
        self.watches.touch_all();
        self.entries.clear();
        self.volatile.clear();
        self.volatile_pos.clear();
        self.cursor = 0;
    }

    pub fn keys(&self) -> impl Iterator<Item = &[u8]> {
        self.entries.keys().map(|k| k.as_slice())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::Hash;

    fn keyspace_with(n: usize, ttl_from: usize, at_ms: i64) -> Keyspace {
        let mut ks = Keyspace::new();
        for i in 0..n {
            let key = format!("k{i}").into_bytes();
            ks.insert(&key, Value::Hash(Hash::default()));
            if i >= ttl_from {
                ks.set_expiry(&key, Some(at_ms));
            }
        }
        ks
    }

    #[test]
    fn the_active_cycle_removes_expired_keys_nobody_reads() {
        let now = now_ms();
        let mut ks = keyspace_with(1000, 100, now - 1);
        assert_eq!(ks.len(), 1000);
        assert_eq!(ks.volatile_len(), 900);
        let stats = ks.active_expire_cycle(now, Duration::from_millis(25));
        // Every round is fully expired, so the cycle goes on to the end.
        assert_eq!(
            stats,
            ExpireCycleStats {
                examined: 900,
                expired: 900
            }
        );
        assert_eq!(ks.len(), 100);
        assert_eq!(ks.volatile_len(), 0);
    }

    #[test]
    fn the_active_cycle_stops_when_few_keys_are_stale() {
        let now = now_ms();
        let mut ks = keyspace_with(1000, 0, now + 60_000);
        let stats = ks.active_expire_cycle(now, Duration::from_millis(25));
        assert_eq!(
            stats,
            ExpireCycleStats {
                examined: KEYS_PER_LOOP,
                expired: 0
            }
        );
        // The cursor moved on: the next cycle looks at the next keys.
        assert_eq!(ks.cursor, KEYS_PER_LOOP);
        assert_eq!(ks.len(), 1000);
    }

    #[test]
    fn overwriting_without_a_ttl_keeps_the_key_through_the_active_cycle() {
        let now = now_ms();
        let mut ks = keyspace_with(1, 0, now + 3_600_000);
        ks.set_value(b"k0", Value::Hash(Hash::default()), false, false);
        assert_eq!(ks.expiry(b"k0"), Some(None));
        assert_eq!(ks.volatile_len(), 0);
        // A cycle far in the future must not take a key that has no TTL.
        ks.active_expire_cycle(now + 7_200_000, Duration::from_millis(25));
        assert!(ks.contains(b"k0"));
        // Kept TTL: still tracked, and due later.
        ks.set_expiry(b"k0", Some(now + 1000));
        ks.set_value(b"k0", Value::Hash(Hash::default()), true, false);
        assert_eq!(ks.volatile_len(), 1);
        ks.active_expire_cycle(now + 2000, Duration::from_millis(25));
        assert!(!ks.contains(b"k0"));
    }

    #[test]
    fn ttl_bookkeeping_follows_the_key() {
        let mut ks = keyspace_with(3, 0, now_ms() + 60_000);
        assert_eq!(ks.volatile_len(), 3);
        ks.set_expiry(b"k0", None);
        ks.remove(b"k1");
        ks.insert(b"k2", Value::Hash(Hash::default()));
        assert_eq!(ks.volatile_len(), 0);
        ks.set_expiry(b"k2", Some(now_ms() + 1000));
        ks.clear();
        assert_eq!(ks.volatile_len(), 0);
    }
}
