//! Redis's listpack bytes (`listpack.c`): the one encoder and decoder that every
//! type's serialization uses (list nodes, small sets, sorted sets and hashes,
//! the listpackex TTL triples).
//!
//! Layout: a 6-byte header (total bytes, u32 little-endian; element count, u16,
//! 65535 meaning "count them"), the entries, and the end byte 0xFF. An entry is
//! its encoding with its data, then a backward length (the size of encoding and
//! data, 1 to 5 bytes, read right to left, so every byte but the first carries
//! 0x80). Encodings: 7-bit unsigned `0xxxxxxx`, 13-bit signed `110xxxxx`+1,
//! 16/24/32/64-bit signed `F1`..`F4` + little-endian bytes; strings of up to 63
//! bytes `10xxxxxx`, up to 4095 `1110xxxx`+1, longer `F0` + u32 length. A string
//! that `lpStringToInt64` reads as an integer is stored as the integer.
//!
//! The structures keep their elements as byte strings (see
//! [`crate::list::listpack`]); [`crate::memory`] computes the same sizes
//! arithmetically for MEMORY USAGE. This module builds the actual bytes, for
//! DUMP and RDB, and reads them back with every length checked against the
//! buffer (what `lpValidateIntegrity` does in its deep mode, which Redis only
//! runs with `sanitize-dump-payload yes`; the core always does, since it must
//! decode every entry to rebuild its own structures).

use crate::memory::listpack_int;

/// `LP_HDR_SIZE`.
pub const HEADER: usize = 6;
/// `LP_EOF`.
pub const EOF: u8 = 0xFF;
/// `LP_HDR_NUMELE_UNKNOWN`.
const COUNT_UNKNOWN: u16 = u16::MAX;

/// One element as a listpack holds it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LpValue {
    Int(i64),
    Str(Vec<u8>),
}

impl LpValue {
    /// The element as a string (an integer as its digits), as `lpGet` returns it.
    pub fn into_bytes(self) -> Vec<u8> {
        match self {
            LpValue::Int(v) => v.to_string().into_bytes(),
            LpValue::Str(s) => s,
        }
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        self.clone().into_bytes()
    }

    /// The element as an integer, if it is one or reads as one (`lpGetValue`
    /// then `string2ll`, as TTLs and intset-like checks read it).
    pub fn as_int(&self) -> Option<i64> {
        match self {
            LpValue::Int(v) => Some(*v),
            LpValue::Str(s) => crate::num::parse_i64(s),
        }
    }
}

/// `lpEncodeBacklen`.
fn push_backlen(out: &mut Vec<u8>, l: usize) {
    let l = l as u64;
    if l <= 127 {
        out.push(l as u8);
    } else if l < 16383 {
        out.extend([(l >> 7) as u8, ((l & 127) | 128) as u8]);
    } else if l < 2_097_151 {
        out.extend([
            (l >> 14) as u8,
            (((l >> 7) & 127) | 128) as u8,
            ((l & 127) | 128) as u8,
        ]);
    } else if l < 268_435_455 {
        out.extend([
            (l >> 21) as u8,
            (((l >> 14) & 127) | 128) as u8,
            (((l >> 7) & 127) | 128) as u8,
            ((l & 127) | 128) as u8,
        ]);
    } else {
        out.extend([
            (l >> 28) as u8,
            (((l >> 21) & 127) | 128) as u8,
            (((l >> 14) & 127) | 128) as u8,
            (((l >> 7) & 127) | 128) as u8,
            ((l & 127) | 128) as u8,
        ]);
    }
}

/// Builds a listpack entry by entry (`lpNew` + `lpAppend`/`lpAppendInteger`).
#[derive(Clone, Debug)]
pub struct Writer {
    buf: Vec<u8>,
    count: usize,
}

impl Default for Writer {
    fn default() -> Writer {
        Writer::new()
    }
}

impl Writer {
    pub fn new() -> Writer {
        Writer {
            buf: vec![0; HEADER],
            count: 0,
        }
    }

