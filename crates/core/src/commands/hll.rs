//! HyperLogLog commands (src/hyperloglog.c): PFADD, PFCOUNT, PFMERGE, PFDEBUG and
//! PFSELFTEST, over the sketch format of [`crate::hll`].
//!
//! A sketch is an ordinary string value (always raw: like Redis, every command that
//! may write first turns an embstr copy into a raw SDS of its own, which MEMORY
//! USAGE shows). Errors as Redis words them: another type gets the usual
//! WRONGTYPE, a string that is not a sketch gets `WRONGTYPE Key is not a valid
//! HyperLogLog string value.`, and a sparse sketch whose runs do not add up gets
//! `INVALIDOBJ Corrupted HLL object detected` (changes made before it was noticed
//! stay, as in Redis).

use std::borrow::Cow;

use super::string_value::{add_raw, lookup, unshared};
use super::{flags::*, Args, CmdResult, CommandSpec, Server};
use crate::hll::{self, dense, sparse, Encoding, HDR_SIZE, REGISTERS};
use crate::reply::Reply;
use crate::sds::Sds;
use crate::server::notify;
use crate::strings::StringValue;

pub const COMMANDS: &[CommandSpec] = &[
    CommandSpec::new("pfadd", -2, pfadd)
        .flags(WRITE | DENYOOM | FAST)
        .keys(1, 1, 1)
        .doc(
            "2.8.9",
            "Adds elements to a HyperLogLog sketch, creating it if needed.",
            "key [element [element ...]]",
        ),
    CommandSpec::new("pfcount", -2, pfcount)
        // MAY_REPLICATE: PFCOUNT can rewrite a sketch's cached cardinality
        // (hidden from COMMAND INFO, but read-only scripts refuse it).
        .flags(READONLY | MAY_REPLICATE)
        .keys(1, -1, 1)
        .doc(
            "2.8.9",
            "Estimates how many distinct elements one sketch, or the union of several, has seen.",
            "key [key ...]",
        ),
    CommandSpec::new("pfmerge", -2, pfmerge)
        .flags(WRITE | DENYOOM)
        .keys(1, -1, 1)
        .doc(
            "2.8.9",
            "Stores the union of HyperLogLog sketches in the first key.",
            "destkey [sourcekey [sourcekey ...]]",
        ),
    CommandSpec::new("pfdebug", 3, pfdebug)
        .flags(WRITE | DENYOOM | ADMIN)
        .keys(2, 2, 1)
        .doc(
            "2.8.9",
            "Shows or converts a sketch's internal form (GETREG, DECODE, ENCODING, TODENSE).",
            "subcommand key",
        ),
    CommandSpec::new("pfselftest", 1, pfselftest)
        .flags(ADMIN)
        .doc(
            "2.8.9",
            "Checks the HyperLogLog registers and estimator.",
            "",
        ),
];

const NOT_HLL: &str = "WRONGTYPE Key is not a valid HyperLogLog string value.";
const CORRUPT: &str = "INVALIDOBJ Corrupted HLL object detected";

fn corrupt() -> Reply {
    Reply::error(CORRUPT)
}

/// `lookupKey` + `isHLLObjectOrReply`: the sketch's bytes, `None` if missing;
/// WRONGTYPE for another type, and its HyperLogLog variant for a string that is
/// not a sketch (an int never is).
fn sketch<'s>(s: &'s mut Server, key: &[u8]) -> Result<Option<Cow<'s, [u8]>>, Reply> {
    let Some(v) = lookup(s, key)? else {
        return Ok(None);
    };
    let bytes = v.bytes();
    if matches!(v, StringValue::Raw(_) | StringValue::Embstr(_)) && hll::is_valid(&bytes) {
        Ok(Some(bytes))
    } else {
        Err(Reply::error(NOT_HLL))
    }
}

/// `hll-sparse-max-bytes`, the size past which a sparse sketch becomes dense.
fn sparse_max(s: &Server) -> usize {
    usize::try_from(s.config.hll_sparse_max_bytes).unwrap_or(usize::MAX)
}

