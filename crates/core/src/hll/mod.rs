//! Redis's HyperLogLog, in its exact string format (src/hyperloglog.c).
//!
//! A HyperLogLog is a plain string value, so GET, SET, DUMP and replication treat
//! it as bytes; PFADD and friends recognise it by its 16-byte header:
//!
//! ```text
//! "HYLL" | encoding (0 dense, 1 sparse) | 3 unused | cached cardinality, 8 bytes LE
//! ```
//!
//! The most significant bit of the cached cardinality's last byte marks the cache
//! stale. After the header come 2^14 registers of 6 bits, in one of two forms:
//!
//! * **dense** ([`dense`]): every register packed, 12,288 bytes, a 12,304-byte
//!   string whose SDS takes jemalloc's 14,336-byte class (MEMORY USAGE 14,360 with
//!   a short key);
//! * **sparse** ([`sparse`]): a run-length code where long runs of zero registers
//!   cost one or two bytes. Every sketch starts sparse (18 bytes) and becomes dense
//!   for good once a register needs a value above 32 or the string would grow past
//!   `hll-sparse-max-bytes` (3000 by default; the caller passes the configured
//!   value to every write, which is when Redis reads it).
//!
//! An element is hashed with MurmurHash64A ([`hash`]); 14 bits choose the register
//! and the position of the first 1 in the other 50 bits is the candidate value.
//! PFADD raises the register if the candidate is higher and answers 1 only if some
//! register changed: a never-seen element whose register already holds an equal or
//! higher value changes nothing, so PFADD answers 0 for it (and the count would not
//! move). The count ([`estimate`]) is Ertl's improved estimator over the register
//! histogram, as Redis 8 computes it.
//!
//! The cache follows Redis: a change to any register marks it stale (PFADD,
//! PFMERGE), a single-key PFCOUNT of a stale sketch writes the fresh count into
//! the header (so the value's bytes change on a read), and a many-key PFCOUNT
//! only reads.

pub mod dense;
pub mod estimate;
pub mod hash;
pub mod sparse;

use crate::sds::Sds;

/// `HLL_P`: register index bits.
pub const P: u32 = 14;
/// `HLL_Q`: the bits left for the run of zeros.
pub const Q: usize = 50;
/// `HLL_REGISTERS`.
pub const REGISTERS: usize = 1 << P;
/// `HLL_REGISTER_MAX`: the 6-bit maximum.
pub const REGISTER_MAX: u8 = 63;
/// `HLL_HDR_SIZE`.
pub const HDR_SIZE: usize = 16;
/// `HLL_DENSE_SIZE`: header plus 16,384 × 6 bits.
pub const DENSE_SIZE: usize = HDR_SIZE + (REGISTERS * 6).div_ceil(8);
/// `HLL_DENSE`.
pub const DENSE: u8 = 0;
/// `HLL_SPARSE`.
pub const SPARSE: u8 = 1;
/// `hll-sparse-max-bytes`' default.
pub const SPARSE_MAX_BYTES: usize = 3000;
/// The header's magic.
pub const MAGIC: &[u8; 4] = b"HYLL";

/// A sparse sketch whose runs do not add up (Redis: `C_ERR` / -1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Corrupt;

/// The two encodings a stored sketch has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    Dense,
    Sparse,
}

impl Encoding {
    /// What `PFDEBUG ENCODING` says.
    pub fn name(self) -> &'static str {
        match self {
            Encoding::Dense => "dense",
            Encoding::Sparse => "sparse",
        }
    }
}

/// The checks of `isHLLObjectOrReply` after the type: at least a header, the
/// magic, a known encoding, and the exact length if dense.
pub fn is_valid(bytes: &[u8]) -> bool {
    bytes.len() >= HDR_SIZE
        && &bytes[..4] == MAGIC
        && bytes[4] <= SPARSE
        && (bytes[4] != DENSE || bytes.len() == DENSE_SIZE)
}

/// The encoding of a sketch that passed [`is_valid`].
pub fn encoding(bytes: &[u8]) -> Encoding {
    if bytes[4] == DENSE {
        Encoding::Dense
    } else {
        Encoding::Sparse
    }
}

/// `createHLLObject`: an empty sparse sketch in an SDS of its exact length.
pub fn new_sketch() -> Sds {
    let mut bytes = vec![0u8; HDR_SIZE];
    bytes[..4].copy_from_slice(MAGIC);
    bytes[4] = SPARSE;
    bytes.extend(sparse::empty_body());
    Sds::new(&bytes)
}

/// The cached cardinality, if the cache is valid.
pub fn cached_count(bytes: &[u8]) -> Option<u64> {
    let card = u64::from_le_bytes(bytes[8..16].try_into().expect("8 bytes"));
    (bytes[15] & 0x80 == 0).then_some(card)
}

/// Stores `count` as the cached cardinality (which makes the cache valid).
pub fn store_count(bytes: &mut [u8], count: u64) {
    bytes[8..16].copy_from_slice(&count.to_le_bytes());
}

/// `HLL_INVALIDATE_CACHE`.
pub fn invalidate_cache(bytes: &mut [u8]) {
    bytes[15] |= 0x80;
}