    /// `lpAppendInteger`.
    pub fn push_int(&mut self, v: i64) {
        let start = self.buf.len();
        let b = &mut self.buf;
        if (0..=127).contains(&v) {
            b.push(v as u8);
        } else if (-4096..=4095).contains(&v) {
            let uv = if v < 0 { (1i64 << 13) + v } else { v } as u64;
            b.extend([((uv >> 8) as u8) | 0xC0, uv as u8]);
        } else if (-32768..=32767).contains(&v) {
            b.push(0xF1);
            b.extend_from_slice(&(v as i16).to_le_bytes());
        } else if (-8_388_608..=8_388_607).contains(&v) {
            b.push(0xF2);
            b.extend_from_slice(&(v as i32).to_le_bytes()[..3]);
        } else if i32::try_from(v).is_ok() {
            b.push(0xF3);
            b.extend_from_slice(&(v as i32).to_le_bytes());
        } else {
            b.push(0xF4);
            b.extend_from_slice(&v.to_le_bytes());
        }
        let l = self.buf.len() - start;
        push_backlen(&mut self.buf, l);
        self.count += 1;
    }

    /// `lpAppend` of a string: an integer entry if it reads as one.
    pub fn push(&mut self, s: &[u8]) {
        match listpack_int(s) {
            Some(v) => self.push_int(v),
            None => self.push_str(s),
        }
    }

    /// A string entry, whatever it holds.
    fn push_str(&mut self, s: &[u8]) {
        let start = self.buf.len();
        let len = s.len();
        if len < 64 {
            self.buf.push(0x80 | len as u8);
        } else if len < 4096 {
            self.buf.extend([0xE0 | (len >> 8) as u8, len as u8]);
        } else {
            self.buf.push(0xF0);
            self.buf.extend_from_slice(&(len as u32).to_le_bytes());
        }
        self.buf.extend_from_slice(s);
        let l = self.buf.len() - start;
        push_backlen(&mut self.buf, l);
        self.count += 1;
    }

    pub fn push_value(&mut self, v: &LpValue) {
        match v {
            LpValue::Int(i) => self.push_int(*i),
            LpValue::Str(s) => self.push(s),
        }
    }

    /// The finished listpack.
    pub fn finish(mut self) -> Vec<u8> {
        self.buf.push(EOF);
        let total = self.buf.len() as u32;
        self.buf[0..4].copy_from_slice(&total.to_le_bytes());
        let count = u16::try_from(self.count)
            .ok()
            .filter(|&c| c != COUNT_UNKNOWN)
            .unwrap_or(COUNT_UNKNOWN);
        self.buf[4..6].copy_from_slice(&count.to_le_bytes());
        self.buf
    }
}

/// A listpack of these strings.
pub fn encode<'a>(items: impl IntoIterator<Item = &'a [u8]>) -> Vec<u8> {
    let mut w = Writer::new();
    for s in items {
        w.push(s);
    }
    w.finish()
}

/// Why a listpack did not decode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Corrupt;

fn take(buf: &[u8], at: usize, n: usize) -> Result<&[u8], Corrupt> {
    buf.get(at..at.checked_add(n).ok_or(Corrupt)?)
        .ok_or(Corrupt)
}

/// Reads one entry at `at` (which must precede the end byte): the value and
/// the entry's whole size with its backlen.
fn read_entry(buf: &[u8], at: usize) -> Result<(LpValue, usize), Corrupt> {
    let b = *buf.get(at).ok_or(Corrupt)?;
    let (value, len) = if b & 0x80 == 0 {
        (LpValue::Int(i64::from(b & 0x7f)), 1)
    } else if b & 0xC0 == 0x80 {
        let n = usize::from(b & 0x3f);
        (LpValue::Str(take(buf, at + 1, n)?.to_vec()), 1 + n)
    } else if b & 0xE0 == 0xC0 {
        let lo = *take(buf, at + 1, 1)?.first().ok_or(Corrupt)?;
        let uv = (u64::from(b & 0x1f) << 8) | u64::from(lo);
        let v = if uv >= 1 << 12 {
            uv as i64 - (1 << 13)
        } else {
            uv as i64
        };
        (LpValue::Int(v), 2)
    } else if b & 0xF0 == 0xE0 {
        let lo = *take(buf, at + 1, 1)?.first().ok_or(Corrupt)?;
        let n = (usize::from(b & 0x0f) << 8) | usize::from(lo);
        (LpValue::Str(take(buf, at + 2, n)?.to_vec()), 2 + n)
    } else {
        match b {
            0xF0 => {
                let l = take(buf, at + 1, 4)?;
                let n = u32::from_le_bytes([l[0], l[1], l[2], l[3]]) as usize;
                (LpValue::Str(take(buf, at + 5, n)?.to_vec()), 5 + n)
            }
            0xF1 => {
                let d = take(buf, at + 1, 2)?;
                (LpValue::Int(i64::from(i16::from_le_bytes([d[0], d[1]]))), 3)
            }
            0xF2 => {
                let d = take(buf, at + 1, 3)?;
                let v = i32::from_le_bytes([0, d[0], d[1], d[2]]) >> 8;
                (LpValue::Int(i64::from(v)), 4)
            }
            0xF3 => {
                let d = take(buf, at + 1, 4)?;
                (
                    LpValue::Int(i64::from(i32::from_le_bytes([d[0], d[1], d[2], d[3]]))),
                    5,
                )
            }
            0xF4 => {
                let d = take(buf, at + 1, 8)?;
                let mut a = [0u8; 8];
                a.copy_from_slice(d);
                (LpValue::Int(i64::from_le_bytes(a)), 9)
            }
            _ => return Err(Corrupt),
        }
    };
    // The backlen must say `len`, in exactly the bytes `lpEncodeBacklen` uses.
    let mut expected = Vec::with_capacity(5);
    push_backlen(&mut expected, len);
    if take(buf, at + len, expected.len())? != expected.as_slice() {
        return Err(Corrupt);
    }
    Ok((value, len + expected.len()))
}