/// The destination of PFADD and PFMERGE: the existing sketch made raw, or a new
/// empty one (`createHLLObject` + `dbAdd`). True if it was created.
fn writable<'s>(s: &'s mut Server, key: &[u8], exists: bool) -> Result<(&'s mut Sds, bool), Reply> {
    if exists {
        Ok((unshared(s, key)?, false))
    } else {
        Ok((add_raw(s, key, hll::new_sketch())?, true))
    }
}

/// PFADD key [element ...]: 1 if any register changed (or the key was created).
fn pfadd(s: &mut Server, a: &Args) -> CmdResult {
    let key = a.bytes(1);
    let max = sparse_max(s);
    let elements = &a.all()[2..];
    // An existing raw sketch (every sketch a PFADD or PFMERGE wrote): one
    // search of the key table, the registers edited where they are.
    let fast = super::string_value::edit_raw(s, key, |sds| {
        hll::is_valid(sds.as_bytes()).then(|| add_elements(sds, elements, max, 0))
    });
    let updated = match fast {
        Some(updated) => updated.map_err(|_| corrupt())?,
        None => {
            let exists = sketch(s, key)?.is_some();
            let (sds, created) = writable(s, key, exists)?;
            add_elements(sds, elements, max, usize::from(created)).map_err(|_| corrupt())?
        }
    };
    // One change per register raised, and one for a new key.
    s.set_dirty(updated as u64);
    if updated > 0 {
        s.notify_here(notify::STRING, "pfadd", key);
    }
    Ok(Reply::Integer(i64::from(updated > 0)))
}

/// PFADD's loop: each element into `sds`; returns `updated` plus the registers
/// raised, and invalidates the cached count if that is not 0 (a new key counts
/// as an update, as in Redis).
///
/// The error is the small [`hll::Corrupt`], made a reply by the caller: a
/// `Result<usize, Reply>` was 96 bytes (72 now), returned through memory and copied by
/// 16-byte loads over the two 8-byte stores that wrote it, a load that must
/// wait for them (perf annotate: a third of `Keyspace::modify`'s own time).
fn add_elements(
    sds: &mut Sds,
    elements: &[Vec<u8>],
    max: usize,
    mut updated: usize,
) -> Result<usize, hll::Corrupt> {
    for element in elements {
        if hll::add(sds, element, max)? {
            updated += 1;
        }
    }
    if updated > 0 {
        hll::invalidate_cache(sds.bytes_mut());
    }
    Ok(updated)
}

/// Folds every existing sketch among `keys` into `raw`'s one-byte maxima (which
/// the caller has zeroed); says whether any of them was dense. One
/// `lookupKeyRead` per key, even in PFMERGE, and the merge reads the stored
/// bytes in place.
fn merge_keys(s: &mut Server, keys: &[Vec<u8>], raw: &mut [u8; REGISTERS]) -> Result<bool, Reply> {
    let simd = s.hll_simd;
    let mut any_dense = false;
    for key in keys {
        let Some(v) = super::string_value::lookup_source(s, key)? else {
            continue;
        };
        let bytes = match v {
            StringValue::Raw(sds) if hll::is_valid(sds.as_bytes()) => sds.as_bytes(),
            StringValue::Embstr(b) if hll::is_valid(b) => &b[..],
            _ => return Err(Reply::error(NOT_HLL)),
        };
        any_dense |= hll::encoding(bytes) == Encoding::Dense;
        hll::merge_into(raw, bytes, simd).map_err(|_| corrupt())?;
    }
    Ok(any_dense)
}