/// `hllAdd`: adds one element; true if a register changed. `sparse_max` is
/// `hll-sparse-max-bytes`.
pub fn add(sds: &mut Sds, element: &[u8], sparse_max: usize) -> Result<bool, Corrupt> {
    let (index, count) = hash::pattern(element);
    raise(sds, index, count, sparse_max)
}

/// Raises register `index` to `value` if it is lower, in whichever encoding the
/// sketch has (a sparse one may become dense, past `sparse_max` bytes); true if
/// it changed.
pub fn raise(sds: &mut Sds, index: usize, value: u8, sparse_max: usize) -> Result<bool, Corrupt> {
    match encoding(sds.as_bytes()) {
        Encoding::Dense => Ok(dense::raise(&mut sds.bytes_mut()[HDR_SIZE..], index, value)),
        Encoding::Sparse => {
            sparse::set(sds, index, value, sparse_max).map(|o| o != sparse::SetOutcome::Unchanged)
        }
    }
}

/// `hllCount` of a stored sketch: the estimate, or [`Corrupt`] for a sparse body
/// whose runs do not cover the registers exactly.
pub fn count(bytes: &[u8]) -> Result<u64, Corrupt> {
    let mut histo = [0u32; 64];
    match encoding(bytes) {
        Encoding::Dense => dense::histogram(&bytes[HDR_SIZE..], &mut histo),
        Encoding::Sparse => sparse::histogram(bytes, &mut histo)?,
    }
    Ok(estimate::estimate(&histo))
}

/// `hllMerge`: folds a stored sketch into one-byte-per-register maxima; `simd`
/// lets a dense sketch take the AVX2 path where the CPU has it (PFDEBUG SIMD).
pub fn merge_into(raw: &mut [u8; REGISTERS], bytes: &[u8], simd: bool) -> Result<(), Corrupt> {
    match encoding(bytes) {
        Encoding::Dense => {
            dense::merge_into(raw, &bytes[HDR_SIZE..], simd);
            Ok(())
        }
        Encoding::Sparse => sparse::merge_into(raw, bytes),
    }
}

/// `hllCount` of the internal one-byte-per-register form (many-key PFCOUNT);
/// `simd` lets the histogram take its AVX2 count (see [`dense::raw_histogram`]).
pub fn count_raw(raw: &[u8; REGISTERS], simd: bool) -> u64 {
    let mut histo = [0u32; 64];
    dense::raw_histogram(raw, &mut histo, simd);
    estimate::estimate(&histo)
}

/// Every register's value, for PFDEBUG GETREG of a dense sketch.
pub fn registers(bytes: &[u8]) -> Vec<u8> {
    (0..REGISTERS)
        .map(|i| dense::get(&bytes[HDR_SIZE..], i))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Adds `n` elements `prefix0`, `prefix1`, ... and returns the sketch.
    fn sketch(prefix: &str, n: usize) -> Sds {
        let mut s = new_sketch();
        for i in 0..n {
            add(&mut s, format!("{prefix}{i}").as_bytes(), SPARSE_MAX_BYTES).unwrap();
        }
        s
    }

    #[test]
    fn dense_size_and_memory_match_the_article() {
        assert_eq!(DENSE_SIZE, 12_304);
        let s = sketch("e", 5000);
        assert_eq!(encoding(s.as_bytes()), Encoding::Dense);
        assert_eq!(s.alloc_size(), 14_336);
    }

    #[test]
    fn sparse_and_dense_count_the_same() {
        for n in [0, 1, 10, 100, 1000, 1400] {
            let s = sketch("x", n);
            assert_eq!(encoding(s.as_bytes()), Encoding::Sparse, "{n}");
            let mut d = s.clone();
            sparse::to_dense(&mut d).unwrap();
            assert_eq!(count(s.as_bytes()), count(d.as_bytes()));
            for simd in [false, true] {
                let mut raw = [0u8; REGISTERS];
                merge_into(&mut raw, s.as_bytes(), simd).unwrap();
                assert_eq!(count_raw(&raw, simd), count(s.as_bytes()).unwrap());
                let mut raw_dense = [0u8; REGISTERS];
                merge_into(&mut raw_dense, d.as_bytes(), simd).unwrap();
                assert_eq!(raw_dense, raw);
            }
        }
    }

    #[test]
    fn counts_stay_within_a_few_standard_errors() {
        for n in [10usize, 1000, 20_000] {
            let got = count(sketch("k", n).as_bytes()).unwrap() as f64;
            let err = (got - n as f64).abs() / n as f64;
            assert!(err < 0.05, "{n}: {got}");
        }
    }

    #[test]
    fn validity_follows_redis() {
        let s = new_sketch();
        assert!(is_valid(s.as_bytes()));
        assert!(!is_valid(b"HYLL"));
        let mut bad = s.as_bytes().to_vec();
        bad[4] = 2;
        assert!(!is_valid(&bad));
        bad[4] = DENSE; // dense, but 18 bytes
        assert!(!is_valid(&bad));
        assert_eq!(cached_count(s.as_bytes()), Some(0));
        let mut b = s.as_bytes().to_vec();
        invalidate_cache(&mut b);
        assert_eq!(cached_count(&b), None);
        store_count(&mut b, 42);
        assert_eq!(cached_count(&b), Some(42));
    }
}