/// Decodes a whole listpack: the header's size must be the buffer's, the count
/// (unless 65535) the number of entries, and it must end with the end byte.
pub fn decode(buf: &[u8]) -> Result<Vec<LpValue>, Corrupt> {
    if buf.len() < HEADER + 1 {
        return Err(Corrupt);
    }
    let total = u32::from_le_bytes([buf[0], buf[1], buf[2], buf[3]]) as usize;
    let count = u16::from_le_bytes([buf[4], buf[5]]);
    if total != buf.len() || buf[buf.len() - 1] != EOF {
        return Err(Corrupt);
    }
    let end = buf.len() - 1;
    let mut at = HEADER;
    // An entry takes at least 2 bytes: no more entries than that allows.
    let mut out = Vec::with_capacity(usize::from(count).min((end - HEADER) / 2));
    while at < end {
        let (v, size) = read_entry(&buf[..end], at)?;
        out.push(v);
        at += size;
    }
    if at != end || (count != COUNT_UNKNOWN && usize::from(count) != out.len()) {
        return Err(Corrupt);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::listpack_entry_bytes;

    #[test]
    fn every_encoding_round_trips_with_the_modelled_sizes() {
        let long = "x".repeat(5000);
        let mid = "y".repeat(100);
        let items: Vec<Vec<u8>> = [
            "0",
            "127",
            "128",
            "-1",
            "4095",
            "-4096",
            "4096",
            "-4097",
            "32767",
            "-32768",
            "32768",
            "8388607",
            "-8388608",
            "8388608",
            "2147483647",
            "-2147483648",
            "2147483648",
            "9223372036854775807",
            "-9223372036854775808",
            "",
            "abc",
            "007",
            "-0",
            "+1",
            &mid,
            &long,
        ]
        .iter()
        .map(|s| s.as_bytes().to_vec())
        .collect();
        let lp = encode(items.iter().map(|v| v.as_slice()));
        let modelled: usize = items.iter().map(|v| listpack_entry_bytes(v)).sum();
        assert_eq!(lp.len(), HEADER + modelled + 1);
        let back: Vec<Vec<u8>> = decode(&lp)
            .unwrap()
            .into_iter()
            .map(LpValue::into_bytes)
            .collect();
        assert_eq!(back, items);
    }

    #[test]
    fn known_bytes() {
        // RPUSH l a 1 300 on Redis: 15 bytes, 3 entries.
        let lp = encode([&b"a"[..], b"1", b"300"]);
        assert_eq!(&lp[..6], &[15, 0, 0, 0, 3, 0]);
        assert_eq!(&lp[6..], &[0x81, b'a', 2, 1, 1, 0xC1, 0x2C, 2, 0xFF]);
    }

    #[test]
    fn corruption_is_refused() {
        let lp = encode([&b"hello"[..], b"12345"]);
        for cut in 0..lp.len() {
            assert!(decode(&lp[..cut]).is_err());
        }
        for i in 0..lp.len() {
            for bit in 0..8 {
                let mut bad = lp.clone();
                bad[i] ^= 1 << bit;
                if let Ok(v) = decode(&bad) {
                    // A flipped bit inside a string's data is still a listpack.
                    assert_eq!(v.len(), 2);
                }
            }
        }
        // A huge declared string length.
        let mut huge = vec![0u8; 6];
        huge.extend([0xF0, 0xff, 0xff, 0xff, 0x7f, 0xFF]);
        let n = huge.len() as u32;
        huge[..4].copy_from_slice(&n.to_le_bytes());
        assert!(decode(&huge).is_err());
    }
}
