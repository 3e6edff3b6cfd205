//! The server's configuration: every threshold and limit the core models, with
//! Redis's names, aliases, defaults, ranges and errors (CONFIG GET/SET).
//!
//! A parameter is a row of [`PARAMS`]: its name, its old alias (the `ziplist`
//! names of the listpack thresholds, `lua-time-limit`), how its value is parsed
//! and printed, and whether CONFIG SET may change it. Parameters Redis has but
//! the core does not model (persistence, replication, ...) are accepted and
//! remembered as text, so a client that sets them is not refused; they change
//! nothing.
//!
//! Changing an encoding threshold converts no existing value at once: as in
//! Redis, a value is checked against the thresholds when it is next written.

use std::collections::BTreeMap;

/// One class of `client-output-buffer-limit`: a hard limit, and a soft limit
/// that may be exceeded for at most `soft_seconds` (0 bytes: no limit).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OutputLimit {
    pub hard: u64,
    pub soft: u64,
    pub soft_seconds: u64,
}

/// The client classes of `client-output-buffer-limit`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClientClass {
    Normal = 0,
    Replica = 1,
    PubSub = 2,
}

#[derive(Clone, Debug)]
pub struct Config {
    pub zset_max_listpack_entries: i64,
    pub zset_max_listpack_value: i64,
    /// `zset-layout`, the core's own parameter (Redis has no such choice):
    /// how a skiplist-encoded sorted set is held (see [`crate::zset::btree`]).
    pub zset_layout: crate::zset::Layout,
    pub set_max_intset_entries: i64,
    pub set_max_listpack_entries: i64,
    pub set_max_listpack_value: i64,
    pub hash_max_listpack_entries: i64,
    pub hash_max_listpack_value: i64,
    pub list_max_listpack_size: i64,
    pub list_compress_depth: i64,
    pub hll_sparse_max_bytes: i64,
    pub proto_max_bulk_len: i64,
    pub client_query_buffer_limit: i64,
    pub busy_reply_threshold: i64,
    /// `maxmemory` in bytes (0: no limit). The core evicts nothing, so over it
    /// commands flagged DENYOOM are refused, as under `noeviction`.
    pub maxmemory: u64,
    pub output_limits: [OutputLimit; 3],
    pub maxclients: i64,
    pub timeout: i64,
    pub slowlog_log_slower_than: i64,
    pub slowlog_max_len: i64,
    pub latency_monitor_threshold: i64,
    pub hz: i64,
    /// `notify-keyspace-events` as flags (see [`crate::server::notify`]).
    pub notify_keyspace_events: u32,
    /// DEBUG SET-ACTIVE-EXPIRE (not a CONFIG parameter).
    pub active_expire: bool,
    /// Parameters accepted but not modelled, by name.
    pub others: BTreeMap<&'static str, String>,
}

impl Default for Config {
    fn default() -> Config {
        let mut others = BTreeMap::new();
        for p in PARAMS {
            if let Kind::Text(default) = p.kind {
                others.insert(p.name, default.to_string());
            }
        }
        Config {
            zset_max_listpack_entries: 128,
            zset_max_listpack_value: 64,
            zset_layout: crate::zset::Layout::Skiplist,
            set_max_intset_entries: 512,
            set_max_listpack_entries: 128,
            set_max_listpack_value: 64,
            hash_max_listpack_entries: 512,
            hash_max_listpack_value: 64,
            list_max_listpack_size: -2,
            list_compress_depth: 0,
            hll_sparse_max_bytes: 3000,
            proto_max_bulk_len: 512 * 1024 * 1024,
            client_query_buffer_limit: 1024 * 1024 * 1024,
            busy_reply_threshold: 5000,
            maxmemory: 0,
            output_limits: [
                OutputLimit {
                    hard: 0,
                    soft: 0,
                    soft_seconds: 0,
                },
                OutputLimit {
                    hard: 256 * 1024 * 1024,
                    soft: 64 * 1024 * 1024,
                    soft_seconds: 60,
                },
                OutputLimit {
                    hard: 32 * 1024 * 1024,
                    soft: 8 * 1024 * 1024,
                    soft_seconds: 60,
                },
            ],
            maxclients: 10000,
            timeout: 0,
            slowlog_log_slower_than: 10000,
            slowlog_max_len: 128,
            latency_monitor_threshold: 0,
            hz: 10,
            notify_keyspace_events: 0,
            active_expire: true,
            others,
        }
    }
}