/// PFCOUNT key [key ...]. One key: the cached count, or a fresh one written back
/// into the header. Many keys: the count of their union, nothing written.
fn pfcount(s: &mut Server, a: &Args) -> CmdResult {
    if a.len() > 2 {
        // On the stack, as in Redis: no allocation per call.
        let mut raw = [0u8; REGISTERS];
        merge_keys(s, &a.all()[1..], &mut raw)?;
        return Ok(Reply::Integer(hll::count_raw(&raw, s.hll_simd) as i64));
    }
    let key = a.bytes(1);
    match lookup(s, key)? {
        None => return Ok(Reply::Integer(0)),
        // A raw sketch with a valid cache: the answer, from the one lookup
        // (unsharing would change nothing, the value is raw already).
        Some(StringValue::Raw(sds)) if hll::is_valid(sds.as_bytes()) => {
            if let Some(card) = hll::cached_count(sds.as_bytes()) {
                return Ok(Reply::Integer(card as i64));
            }
        }
        Some(StringValue::Embstr(b)) if hll::is_valid(b) => {}
        Some(_) => return Err(Reply::error(NOT_HLL)),
    }
    let sds = unshared(s, key)?;
    if let Some(card) = hll::cached_count(sds.as_bytes()) {
        return Ok(Reply::Integer(card as i64));
    }
    let card = hll::count(sds.as_bytes()).map_err(|_| corrupt())?;
    hll::store_count(sds.bytes_mut(), card);
    // The value changed (its cache), so Redis counts it although PFCOUNT reads.
    s.set_dirty(1);
    Ok(Reply::Integer(card as i64))
}

/// PFMERGE dest [source ...]: the register-wise maximum of dest and the sources
/// into dest. Dense if any input was dense; otherwise dest stays sparse unless the
/// registers written promote it.
fn pfmerge(s: &mut Server, a: &Args) -> CmdResult {
    let mut raw = [0u8; REGISTERS];
    let any_dense = merge_keys(s, &a.all()[1..], &mut raw)?;
    let simd = s.hll_simd;
    let key = a.bytes(1);
    let exists = s.keyspace.contains(key);
    let max = sparse_max(s);
    let (sds, _) = writable(s, key, exists)?;
    if any_dense {
        sparse::to_dense(sds).map_err(|_| corrupt())?;
        dense::compress(&mut sds.bytes_mut()[HDR_SIZE..], &raw, simd);
    } else {
        for (index, &value) in raw.iter().enumerate() {
            if value != 0 {
                // Redis ignores a failure here: dest was read as a source already.
                let _ = hll::raise(sds, index, value, max);
            }
        }
    }
    hll::invalidate_cache(sds.bytes_mut());
    s.notify_here(notify::STRING, "pfadd", key);
    Ok(Reply::ok())
}

/// PFDEBUG GETREG|DECODE|ENCODING|TODENSE key, and PFDEBUG SIMD ON|OFF.
fn pfdebug(s: &mut Server, a: &Args) -> CmdResult {
    if a.is(1, "simd") {
        // The flag chooses the dense merge's and compress's path (AVX2 or
        // scalar, see hll::dense); the reply says whether the vector path runs.
        if a.is(2, "on") || a.is(2, "off") {
            s.hll_simd = a.is(2, "on");
        } else {
            // Redis sends this error and then the status below: two replies.
            return Err(Reply::error("ERR Argument must be ON or OFF"));
        }
        let state = if s.hll_simd && dense::simd_reported() {
            "enabled"
        } else {
            "disabled"
        };
        s.set_dirty(0);
        return Ok(Reply::Status(state.into()));
    }
    let key = a.bytes(2);
    if sketch(s, key)?.is_none() {
        return Err(Reply::error("ERR The specified key does not exist"));
    }
    let sds = unshared(s, key)?;
    let enc = hll::encoding(sds.as_bytes());
    // Only a conversion to dense counts as a change.
    if a.is(1, "getreg") {
        let converted = sparse::to_dense(sds).map_err(|_| corrupt())?;
        let regs = hll::registers(sds.as_bytes());
        s.set_dirty(u64::from(converted));
        Ok(Reply::Array(
            regs.into_iter().map(|r| Reply::Integer(r.into())).collect(),
        ))
    } else if a.is(1, "todense") {
        let converted = sparse::to_dense(sds).map_err(|_| corrupt())?;
        s.set_dirty(u64::from(converted));
        Ok(Reply::Integer(i64::from(converted)))
    } else if a.is(1, "decode") {
        if enc != Encoding::Sparse {
            return Err(Reply::error("ERR HLL encoding is not sparse"));
        }
        let text = sparse::decode(sds.as_bytes());
        s.set_dirty(0);
        Ok(Reply::bulk(text))
    } else if a.is(1, "encoding") {
        s.set_dirty(0);
        Ok(Reply::Status(enc.name().into()))
    } else {
        // `%s` of the C string: up to a NUL.
        let name = a.bytes(1).split(|&b| b == 0).next().unwrap_or_default();
        Err(Reply::error(format!(
            "ERR Unknown PFDEBUG subcommand '{}'",
            String::from_utf8_lossy(name)
        )))
    }
}

