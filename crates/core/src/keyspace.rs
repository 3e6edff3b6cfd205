//! One database: named values, each with a type, an optional expiry time and the
//! eviction clock OBJECT IDLETIME/FREQ read (Redis's `redisDb`: the `keys` dict
//! of key objects, the `expires` dict, `avg_ttl`).
//!
//! **The key table is Redis's own dict** ([`crate::dict::Dict`]: chained
//! buckets, incremental rehashing, SipHash-1-2), so SCAN walks it with Redis's
//! reverse-binary cursor ([`Keyspace::scan_step`]), RANDOMKEY draws with Redis's
//! biased "fair" random key ([`Keyspace::random_key`]), and every lookup moves a
//! rehash along by one step, as `dictFind` does. Each lookup hashes the key
//! once and works on the entry it found ([`crate::dict::EntryRef`]).
//!
//! **Expiry.** Like Redis, an expired key is removed two ways: lazily, when it is
//! looked up (so a key past its deadline is never seen by a command), and
//! actively, by [`Keyspace::active_expire_cycle`], which the server runs
//! periodically (Redis: `activeExpireCycle` from `serverCron`, 10 times a
//! second) so that keys nobody reads again still go away and DBSIZE drops.
//! The active cycle follows Redis 6+'s shape: it walks the keys that have a TTL
//! with a cursor (Redis scans its `expires` dict), 20 keys per round, deletes the
//! expired ones, and starts another round only while more than 10% of a round
//! was expired and its time budget lasts. It also keeps INFO's `avg_ttl`, the
//! running average of the TTLs it sampled. Here the keys with a TTL are a vector
//! with an index (not a second dict); [`Keyspace::put_deadline`] is the one
//! place a deadline changes, so the entry and that list always agree.
//!
//! **Lookups**, as Redis's `lookupKey` flags make them differ:
//!
//! | method                         | Redis                         | expires | LRU/LFU | hits/misses |
//! |--------------------------------|-------------------------------|---------|---------|-------------|
//! | [`Keyspace::get`]              | `lookupKeyRead`               | yes     | touched | if the command is not a write |
//! | [`Keyspace::get_untouched`]    | `lookupKeyReadWithFlags(NOTOUCH)` | yes | —       | same        |
//! | [`Keyspace::lookup_read`]      | `lookupKeyRead` in a write command | yes | touched | always    |
//! | [`Keyspace::get_mut`]          | `lookupKeyWrite` + modify     | yes     | touched | if the command is not a write |
//! | [`Keyspace::lookup_write`]     | `lookupKeyWrite` only         | yes     | touched | —           |
//! | [`Keyspace::contains`], [`Keyspace::expiry`] | existence/TTL checks | yes | — | (`expiry`: as `get`) |
//! | [`Keyspace::peek`]             | `dbFind`                      | no      | —       | —           |
//!
//! The running command's context (the clock, the policy, CLIENT NO-TOUCH,
//! whether it writes) is set by the server before each command
//! ([`Keyspace::set_access`]); the counters it produced (hits, misses, keys that
//! expired on lookup) are taken back after it ([`Keyspace::take_counters`]).
//! Read lookups inside write commands that Redis does with `lookupKeyRead`
//! (GETDEL, SET ... GET, the sources of *STORE) are counted only where the
//! command uses [`Keyspace::lookup_read`].
//!
//! **Keyspace events.** What Redis notifies from inside its database layer
//! (`new` from `dbAdd`, `expired` from a lazy or active expiry, `keymiss` from
//! a counted read miss) is recorded here in order, when
//! `notify-keyspace-events` asks for that class, and published by the server
//! ([`crate::server::notify`]).
//!
//! **Key objects.** Each entry also remembers whether Redis's key object would
//! carry an expiry slot: Redis 8 keeps the deadline inside the object holding
//! the key, adds the 8-byte slot when a TTL is first set (or up front for keys of
//! 128 bytes or more), and does not shrink the object when the TTL goes away.
//! MEMORY USAGE counts that slot. Overwriting a value either keeps the old object
//! (when `dbSetValue` swaps the new content in) or builds a new one, with a slot
//! only if the TTL is kept; [`Keyspace::set_value`] takes that choice from the
//! caller. A key added by RENAME, MOVE or COPY is a new object (`dbAddInternal`):
//! a slot only for a TTL or a long key, a fresh LRU/LFU field.

use std::collections::HashMap;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use rand::RngCore;

use crate::dict::{Dict, EntryRef};
use crate::hash::Hash;
use crate::list::List;
use crate::lru::{self, Clock, Policy};
use crate::memory::KEY_LEN_WITH_EXPIRE_SLOT;
use crate::set::Set;
use crate::strings::{ArgObject, StringValue};
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
    /// Boxed: a quicklist's deque and counters are larger than the other arms.
    List(Box<List>),
}

impl Value {
    /// The name TYPE reports (and SCAN's TYPE option matches).
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Zset(_) => "zset",
            Value::Hash(_) => "hash",
            Value::String(_) => "string",
            Value::Set(_) => "set",
            Value::List(_) => "list",
        }
    }

    /// COPY's deep copy, as stored under a key of `key_len` bytes:
    /// `dupStringObject` (an embstr is embedded again if it fits beside the new
    /// key, a raw string gets an exact-size SDS), `setTypeDup`, `zsetDup`,
    /// `hashTypeDup`, `listTypeDup`.
    pub fn dup(&self, key_len: usize) -> Value {
        match self {
            Value::String(StringValue::Int(n)) => Value::String(StringValue::Int(*n)),
            Value::String(StringValue::Embstr(b)) => {
                Value::String(ArgObject::from_computed(b.as_bytes()).into_stored(key_len))
            }
            Value::String(StringValue::Raw(s)) => {
                Value::String(StringValue::Raw(crate::sds::Sds::new(s.as_bytes())))
            }
            Value::Set(set) => Value::Set(set.dup()),
            Value::Hash(h) => Value::Hash(h.dup()),
            Value::Zset(z) => Value::Zset(Box::new(z.dup())),
            // `listTypeDup`: the same encoding, node for node.
            Value::List(l) => Value::List(l.clone()),
        }
    }

    /// `kvobjSet` of an existing value under another key (RENAME, MOVE): only an
    /// embstr is rebuilt (embedded beside the new key if it fits, else a raw
    /// exact-size SDS); everything else keeps its allocation.
    fn rekeyed(self, key_len: usize) -> Value {
        match self {
            Value::String(StringValue::Embstr(b)) => {
                Value::String(ArgObject::from_computed(b.as_bytes()).into_stored(key_len))
            }
            other => other,
        }
    }
}

