//! SORT and SORT_RO (src/sort.c) on lists, sets and sorted sets.
//!
//! The steps of `sortCommandGeneric`, in its order:
//!
//! 1. Options, left to right: ASC/DESC, ALPHA, LIMIT offset count, BY pattern
//!    (a pattern without `*` means "do not sort"), GET pattern (repeatable,
//!    `#` is the element itself), STORE destination (SORT only). A bad LIMIT
//!    number or an unknown word stops with its error before the key is read.
//! 2. The key: missing is an empty list; another type than list/set/zset is
//!    WRONGTYPE. A sorted set is converted to a skiplist for good (Redis does
//!    that even for SORT_RO). A set that is not to be sorted is sorted ALPHA
//!    anyway when the result is stored or the caller is a script.
//! 3. LIMIT is clamped to the length. Lists and sorted sets that are not
//!    sorted load only the requested range, in their own order (reversed by
//!    DESC); a sorted set keeps its score order.
//! 4. Scores: each element's weight is the element itself or the value the BY
//!    pattern finds (a string key, or a hash field with `->`); missing weights
//!    count as 0 (numeric) or sort first (ALPHA). A weight that does not read
//!    entirely as a double (`fast_float_strtod`) makes the reply "One or more
//!    scores can't be converted into double", after the sort.
//! 5. The sort: glibc's `qsort` (a stable merge sort), or Redis's `pqsort` when
//!    BY is given with a LIMIT that cuts the result, so equal weights come out
//!    in the same order as on Redis. Equal numeric weights are ordered by the
//!    elements' bytes; ALPHA compares with `strcoll`, which in the C/C.UTF-8
//!    locales Redis runs in is `strcmp` (up to a NUL byte), and with plain
//!    binary order when storing.
//! 6. The reply, or with STORE a new list (missing GET values stored as empty
//!    strings) replacing the destination, its TTL dropped; an empty result
//!    deletes the destination. The reply is then the number of elements.
//!
//! How this differs from Redis: the order in which a hashtable set or a sorted
//! set's dict hands its elements out depends on Redis's random hash seed; the
//! core walks its own dict. Only weights that tie (ALPHA BY, or missing BY
//! keys) can show that order. ACL and Cluster checks of BY/GET patterns do not
//! apply (the core has neither).

use super::{flags::*, Args, CmdResult, CommandSpec, Server};
use crate::geo::sort::{glibc_qsort, pqsort};
use crate::keyspace::Value;
use crate::list::{End, List, ListConfig};
use crate::num::{c_str, strtod_prefix};
use crate::reply::{errors, Reply};
use crate::server::client::{Client, SCRIPT_CLIENT_ID};
use crate::server::notify;
use crate::strings::{StringValue, SHARED_INTEGERS};

pub const COMMANDS: &[CommandSpec] = &[
    CommandSpec::client("sort", -2, sort)
        .flags(WRITE | DENYOOM | MOVABLE_KEYS)
        .acl(&["@set", "@sortedset", "@list", "@dangerous"])
        .keys(1, 1, 1)
        .doc(
            "1.0.0",
            "Sorts the elements of a list, set or sorted set, optionally storing the result.",
            "key [BY pattern] [LIMIT offset count] [GET pattern [GET pattern ...]] [ASC | DESC] [ALPHA] [STORE destination]",
        ),
    CommandSpec::client("sort_ro", -2, sort_ro)
        .flags(READONLY | MOVABLE_KEYS)
        .acl(&["@set", "@sortedset", "@list", "@dangerous"])
        .keys(1, 1, 1)
        .doc(
            "7.0.0",
            "Sorts the elements of a list, set or sorted set without storing anything.",
            "key [BY pattern] [LIMIT offset count] [GET pattern [GET pattern ...]] [ASC | DESC] [ALPHA]",
        ),
];

