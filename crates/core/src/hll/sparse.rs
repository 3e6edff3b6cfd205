//! The sparse encoding: the registers as a run-length code of one- and two-byte
//! opcodes after the header.
//!
//! * `00xxxxxx` ZERO: 1 to 64 registers at 0;
//! * `01xxxxxx yyyyyyyy` XZERO: 1 to 16,384 registers at 0 (14-bit length - 1);
//! * `1vvvvvxx` VAL: 1 to 4 registers at value 1 to 32.
//!
//! A new sketch is one XZERO covering all 16,384 registers (18 bytes with the
//! header). Raising a register rewrites the opcode that covers it in place: a VAL
//! or ZERO of length 1 is overwritten, anything longer is split into at most three
//! opcodes (XZERO-VAL-XZERO is the worst case, 3 bytes more), then neighbouring
//! VALs with the same value are merged when the run fits in 4. A value above 32
//! has no opcode, and a string that would pass `hll-sparse-max-bytes` (3000 by
//! default, the `max` argument of [`set`]) is not grown: both promote the sketch
//! to dense.
//!
//! Before an edit Redis makes room for the worst case: when fewer than 3 bytes are
//! free it resizes the SDS to `len + 3` plus as much again (at most 300 more),
//! capped at `max`, so the string's allocation moves in steps that MEMORY USAGE
//! shows. That happens before it looks whether the register needs raising at all.
//!
//! Corrupt input is handled the way Redis's pointer walk handles it: a sum of
//! runs other than 16,384 is an error when the whole string is read (count, merge,
//! conversion), and an XZERO cut short by the end of the string reads its second
//! byte as 0 (the SDS's NUL terminator).

use super::{dense, Corrupt, DENSE, DENSE_SIZE, HDR_SIZE, REGISTERS};
use crate::sds::Sds;

/// `HLL_SPARSE_VAL_MAX_VALUE`.
pub const VAL_MAX_VALUE: u8 = 32;
/// `HLL_SPARSE_VAL_MAX_LEN`.
const VAL_MAX_LEN: usize = 4;
/// `HLL_SPARSE_ZERO_MAX_LEN`.
const ZERO_MAX_LEN: usize = 64;
/// `HLL_SPARSE_XZERO_MAX_LEN`.
pub const XZERO_MAX_LEN: usize = 16_384;

/// One decoded opcode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Zero(usize),
    Xzero(usize),
    Val { value: u8, len: usize },
}

impl Op {
    /// Bytes the opcode takes.
    pub fn size(self) -> usize {
        match self {
            Op::Xzero(_) => 2,
            _ => 1,
        }
    }

    /// Registers the opcode covers.
    pub fn span(self) -> usize {
        match self {
            Op::Zero(n) | Op::Xzero(n) | Op::Val { len: n, .. } => n,
        }
    }

    fn value(self) -> u8 {
        match self {
            Op::Val { value, .. } => value,
            _ => 0,
        }
    }

    /// Appends the opcode's bytes.
    fn write(self, out: &mut Vec<u8>) {
        match self {
            Op::Zero(n) => out.push((n - 1) as u8),
            Op::Xzero(n) => {
                let l = n - 1;
                out.push((l >> 8) as u8 | 0x40);
                out.push((l & 0xff) as u8);
            }
            Op::Val { value, len } => out.push(val_byte(value, len)),
        }
    }
}

fn val_byte(value: u8, len: usize) -> u8 {
    ((value - 1) << 2) | (len as u8 - 1) | 0x80
}

/// The opcode at `p`; a second byte past the end reads as 0, as Redis reads the
/// terminator.
pub fn op_at(buf: &[u8], p: usize) -> Op {
    let b = buf[p];
    if b & 0xc0 == 0 {
        Op::Zero(usize::from(b & 0x3f) + 1)
    } else if b & 0x80 == 0 {
        let low = buf.get(p + 1).copied().unwrap_or(0);
        Op::Xzero(((usize::from(b & 0x3f) << 8) | usize::from(low)) + 1)
    } else {
        Op::Val {
            value: ((b >> 2) & 0x1f) + 1,
            len: usize::from(b & 0x3) + 1,
        }
    }
}

/// The opcodes of a sparse sketch, in order (the header is skipped).
pub fn ops(buf: &[u8]) -> impl Iterator<Item = Op> + '_ {
    let mut p = HDR_SIZE;
    std::iter::from_fn(move || {
        if p >= buf.len() {
            return None;
        }
        let op = op_at(buf, p);
        p += op.size();
        Some(op)
    })
}

/// The body of a new sketch: XZERO opcodes covering every register.
pub fn empty_body() -> Vec<u8> {
    let mut out = Vec::new();
    let mut left = REGISTERS;
    while left > 0 {
        let n = left.min(XZERO_MAX_LEN);
        Op::Xzero(n).write(&mut out);
        left -= n;
    }
    out
}