/// PFSELFTEST: the core's own checks of its registers and estimator (see
/// [`selftest`]), `OK` or a `TESTFAILED` error like Redis's.
fn pfselftest(s: &mut Server, _a: &Args) -> CmdResult {
    use rand::Rng;
    let seed: u64 = s.rng.gen();
    let max = sparse_max(s);
    match selftest(seed, 10_000_000, max) {
        Ok(()) => Ok(Reply::ok()),
        Err(why) => Err(Reply::error(format!("TESTFAILED {why}"))),
    }
}

/// Redis's two self-tests: random values written to every dense register read back
/// unchanged; and a dense and a sparse sketch fed the same `limit` elements agree at
/// every power of ten, stay sparse while small, and err by less than 6 standard
/// errors.
pub fn selftest(seed: u64, limit: u64, sparse_max: usize) -> Result<(), String> {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut regs = vec![0u8; hll::DENSE_SIZE - HDR_SIZE];
    for _ in 0..10 {
        let values: Vec<u8> = (0..REGISTERS).map(|_| rng.gen_range(0..64)).collect();
        for (i, &v) in values.iter().enumerate() {
            dense::set(&mut regs, i, v);
        }
        for (i, &v) in values.iter().enumerate() {
            let got = dense::get(&regs, i);
            if got != v {
                return Err(format!("Register {i} should be {v} but is {got}"));
            }
        }
    }
    let mut dense_sketch = hll::new_sketch();
    sparse::to_dense(&mut dense_sketch).map_err(|_| "new sketch corrupt".to_string())?;
    let mut sparse_sketch = hll::new_sketch();
    let relerr = 1.04 / (REGISTERS as f64).sqrt();
    let mut checkpoint = 1u64;
    for j in 1..=limit {
        let element = (j ^ seed).to_le_bytes();
        let _ = hll::add(&mut dense_sketch, &element, sparse_max);
        hll::add(&mut sparse_sketch, &element, sparse_max).map_err(|_| "sparse sketch corrupt")?;
        if j != checkpoint {
            continue;
        }
        if (j as usize) < sparse_max / 2
            && hll::encoding(sparse_sketch.as_bytes()) != Encoding::Sparse
        {
            return Err("sparse encoding not used".into());
        }
        let d = hll::count(dense_sketch.as_bytes()).map_err(|_| "dense corrupt")?;
        let sp = hll::count(sparse_sketch.as_bytes()).map_err(|_| "sparse corrupt")?;
        if d != sp {
            return Err("dense/sparse disagree".into());
        }
        let maxerr = if j == 10 {
            1
        } else {
            (relerr * 6.0 * j as f64).ceil() as u64
        };
        let abserr = j.abs_diff(d);
        if abserr > maxerr {
            return Err(format!("Too big error. card:{j} abserr:{abserr}"));
        }
        checkpoint *= 10;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Reply;

    /// PFADD and SETBIT on an existing raw string edit it with one search of
    /// the key table (string_value::edit_raw): WATCH still notices, the TTL
    /// stays, and a key of another type or a string that is no sketch still
    /// gets its error from the general path.
    #[test]
    fn in_place_pfadd_and_setbit_tell_watch_and_keep_the_ttl() {
        use crate::server::ConnectInfo;
        let argv = |w: &[&str]| w.iter().map(|x| x.as_bytes().to_vec()).collect::<Vec<_>>();
        let mut s = Server::new();
        let c = s.connect(ConnectInfo::in_process());
        for (setup, edit) in [
            (&["PFADD", "k", "a"][..], &["PFADD", "k", "b"][..]),
            (
                &["SETBIT", "k", "100", "1"][..],
                &["SETBIT", "k", "7", "1"][..],
            ),
        ] {
            s.cmd(&["DEL", "k"]);
            s.cmd(setup);
            s.cmd(&["EXPIRE", "k", "100"]);
            s.call(c, &argv(&["WATCH", "k"]));
            assert_eq!(
                s.cmd(edit),
                Reply::Integer(if edit[0] == "PFADD" { 1 } else { 0 })
            );
            s.call(c, &argv(&["MULTI"]));
            s.call(c, &argv(&["PING"]));
            assert_eq!(s.call(c, &argv(&["EXEC"])), Reply::NilArray, "{edit:?}");
            assert!(
                matches!(s.cmd(&["TTL", "k"]), Reply::Integer(t) if t > 90),
                "{edit:?}"
            );
        }
        assert_eq!(s.cmd(&["GETBIT", "k", "7"]), Reply::Integer(1));
        assert_eq!(s.cmd(&["GETBIT", "k", "100"]), Reply::Integer(1));
        s.cmd(&["SET", "plain", "not a sketch at all"]);
        assert_eq!(s.cmd(&["PFADD", "plain", "x"]), Reply::error(NOT_HLL));
        s.cmd(&["LPUSH", "list", "x"]);
        assert!(s.cmd(&["PFADD", "list", "x"]).is_error());
        assert!(s.cmd(&["SETBIT", "list", "1", "1"]).is_error());
        assert!(s.cmd(&["PFCOUNT", "k"]).is_error());
    }

    #[test]
    fn pfadd_pfcount_and_the_cache() {
        let mut s = Server::new();
        assert_eq!(s.cmd(&["PFADD", "h"]), Reply::Integer(1));
        assert_eq!(s.cmd(&["PFADD", "h"]), Reply::Integer(0));
        assert_eq!(s.cmd(&["PFADD", "h", "a", "b", "c"]), Reply::Integer(1));
        assert_eq!(s.cmd(&["PFADD", "h", "a"]), Reply::Integer(0));
        let before = s.cmd(&["GET", "h"]);
        let Reply::Bulk(bytes) = &before else {
            panic!()
        };
        assert_eq!(hll::cached_count(bytes), None);
        assert_eq!(s.cmd(&["PFCOUNT", "h"]), Reply::Integer(3));
        let Reply::Bulk(bytes) = s.cmd(&["GET", "h"]) else {
            panic!()
        };
        assert_eq!(hll::cached_count(&bytes), Some(3));
        assert_eq!(s.cmd(&["PFCOUNT", "h", "nokey"]), Reply::Integer(3));
        assert_eq!(
            s.cmd(&["PFDEBUG", "ENCODING", "h"]),
            Reply::Status("sparse".into())
        );
    }

    /// `lookupKeyRead` once per key: a many-key PFCOUNT counts one hit per
    /// existing key and one miss per missing one (the core used to look each
    /// key up twice, counting every hit double).
    #[test]
    fn a_many_key_count_looks_each_key_up_once() {
        let mut s = Server::new();
        s.cmd(&["PFADD", "a", "x"]);
        s.cmd(&["PFADD", "b", "y"]);
        let (h0, m0) = (s.stats.keyspace_hits, s.stats.keyspace_misses);
        assert_eq!(s.cmd(&["PFCOUNT", "a", "b", "nokey"]), Reply::Integer(2));
        assert_eq!(s.stats.keyspace_hits - h0, 2);
        assert_eq!(s.stats.keyspace_misses - m0, 1);
    }

    #[test]
    fn errors_read_like_redis() {
        let mut s = Server::new();
        s.cmd(&["SET", "str", "hello"]);
        s.cmd(&["ZADD", "z", "1", "a"]);
        assert_eq!(s.cmd(&["PFADD", "str", "x"]), Reply::error(NOT_HLL));
        assert_eq!(
            s.cmd(&["PFCOUNT", "z"]),
            Reply::error(crate::reply::errors::WRONGTYPE)
        );
        assert_eq!(
            s.cmd(&["PFDEBUG", "GETREG", "nokey"]),
            Reply::error("ERR The specified key does not exist")
        );
        s.cmd(&["PFADD", "h", "a"]);
        assert_eq!(
            s.cmd(&["PFDEBUG", "Nope", "h"]),
            Reply::error("ERR Unknown PFDEBUG subcommand 'Nope'")
        );
        // A sparse sketch with one ZERO opcode too many.
        let Reply::Bulk(bytes) = s.cmd(&["GET", "h"]) else {
            panic!()
        };
        let mut bytes = bytes.into_vec();
        bytes.push(0);
        s.run(&[b"SET".to_vec(), b"bad".to_vec(), bytes]);
        assert_eq!(s.cmd(&["PFCOUNT", "bad"]), Reply::error(CORRUPT));
        assert_eq!(s.cmd(&["PFMERGE", "m", "bad"]), Reply::error(CORRUPT));
    }

    #[test]
    fn merge_of_sparse_and_dense() {
        let mut s = Server::new();
        let many: Vec<String> = (0..5000).map(|i| format!("d{i}")).collect();
        let mut argv = vec!["PFADD".to_string(), "dense".into()];
        argv.extend(many);
        let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
        s.cmd(&argv);
        s.cmd(&["PFADD", "small", "a", "b"]);
        assert_eq!(s.cmd(&["PFMERGE", "m1", "small"]), Reply::ok());
        assert_eq!(
            s.cmd(&["PFDEBUG", "ENCODING", "m1"]),
            Reply::Status("sparse".into())
        );
        assert_eq!(s.cmd(&["PFMERGE", "m2", "small", "dense"]), Reply::ok());
        assert_eq!(
            s.cmd(&["PFDEBUG", "ENCODING", "m2"]),
            Reply::Status("dense".into())
        );
        assert_eq!(
            s.cmd(&["PFCOUNT", "m2"]),
            s.cmd(&["PFCOUNT", "small", "dense"])
        );
    }

    /// hyperloglog.tcl's "Change hll-sparse-max-bytes": the configured limit
    /// applies on the next write.
    #[test]
    fn the_configured_sparse_limit_applies_on_the_next_write() {
        let mut s = Server::new();
        s.cmd(&["CONFIG", "SET", "hll-sparse-max-bytes", "3000"]);
        let mut add = vec!["PFADD", "hll"];
        add.extend(["a", "b", "c", "d", "e", "d", "g", "h", "i", "j", "k"]);
        s.cmd(&add);
        let encoding = |s: &mut Server| s.cmd(&["PFDEBUG", "ENCODING", "hll"]);
        assert_eq!(encoding(&mut s), Reply::Status("sparse".into()));
        s.cmd(&["CONFIG", "SET", "hll-sparse-max-bytes", "30"]);
        assert_eq!(encoding(&mut s), Reply::Status("sparse".into()));
        s.cmd(&["PFADD", "hll", "new_element"]);
        assert_eq!(encoding(&mut s), Reply::Status("dense".into()));
    }

    #[test]
    fn the_self_test_passes() {
        assert_eq!(selftest(7, 20_000, hll::SPARSE_MAX_BYTES), Ok(()));
    }
}