/// `sortGetKeys`: the sorted key, and the last STORE's destination.
pub fn sort_keys(argv: &[Vec<u8>]) -> Vec<usize> {
    let mut keys = vec![1];
    let mut store = None;
    let word = |i: usize, w: &str| c_str(&argv[i]).eq_ignore_ascii_case(w.as_bytes());
    let mut i = 2;
    while i < argv.len() {
        if word(i, "limit") {
            i += 2;
        } else if word(i, "get") || word(i, "by") {
            i += 1;
        } else if word(i, "store") && i + 1 < argv.len() {
            store = Some(i + 1);
        }
        i += 1;
    }
    keys.extend(store);
    keys
}

fn sort(s: &mut Server, c: &mut Client, a: &Args) -> CmdResult {
    sort_generic(s, c, a, false)
}

fn sort_ro(s: &mut Server, c: &mut Client, a: &Args) -> CmdResult {
    sort_generic(s, c, a, true)
}

/// How the comparator behaves (`server.sort_desc`, `sort_alpha`,
/// `sort_bypattern`, `sort_store`).
#[derive(Clone, Copy, Debug)]
struct Mode {
    desc: bool,
    alpha: bool,
    by_pattern: bool,
    store: bool,
}

/// `redisSortObject`: the element, its numeric weight or its ALPHA weight.
#[derive(Clone, Debug)]
struct Item {
    obj: Vec<u8>,
    score: f64,
    cmp: Option<Vec<u8>>,
    mode: Mode,
}

/// `compareStringObjects`: binary, then shorter first.
fn binary_cmp(a: &[u8], b: &[u8]) -> i32 {
    a.cmp(b) as i32
}

/// `strcoll` in the C (or C.UTF-8) locale: `strcmp` on C strings.
fn coll_cmp(a: &[u8], b: &[u8]) -> i32 {
    c_str(a).cmp(c_str(b)) as i32
}

/// `sortCompare`.
fn sort_compare(a: &Item, b: &Item) -> i32 {
    let m = a.mode;
    let cmp = if !m.alpha {
        if a.score > b.score {
            1
        } else if a.score < b.score {
            -1
        } else {
            binary_cmp(&a.obj, &b.obj)
        }
    } else if m.by_pattern {
        match (&a.cmp, &b.cmp) {
            (None, None) => 0,
            (None, Some(_)) => -1,
            (Some(_), None) => 1,
            (Some(x), Some(y)) if m.store => binary_cmp(x, y),
            (Some(x), Some(y)) => coll_cmp(x, y),
        }
    } else if m.store {
        binary_cmp(&a.obj, &b.obj)
    } else {
        coll_cmp(&a.obj, &b.obj)
    };
    if m.desc {
        -cmp
    } else {
        cmp
    }
}

/// `lookupKeyByPattern`: `#` is the element; otherwise the first `*` is
/// replaced by the element and the key read (a string), or with `->field`
/// after the `*` a field of the hash at that key. `None` for anything missing
/// or of another type, and for a pattern without `*`.
fn lookup_by_pattern(s: &mut Server, pattern: &[u8], subst: &[u8]) -> Option<Vec<u8>> {
    let spat = c_str(pattern);
    if spat == b"#" {
        return Some(subst.to_vec());
    }
    let star = spat.iter().position(|&b| b == b'*')?;
    // `strstr(p + 1, "->")` and something after the arrow (C strings).
    let arrow = spat[star + 1..]
        .windows(2)
        .position(|w| w == b"->")
        .map(|i| star + 1 + i)
        .filter(|&f| f + 2 < spat.len());
    let (field, postfix_end) = match arrow {
        Some(f) => (Some(&pattern[f + 2..]), f),
        None => (None, pattern.len()),
    };
    let mut key = Vec::with_capacity(pattern.len() + subst.len());
    key.extend_from_slice(&pattern[..star]);
    key.extend_from_slice(subst);
    key.extend_from_slice(&pattern[star + 1..postfix_end]);
    match (s.keyspace.lookup_read(&key)?, field) {
        (Value::Hash(h), Some(field)) => h
            .pairs()
            .into_iter()
            .find(|(f, _)| *f == field)
            .map(|(_, v)| v.to_vec()),
        (Value::String(v), None) => Some(v.bytes().into_owned()),
        _ => None,
    }
}