#[derive(Debug)]
struct Entry {
    value: Value,
    /// Absolute expiry time in Unix milliseconds, if any.
    deadline: Deadline,
    /// `robj.lru` (see [`crate::lru`]).
    lru: u32,
    /// The command that last moved `lru`, and whether Redis's key object has
    /// an expiry slot, in one word (see [`Touch`]).
    touch: Touch,
}

/// Two small facts of a key's entry in 4 bytes (each entry of the key table
/// is then 64 bytes, not 72): the low 31 bits of the command
/// ([`Access::command`]) that last moved the LRU field (a command touches a
/// key once, however many lookups the core's code makes for what Redis does
/// in one: the LFU counter would count them all), and in the top bit whether
/// Redis's key object for this entry has an expiry slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Touch(u32);

impl Touch {
    const SLOT: u32 = 1 << 31;

    fn new(command: u32, expire_slot: bool) -> Touch {
        Touch((command & !Touch::SLOT) | if expire_slot { Touch::SLOT } else { 0 })
    }

    /// Whether `command` (never 0 for a real command) is the one that last
    /// touched the entry.
    fn by(self, command: u32) -> bool {
        command != 0 && (self.0 & !Touch::SLOT) == (command & !Touch::SLOT)
    }

    fn expire_slot(self) -> bool {
        self.0 & Touch::SLOT != 0
    }

    fn with_command(self, command: u32) -> Touch {
        Touch::new(command, self.expire_slot())
    }

    fn with_expire_slot(self, expire_slot: bool) -> Touch {
        Touch((self.0 & !Touch::SLOT) | if expire_slot { Touch::SLOT } else { 0 })
    }
}

impl Entry {
    fn expires_at_ms(&self) -> Option<i64> {
        self.deadline.get()
    }
}

/// An expiry time in Unix milliseconds or none, in 8 bytes (an
/// `Option<i64>` takes 16, which made every key's entry 8 bytes longer).
/// `i64::MIN` stands for none; a real deadline that far back (only ever
/// long past) is kept as `i64::MIN + 1`, the same for every comparison
/// with a clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Deadline(i64);

impl Deadline {
    const NONE: Deadline = Deadline(i64::MIN);

    fn new(at_ms: Option<i64>) -> Deadline {
        match at_ms {
            None => Deadline::NONE,
            Some(t) => Deadline(t.max(i64::MIN + 1)),
        }
    }

    fn get(self) -> Option<i64> {
        (self != Deadline::NONE).then_some(self.0)
    }
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
/// The weight `avg_ttl` keeps after n rounds, for n = 1..=16: Redis's table
/// (`avg_ttl_factor` in expire.c), 0.98^n written to six decimals, so the
/// running average moves by the same steps as Redis's.
const AVG_TTL_KEEP: [f64; 16] = [
    0.98, 0.9604, 0.941192, 0.922368, 0.903921, 0.885842, 0.868126, 0.850763, 0.833748, 0.817073,
    0.800731, 0.784717, 0.769022, 0.753642, 0.738569, 0.723798,
];
/// Another round runs while more than this share of a round had expired
/// (`ACTIVE_EXPIRE_CYCLE_ACCEPTABLE_STALE`, 10%).
const ACCEPTABLE_STALE_PERCENT: usize = 10;

/// How the running command's lookups touch keys and count: set by the server
/// before every command.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Access {
    pub clock: Clock,
    pub policy: Policy,
    /// CLIENT NO-TOUCH is on (and the command is not TOUCH): reads leave the
    /// LRU/LFU field alone.
    pub no_touch: bool,
    /// The command is not a write: its read lookups count as keyspace
    /// hits/misses.
    pub count_reads: bool,
    /// A number for the running command, different for each command; 0 for
    /// a keyspace used on its own, where every lookup is an access.
    pub command: u32,
}

impl Default for Access {
    fn default() -> Access {
        Access {
            clock: Clock::default(),
            policy: Policy::Lru,
            no_touch: false,
            count_reads: false,
            command: 0,
        }
    }
}

/// What lookups counted since the server last asked.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    pub hits: u64,
    pub misses: u64,
    /// Keys deleted because a lookup found them past their deadline.
    pub expired: u64,
}

#[derive(Debug)]
pub struct Keyspace {
    entries: Dict<Entry>,
    /// The keys that have a TTL (Redis's `expires` dict), in a vector so the
    /// active cycle can walk them with a cursor; `volatile_pos` finds a key's slot.
    volatile: Vec<Vec<u8>>,
    volatile_pos: HashMap<Vec<u8>, usize>,
    cursor: usize,
    /// INFO's `avg_ttl`: the active cycle's running average, in milliseconds.
    avg_ttl: i64,
    /// Versions of WATCHed keys (see [`crate::watch`]). They belong to the
    /// database *number*: SWAPDB leaves them in place.
    pub watches: Watches,
    access: Access,
    counters: Counters,
    /// `rand()` for the LFU counter.
    lfu_rng: u64,
    /// Hashes with field TTLs, for their active expiry (see
    /// [`crate::hash::subexpires`]): a hash stored under a key is registered with
    /// the time it carries, a deleted key is forgotten.
    pub subexpires: crate::hash::subexpires::Subexpires,
    /// The `notify-keyspace-events` classes to record (0: none), set by the
    /// server on every database.
    pub(crate) notify_mask: u32,
    /// Keyspace events this database raised itself (`new`, `expired`,
    /// `keymiss`, `hexpired`...), in order, until the server publishes them.
    events: Vec<(&'static str, Vec<u8>)>,
}

impl Default for Keyspace {
    fn default() -> Keyspace {
        Keyspace {
            entries: Dict::new(),
            volatile: Vec::new(),
            volatile_pos: HashMap::new(),
            cursor: 0,
            avg_ttl: 0,
            watches: Watches::default(),
            access: Access::default(),
            counters: Counters::default(),
            lfu_rng: 0x9e37_79b9_7f4a_7c15,
            subexpires: Default::default(),
            notify_mask: 0,
            events: Vec::new(),
        }
    }
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

    // ----- the command's context -----

    /// The running command's clock, policy and flags (see [`Access`]).
    pub fn set_access(&mut self, access: Access) {
        self.access = access;
    }

    pub fn access(&self) -> Access {
        self.access
    }

    /// The hits, misses and lazily expired keys counted since the last call.
    pub fn take_counters(&mut self) -> Counters {
        std::mem::take(&mut self.counters)
    }

    // ----- keyspace events -----

    /// Records keyspace event `event` of `class` on `key`, if that class is on
    /// (Redis calls `notifyKeyspaceEvent` at this point; the server publishes
    /// what was recorded, in order, see [`crate::server::notify`]).
    pub(crate) fn notify(&mut self, class: u32, event: &'static str, key: &[u8]) {
        if self.notify_mask & class != 0 {
            self.events.push((event, key.to_vec()));
        }
    }