/// Walks every opcode, calling `visit(first_register, op)`; fails if a run
/// would pass the last register or the runs do not cover exactly 16,384.
pub fn walk(buf: &[u8], mut visit: impl FnMut(usize, Op)) -> Result<(), Corrupt> {
    let mut idx = 0;
    for op in ops(buf) {
        if op.span() + idx > REGISTERS {
            return Err(Corrupt);
        }
        visit(idx, op);
        idx += op.span();
    }
    if idx == REGISTERS {
        Ok(())
    } else {
        Err(Corrupt)
    }
}

/// `hllSparseRegHisto`. Like Redis, the counts so far stay in `histo` when the
/// walk fails.
pub fn histogram(buf: &[u8], histo: &mut [u32; 64]) -> Result<(), Corrupt> {
    walk(buf, |_, op| {
        histo[usize::from(op.value())] += op.span() as u32
    })
}

/// The sparse part of `hllMerge`: `raw[i] = max(raw[i], register i)`.
pub fn merge_into(raw: &mut [u8], buf: &[u8]) -> Result<(), Corrupt> {
    walk(buf, |first, op| {
        if let Op::Val { value, len } = op {
            for slot in &mut raw[first..first + len] {
                *slot = (*slot).max(value);
            }
        }
    })
}

/// `hllSparseToDense`: the dense form of a sparse sketch, header copied (cached
/// cardinality included). `Ok(false)` if it already is dense.
pub fn to_dense(sds: &mut Sds) -> Result<bool, Corrupt> {
    let buf = sds.as_bytes();
    if buf[4] == DENSE {
        return Ok(false);
    }
    let mut out = vec![0u8; DENSE_SIZE];
    out[..HDR_SIZE].copy_from_slice(&buf[..HDR_SIZE]);
    out[4] = DENSE;
    let registers = &mut out[HDR_SIZE..];
    walk(buf, |first, op| {
        if let Op::Val { value, len } = op {
            for i in first..first + len {
                dense::set(registers, i, value);
            }
        }
    })?;
    *sds = Sds::new(&out);
    Ok(true)
}

/// `PFDEBUG DECODE`'s text: `z:len`, `Z:len` and `v:value,len`, space separated.
pub fn decode(buf: &[u8]) -> String {
    let words: Vec<String> = ops(buf)
        .map(|op| match op {
            Op::Zero(n) => format!("z:{n}"),
            Op::Xzero(n) => format!("Z:{n}"),
            Op::Val { value, len } => format!("v:{value},{len}"),
        })
        .collect();
    words.join(" ")
}

/// The opcodes that replace `op` (covering `first..=last`) when register `index`
/// becomes `count`.
fn split(op: Op, first: usize, index: usize, count: u8) -> Vec<u8> {
    let last = first + op.span() - 1;
    let mut seq = Vec::with_capacity(5);
    let zeros = |n: usize, seq: &mut Vec<u8>| {
        if n > ZERO_MAX_LEN {
            Op::Xzero(n).write(seq)
        } else {
            Op::Zero(n).write(seq)
        }
    };
    match op {
        Op::Val { value, .. } => {
            if index != first {
                Op::Val {
                    value,
                    len: index - first,
                }
                .write(&mut seq);
            }
            Op::Val {
                value: count,
                len: 1,
            }
            .write(&mut seq);
            if index != last {
                Op::Val {
                    value,
                    len: last - index,
                }
                .write(&mut seq);
            }
        }
        _ => {
            if index != first {
                zeros(index - first, &mut seq);
            }
            Op::Val {
                value: count,
                len: 1,
            }
            .write(&mut seq);
            if index != last {
                zeros(last - index, &mut seq);
            }
        }
    }
    seq
}

/// What [`set`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SetOutcome {
    Unchanged,
    Raised,
    /// Raised, and the sketch is dense now.
    Promoted,
}