/// A numeric weight as SORT reads it: `None` unless the whole C string parsed.
fn sort_score(weight: &[u8]) -> Option<f64> {
    let (value, consumed) = strtod_prefix(weight);
    (consumed == c_str(weight).len() && !value.is_nan()).then_some(value)
}

/// The options of one SORT.
struct Options<'a> {
    desc: bool,
    alpha: bool,
    limit: (i64, i64),
    dont_sort: bool,
    by: Option<&'a [u8]>,
    gets: Vec<&'a [u8]>,
    store: Option<&'a [u8]>,
}

fn parse_options<'a>(a: &Args<'a>, readonly: bool) -> Result<Options<'a>, Reply> {
    let mut o = Options {
        desc: false,
        alpha: false,
        limit: (0, -1),
        dont_sort: false,
        by: None,
        gets: Vec::new(),
        store: None,
    };
    let mut j = 2;
    while j < a.len() {
        let left = a.len() - j - 1;
        if a.is(j, "asc") {
            o.desc = false;
        } else if a.is(j, "desc") {
            o.desc = true;
        } else if a.is(j, "alpha") {
            o.alpha = true;
        } else if a.is(j, "limit") && left >= 2 {
            o.limit = (a.int(j + 1)?, a.int(j + 2)?);
            j += 2;
        } else if !readonly && a.is(j, "store") && left >= 1 {
            o.store = Some(a.bytes(j + 1));
            j += 1;
        } else if a.is(j, "by") && left >= 1 {
            let pattern = a.bytes(j + 1);
            if !c_str(pattern).contains(&b'*') {
                o.dont_sort = true;
            }
            o.by = Some(pattern);
            j += 1;
        } else if a.is(j, "get") && left >= 1 {
            o.gets.push(a.bytes(j + 1));
            j += 1;
        } else {
            return Err(Reply::error(errors::SYNTAX));
        }
        j += 1;
    }
    Ok(o)
}

/// What the sorted key holds, for loading.
enum Source {
    Missing,
    List,
    Set,
    Zset,
}