    /// The events recorded since the last call.
    pub(crate) fn take_events(&mut self) -> Vec<(&'static str, Vec<u8>)> {
        std::mem::take(&mut self.events)
    }

    pub(crate) fn has_events(&self) -> bool {
        !self.events.is_empty()
    }

    // ----- lookups -----

    /// Brings the memory a lookup of each of `keys` will read into the cache,
    /// a few keys at a time, in three passes (Redis 8's `prefetchCommands`
    /// for the key dict): the buckets, then the entries at their heads, then
    /// the key's and the string value's bytes. A pipelined batch of lookups
    /// then waits for memory once per pass instead of three times per key.
    /// Only a hint: nothing changes, and a key that is not there costs its
    /// hash and a bucket read.
    pub fn prefetch<'a>(&self, keys: impl Iterator<Item = &'a [u8]>) {
        const AT_ONCE: usize = 16;
        if self.entries.is_empty() {
            return;
        }
        let mut keys = keys.peekable();
        while keys.peek().is_some() {
            let mut hashes = [0u64; AT_ONCE];
            let mut n = 0;
            for key in keys.by_ref().take(AT_ONCE) {
                hashes[n] = self.entries.hash_of(key);
                self.entries.prefetch_buckets(hashes[n]);
                n += 1;
            }
            for &h in &hashes[..n] {
                self.entries.prefetch_heads(h);
            }
            for &h in &hashes[..n] {
                self.entries.prefetch_with(h, |key, entry| {
                    crate::dict::prefetch(key.as_ptr());
                    match &entry.value {
                        Value::String(StringValue::Raw(v)) => {
                            crate::dict::prefetch(v.as_bytes().as_ptr())
                        }
                        Value::Zset(z) => crate::dict::prefetch::<Zset>(&**z),
                        _ => {}
                    }
                });
            }
        }
    }

    /// The entry of a live `key`: one dict lookup (with its rehash step); a key
    /// past its deadline is deleted here (`expireIfNeeded`) and reported missing.
    fn live(&mut self, key: &[u8]) -> Option<EntryRef> {
        let at = self.entries.find_entry(key)?;
        let due = self
            .entries
            .value_at(at)
            .expires_at_ms()
            .is_some_and(|t| t <= now_ms());
        if due {
            self.delete_expired(key);
            return None;
        }
        Some(at)
    }

    /// A lookup found `key` past its deadline: it goes, as a modification of a
    /// watched key, and counts as expired.
    fn delete_expired(&mut self, key: &[u8]) {
        self.delete(key);
        self.watches.expired(key);
        self.counters.expired += 1;
        self.notify(crate::server::notify::EXPIRED, "expired", key);
    }

    /// A read access to the entry: the LRU clock or the LFU counter moves
    /// (unless CLIENT NO-TOUCH, or an LRM policy, which only counts writes).
    fn touch_read(&mut self, at: EntryRef) {
        if self.access.no_touch || self.access.policy == Policy::Lrm || !self.first_touch(at) {
            return;
        }
        match self.access.policy {
            Policy::Lfu { .. } => self.touch_lfu(at),
            _ => self.entries.value_at_mut(at).lru = self.access.clock.lru,
        }
    }

    /// A write access: as a read, and under LRM the modification clock too
    /// (`updateLRM`, which CLIENT NO-TOUCH does not stop).
    fn touch_write(&mut self, at: EntryRef) {
        if self.access.policy == Policy::Lrm {
            if self.first_touch(at) {
                self.entries.value_at_mut(at).lru = self.access.clock.lru;
            }
        } else {
            self.touch_read(at);
        }
    }

    /// Whether the running command has not touched this entry yet (and now
    /// has).
    fn first_touch(&mut self, at: EntryRef) -> bool {
        let command = self.access.command;
        let e = self.entries.value_at_mut(at);
        let first = !e.touch.by(command);
        e.touch = e.touch.with_command(command);
        first
    }

    fn touch_lfu(&mut self, at: EntryRef) {
        let Policy::Lfu {
            log_factor,
            decay_time,
        } = self.access.policy
        else {
            return;
        };
        let r = self.lfu_draw();
        let e = self.entries.value_at_mut(at);
        e.lru = lru::lfu_touched(e.lru, log_factor, decay_time, self.access.clock, r);
    }

    /// `(double)rand()/RAND_MAX`, from a xorshift64* stream.
    fn lfu_draw(&mut self) -> f64 {
        let mut x = self.lfu_rng;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.lfu_rng = x;
        let r = x.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 33; // 31 bits, as rand()
        r as f64 / f64::from(i32::MAX)
    }

    /// Counts a read lookup's outcome, when `counted`; a miss counted is also
    /// a `keymiss` event (Redis's rule for both is "a read lookup").
    /// `quiet`: LOOKUP_NONOTIFY (OBJECT), a miss counted without the event.
    fn count(&mut self, counted: bool, found: bool, key: &[u8], quiet: bool) {
        if counted {
            if found {
                self.counters.hits += 1;
            } else {
                self.counters.misses += 1;
                if !quiet {
                    self.notify(crate::server::notify::KEY_MISS, "keymiss", key);
                }
            }
        }
    }

    fn read(&mut self, key: &[u8], touch: bool, counted: bool) -> Option<EntryRef> {
        let at = self.live(key);
        self.count(counted, at.is_some(), key, false);
        if touch {
            if let Some(at) = at {
                self.touch_read(at);
            }
        }
        at
    }

    /// `lookupKeyRead`: the live value, its access recorded.
    pub fn get(&mut self, key: &[u8]) -> Option<&Value> {
        let counted = self.access.count_reads;
        let at = self.read(key, true, counted)?;
        Some(&self.entries.value_at(at).value)
    }

    /// `lookupKeyReadWithFlags(LOOKUP_NOTOUCH)` (TYPE, EXISTS, OBJECT, TTL):
    /// like [`Keyspace::get`], but the LRU/LFU field stays as it was.
    pub fn get_untouched(&mut self, key: &[u8]) -> Option<&Value> {
        let counted = self.access.count_reads;
        let at = self.read(key, false, counted)?;
        Some(&self.entries.value_at(at).value)
    }

    /// `lookupKeyRead` from a write command (COPY's source): counted as a hit
    /// or miss whatever the command.
    pub fn lookup_read(&mut self, key: &[u8]) -> Option<&Value> {
        let at = self.read(key, true, true)?;
        Some(&self.entries.value_at(at).value)
    }

    /// `lookupKeyWrite` when the command may not change the key (RENAME's and
    /// MOVE's checks, EXPIRE refused by NX): whether it exists, its access
    /// recorded, and no WATCH touched.
    pub fn lookup_write(&mut self, key: &[u8]) -> bool {
        match self.live(key) {
            Some(at) => {
                self.touch_write(at);
                true
            }
            None => false,
        }
    }

