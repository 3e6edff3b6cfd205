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

use super::{flags::*, string, Args, CommandSpec, Server};
use crate::hll::{self, dense, sparse, Encoding, HDR_SIZE, REGISTERS};
use crate::keyspace::Value;
use crate::reply::{errors, Reply};
use crate::sds::Sds;
use crate::strings::{ArgObject, StringValue};

pub const COMMANDS: &[CommandSpec] = &[
    CommandSpec::legacy("pfadd", -2, pfadd)
        .flags(WRITE | DENYOOM | FAST)
        .keys(1, 1, 1),
    CommandSpec::legacy("pfcount", -2, pfcount)
        .flags(READONLY)
        .keys(1, -1, 1),
    CommandSpec::legacy("pfmerge", -2, pfmerge)
        .flags(WRITE | DENYOOM)
        .keys(1, -1, 1),
    CommandSpec::legacy("pfdebug", 3, pfdebug)
        .flags(WRITE | DENYOOM | ADMIN)
        .keys(2, 2, 1),
    CommandSpec::legacy("pfselftest", 1, pfselftest).flags(ADMIN),
];

const NOT_HLL: &str = "WRONGTYPE Key is not a valid HyperLogLog string value.";
const CORRUPT: &str = "INVALIDOBJ Corrupted HLL object detected";

fn corrupt() -> Reply {
    Reply::error(CORRUPT)
}

/// `lookupKey` + `isHLLObjectOrReply`: the sketch's bytes, `None` if missing.
fn sketch<'s>(s: &'s mut Server, key: &[u8]) -> Result<Option<Cow<'s, [u8]>>, Reply> {
    match s.keyspace.get(key) {
        None => Ok(None),
        Some(Value::String(v)) => {
            let bytes = v.bytes();
            if matches!(v, StringValue::Raw(_) | StringValue::Embstr(_)) && hll::is_valid(&bytes) {
                Ok(Some(bytes))
            } else {
                Err(Reply::error(NOT_HLL))
            }
        }
        Some(_) => Err(Reply::error(errors::WRONGTYPE)),
    }
}

/// `dbUnshareStringValue`: the raw SDS of an existing string key (an embstr one
/// is copied into an exact-size raw SDS first).
fn unshare<'s>(s: &'s mut Server, key: &[u8]) -> &'s mut Sds {
    let copy = match s.keyspace.get(key) {
        Some(Value::String(v)) => v.unshared(),
        _ => unreachable!("the caller checked the key"),
    };
    if let Some(obj) = copy {
        string::store(s, key, obj, true);
    }
    match s.keyspace.get_mut(key) {
        Some(Value::String(v)) => v.raw_mut().expect("raw after unsharing"),
        _ => unreachable!("stored above"),
    }
}

/// The destination of PFADD and PFMERGE: the existing sketch made raw, or a new
/// empty one (`createHLLObject` + `dbAdd`). True if it was created.
fn writable<'s>(s: &'s mut Server, key: &[u8], exists: bool) -> (&'s mut Sds, bool) {
    if !exists {
        let value = ArgObject::Raw(hll::new_sketch()).into_stored(key.len());
        s.keyspace.insert(key, Value::String(value));
    }
    (unshare(s, key), !exists)
}

/// PFADD key [element ...]: 1 if any register changed (or the key was created).
pub fn pfadd(s: &mut Server, a: &Args) -> Reply {
    let key = a.bytes(1);
    let exists = match sketch(s, key) {
        Ok(found) => found.is_some(),
        Err(e) => return e,
    };
    let (sds, created) = writable(s, key, exists);
    let mut updated = usize::from(created);
    for element in &a.all()[2..] {
        match hll::add(sds, element) {
            Ok(true) => updated += 1,
            Ok(false) => {}
            Err(hll::Corrupt) => return corrupt(),
        }
    }
    if updated > 0 {
        hll::invalidate_cache(sds.bytes_mut());
    }
    Reply::Integer(i64::from(updated > 0))
}

/// Folds every existing sketch among `keys` into one-byte maxima; also says
/// whether any of them was dense.
fn merge_keys(s: &mut Server, keys: &[Vec<u8>]) -> Result<(Box<[u8; REGISTERS]>, bool), Reply> {
    let mut raw = Box::new([0u8; REGISTERS]);
    let mut any_dense = false;
    for key in keys {
        let Some(bytes) = sketch(s, key)? else {
            continue;
        };
        any_dense |= hll::encoding(&bytes) == Encoding::Dense;
        hll::merge_into(&mut raw, &bytes).map_err(|_| corrupt())?;
    }
    Ok((raw, any_dense))
}

/// PFCOUNT key [key ...]. One key: the cached count, or a fresh one written back
/// into the header. Many keys: the count of their union, nothing written.
pub fn pfcount(s: &mut Server, a: &Args) -> Reply {
    if a.len() > 2 {
        return match merge_keys(s, &a.all()[1..]) {
            Ok((raw, _)) => Reply::Integer(hll::count_raw(&raw) as i64),
            Err(e) => e,
        };
    }
    let key = a.bytes(1);
    match sketch(s, key) {
        Err(e) => return e,
        Ok(None) => return Reply::Integer(0),
        Ok(Some(_)) => {}
    }
    let sds = unshare(s, key);
    if let Some(card) = hll::cached_count(sds.as_bytes()) {
        return Reply::Integer(card as i64);
    }
    match hll::count(sds.as_bytes()) {
        Ok(card) => {
            hll::store_count(sds.bytes_mut(), card);
            Reply::Integer(card as i64)
        }
        Err(hll::Corrupt) => corrupt(),
    }
}

