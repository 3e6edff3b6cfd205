//! What the server counts: INFO's `commandstats` (calls, time, rejected and
//! failed calls per command), `errorstats` (errors by their code), the `stats`
//! counters, and the SLOWLOG.
//!
//! As in Redis, a command refused before it runs (wrong arity, not allowed in
//! this context) counts as `rejected_calls`, one that ran and answered an error
//! as `failed_calls`; an unknown command counts only in `errorstats`. The slow
//! log keeps commands that took at least `slowlog-log-slower-than` microseconds,
//! newest first, at most `slowlog-max-len` of them, with at most 32 arguments
//! of at most 128 bytes each (Redis's `SLOWLOG_ENTRY_MAX_ARGC/STRING`).

use std::collections::{BTreeMap, VecDeque};

use super::client::Client;
use super::config::Config;
use super::table::{self, NO_SLOT};
use crate::reply::Reply;

/// One command's line of INFO commandstats.
#[derive(Clone, Debug, PartialEq)]
pub struct CommandStat {
    pub calls: u64,
    pub usec: u64,
    pub rejected: u64,
    pub failed: u64,
    /// Calls by duration: bucket `i` counts calls of at most 2^i microseconds
    /// (and more than 2^(i-1)); LATENCY HISTOGRAM sums them up.
    pub histogram: [u64; HISTOGRAM_BUCKETS],
}

/// Power-of-two buckets up to 2^39 µs (about 6 days).
pub const HISTOGRAM_BUCKETS: usize = 40;

impl Default for CommandStat {
    fn default() -> CommandStat {
        CommandStat {
            calls: 0,
            usec: 0,
            rejected: 0,
            failed: 0,
            histogram: [0; HISTOGRAM_BUCKETS],
        }
    }
}

impl CommandStat {
    /// Counts one call that took `usec` microseconds.
    pub fn record(&mut self, usec: u64) {
        self.calls += 1;
        self.usec += usec;
        let bucket = if usec <= 1 {
            0
        } else {
            (64 - (usec - 1).leading_zeros()) as usize
        };
        self.histogram[bucket.min(HISTOGRAM_BUCKETS - 1)] += 1;
    }
}

/// One SLOWLOG entry.
#[derive(Clone, Debug, PartialEq)]
pub struct SlowEntry {
    pub id: u64,
    pub unix_time: i64,
    pub usec: u64,
    pub argv: Vec<Vec<u8>>,
    pub addr: String,
    pub name: String,
}

const SLOWLOG_MAX_ARGC: usize = 32;
const SLOWLOG_MAX_STRING: usize = 128;

#[derive(Debug, Default)]
pub struct Stats {
    /// By full command name (`config|get`); INFO sorts them.
    pub commands: CommandStats,
    /// By error code (`ERR`, `WRONGTYPE`, ...).
    pub errors: BTreeMap<String, u64>,
    pub total_commands: u64,
    pub total_connections: u64,
    pub rejected_connections: u64,
    pub expired_keys: u64,
    /// The part of `expired_keys` the active expire cycle deleted.
    pub expired_keys_active: u64,
    /// Hash fields deleted because their TTL passed (`stat_expired_subkeys`), and
    /// of those, the ones the active cycle deleted.
    pub expired_subkeys: u64,
    pub expired_subkeys_active: u64,
    pub keyspace_hits: u64,
    pub keyspace_misses: u64,
    pub pubsub_messages: u64,
    pub total_error_replies: u64,
    /// Clients closed for exceeding their output-buffer limit.
    pub output_limit_disconnections: u64,
    /// Commands that panicked (bugs in the core, answered with an error).
    pub panics: u64,
    pub slowlog: VecDeque<SlowEntry>,
    pub slowlog_next_id: u64,
}

/// The statistics of the commands that were counted, reached by the
/// table's slot number ([`super::table::CommandSpec::slot`]) on the command path (Redis
/// keeps them in the `redisCommand` itself), or by name elsewhere.
#[derive(Debug, Default)]
pub struct CommandStats {
    /// Slot -> 1 + the position in `entries` (0: not counted yet).
    positions: Vec<u32>,
    /// In the order they were first counted.
    entries: Vec<(&'static str, CommandStat)>,
}

impl CommandStats {
    /// The statistics of the table's row numbered `slot`, named `fullname`.
    #[inline]
    pub fn at(&mut self, slot: u16, fullname: &'static str) -> &mut CommandStat {
        if slot == NO_SLOT {
            return self.named(fullname);
        }
        let slot = slot as usize;
        if let Some(&p) = self.positions.get(slot) {
            if p != 0 {
                return &mut self.entries[p as usize - 1].1;
            }
        }
        self.insert(Some(slot), fullname)
    }

