//! The keyspace: named values, each with a type and an optional expiry time.
//!
//! Like Redis, an expired key is removed lazily when it is looked up, so a key past
//! its deadline is never seen by a command.
//!
//! Each entry also remembers whether Redis's key object would carry an expiry
//! slot: Redis 8 keeps the deadline inside the object holding the key, adds the
//! 8-byte slot when a TTL is first set (or up front for keys of 128 bytes or
//! more), and does not shrink the object when the TTL goes away. MEMORY USAGE
//! counts that slot. Overwriting a value either keeps the old object (when
//! `dbSetValue` swaps the new content in) or builds a new one, with a slot only if
//! the TTL is kept; [`Keyspace::set_value`] takes that choice from the caller.

use std::collections::HashMap;
use std::time::{SystemTime, UNIX_EPOCH};

use crate::hash::Hash;
use crate::memory::KEY_LEN_WITH_EXPIRE_SLOT;
use crate::strings::StringValue;
use crate::zset::Zset;

/// A value stored under a key. More types arrive with the labs that need them.
#[derive(Debug)]
pub enum Value {
    /// Boxed: a zset carries its skiplist header and generator inline.
    Zset(Box<Zset>),
    Hash(Hash),
    String(StringValue),
}

impl Value {
    /// The name TYPE reports.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Zset(_) => "zset",
            Value::Hash(_) => "hash",
            Value::String(_) => "string",
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

/// Wall-clock time in Unix milliseconds, the clock Redis uses for expiry.
pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

#[derive(Debug, Default)]
pub struct Keyspace {
    entries: HashMap<Vec<u8>, Entry>,
}

impl Keyspace {
    pub fn new() -> Keyspace {
        Keyspace::default()
    }

    /// Drops `key` if its deadline has passed, so callers only see live keys.
    fn expire_if_due(&mut self, key: &[u8]) {
        let due = matches!(self.entries.get(key), Some(e) if e.expires_at_ms.is_some_and(|t| t <= now_ms()));
        if due {
            self.entries.remove(key);
        }
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
        self.entries.get_mut(key).map(|e| &mut e.value)
    }

    /// Stores a new value with no expiry, replacing whatever was there.
    pub fn insert(&mut self, key: &[u8], value: Value) {
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
                e.expires_at_ms = expiry;
                e.value = value;
            }
        }
    }

    /// Whether the key object of `key` carries an expiry slot.
    pub fn has_expire_slot(&self, key: &[u8]) -> bool {
        self.entries.get(key).is_some_and(|e| e.expire_slot)
    }

    pub fn remove(&mut self, key: &[u8]) -> bool {
        self.expire_if_due(key);
        self.entries.remove(key).is_some()
    }

    pub fn contains(&mut self, key: &[u8]) -> bool {
        self.get(key).is_some()
    }

    /// Sets the absolute expiry of an existing key; returns false if there is no key.
    pub fn set_expiry(&mut self, key: &[u8], at_ms: Option<i64>) -> bool {
        self.expire_if_due(key);
        match self.entries.get_mut(key) {
            Some(e) => {
                e.expires_at_ms = at_ms;
                e.expire_slot |= at_ms.is_some();
                true
            }
            None => false,
        }
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
        self.entries.clear();
    }

    pub fn keys(&self) -> impl Iterator<Item = &[u8]> {
        self.entries.keys().map(|k| k.as_slice())
    }
}