/// `hllSparseSet`: raises register `index` to `count` if it is lower; `max` is
/// `hll-sparse-max-bytes`.
pub fn set(sds: &mut Sds, index: usize, count: u8, max: usize) -> Result<SetOutcome, Corrupt> {
    if count > VAL_MAX_VALUE {
        return promote(sds, index, count);
    }
    if sds.alloc() < max && sds.avail() < 3 {
        let mut wanted = sds.len() + 3;
        wanted += wanted.min(300);
        sds.resize(wanted.min(max), true);
    }

    // Step 1: find the opcode covering `index`.
    let buf = sds.as_bytes();
    let end = buf.len();
    let mut p = HDR_SIZE;
    let mut first = 0;
    let mut prev = None;
    let mut found = None;
    while p < end {
        let op = op_at(buf, p);
        if index < first + op.span() {
            found = Some(op);
            break;
        }
        prev = Some(p);
        p += op.size();
        first += op.span();
    }
    let Some(op) = found else {
        return Err(Corrupt);
    };

    // Step 2: trivial cases in place, or a split.
    match op {
        Op::Val { value, .. } if value >= count => return Ok(SetOutcome::Unchanged),
        Op::Val { len: 1, .. } | Op::Zero(1) => {
            sds.bytes_mut()[p] = val_byte(count, 1);
        }
        _ => {
            let seq = split(op, first, index, count);
            let delta = seq.len() as isize - op.size() as isize;
            if delta > 0 && sds.len() + delta as usize > max {
                return promote(sds, index, count);
            }
            let new_len = (sds.len() as isize + delta) as usize;
            debug_assert!(new_len <= sds.alloc());
            let buf = sds.vec_mut();
            let old_end = (p + op.size()).min(end);
            buf.splice(p..old_end, seq);
            buf.truncate(new_len);
        }
    }

    // Step 3: merge equal neighbouring VALs, scanning up to 5 opcodes from the
    // one before the change.
    let buf = sds.vec_mut();
    let mut p = prev.unwrap_or(HDR_SIZE);
    let mut budget = 5;
    while p < buf.len() && budget > 0 {
        budget -= 1;
        let op = op_at(buf, p);
        let Op::Val { value, len } = op else {
            p += op.size();
            continue;
        };
        if p + 1 < buf.len() {
            if let Op::Val { value: v2, len: l2 } = op_at(buf, p + 1) {
                if v2 == value && len + l2 <= VAL_MAX_LEN {
                    buf[p + 1] = val_byte(value, len + l2);
                    buf.remove(p);
                    continue;
                }
            }
        }
        p += 1;
    }
    super::invalidate_cache(buf);
    Ok(SetOutcome::Raised)
}

fn promote(sds: &mut Sds, index: usize, count: u8) -> Result<SetOutcome, Corrupt> {
    to_dense(sds)?;
    let raised = dense::raise(&mut sds.bytes_mut()[HDR_SIZE..], index, count);
    // Redis asserts this; a sketch that passed the walk always satisfies it.
    debug_assert!(raised, "a promotion always raises its register");
    Ok(SetOutcome::Promoted)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hll;

    const MAX: usize = hll::SPARSE_MAX_BYTES;

    #[test]
    fn a_new_sketch_is_one_xzero() {
        let s = hll::new_sketch();
        assert_eq!(s.len(), 18);
        assert_eq!(decode(s.as_bytes()), "Z:16384");
    }

    #[test]
    fn splits_and_merges() {
        let mut s = hll::new_sketch();
        assert_eq!(set(&mut s, 100, 3, MAX), Ok(SetOutcome::Raised));
        assert_eq!(decode(s.as_bytes()), "Z:100 v:3,1 Z:16283");
        assert_eq!(set(&mut s, 101, 3, MAX), Ok(SetOutcome::Raised));
        assert_eq!(decode(s.as_bytes()), "Z:100 v:3,2 Z:16282");
        assert_eq!(set(&mut s, 101, 2, MAX), Ok(SetOutcome::Unchanged));
        assert_eq!(set(&mut s, 0, 1, MAX), Ok(SetOutcome::Raised));
        assert_eq!(decode(s.as_bytes()), "v:1,1 Z:99 v:3,2 Z:16282");
        // The first resize: 18 + 3 doubled, in a type-8 SDS of 48 bytes.
        assert_eq!(s.alloc_size(), 48);
        assert_eq!(set(&mut s, 200, 33, MAX), Ok(SetOutcome::Promoted));
        assert_eq!(s.len(), DENSE_SIZE);
        assert_eq!(s.alloc_size(), 14_336);
        let regs = &s.as_bytes()[HDR_SIZE..];
        assert_eq!(
            [0, 1, 100, 101, 102, 200].map(|i| dense::get(regs, i)),
            [1, 0, 3, 3, 0, 33]
        );
    }

    #[test]
    fn a_smaller_max_promotes_sooner() {
        // hll-sparse-max-bytes 30: the sketch stays sparse while a split fits
        // in 30 bytes, then goes dense.
        let mut s = hll::new_sketch();
        let mut longest = 0;
        let mut i = 0;
        loop {
            let outcome = set(&mut s, i * 100, 1, 30).unwrap();
            i += 1;
            if outcome == SetOutcome::Promoted {
                break;
            }
            longest = longest.max(s.len());
        }
        assert!((28..=30).contains(&longest), "{longest}");
        assert_eq!(s.len(), DENSE_SIZE);
        // Max 0: any split promotes.
        let mut z = hll::new_sketch();
        assert_eq!(set(&mut z, 5, 1, 0), Ok(SetOutcome::Promoted));
    }

    #[test]
    fn runs_that_do_not_add_up_are_corrupt() {
        let mut bytes = hll::new_sketch().as_bytes().to_vec();
        bytes.push(0x00); // one ZERO too many
        let mut histo = [0u32; 64];
        assert_eq!(histogram(&bytes, &mut histo), Err(Corrupt));
        let mut s = Sds::new(&bytes);
        assert_eq!(to_dense(&mut s), Err(Corrupt));
    }
}