    /// Reads `key` without the lazy-expiry check, for a command that has already
    /// looked its keys up with [`Keyspace::get`] and needs several values borrowed at
    /// once (the ZUNION family), or that must not expire anything (`dbFind`:
    /// MEMORY USAGE).
    pub fn peek(&self, key: &[u8]) -> Option<&Value> {
        let at = self.entries.peek_entry(key)?;
        Some(&self.entries.value_at(at).value)
    }

    /// `lookupKeyWrite` for a command about to change the value: WATCH notices.
    /// A read-only command that needs the value mutably (a dict lookup moves
    /// its rehash along) is reading: its lookup counts as a hit or a miss.
    pub fn get_mut(&mut self, key: &[u8]) -> Option<&mut Value> {
        let found = self.live(key);
        let counted = self.access.count_reads;
        self.count(counted, found.is_some(), key, false);
        let at = found?;
        self.watches.note(key);
        self.touch_write(at);
        Some(&mut self.entries.value_at_mut(at).value)
    }

    /// [`Keyspace::get`], then [`Keyspace::get_mut`] if the value is to change,
    /// with one search of the table (INCR on an int): `f` sees the live value
    /// (the read access recorded as `get` records it) and returns its result
    /// and whether it changed the value in place; if it did, the lookup for
    /// writing is recorded as `get_mut` records it (counted, WATCH noticing,
    /// the write access).
    pub fn modify<R>(&mut self, key: &[u8], f: impl FnOnce(Option<&mut Value>) -> (R, bool)) -> R {
        let counted = self.access.count_reads;
        let Some(at) = self.read(key, true, counted) else {
            return f(None).0;
        };
        let (result, changed) = f(Some(&mut self.entries.value_at_mut(at).value));
        if changed {
            self.count(counted, true, key, false);
            self.watches.note(key);
            self.touch_write(at);
        }
        result
    }

    /// [`Keyspace::get_mut`] without telling WATCH: for a command that may leave
    /// the value as it was (a removal of absent members, a lookup's rehash step)
    /// and says so itself, with `watches.note(key)`, only when it changed it, as
    /// Redis calls `signalModifiedKey` only then.
    pub fn get_mut_quiet(&mut self, key: &[u8]) -> Option<&mut Value> {
        let found = self.live(key);
        let counted = self.access.count_reads;
        self.count(counted, found.is_some(), key, false);
        let at = found?;
        self.touch_write(at);
        Some(&mut self.entries.value_at_mut(at).value)
    }

    /// The live value again, inside a command that already looked `key` up and
    /// counted that lookup (HMGET's per-field pass): no hit or miss, no access.
    pub fn get_mut_again(&mut self, key: &[u8]) -> Option<&mut Value> {
        let at = self.live(key)?;
        Some(&mut self.entries.value_at_mut(at).value)
    }

    /// Whether `key` names a live key (a key past its deadline is deleted
    /// first). Not an access: no LRU/LFU change, no hit or miss.
    pub fn contains(&mut self, key: &[u8]) -> bool {
        self.live(key).is_some()
    }

    /// The expiry of a live key: `None` if there is no key, `Some(None)` if it
    /// has no TTL. A lookup without touch, counted like [`Keyspace::get`].
    pub fn expiry(&mut self, key: &[u8]) -> Option<Option<i64>> {
        let counted = self.access.count_reads;
        let at = self.read(key, false, counted)?;
        Some(self.entries.value_at(at).expires_at_ms())
    }

    /// Whether the key object of `key` carries an expiry slot.
    pub fn has_expire_slot(&self, key: &[u8]) -> bool {
        self.entries
            .peek_entry(key)
            .is_some_and(|at| self.entries.value_at(at).touch.expire_slot())
    }

    /// The LRU/LFU field of a live key, looked up without touching it (OBJECT
    /// IDLETIME / FREQ).
    pub fn lru_field(&mut self, key: &[u8]) -> Option<u32> {
        let at = self.object_read(key)?;
        Some(self.entries.value_at(at).lru)
    }

    /// OBJECT's `lookupKeyReadWithFlags(LOOKUP_NOTOUCH | LOOKUP_NONOTIFY)`:
    /// the value untouched, a miss counted but no `keymiss` event.
    pub fn object_lookup(&mut self, key: &[u8]) -> Option<&Value> {
        let at = self.object_read(key)?;
        Some(&self.entries.value_at(at).value)
    }

    fn object_read(&mut self, key: &[u8]) -> Option<EntryRef> {
        let at = self.live(key);
        self.count(self.access.count_reads, at.is_some(), key, true);
        at
    }

    // ----- writes -----

    /// Stores a new value with no expiry, replacing whatever was there.
    pub fn insert(&mut self, key: &[u8], value: Value) {
        self.watches.note(key);
        self.register_subexpires(key, &value);
        let lru = lru::initial(self.access.policy, self.access.clock);
        let entry = Entry {
            value,
            deadline: Deadline::NONE,
            lru,
            // A key just added starts fresh: no access counted on top of it.
            touch: Touch::new(self.access.command, key.len() >= KEY_LEN_WITH_EXPIRE_SLOT),
        };
        let hash = self.entries.hash_of(key);
        let found = self.entries.find_entry_hashed(hash, key);
        let found = match found {
            // `setKey`'s lookup expires a key past its deadline first.
            Some(at)
                if self
                    .entries
                    .value_at(at)
                    .expires_at_ms()
                    .is_some_and(|t| t <= now_ms()) =>
            {
                self.delete_expired(key);
                None
            }
            other => other,
        };
        match found {
            Some(at) => {
                // `setKey` over an existing key (`dbSetValue`): the key's
                // LRU/LFU field carries over, after the write's own access.
                let old = std::mem::replace(self.entries.value_at_mut(at), entry);
                let e = self.entries.value_at_mut(at);
                e.lru = old.lru;
                // The old entry's last toucher, the new one's expiry slot.
                e.touch = old.touch.with_expire_slot(e.touch.expire_slot());
                self.touch_write(at);
                if old.expires_at_ms().is_some() {
                    self.forget_ttl(key);
                }
            }
            None => {
                self.entries.insert_absent(hash, key.to_vec(), entry);
                self.notify(crate::server::notify::NEW, "new", key);
            }
        }
    }

    /// `setKey` / `dbSetValue`: stores `value`, keeping the TTL if `keep_ttl`.
    /// `reuse_object` says Redis keeps the existing key object (and so its expiry
    /// slot); otherwise a new object gets a slot only for a kept TTL. The key's
    /// LRU/LFU field carries over, after the access the write's lookup made.
    pub fn set_value(&mut self, key: &[u8], value: Value, keep_ttl: bool, reuse_object: bool) {
        let Some(at) = self.live(key) else {
            self.insert(key, value);
            return;
        };
        self.replace_at(key, at, value, keep_ttl, reuse_object);
    }