/// How a parameter's value reads and prints.
#[derive(Clone, Copy)]
enum Kind {
    /// An integer field, within `min..=max`. `memory` is Redis's
    /// `MEMORY_CONFIG`: the value is read by [`memtoull`] only (units, no
    /// sign); otherwise it is `INTEGER_CONFIG`, a plain integer.
    Int {
        get: fn(&Config) -> i64,
        set: fn(&mut Config, i64),
        min: i64,
        max: i64,
        memory: bool,
    },
    /// An unsigned 64-bit memory value, any of them (`maxmemory`, an
    /// `unsigned long long` in Redis).
    Bytes {
        get: fn(&Config) -> u64,
        set: fn(&mut Config, u64),
    },
    /// `client-output-buffer-limit`.
    OutputLimits,
    /// `notify-keyspace-events`: flag letters, shown in Redis's canonical order.
    NotifyFlags,
    /// Not modelled: kept as text, with this default.
    Text(&'static str),
    /// `zset-layout`: one of [`crate::zset::Layout::NAMES`].
    ZsetLayout,
}

struct Param {
    name: &'static str,
    alias: Option<&'static str>,
    kind: Kind,
    mutable: bool,
}

macro_rules! int_param {
    ($name:expr, $alias:expr, $field:ident, $min:expr, $max:expr, $memory:expr) => {
        Param {
            name: $name,
            alias: $alias,
            kind: Kind::Int {
                get: |c| c.$field,
                set: |c, v| c.$field = v,
                min: $min,
                max: $max,
                memory: $memory,
            },
            mutable: true,
        }
    };
}

const fn text(name: &'static str, default: &'static str) -> Param {
    Param {
        name,
        alias: None,
        kind: Kind::Text(default),
        mutable: true,
    }
}

const fn fixed(name: &'static str, default: &'static str) -> Param {
    Param {
        name,
        alias: None,
        kind: Kind::Text(default),
        mutable: false,
    }
}

const LONG_MAX: i64 = i64::MAX;
const INT_MAX: i64 = i32::MAX as i64;

static PARAMS: &[Param] = &[
    int_param!(
        "zset-max-listpack-entries",
        Some("zset-max-ziplist-entries"),
        zset_max_listpack_entries,
        0,
        LONG_MAX,
        false
    ),
    int_param!(
        "zset-max-listpack-value",
        Some("zset-max-ziplist-value"),
        zset_max_listpack_value,
        0,
        LONG_MAX,
        true
    ),
    int_param!(
        "set-max-intset-entries",
        None,
        set_max_intset_entries,
        0,
        LONG_MAX,
        false
    ),
    int_param!(
        "set-max-listpack-entries",
        None,
        set_max_listpack_entries,
        0,
        LONG_MAX,
        false
    ),
    int_param!(
        "set-max-listpack-value",
        None,
        set_max_listpack_value,
        0,
        LONG_MAX,
        false
    ),
    int_param!(
        "hash-max-listpack-entries",
        Some("hash-max-ziplist-entries"),
        hash_max_listpack_entries,
        0,
        LONG_MAX,
        false
    ),
    int_param!(
        "hash-max-listpack-value",
        Some("hash-max-ziplist-value"),
        hash_max_listpack_value,
        0,
        LONG_MAX,
        true
    ),
    int_param!(
        "list-max-listpack-size",
        Some("list-max-ziplist-size"),
        list_max_listpack_size,
        i32::MIN as i64,
        INT_MAX,
        false
    ),
    int_param!(
        "list-compress-depth",
        None,
        list_compress_depth,
        0,
        INT_MAX,
        false
    ),
    int_param!(
        "hll-sparse-max-bytes",
        None,
        hll_sparse_max_bytes,
        0,
        LONG_MAX,
        true
    ),
    int_param!(
        "proto-max-bulk-len",
        None,
        proto_max_bulk_len,
        1024 * 1024,
        LONG_MAX,
        true
    ),
    int_param!(
        "client-query-buffer-limit",
        None,
        client_query_buffer_limit,
        1024 * 1024,
        LONG_MAX,
        true
    ),
    int_param!(
        "busy-reply-threshold",
        Some("lua-time-limit"),
        busy_reply_threshold,
        0,
        LONG_MAX,
        false
    ),
    Param {
        name: "client-output-buffer-limit",
        alias: None,
        kind: Kind::OutputLimits,
        mutable: true,
    },
    int_param!("maxclients", None, maxclients, 1, u32::MAX as i64, false),
    int_param!("timeout", None, timeout, 0, INT_MAX, false),
    int_param!(
        "slowlog-log-slower-than",
        None,
        slowlog_log_slower_than,
        -1,
        LONG_MAX,
        false
    ),
    int_param!("slowlog-max-len", None, slowlog_max_len, 0, LONG_MAX, false),
    int_param!(
        "latency-monitor-threshold",
        None,
        latency_monitor_threshold,
        0,
        LONG_MAX,
        false
    ),
    // Any 0..=INT_MAX is accepted and then capped to 1..=500 (`updateHZ`:
    // "more a hint from the user"), which CONFIG GET shows.
    Param {
        name: "hz",
        alias: None,
        kind: Kind::Int {
            get: |c| c.hz,
            set: |c, v| c.hz = v.clamp(1, 500),
            min: 0,
            max: INT_MAX,
            memory: false,
        },
        mutable: true,
    },
    fixed("databases", "16"),
    fixed("tcp-backlog", "511"),
    fixed("bind", "127.0.0.1"),
    fixed("daemonize", "no"),
    fixed("cluster-enabled", "no"),
    text("port", "6379"),
    Param {
        name: "maxmemory",
        alias: None,
        kind: Kind::Bytes {
            get: |c| c.maxmemory,
            set: |c, v| c.maxmemory = v,
        },
        mutable: true,
    },
    text("maxmemory-policy", "noeviction"),
    text("maxmemory-samples", "5"),
    Param {
        name: "notify-keyspace-events",
        alias: None,
        mutable: true,
        kind: Kind::NotifyFlags,
    },
    // The core's own (not Redis's): applies when a set next converts from
    // a listpack or is created past the thresholds, like those thresholds.
    Param {
        name: "zset-layout",
        alias: None,
        kind: Kind::ZsetLayout,
        mutable: true,
    },
    text("appendonly", "no"),
    text("appendfsync", "everysec"),
    text("save", ""),
    text("dir", "/tmp"),
    text("dbfilename", "dump.rdb"),
    text("loglevel", "notice"),
    text("lazyfree-lazy-eviction", "no"),
    text("lazyfree-lazy-expire", "no"),
    text("lazyfree-lazy-server-del", "no"),
    text("lazyfree-lazy-user-del", "no"),
    text("lazyfree-lazy-user-flush", "no"),
    text("activerehashing", "yes"),
    text("activedefrag", "no"),
    text("tcp-keepalive", "300"),
    text("protected-mode", "no"),
    text("stream-node-max-bytes", "4096"),
    text("stream-node-max-entries", "100"),
    text("list-max-ziplist-entries", "128"),
    text("lfu-log-factor", "10"),
    text("lfu-decay-time", "1"),
    text("close-on-oom", "no"),
    text("replica-read-only", "yes"),
    text("repl-diskless-sync", "yes"),
    text("enable-debug-command", "local"),
    text("appendfilename", "appendonly.aof"),
    text("rdbcompression", "yes"),
    text("rdbchecksum", "yes"),
    text("lua-replicate-commands", "yes"),
    // Read by scripts (`checkGoodReplicasStatus`): the core has no replicas.
    Param {
        name: "min-replicas-to-write",
        alias: Some("min-slaves-to-write"),
        kind: Kind::Text("0"),
        mutable: true,
    },
    Param {
        name: "min-replicas-max-lag",
        alias: Some("min-slaves-max-lag"),
        kind: Kind::Text("10"),
        mutable: true,
    },
];

/// Finds a parameter by its name or alias (any case).
fn find(name: &str) -> Option<&'static Param> {
    PARAMS.iter().find(|p| {
        p.name.eq_ignore_ascii_case(name) || p.alias.is_some_and(|a| a.eq_ignore_ascii_case(name))
    })
}