/// PFMERGE dest [source ...]: the register-wise maximum of dest and the sources
/// into dest. Dense if any input was dense; otherwise dest stays sparse unless the
/// registers written promote it.
pub fn pfmerge(s: &mut Server, a: &Args) -> Reply {
    let (raw, any_dense) = match merge_keys(s, &a.all()[1..]) {
        Ok(merged) => merged,
        Err(e) => return e,
    };
    let key = a.bytes(1);
    let exists = s.keyspace.contains(key);
    let (sds, _) = writable(s, key, exists);
    if any_dense {
        if sparse::to_dense(sds).is_err() {
            return corrupt();
        }
        dense::compress(&mut sds.bytes_mut()[HDR_SIZE..], &raw[..]);
    } else {
        for (index, &value) in raw.iter().enumerate() {
            if value != 0 {
                // Redis ignores a failure here: dest was read as a source already.
                let _ = hll::raise(sds, index, value);
            }
        }
    }
    hll::invalidate_cache(sds.bytes_mut());
    Reply::ok()
}

/// PFDEBUG GETREG|DECODE|ENCODING|TODENSE key, and PFDEBUG SIMD ON|OFF.
pub fn pfdebug(s: &mut Server, a: &Args) -> Reply {
    let sub = a.bytes(1).to_ascii_lowercase();
    if sub == b"simd" {
        // Only the flag: the core's merge and compress have one code path.
        if a.is(2, "on") || a.is(2, "off") {
            s.hll_simd = a.is(2, "on");
        } else {
            // Redis sends this error and then the status below: two replies.
            return Reply::error("ERR Argument must be ON or OFF");
        }
        let state = if s.hll_simd { "enabled" } else { "disabled" };
        return Reply::Status(state.into());
    }
    let key = a.bytes(2);
    match sketch(s, key) {
        Err(e) => return e,
        Ok(None) => return Reply::error("ERR The specified key does not exist"),
        Ok(Some(_)) => {}
    }
    let sds = unshare(s, key);
    let enc = hll::encoding(sds.as_bytes());
    match sub.as_slice() {
        b"getreg" => {
            if sparse::to_dense(sds).is_err() {
                return corrupt();
            }
            let regs = hll::registers(sds.as_bytes());
            Reply::Array(regs.into_iter().map(|r| Reply::Integer(r.into())).collect())
        }
        b"decode" => {
            if enc != Encoding::Sparse {
                return Reply::error("ERR HLL encoding is not sparse");
            }
            Reply::bulk(sparse::decode(sds.as_bytes()))
        }
        b"encoding" => Reply::Status(enc.name().into()),
        b"todense" => match sparse::to_dense(sds) {
            Ok(converted) => Reply::Integer(i64::from(converted)),
            Err(hll::Corrupt) => corrupt(),
        },
        _ => Reply::error(format!(
            "ERR Unknown PFDEBUG subcommand '{}'",
            String::from_utf8_lossy(a.bytes(1))
        )),
    }
}

/// PFSELFTEST: the core's own checks of its registers and estimator (see
/// [`selftest`]), `OK` or a `TESTFAILED` error like Redis's.
pub fn pfselftest(s: &mut Server, _a: &Args) -> Reply {
    use rand::Rng;
    let seed: u64 = s.rng.gen();
    match selftest(seed, 10_000_000) {
        Ok(()) => Reply::ok(),
        Err(why) => Reply::error(format!("TESTFAILED {why}")),
    }
}

/// Redis's two self-tests: random values written to every dense register read back
/// unchanged; and a dense and a sparse sketch fed the same `limit` elements agree at
/// every power of ten, stay sparse while small, and err by less than 6 standard
/// errors.
pub fn selftest(seed: u64, limit: u64) -> Result<(), String> {
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
        let _ = hll::add(&mut dense_sketch, &element);
        hll::add(&mut sparse_sketch, &element).map_err(|_| "sparse sketch corrupt")?;
        if j != checkpoint {
            continue;
        }
        if (j as usize) < hll::SPARSE_MAX_BYTES / 2
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

    #[test]
    fn errors_read_like_redis() {
        let mut s = Server::new();
        s.cmd(&["SET", "str", "hello"]);
        s.cmd(&["ZADD", "z", "1", "a"]);
        assert_eq!(s.cmd(&["PFADD", "str", "x"]), Reply::error(NOT_HLL));
        assert_eq!(s.cmd(&["PFCOUNT", "z"]), Reply::error(errors::WRONGTYPE));
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
        let Reply::Bulk(mut bytes) = s.cmd(&["GET", "h"]) else {
            panic!()
        };
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

    #[test]
    fn the_self_test_passes() {
        assert_eq!(selftest(7, 20_000), Ok(()));
    }
}