    /// The statistics of the command named `fullname` (`get`, `config|get`).
    pub fn named(&mut self, fullname: &'static str) -> &mut CommandStat {
        match table::slot_of(fullname) {
            Some(slot) => self.at(slot, fullname),
            None => match self.entries.iter().position(|(n, _)| *n == fullname) {
                Some(i) => &mut self.entries[i].1,
                None => self.insert(None, fullname),
            },
        }
    }

    #[cold]
    fn insert(&mut self, slot: Option<usize>, fullname: &'static str) -> &mut CommandStat {
        self.entries.push((fullname, CommandStat::default()));
        if let Some(slot) = slot {
            if self.positions.len() <= slot {
                self.positions.resize(table::slots().max(slot + 1), 0);
            }
            self.positions[slot] = self.entries.len() as u32;
        }
        &mut self.entries.last_mut().expect("just pushed").1
    }

    /// The statistics of `fullname`, if it was counted.
    pub fn get(&self, fullname: &str) -> Option<&CommandStat> {
        self.entries
            .iter()
            .find(|(n, _)| *n == fullname)
            .map(|(_, st)| st)
    }

    /// Every counted command, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (&'static str, &CommandStat)> {
        self.entries.iter().map(|(n, st)| (*n, st))
    }
}

impl std::ops::Index<&str> for CommandStats {
    type Output = CommandStat;
    fn index(&self, fullname: &str) -> &CommandStat {
        self.get(fullname)
            .unwrap_or_else(|| panic!("no statistics for {fullname}"))
    }
}

impl Stats {
    /// The statistics of the command named `fullname`.
    pub fn command(&mut self, fullname: &'static str) -> &mut CommandStat {
        self.commands.named(fullname)
    }

    /// The commands that ran, by name, as INFO and LATENCY list them.
    pub fn commands_sorted(&self) -> Vec<(&'static str, &CommandStat)> {
        let mut v: Vec<_> = self.commands.iter().collect();
        v.sort_by_key(|(k, _)| *k);
        v
    }

    /// Counts an error reply under its code (the first word, as `afterErrorReply`).
    pub fn count_error(&mut self, reply: &Reply) {
        let Reply::Error(text) = reply else { return };
        let code = String::from_utf8_lossy(text.code()).into_owned();
        *self.errors.entry(code).or_default() += 1;
        self.total_error_replies += 1;
    }

    /// CONFIG RESETSTAT.
    pub fn reset(&mut self) {
        let slowlog = std::mem::take(&mut self.slowlog);
        let next = self.slowlog_next_id;
        *self = Stats::default();
        self.slowlog = slowlog;
        self.slowlog_next_id = next;
    }

    /// `slowlogPushEntryIfNeeded`.
    pub fn slowlog_consider(
        &mut self,
        config: &Config,
        client: &Client,
        argv: &[Vec<u8>],
        usec: u64,
    ) {
        let threshold = config.slowlog_log_slower_than;
        if threshold < 0 || (usec as i64) < threshold {
            return;
        }
        let mut args: Vec<Vec<u8>> = Vec::new();
        for (i, a) in argv.iter().enumerate() {
            if i == SLOWLOG_MAX_ARGC - 1 && argv.len() > SLOWLOG_MAX_ARGC {
                let more = argv.len() - SLOWLOG_MAX_ARGC + 1;
                args.push(format!("... ({more} more arguments)").into_bytes());
                break;
            }
            if a.len() > SLOWLOG_MAX_STRING {
                let mut t = a[..SLOWLOG_MAX_STRING].to_vec();
                t.extend_from_slice(
                    format!("... ({} more bytes)", a.len() - SLOWLOG_MAX_STRING).as_bytes(),
                );
                args.push(t);
            } else {
                args.push(a.clone());
            }
        }
        let entry = SlowEntry {
            id: self.slowlog_next_id,
            unix_time: crate::keyspace::now_ms() / 1000,
            usec,
            argv: args,
            addr: client.addr.clone(),
            name: client.name.clone().unwrap_or_default(),
        };
        self.slowlog_next_id += 1;
        self.slowlog.push_front(entry);
        while self.slowlog.len() > config.slowlog_max_len as usize {
            self.slowlog.pop_back();
        }
    }
}