/// `memtoull`: a byte count with an optional unit (`b`, `k` = 1000, `kb` =
/// 1024, `m`, `mb`, `g`, `gb`, any case) after its digits. As in Redis: no
/// sign (a `-` or `+` is refused), an empty digit string counts as 0, digits
/// past the 64-bit range saturate (`strtoull`), and the product wraps.
pub fn memtoull(text: &str) -> Option<u64> {
    if text.starts_with('-') {
        return None;
    }
    let digits_end = text.bytes().take_while(u8::is_ascii_digit).count();
    let (digits, unit) = text.split_at(digits_end);
    let mul: u64 = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" => 1000,
        "kb" => 1024,
        "m" => 1000 * 1000,
        "mb" => 1024 * 1024,
        "g" => 1000 * 1000 * 1000,
        "gb" => 1024 * 1024 * 1024,
        _ => return None,
    };
    if digits.len() >= 128 {
        return None;
    }
    let value = digits
        .bytes()
        .try_fold(0u64, |v, d| {
            v.checked_mul(10)?.checked_add(u64::from(d - b'0'))
        })
        .unwrap_or(u64::MAX);
    Some(value.wrapping_mul(mul))
}

impl Config {
    /// CONFIG GET with one name or glob pattern: `(name, value)` pairs. An exact
    /// name (or alias) answers under the name asked for; a pattern matches names
    /// and aliases alike.
    pub fn get(&self, pattern: &str) -> Vec<(String, String)> {
        let is_pattern = pattern.contains(['*', '?', '[']);
        let mut out = Vec::new();
        for p in PARAMS {
            for name in std::iter::once(p.name).chain(p.alias) {
                let hit = if is_pattern {
                    crate::glob::glob_match_nocase(pattern.as_bytes(), name.as_bytes())
                } else {
                    name.eq_ignore_ascii_case(pattern)
                };
                if hit {
                    let shown = if is_pattern { name } else { pattern };
                    out.push((shown.to_ascii_lowercase(), self.value_of(p)));
                }
            }
        }
        out
    }