    /// [`Keyspace::get`] then [`Keyspace::set_value`] with one search of the
    /// table: `make` sees the live value at `key` (the read access recorded,
    /// as `get` records it) and returns the new value and whether Redis keeps
    /// the key's object (see `set_value`). SET's path: `lookupKeyWrite`, then
    /// `setKey` on the entry it found.
    pub fn set_with(
        &mut self,
        key: &[u8],
        keep_ttl: bool,
        make: impl FnOnce(Option<&Value>) -> (Value, bool),
    ) {
        let counted = self.access.count_reads;
        let found = self.read(key, true, counted);
        let (value, reuse_object) = make(found.map(|at| &self.entries.value_at(at).value));
        match found {
            Some(at) => self.replace_at(key, at, value, keep_ttl, reuse_object),
            None => self.insert(key, value),
        }
    }

    /// `set_value` on the live entry `at` of `key`.
    fn replace_at(
        &mut self,
        key: &[u8],
        at: EntryRef,
        value: Value,
        keep_ttl: bool,
        reuse_object: bool,
    ) {
        self.watches.note(key);
        self.register_subexpires(key, &value);
        self.touch_write(at);
        let long_key = key.len() >= KEY_LEN_WITH_EXPIRE_SLOT;
        let e = self.entries.value_at_mut(at);
        let expiry = if keep_ttl { e.expires_at_ms() } else { None };
        let slot = if reuse_object {
            e.touch.expire_slot()
        } else {
            expiry.is_some() || long_key
        };
        e.touch = e.touch.with_expire_slot(slot);
        e.value = value;
        self.put_deadline(key, Some(at), expiry);
    }

    /// A hash with field TTLs is registered for their active expiry under its new
    /// key; anything else under `key` is not.
    fn register_subexpires(&mut self, key: &[u8], value: &Value) {
        let at = match value {
            Value::Hash(h) => h.subexpire_time(),
            _ => None,
        };
        if at.is_some() || !self.subexpires.is_empty() {
            self.subexpires.set(key, at);
        }
    }

    /// The one place an entry's deadline changes: the entry and the active
    /// cycle's list of keys with a TTL (Redis's `expires` dict) always agree.
    /// (A key whose TTL was cleared on the entry but left in that list was once
    /// deleted by the next cycle: the data-loss bug this function exists to
    /// prevent.) `at` is the key's entry if the caller has it.
    fn put_deadline(&mut self, key: &[u8], at: Option<EntryRef>, at_ms: Option<i64>) {
        let Some(at) = at.or_else(|| self.entries.peek_entry(key)) else {
            self.forget_ttl(key);
            return;
        };
        let e = self.entries.value_at_mut(at);
        let had = std::mem::replace(&mut e.deadline, Deadline::new(at_ms))
            .get()
            .is_some();
        if at_ms.is_some() {
            e.touch = e.touch.with_expire_slot(true);
        }
        // The list changes only when the key gains or loses its TTL (an
        // overwrite without one, the SET path, costs no lookup here).
        match (had, at_ms.is_some()) {
            (false, true) => self.track_ttl(key),
            (true, false) => self.forget_ttl(key),
            _ => {}
        }
    }

    /// Deletes a live key (a key past its deadline counts as already gone).
    pub fn remove(&mut self, key: &[u8]) -> bool {
        self.live(key).is_some() && self.delete(key)
    }

    /// `dbDelete`: deletes `key` as stored, even past its deadline (the empty
    /// result of a *STORE command replaces whatever is there, and Redis
    /// reports it as `del`, not `expired`).
    pub fn remove_stored(&mut self, key: &[u8]) -> bool {
        self.delete(key)
    }

    /// Removes a key and its TTL bookkeeping; a key that was there counts as
    /// modified for WATCH.
    fn delete(&mut self, key: &[u8]) -> bool {
        match self.entries.remove(key) {
            Some(old) => {
                self.watches.note(key);
                if old.expires_at_ms().is_some() {
                    self.forget_ttl(key);
                }
                if !self.subexpires.is_empty() {
                    self.subexpires.set(key, None);
                }
                true
            }
            None => false,
        }
    }

    /// Sets the absolute expiry of an existing key; returns false if there is no key.
    pub fn set_expiry(&mut self, key: &[u8], at_ms: Option<i64>) -> bool {
        let Some(at) = self.live(key) else {
            return false;
        };
        self.watches.note(key);
        self.put_deadline(key, Some(at), at_ms);
        true
    }

    /// Takes a live key out with its deadline (the first half of MOVE and
    /// RENAME): as DEL, for WATCH.
    pub fn take(&mut self, key: &[u8]) -> Option<(Value, Option<i64>)> {
        self.live(key)?;
        let old = self.entries.remove(key)?;
        self.watches.note(key);
        if old.expires_at_ms().is_some() {
            self.forget_ttl(key);
        }
        if !self.subexpires.is_empty() {
            self.subexpires.set(key, None);
        }
        let expires_at_ms = old.expires_at_ms();
        Some((old.value, expires_at_ms))
    }

    /// `dbAddInternal` of a value that comes from another key (RENAME, MOVE,
    /// COPY): a new key object, with an expiry slot only for a deadline or a
    /// long key, and a fresh LRU/LFU field. The key must be absent.
    pub fn put(&mut self, key: &[u8], value: Value, deadline: Option<i64>) {
        let value = value.rekeyed(key.len());
        self.insert(key, value);
        if deadline.is_some() {
            self.put_deadline(key, None, deadline);
        }
    }

    /// RENAME of a live key `from` to `to` (which the caller emptied): the
    /// value and its TTL move.
    pub fn rename(&mut self, from: &[u8], to: &[u8]) -> bool {
        match self.take(from) {
            Some((value, deadline)) => {
                self.put(to, value, deadline);
                true
            }
            None => false,
        }
    }

    // ----- the whole database -----

