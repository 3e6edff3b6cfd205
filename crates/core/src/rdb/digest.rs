//! DEBUG DIGEST and DEBUG DIGEST-VALUE (debug.c `xorObjectDigest`,
//! `computeDatasetDigest`): SHA1-based digests that do not depend on the order
//! of unordered things.
//!
//! `xor(d, data)` xors SHA1(data) into d; `mix(d, data)` is
//! `d = SHA1(d xor SHA1(data))`, which depends on order. A value's digest
//! mixes its type (4 bytes, big-endian), then: a string's bytes; each list
//! element in order; each set member xored; each zset member's own digest
//! (member mixed, then the score as `fpconv_dtoa` prints it) xored; each hash
//! field's own digest (field, value mixed, `!!hexpire!!` xored if it has a TTL)
//! xored; and `!!expire!!` xored when the key has a TTL. The dataset's digest
//! mixes each non-empty database's index, then xors in the SHA1 of each key's
//! digest (the key mixed into a zero digest, then the value's). The same as Redis for the same
//! data, whatever the encodings or the dict orders.

use sha1_smol::Sha1;

use crate::keyspace::Value;

pub type Digest = [u8; 20];

fn sha1(data: &[u8]) -> Digest {
    Sha1::from(data).digest().bytes()
}

/// `xorDigest`.
pub fn xor(d: &mut Digest, data: &[u8]) {
    for (a, b) in d.iter_mut().zip(sha1(data)) {
        *a ^= b;
    }
}

/// `mixDigest`.
pub fn mix(d: &mut Digest, data: &[u8]) {
    xor(d, data);
    *d = sha1(d);
}

/// `OBJ_STRING` .. `OBJ_HASH`.
fn type_code(v: &Value) -> u32 {
    match v {
        Value::String(_) => 0,
        Value::List(_) => 1,
        Value::Set(_) => 2,
        Value::Zset(_) => 3,
        Value::Hash(_) => 4,
    }
}

/// `xorObjectDigest`: mixes the value (and its having a TTL) into `d`.
pub fn object_digest(d: &mut Digest, value: &Value, has_ttl: bool) {
    mix(d, &type_code(value).to_be_bytes());
    match value {
        Value::String(s) => mix(d, &s.bytes()),
        Value::List(l) => {
            for e in l.iter() {
                mix(d, e);
            }
        }
        Value::Set(s) => {
            for m in s.members() {
                xor(d, &m);
            }
        }
        Value::Zset(z) => {
            for (member, score) in z.iter() {
                let mut e = [0u8; 20];
                mix(&mut e, member);
                mix(&mut e, crate::num::fpconv_dtoa(score).as_bytes());
                xor(d, &e);
            }
        }
        Value::Hash(h) => {
            for (field, val, ttl) in h.entries() {
                let mut e = [0u8; 20];
                mix(&mut e, field);
                mix(&mut e, val);
                if ttl.is_some() {
                    xor(&mut e, b"!!hexpire!!");
                }
                xor(d, &e);
            }
        }
    }
    if has_ttl {
        xor(d, b"!!expire!!");
    }
}

/// A key's digest within the dataset: the key mixed, then the value.
pub fn key_digest(key: &[u8], value: &Value, has_ttl: bool) -> Digest {
    let mut d = [0u8; 20];
    mix(&mut d, key);
    object_digest(&mut d, value, has_ttl);
    d
}

/// One database's part of `computeDatasetDigest`: its index mixed into the
/// running digest, then the SHA1 of each key's digest xored (nothing for an empty one).
pub fn push_db(out: &mut Digest, db: usize, keys: &[(&[u8], &Value, bool)]) {
    if keys.is_empty() {
        return;
    }
    mix(out, &(db as u32).to_be_bytes());
    for &(key, value, has_ttl) in keys {
        // `xorDigest(final, digest, 20)`: the SHA1 of the key's digest.
        xor(out, &key_digest(key, value, has_ttl));
    }
}

/// The 40 hex digits DEBUG prints.
pub fn hex(d: &Digest) -> String {
    d.iter().map(|b| format!("{b:02x}")).collect()
}