    fn value_of(&self, p: &Param) -> String {
        match p.kind {
            Kind::Int { get, .. } => get(self).to_string(),
            Kind::Bytes { get, .. } => get(self).to_string(),
            Kind::OutputLimits => ["normal", "slave", "pubsub"]
                .iter()
                .zip(&self.output_limits)
                .map(|(n, l)| format!("{n} {} {} {}", l.hard, l.soft, l.soft_seconds))
                .collect::<Vec<_>>()
                .join(" "),
            Kind::NotifyFlags => super::notify::flags_to_string(self.notify_keyspace_events),
            Kind::ZsetLayout => self.zset_layout.name().to_string(),
            Kind::Text(_) => self.others.get(p.name).cloned().unwrap_or_default(),
        }
    }

    /// Checks one CONFIG SET pair without applying it.
    pub fn check(&self, name: &str, value: &str) -> Result<(), SetError> {
        let mut scratch = self.clone();
        scratch.set(name, value)
    }

    /// CONFIG SET of one parameter; Redis's error texts.
    pub fn set(&mut self, name: &str, value: &str) -> Result<(), SetError> {
        let Some(p) = find(name) else {
            return Err(SetError::Unknown);
        };
        if !p.mutable {
            return Err(SetError::Invalid("can't set immutable config".into()));
        }
        match p.kind {
            Kind::Int {
                set,
                min,
                max,
                memory,
                ..
            } => {
                // `numericParseString`: a memory parameter takes a memory
                // value only (no sign), any other a plain integer.
                let (parsed, refusal) = if memory {
                    // C's cast of the unsigned count to `long long`.
                    let v = memtoull(value).map(|n| n as i64);
                    (v, "argument must be a memory value")
                } else {
                    let v = crate::num::parse_i64(value.as_bytes());
                    (v, "argument couldn't be parsed into an integer")
                };
                let Some(v) = parsed else {
                    return Err(SetError::Invalid(refusal.into()));
                };
                if v < min || v > max {
                    return Err(SetError::Invalid(format!(
                        "argument must be between {min} and {max} inclusive"
                    )));
                }
                set(self, v);
            }
            Kind::Bytes { set, .. } => {
                let v = memtoull(value)
                    .ok_or_else(|| SetError::Invalid("argument must be a memory value".into()))?;
                set(self, v);
            }
            Kind::OutputLimits => self.set_output_limits(value)?,
            Kind::NotifyFlags => {
                self.notify_keyspace_events =
                    super::notify::flags_from_str(value).ok_or_else(|| {
                        SetError::Invalid(
                            "Invalid event class character. Use 'Ag$lshzxeKEtmdn'.".into(),
                        )
                    })?;
            }
            Kind::ZsetLayout => {
                // Redis's wording for an enum parameter's bad value.
                self.zset_layout = crate::zset::Layout::from_name(value).ok_or_else(|| {
                    SetError::Invalid(format!(
                        "argument(s) must be one of the following: {}",
                        crate::zset::Layout::NAMES.join(", ")
                    ))
                })?;
            }
            Kind::Text(_) => {
                self.others.insert(p.name, value.to_string());
            }
        }
        Ok(())
    }