    /// Number of keys, counting ones that expired but were not looked up yet (as
    /// Redis's DBSIZE does).
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Number of keys with a TTL (INFO's `expires=`).
    pub fn volatile_len(&self) -> usize {
        self.volatile.len()
    }

    /// INFO's `avg_ttl`, in milliseconds (0 without keys with a TTL).
    pub fn avg_ttl(&self) -> i64 {
        if self.volatile.is_empty() {
            0
        } else {
            self.avg_ttl
        }
    }

    /// FLUSHDB: every key goes. Watched keys that existed count as modified
    /// (`touchAllWatchedKeysInDb`); a watched key that did not exist does not.
    pub fn clear(&mut self) {
        let entries = &self.entries;
        self.watches
            .flushed(|key| entries.peek_entry(key).is_some());
        self.entries.clear();
        self.subexpires.clear();
        self.volatile.clear();
        self.volatile_pos.clear();
        self.cursor = 0;
        self.avg_ttl = 0;
    }

    /// Every key in dict order, live or not yet expired.
    pub fn keys(&self) -> impl Iterator<Item = &[u8]> {
        self.entries.iter().map(|(k, _)| k)
    }

    /// Every entry in dict order with its deadline, nothing expired or touched
    /// (what an RDB save and DEBUG DIGEST walk).
    pub fn entries_with_expiry(&self) -> impl Iterator<Item = (&[u8], &Value, Option<i64>)> {
        self.entries
            .iter()
            .map(|(k, e)| (k, &e.value, e.expires_at_ms()))
    }

    /// A key's value, deadline and LRU/LFU field without the lazy-expiry check
    /// or a touch (`dbFind`, DEBUG OBJECT).
    pub fn peek_entry(&self, key: &[u8]) -> Option<(&Value, Option<i64>, u32)> {
        let at = self.entries.peek_entry(key)?;
        let e = self.entries.value_at(at);
        Some((&e.value, e.expires_at_ms(), e.lru))
    }

    /// Sets the LRU/LFU field of a present key (RESTORE's IDLETIME / FREQ,
    /// `objectSetLRUOrLFU`).
    pub fn set_lru_field(&mut self, key: &[u8], field: u32) {
        if let Some(at) = self.entries.peek_entry(key) {
            self.entries.value_at_mut(at).lru = field;
        }
    }

    /// The keys in dict order that are not past their deadline at `now`
    /// (KEYS: `keyIsExpired`, nothing deleted).
    pub fn live_keys(&self, now: i64) -> impl Iterator<Item = &[u8]> {
        self.entries
            .iter()
            .filter(move |(_, e)| e.expires_at_ms().is_none_or(|t| t > now))
            .map(|(k, _)| k)
    }

    /// Whether `key` is present and past its deadline at `now` (`keyIsExpired`;
    /// nothing is deleted).
    pub fn is_expired(&self, key: &[u8], now: i64) -> bool {
        self.entries.peek_entry(key).is_some_and(|at| {
            self.entries
                .value_at(at)
                .expires_at_ms()
                .is_some_and(|t| t <= now)
        })
    }

    /// A write command finished: the watched keys it touched are signalled,
    /// each with whether it exists now (`signalModifiedKey`).
    pub fn end_watched_write(&mut self) {
        let entries = &self.entries;
        self.watches
            .end_write(|key| entries.peek_entry(key).is_some());
    }

    /// Whether `key` is physically present, expired or not (`dbFind`).
    pub fn exists_physically(&self, key: &[u8]) -> bool {
        self.entries.peek_entry(key).is_some()
    }

    /// Deletes `key` if it is past its deadline (`expireIfNeeded` from SCAN);
    /// true if it went.
    pub fn remove_if_expired(&mut self, key: &[u8]) -> bool {
        if self.is_expired(key, now_ms()) {
            self.delete_expired(key);
            true
        } else {
            false
        }
    }

    /// One `dictScan` step over the key table: emits every key (with its value)
    /// in the buckets the cursor names, expired or not, and returns the next
    /// cursor (0: the walk is complete). See [`crate::dict::Dict::scan`] for the
    /// guarantee; SCAN's filtering and its COUNT loop are the command's.
    pub fn scan_step(&self, cursor: u64, mut emit: impl FnMut(&[u8], &Value)) -> u64 {
        self.entries.scan(cursor, |k, e| emit(k, &e.value))
    }

    /// `dbRandomKey`: Redis's fair random draw over the key table, deleting and
    /// drawing again when it lands on an expired key; `None` when empty.
    pub fn random_key(&mut self, rng: &mut impl RngCore) -> Option<Vec<u8>> {
        loop {
            let key = self.entries.fair_random_entry(rng)?.0.to_vec();
            if !self.remove_if_expired(&key) {
                return Some(key);
            }
        }
    }

    /// Table sizes of the key dict (the second is non-zero while it rehashes).
    pub fn table_sizes(&self) -> [usize; 2] {
        self.entries.table_sizes()
    }

    // ----- the keys with a TTL -----

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

    /// One active expire cycle at `now_ms`: rounds of [`KEYS_PER_LOOP`] keys with a
    /// TTL from the cursor on, deleting the expired ones, until a round finds at
    /// most 10% expired, every key with a TTL was examined, or `budget` is spent.
    /// The TTLs of the keys it keeps feed `avg_ttl` (2% weight per round, as
    /// Redis).
    pub fn active_expire_cycle(&mut self, now_ms: i64, budget: Duration) -> ExpireCycleStats {
        let started = Instant::now();
        let mut stats = ExpireCycleStats::default();
        let total = self.volatile.len();
        let (mut ttl_sum, mut ttl_samples, mut rounds) = (0i64, 0i64, 0i32);
        while !self.volatile.is_empty() && stats.examined < total {
            let mut round_expired = 0;
            let mut round = 0;
            rounds += 1;
            while round < KEYS_PER_LOOP && !self.volatile.is_empty() && stats.examined < total {
                if self.cursor >= self.volatile.len() {
                    self.cursor = 0;
                }
                let key = &self.volatile[self.cursor];
                let deadline = self
                    .entries
                    .peek_entry(key)
                    .and_then(|at| self.entries.value_at(at).expires_at_ms());
                round += 1;
                stats.examined += 1;
                match deadline {
                    None => {
                        // Cannot happen while every deadline goes through
                        // `put_deadline`; if it ever did, the key is kept, not lost.
                        debug_assert!(false, "a key without a TTL in the expires list");
                        let key = key.clone();
                        self.forget_ttl(&key);
                    }
                    Some(t) if t <= now_ms => {
                        // swap_remove brings the last key into this slot: the
                        // cursor stays to examine it.
                        let key = key.clone();
                        self.delete(&key);
                        self.watches.expired(&key);
                        self.notify(crate::server::notify::EXPIRED, "expired", &key);
                        round_expired += 1;
                    }
                    Some(t) => {
                        // Wrapping, as Redis's `long long` sum does in
                        // practice: keys at PXAT 9223372036854775807 are
                        // allowed, and two of them overflow it (a debug
                        // build panicked here, in the cron, which stopped
                        // the server). INFO's avg_ttl then shows Redis's
                        // wrapped figure.
                        ttl_sum = ttl_sum.wrapping_add(t.wrapping_sub(now_ms));
                        ttl_samples += 1;
                        self.cursor += 1;
                    }
                }
            }
            stats.expired += round_expired;
            if round_expired * 100 <= round * ACCEPTABLE_STALE_PERCENT
                || started.elapsed() >= budget
            {
                break;
            }
        }
        if ttl_samples > 0 {
            let avg = ttl_sum / ttl_samples;
            self.avg_ttl = if self.avg_ttl == 0 {
                avg
            } else {
                // `avg_ttl + (db->avg_ttl - avg_ttl) * factor`, evaluated as
                // C evaluates it: the difference in 64 bits, the rest in
                // double, truncated back.
                let keep = AVG_TTL_KEEP[rounds.clamp(1, 16) as usize - 1];
                (avg as f64 + self.avg_ttl.wrapping_sub(avg) as f64 * keep) as i64
            };
        }
        stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A deadline reads back as stored, none stays none, and the entry stays
    /// 64 bytes (72 with the expiry-slot flag a field of its own, 80 with an
    /// `Option<i64>` deadline).
    /// The command bits and the expiry-slot bit of [`Touch`] change
    /// independently; command 0 (none) never counts as the toucher; command
    /// numbers compare on their low 31 bits.
    #[test]
    fn touch_keeps_its_two_facts_apart() {
        let t = Touch::new(7, true);
        assert!(t.by(7) && !t.by(8) && t.expire_slot());
        let t = t.with_expire_slot(false);
        assert!(t.by(7) && !t.expire_slot());
        let t = t.with_command(u32::MAX).with_expire_slot(true);
        assert!(t.by(u32::MAX) && t.by(i32::MAX as u32) && t.expire_slot());
        assert!(!Touch::new(0, false).by(0));
        assert!(
            Touch::new(1 << 31, false).by(1 << 31),
            "a real command, low bits 0"
        );
        assert_eq!(std::mem::size_of::<Touch>(), 4);
    }

    #[test]
    fn a_deadline_takes_eight_bytes_and_reads_back() {
        for t in [
            Some(0),
            Some(1_700_000_000_000),
            Some(-5),
            Some(i64::MAX),
            None,
        ] {
            assert_eq!(Deadline::new(t).get(), t);
        }
        assert_eq!(Deadline::new(Some(i64::MIN)).get(), Some(i64::MIN + 1));
        assert_eq!(std::mem::size_of::<Deadline>(), 8);
        assert!(
            std::mem::size_of::<Entry>() <= 64,
            "{}",
            std::mem::size_of::<Entry>()
        );
    }
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

    fn string(v: &str) -> Value {
        Value::String(ArgObject::from_argument(v.as_bytes()).into_stored(1))
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
        // The TTLs it saw are the average INFO reports.
        assert_eq!(ks.avg_ttl(), 60_000);
    }

    #[test]
    fn the_furthest_deadlines_wrap_avg_ttl_as_redis_does() {
        // PXAT 9223372036854775807 is a valid deadline; three of them
        // overflow the cycle's sum of TTLs. Redis's `long long` wraps (8.6.3
        // reports avg_ttl=3074455549086767104 for three such keys); the core
        // panicked in a debug build, in the cron, which stopped the server.
        let now = now_ms();
        let mut ks = keyspace_with(3, 0, i64::MAX);
        ks.active_expire_cycle(now, Duration::from_millis(25));
        let ttl = i64::MAX - now;
        assert_eq!(ks.avg_ttl(), ttl.wrapping_mul(3) / 3);
        assert!(ks.avg_ttl() > 3_074_455_000_000_000_000, "{}", ks.avg_ttl());
        // A second cycle blends in Redis's way, without overflowing either.
        let first = ks.avg_ttl();
        ks.active_expire_cycle(now + 1000, Duration::from_millis(25));
        let second = (i64::MAX - now - 1000).wrapping_mul(3) / 3;
        let expected = (second as f64 + (first - second) as f64 * 0.98) as i64;
        assert_eq!(ks.avg_ttl(), expected);
        assert_eq!(ks.len(), 3);
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
        assert!(ks.is_empty());
    }

    #[test]
    fn rename_take_and_put_move_the_ttl_with_the_key() {
        let at = now_ms() + 60_000;
        let mut ks = keyspace_with(2, 1, at);
        assert!(ks.rename(b"k1", b"moved"));
        assert_eq!(ks.expiry(b"moved"), Some(Some(at)));
        assert_eq!(ks.expiry(b"k1"), None);
        assert_eq!(ks.volatile_len(), 1);
        assert!(ks.has_expire_slot(b"moved"));
        // A key without a TTL arrives without one, and without a slot.
        assert!(ks.rename(b"k0", b"plain"));
        assert_eq!(ks.expiry(b"plain"), Some(None));
        assert!(!ks.has_expire_slot(b"plain"));
        let (value, deadline) = ks.take(b"moved").unwrap();
        assert_eq!(deadline, Some(at));
        assert_eq!(ks.volatile_len(), 0);
        let mut other = Keyspace::new();
        other.put(b"moved", value, deadline);
        assert_eq!(other.volatile_len(), 1);
        assert!(!ks.rename(b"nope", b"x"));
    }

    #[test]
    fn an_embstr_is_embedded_again_under_its_new_key() {
        let mut ks = Keyspace::new();
        ks.insert(b"k", string("twenty bytes of text"));
        let long = "k".repeat(30);
        assert!(ks.rename(b"k", long.as_bytes()));
        // 16 + 30 + 3 + 4 + 20 > 64: no longer fits beside the key.
        let Some(Value::String(v)) = ks.get(long.as_bytes()) else {
            panic!("string expected")
        };
        assert_eq!(v.encoding_name(), "raw");
        // COPY: a raw string stays raw; an embstr is embedded if it fits.
        let encoding = |v: Value| match v {
            Value::String(s) => s.encoding_name(),
            _ => "not a string",
        };
        assert_eq!(encoding(ks.get(long.as_bytes()).unwrap().dup(1)), "raw");
        let short = string("twenty bytes of text");
        assert_eq!(encoding(short.dup(1)), "embstr");
        assert_eq!(encoding(short.dup(30)), "raw");
    }

    #[test]
    fn a_lookup_of_an_expired_key_deletes_and_counts_it() {
        let mut ks = keyspace_with(3, 1, now_ms() - 1);
        ks.set_access(Access {
            count_reads: true,
            ..Access::default()
        });
        assert!(ks.get(b"k0").is_some());
        assert!(ks.get(b"k1").is_none());
        assert!(ks.get_untouched(b"nope").is_none());
        assert_eq!(ks.len(), 2, "k1 went on lookup");
        assert_eq!(
            ks.take_counters(),
            Counters {
                hits: 1,
                misses: 2,
                expired: 1
            }
        );
        assert_eq!(ks.take_counters(), Counters::default());
        // A write command's lookups are not hits or misses.
        ks.set_access(Access::default());
        ks.get(b"k0");
        assert_eq!(ks.take_counters().hits, 0);
        assert!(ks.lookup_read(b"k0").is_some());
        assert_eq!(ks.take_counters().hits, 1);
    }

    #[test]
    fn reads_move_the_lru_clock_unless_no_touch() {
        let mut ks = Keyspace::new();
        let at = |secs: u32| Access {
            clock: Clock {
                lru: secs,
                minutes: 0,
            },
            ..Access::default()
        };
        ks.set_access(at(100));
        ks.insert(b"k", string("v"));
        assert_eq!(ks.lru_field(b"k"), Some(100));
        ks.set_access(at(105));
        assert_eq!(ks.lru_field(b"k"), Some(100), "OBJECT does not touch");
        ks.get_untouched(b"k");
        assert_eq!(ks.lru_field(b"k"), Some(100));
        ks.get(b"k");
        assert_eq!(ks.lru_field(b"k"), Some(105));
        ks.set_access(Access {
            no_touch: true,
            ..at(110)
        });
        ks.get(b"k");
        assert_eq!(ks.lru_field(b"k"), Some(105), "CLIENT NO-TOUCH");
        // LRM: reads leave it, writes move it even under NO-TOUCH, also after
        // a read in the same command.
        ks.set_access(Access {
            policy: Policy::Lrm,
            no_touch: true,
            command: 7,
            ..at(120)
        });
        ks.get(b"k");
        assert_eq!(ks.lru_field(b"k"), Some(105));
        ks.get_mut(b"k");
        assert_eq!(ks.lru_field(b"k"), Some(120));
        ks.set_access(Access {
            policy: Policy::Lrm,
            command: 8,
            ..at(130)
        });
        ks.get(b"k");
        ks.set_value(b"k", string("w"), false, false);
        assert_eq!(ks.lru_field(b"k"), Some(130));
    }

    #[test]
    fn lfu_keys_start_at_5_and_count_accesses() {
        let mut ks = Keyspace::new();
        ks.set_access(Access {
            policy: Policy::Lfu {
                log_factor: 0,
                decay_time: 1,
            },
            ..Access::default()
        });
        ks.insert(b"k", string("v"));
        assert_eq!(ks.lru_field(b"k").map(|f| f & 255), Some(5));
        // log factor 0: every access counts.
        for _ in 0..10 {
            ks.get(b"k");
        }
        assert_eq!(ks.lru_field(b"k").map(|f| f & 255), Some(15));
    }

    #[test]
    fn a_command_touches_a_key_once_however_many_lookups_it_makes() {
        let lfu = Policy::Lfu {
            log_factor: 0,
            decay_time: 1,
        };
        let mut ks = Keyspace::new();
        let command = |n: u32| Access {
            policy: lfu,
            command: n,
            ..Access::default()
        };
        ks.set_access(command(1));
        ks.insert(b"k", string("v"));
        ks.get_mut(b"k");
        ks.get(b"k");
        assert_eq!(
            ks.lru_field(b"k").map(|f| f & 255),
            Some(5),
            "added by this command"
        );
        ks.set_access(command(2));
        ks.get(b"k");
        ks.get_mut(b"k");
        ks.set_value(b"k", string("w"), false, false);
        assert_eq!(ks.lru_field(b"k").map(|f| f & 255), Some(6), "one access");
    }

    #[test]
    fn random_key_never_returns_an_expired_key() {
        let mut rng = rand::rngs::mock::StepRng::new(7, 0x9e37_79b9_7f4a_7c15);
        let mut ks = keyspace_with(50, 0, now_ms() - 1);
        ks.insert(b"alive", string("v"));
        for _ in 0..20 {
            assert_eq!(ks.random_key(&mut rng).as_deref(), Some(&b"alive"[..]));
        }
        ks.remove(b"alive");
        assert_eq!(ks.random_key(&mut rng), None);
        assert!(ks.is_empty(), "every expired key it met went");
    }

    /// The invariant `put_deadline` exists for: a key is in the active cycle's
    /// list exactly when its entry has a deadline, through every kind of write.
    #[test]
    fn the_ttl_list_always_matches_the_entries() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        let mut ks = Keyspace::new();
        let mut other = Keyspace::new();
        let later = now_ms() + 3_600_000;
        for _ in 0..20_000 {
            let k = format!("k{}", rng.gen_range(0..50)).into_bytes();
            let k2 = format!("k{}", rng.gen_range(0..50)).into_bytes();
            match rng.gen_range(0..9) {
                0 => ks.insert(&k, string("v")),
                1 => ks.set_value(&k, string("w"), rng.gen_bool(0.5), rng.gen_bool(0.5)),
                2 | 3 => {
                    let at = rng.gen_bool(0.8).then_some(later);
                    ks.set_expiry(&k, at);
                }
                4 => {
                    ks.remove(&k);
                }
                5 => {
                    if !ks.contains(&k2) {
                        ks.rename(&k, &k2);
                    }
                }
                6 => {
                    if let Some((v, d)) = ks.take(&k) {
                        if !other.contains(&k) {
                            other.put(&k, v, d);
                        }
                    }
                }
                7 => {
                    if let Some((v, d)) = other.take(&k) {
                        if !ks.contains(&k) {
                            ks.put(&k, v, d);
                        }
                    }
                }
                _ => {
                    if rng.gen_range(0..50) == 0 {
                        ks.clear();
                    }
                }
            }
            for db in [&ks, &other] {
                let with_deadline: Vec<&[u8]> = db
                    .entries
                    .iter()
                    .filter(|(_, e)| e.expires_at_ms().is_some())
                    .map(|(k, _)| k)
                    .collect();
                assert_eq!(db.volatile_len(), with_deadline.len());
                for k in with_deadline {
                    assert_eq!(db.volatile[db.volatile_pos[k]], k);
                }
            }
        }
    }

    #[test]
    fn a_scan_of_the_keyspace_sees_every_key_through_growth() {
        let mut ks = keyspace_with(100, 1000, 0);
        let mut seen = std::collections::HashSet::new();
        let mut cursor = 0;
        let mut next = 100;
        let mut rehashed = false;
        loop {
            cursor = ks.scan_step(cursor, |k, _| {
                seen.insert(k.to_vec());
            });
            ks.insert(format!("k{next}").as_bytes(), string("v"));
            next += 1;
            rehashed |= ks.table_sizes()[1] != 0;
            if cursor == 0 {
                break;
            }
        }
        assert!(rehashed);
        for i in 0..100 {
            assert!(seen.contains(format!("k{i}").as_bytes()), "k{i} missed");
        }
    }
}
