//! Shared by the hash, set and sorted-set differential tests: a RESP2/RESP3
//! parser (to compare replies whose order depends on a dict's hash seed, or
//! times that depend on the moment), the core reached in process or through its
//! listener, and the argument rendering for failure messages.
#![allow(dead_code)]

use redislab_core::reply::Protocol;
use redislab_core::Server;
use redislab_harness::testing::RawRedis;
use redislab_listener::CoreListener;

/// One parsed reply. Aggregates keep their type byte (`*`, `~`, `%`, `>`); a
/// map's pairs are flattened in order.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Resp {
    /// `+ - : , _ # (` lines: type byte and text.
    Line(u8, Vec<u8>),
    /// `$` and `=` (None: `$-1`).
    Bulk(u8, Option<Vec<u8>>),
    /// `* ~ % >` (None: `*-1`).
    Agg(u8, Option<Vec<Resp>>),
}

/// Parses one reply from the front of `b`; returns it and the bytes after it.
pub fn parse(b: &[u8]) -> (Resp, &[u8]) {
    let end = b
        .windows(2)
        .position(|w| w == b"\r\n")
        .expect("a complete line");
    let (kind, head) = (b[0], &b[1..end]);
    let rest = &b[end + 2..];
    let n = || -> i64 { std::str::from_utf8(head).unwrap().parse().unwrap() };
    match kind {
        b'$' | b'=' => {
            let n = n();
            if n < 0 {
                return (Resp::Bulk(kind, None), rest);
            }
            let n = n as usize;
            (Resp::Bulk(kind, Some(rest[..n].to_vec())), &rest[n + 2..])
        }
        b'*' | b'~' | b'%' | b'>' => {
            let n = n();
            if n < 0 {
                return (Resp::Agg(kind, None), rest);
            }
            let count = if kind == b'%' { 2 * n } else { n } as usize;
            let mut items = Vec::with_capacity(count);
            let mut rest = rest;
            for _ in 0..count {
                let (item, r) = parse(rest);
                items.push(item);
                rest = r;
            }
            (Resp::Agg(kind, Some(items)), rest)
        }
        _ => (Resp::Line(kind, head.to_vec()), rest),
    }
}

pub fn parse_all(b: &[u8]) -> Resp {
    let (r, rest) = parse(b);
    assert!(rest.is_empty(), "trailing bytes after a reply");
    r
}

/// The reply with its top-level order forgotten: array and set items sorted, a
/// map's pairs sorted, and RESP3 pairs (`*2` items) sorted as pairs.
pub fn unordered(r: &Resp) -> Resp {
    match r {
        Resp::Agg(b'%', Some(items)) => {
            let mut pairs: Vec<(Resp, Resp)> = items
                .chunks(2)
                .map(|p| (p[0].clone(), p[1].clone()))
                .collect();
            pairs.sort();
            Resp::Agg(
                b'%',
                Some(pairs.into_iter().flat_map(|(a, b)| [a, b]).collect()),
            )
        }
        Resp::Agg(kind, Some(items)) => {
            let mut items = items.clone();
            items.sort();
            Resp::Agg(*kind, Some(items))
        }
        other => other.clone(),
    }
}

/// A flat RESP2 array of pairs (member, score / field, value) as sorted pairs.
pub fn unordered_flat_pairs(r: &Resp) -> Resp {
    match r {
        Resp::Agg(kind, Some(items)) if items.len() % 2 == 0 => {
            let mut pairs: Vec<(Resp, Resp)> = items
                .chunks(2)
                .map(|p| (p[0].clone(), p[1].clone()))
                .collect();
            pairs.sort();
            Resp::Agg(
                *kind,
                Some(pairs.into_iter().flat_map(|(a, b)| [a, b]).collect()),
            )
        }
        other => other.clone(),
    }
}

/// Integers of an array reply (TTL answers), `None` if it is not one.
pub fn integers(r: &Resp) -> Option<Vec<i64>> {
    match r {
        Resp::Agg(b'*', Some(items)) => items
            .iter()
            .map(|i| match i {
                Resp::Line(b':', t) => std::str::from_utf8(t).ok()?.parse().ok(),
                _ => None,
            })
            .collect(),
        _ => None,
    }
}

/// Two TTL replies that agree up to `slack` on every positive value (the two
/// servers read the clock a few milliseconds apart); -1 and -2 must match.
pub fn ttls_agree(a: &Resp, b: &Resp, slack: i64) -> bool {
    match (integers(a), integers(b)) {
        (Some(x), Some(y)) => {
            x.len() == y.len()
                && x.iter().zip(&y).all(|(p, q)| {
                    if *p < 0 || *q < 0 {
                        p == q
                    } else {
                        (p - q).abs() <= slack
                    }
                })
        }
        _ => a == b,
    }
}

/// The core, in process (RESP2 bytes from [`Server::run`]) or behind its RESP
/// listener (whatever protocol the connection negotiated).
pub enum Core {
    InProcess(Box<Server>),
    Wire {
        conn: RawRedis,
        _listener: CoreListener,
    },
}

impl Core {
    pub fn in_process() -> Core {
        Core::InProcess(Box::new(Server::new()))
    }

    pub fn listener() -> Core {
        let listener = CoreListener::start(0).expect("start the core listener");
        let conn = RawRedis::connect(listener.port()).expect("connect to the core listener");
        Core::Wire {
            conn,
            _listener: listener,
        }
    }

    pub fn call(&mut self, argv: &[Vec<u8>]) -> Vec<u8> {
        match self {
            Core::InProcess(s) => {
                let mut out = Vec::new();
                s.run(argv).encode(&mut out, Protocol::Resp2);
                out
            }
            Core::Wire { conn, .. } => conn.call(argv).expect("core listener reply"),
        }
    }

    /// What the server's cron would do: one active expire cycle (the listener
    /// runs its own).
    pub fn tick(&mut self) {
        if let Core::InProcess(s) = self {
            s.active_expire_cycle();
        }
    }
}

pub fn argv(words: &[&str]) -> Vec<Vec<u8>> {
    words.iter().map(|w| w.as_bytes().to_vec()).collect()
}

/// The command as text for a failure message.
pub fn show(argv: &[Vec<u8>]) -> String {
    argv.iter()
        .map(|a| {
            let s = String::from_utf8_lossy(a);
            if s.len() > 40 {
                format!(
                    "{}…({})",
                    &s[..s.char_indices().nth(30).map_or(s.len(), |c| c.0)],
                    a.len()
                )
            } else {
                s.into_owned()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}