    /// `client-output-buffer-limit <class> <hard> <soft> <seconds> ...`
    fn set_output_limits(&mut self, value: &str) -> Result<(), SetError> {
        let words: Vec<&str> = value.split_ascii_whitespace().collect();
        if words.is_empty() || !words.len().is_multiple_of(4) {
            return Err(SetError::Invalid(
                "Wrong number of arguments in buffer limit configuration.".into(),
            ));
        }
        let mut limits = self.output_limits;
        for w in words.chunks(4) {
            let class = match w[0].to_ascii_lowercase().as_str() {
                "normal" => ClientClass::Normal,
                "slave" | "replica" => ClientClass::Replica,
                "pubsub" => ClientClass::PubSub,
                _ => {
                    return Err(SetError::Invalid(
                        "Invalid client class specified in buffer limit configuration.".into(),
                    ))
                }
            };
            let num = memtoull;
            let (Some(hard), Some(soft), Ok(secs)) = (num(w[1]), num(w[2]), w[3].parse::<u64>())
            else {
                return Err(SetError::Invalid(
                    "Error in hard, soft or soft_seconds setting in buffer limit configuration."
                        .into(),
                ));
            };
            limits[class as usize] = OutputLimit {
                hard,
                soft,
                soft_seconds: secs,
            };
        }
        self.output_limits = limits;
        Ok(())
    }

    pub fn output_limit(&self, class: ClientClass) -> OutputLimit {
        self.output_limits[class as usize]
    }

    /// The canonical name of a parameter (for error messages).
    pub fn canonical(name: &str) -> Option<&'static str> {
        find(name).map(|p| p.name)
    }
}

/// Why a CONFIG SET failed.
#[derive(Debug, PartialEq)]
pub enum SetError {
    Unknown,
    Invalid(String),
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Which parameters take memory values, and how they are read, as Redis
    /// 8.6.3 answers (each case checked against it by hand).
    #[test]
    fn memory_values_only_where_redis_takes_them() {
        let mut c = Config::default();
        let not_integer = || {
            Err(SetError::Invalid(
                "argument couldn't be parsed into an integer".into(),
            ))
        };
        let not_memory = || Err(SetError::Invalid("argument must be a memory value".into()));
        // INTEGER_CONFIG parameters: no units (the core took "1kb" here).
        for name in [
            "zset-max-listpack-entries",
            "set-max-intset-entries",
            "set-max-listpack-entries",
            "set-max-listpack-value",
            "hash-max-listpack-entries",
        ] {
            assert_eq!(c.set(name, "1kb"), not_integer(), "{name}");
        }
        // MEMORY_CONFIG parameters: a memory value or Redis's refusal, which
        // also covers a sign (the core read "-1" as an integer and answered
        // the bounds error).
        for bad in ["x", "1.5gb", "-1", "+5", "0x10", "1gx"] {
            assert_eq!(c.set("maxmemory", bad), not_memory(), "{bad}");
        }
        assert_eq!(c.set("hll-sparse-max-bytes", "-1"), not_memory());
        c.set("maxmemory", "1Kb").unwrap();
        assert_eq!(c.maxmemory, 1024);
        c.set("maxmemory", "").unwrap();
        assert_eq!(c.maxmemory, 0);
        c.set("zset-max-listpack-value", "1k").unwrap();
        assert_eq!(c.zset_max_listpack_value, 1000);
        assert_eq!(memtoull("2GB"), Some(2 << 30));
        assert_eq!(
            memtoull("99999999999999999999gb"),
            Some(18446744072635809792)
        );
        assert_eq!(memtoull(" 1"), None);
    }

    #[test]
    fn aliases_defaults_and_errors() {
        let mut c = Config::default();
        assert_eq!(
            c.get("zset-max-ziplist-entries"),
            vec![("zset-max-ziplist-entries".to_string(), "128".to_string())]
        );
        c.set("zset-max-ziplist-entries", "4").unwrap();
        assert_eq!(c.zset_max_listpack_entries, 4);
        assert_eq!(c.get("proto-max-bulk-len")[0].1, "536870912");
        c.set("proto-max-bulk-len", "1gb").unwrap();
        assert_eq!(c.proto_max_bulk_len, 1 << 30);
        assert_eq!(c.set("nope", "1"), Err(SetError::Unknown));
        assert_eq!(
            c.set("maxclients", "x"),
            Err(SetError::Invalid(
                "argument couldn't be parsed into an integer".into()
            ))
        );
        assert!(matches!(c.set("databases", "3"), Err(SetError::Invalid(_))));
        // Redis 8.6.3's default.
        assert_eq!(c.get("hash-max-listpack-entries")[0].1, "512");
        let both = c.get("zset-max-*-entries");
        assert_eq!(both.len(), 2);
        assert_eq!(
            c.get("client-output-buffer-limit")[0].1,
            "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60"
        );
        c.set("client-output-buffer-limit", "pubsub 1mb 0 0")
            .unwrap();
        assert_eq!(c.output_limit(ClientClass::PubSub).hard, 1 << 20);
    }
}