fn sort_generic(s: &mut Server, c: &mut Client, a: &Args, readonly: bool) -> CmdResult {
    let mut o = parse_options(a, readonly)?;
    let key = a.bytes(1);
    // `lookupKeyRead`, also for SORT ... STORE.
    let source = match s.keyspace.lookup_read(key) {
        None => Source::Missing,
        Some(Value::List(_)) => Source::List,
        Some(Value::Set(_)) => Source::Set,
        Some(Value::Zset(_)) => Source::Zset,
        Some(_) => return Err(Reply::error(errors::WRONGTYPE)),
    };
    let from_script = c.id == SCRIPT_CLIENT_ID;
    if o.dont_sort && matches!(source, Source::Set) && (o.store.is_some() || from_script) {
        o.dont_sort = false;
        o.alpha = true;
        o.by = None;
    }
    if let Source::Zset = source {
        // `zsetConvert(.., OBJ_ENCODING_SKIPLIST)`, only if there is work.
        if matches!(s.keyspace.peek(key), Some(Value::Zset(z)) if z.encoding() == crate::zset::Encoding::Listpack)
        {
            if let Some(Value::Zset(z)) = s.keyspace.get_mut(key) {
                z.convert_to_skiplist();
            }
        }
    }
    let mut vectorlen = match s.keyspace.peek(key) {
        Some(Value::List(l)) => l.len(),
        Some(Value::Set(set)) => set.len(),
        Some(Value::Zset(z)) => z.len(),
        _ => 0,
    } as i64;

    // LIMIT, clamped to the length (sortCommandGeneric's arithmetic).
    let mut start = o.limit.0.max(0).min(vectorlen);
    let limit_count = o.limit.1.max(-1).min(vectorlen);
    let mut end = if limit_count < 0 {
        vectorlen - 1
    } else {
        start + limit_count - 1
    };
    if start >= vectorlen {
        start = vectorlen - 1;
        end = vectorlen - 2;
    }
    if end >= vectorlen {
        end = vectorlen - 1;
    }
    let ranged = matches!(source, Source::List | Source::Zset) && o.dont_sort;
    if ranged && (start != 0 || end != vectorlen - 1) {
        vectorlen = end - start + 1;
    }

    let mode = Mode {
        desc: o.desc,
        alpha: o.alpha,
        by_pattern: o.by.is_some(),
        store: o.store.is_some(),
    };
    let item = |obj: Vec<u8>| Item {
        obj,
        score: 0.0,
        cmp: None,
        mode,
    };
    let mut vector: Vec<Item> = match s.keyspace.peek(key) {
        Some(Value::List(l)) if o.dont_sort => {
            if end >= start && vectorlen > 0 {
                let first = if o.desc {
                    l.len() - start as usize - 1
                } else {
                    start as usize
                };
                let v = l
                    .iter_from(first, o.desc)
                    .take(vectorlen as usize)
                    .map(|e| item(e.to_vec()))
                    .collect();
                end -= start;
                start = 0;
                v
            } else {
                Vec::new()
            }
        }
        Some(Value::List(l)) => l.iter().map(|e| item(e.to_vec())).collect(),
        Some(Value::Set(set)) => set.members().into_iter().map(item).collect(),
        Some(Value::Zset(z)) if o.dont_sort => {
            let v = if vectorlen > 0 {
                let from = start as usize;
                let to = from + vectorlen as usize - 1;
                z.range_by_rank(from, to, o.desc)
                    .into_iter()
                    .map(|(m, _)| item(m.to_vec()))
                    .collect()
            } else {
                Vec::new()
            };
            end -= start;
            start = 0;
            v
        }
        Some(Value::Zset(z)) => z.dict_members().map(|m| item(m.to_vec())).collect(),
        _ => Vec::new(),
    };

    let mut conversion_error = false;
    if !o.dont_sort {
        for it in vector.iter_mut() {
            let weight = match o.by {
                Some(pattern) => match lookup_by_pattern(s, pattern, &it.obj) {
                    Some(w) => w,
                    None => continue,
                },
                None => it.obj.clone(),
            };
            if o.alpha {
                if o.by.is_some() {
                    it.cmp = Some(weight);
                }
            } else {
                match sort_score(&weight) {
                    Some(score) => it.score = score,
                    None => {
                        conversion_error = true;
                        it.score = strtod_prefix(&weight).0;
                    }
                }
            }
        }
        let len = vector.len() as i64;
        if o.by.is_some() && (start != 0 || end != len - 1) {
            if len > 0 && start >= 0 && end >= start {
                pqsort(&mut vector, sort_compare, start as usize, end as usize);
            }
        } else {
            glibc_qsort(&mut vector, sort_compare);
        }
    }

    let per_element = o.gets.len().max(1) as i64;
    let output_len = (per_element * (end - start + 1)).max(0);
    if conversion_error {
        return Err(Reply::error(
            "ERR One or more scores can't be converted into double",
        ));
    }
    let range = if end >= start {
        start as usize..end as usize + 1
    } else {
        0..0
    };
    let Some(dst) = o.store else {
        let mut out = Vec::with_capacity(output_len as usize);
        for it in &vector[range] {
            if o.gets.is_empty() {
                out.push(Reply::bulk(&it.obj));
            }
            for pattern in &o.gets {
                out.push(match lookup_by_pattern(s, pattern, &it.obj) {
                    Some(v) => Reply::bulk_vec(v),
                    None => Reply::Nil,
                });
            }
        }
        return Ok(Reply::Array(out));
    };

    let cfg = ListConfig::of(&s.config);
    let mut stored = List::new_quicklist(cfg);
    for it in &vector[range] {
        if o.gets.is_empty() {
            stored.push(&it.obj, End::Tail);
        }
        for pattern in &o.gets {
            let v = lookup_by_pattern(s, pattern, &it.obj).unwrap_or_default();
            stored.push(&v, End::Tail);
        }
    }
    if output_len > 0 {
        stored.convert_auto(cfg);
        // `setKey`: the old object is reused unless it is an embstr or a shared
        // integer; the TTL goes either way.
        let reuse = match s.keyspace.get(dst) {
            None => false,
            Some(Value::String(StringValue::Embstr(_))) => false,
            Some(Value::String(StringValue::Int(v))) => !(0..SHARED_INTEGERS).contains(v),
            Some(_) => true,
        };
        let replaced = s.overwrite_probe(dst);
        s.keyspace
            .set_value(dst, Value::List(Box::new(stored)), false, reuse);
        s.notify_overwritten(dst, replaced);
        s.notify_here(notify::LIST, "sortstore", dst);
    } else if s.keyspace.remove_stored(dst) {
        s.notify_here(notify::GENERIC, "del", dst);
    }
    Ok(Reply::Integer(output_len))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(words: &[&str]) -> Vec<Vec<u8>> {
        words.iter().map(|w| w.as_bytes().to_vec()).collect()
    }

    #[test]
    fn store_keys_are_found_like_sort_get_keys() {
        assert_eq!(sort_keys(&argv(&["SORT", "k"])), vec![1]);
        assert_eq!(
            sort_keys(&argv(&["SORT", "k", "STORE", "a", "STORE", "b"])),
            vec![1, 5]
        );
        // LIMIT skips two arguments, GET and BY one each.
        assert_eq!(
            sort_keys(&argv(&[
                "SORT", "k", "LIMIT", "store", "x", "GET", "store", "STORE", "d"
            ])),
            vec![1, 8]
        );
        assert_eq!(sort_keys(&argv(&["SORT", "k", "STORE"])), vec![1]);
    }

    #[test]
    fn patterns_substitute_the_first_star() {
        let mut s = Server::new();
        s.cmd(&["SET", "w_a", "5"]);
        s.cmd(&["HSET", "h_a", "f", "7"]);
        assert_eq!(lookup_by_pattern(&mut s, b"#", b"a"), Some(b"a".to_vec()));
        assert_eq!(lookup_by_pattern(&mut s, b"w_*", b"a"), Some(b"5".to_vec()));
        assert_eq!(
            lookup_by_pattern(&mut s, b"h_*->f", b"a"),
            Some(b"7".to_vec())
        );
        assert_eq!(lookup_by_pattern(&mut s, b"h_*->g", b"a"), None);
        // A string key read as a hash, and an arrow with nothing after it.
        assert_eq!(lookup_by_pattern(&mut s, b"w_*->f", b"a"), None);
        assert_eq!(lookup_by_pattern(&mut s, b"w_*->", b"a"), None);
        assert_eq!(lookup_by_pattern(&mut s, b"nostar", b"a"), None);
    }

    #[test]
    fn scores_must_parse_to_the_end() {
        assert_eq!(sort_score(b"1.5"), Some(1.5));
        assert_eq!(sort_score(b""), Some(0.0));
        assert_eq!(sort_score(b"+3"), Some(3.0));
        assert_eq!(sort_score(b"2\0junk"), Some(2.0));
        assert_eq!(sort_score(b"1e400"), Some(f64::INFINITY));
        assert_eq!(sort_score(b" 1"), None);
        assert_eq!(sort_score(b"1x"), None);
        assert_eq!(sort_score(b"nan"), None);
    }
}
