//! The bits of Redis's RDB format that FUNCTION DUMP / RESTORE use
//! (src/rdb.c, src/cluster.c `verifyDumpPayload`, src/crc64.c, src/lzf_d.c).
//!
//! A payload is, for each library, the opcode `RDB_OPCODE_FUNCTION2` (245) and
//! the library's code as an RDB string; then the RDB version (2 bytes, little
//! endian) and the CRC64 (Jones polynomial, reflected, as Redis's `crc64`) of
//! everything before it (8 bytes, little endian).
//!
//! Strings are read in every RDB string encoding (plain with a 6/14/32/64-bit
//! length, the three integer encodings, LZF-compressed). They are written as
//! Redis writes them except that long strings are not LZF-compressed, which
//! Redis's loader accepts: a core payload restores into Redis and a Redis
//! payload into the core, but the bytes of a dump differ from Redis's for
//! libraries longer than 20 bytes.

/// `RDB_VERSION` of Redis 8.6.
pub const RDB_VERSION: u16 = 13;
pub const OPCODE_FUNCTION2: u8 = 245;
pub const OPCODE_FUNCTION_PRE_GA: u8 = 246;

const fn crc64_table() -> [u64; 256] {
    // The Jones polynomial 0xad93d23594c935a9, bit-reflected.
    const POLY: u64 = 0x95ac_9329_ac4b_c9b5;
    let mut table = [0u64; 256];
    let mut i = 0;
    while i < 256 {
        let mut crc = i as u64;
        let mut bit = 0;
        while bit < 8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ POLY
            } else {
                crc >> 1
            };
            bit += 1;
        }
        table[i] = crc;
        i += 1;
    }
    table
}

static CRC64: [u64; 256] = crc64_table();

/// Redis's `crc64(0, data, len)`.
pub fn crc64(data: &[u8]) -> u64 {
    data.iter().fold(0u64, |crc, &b| {
        CRC64[((crc ^ b as u64) & 0xff) as usize] ^ (crc >> 8)
    })
}

/// `rdbSaveLen`.
fn save_len(out: &mut Vec<u8>, len: u64) {
    if len < 1 << 6 {
        out.push(len as u8);
    } else if len < 1 << 14 {
        out.push(0x40 | (len >> 8) as u8);
        out.push(len as u8);
    } else if len <= u32::MAX as u64 {
        out.push(0x80);
        out.extend_from_slice(&(len as u32).to_be_bytes());
    } else {
        out.push(0x81);
        out.extend_from_slice(&len.to_be_bytes());
    }
}

/// `rdbSaveRawString` (without LZF): short canonical integers in an integer
/// encoding, anything else with its length.
pub fn save_string(out: &mut Vec<u8>, s: &[u8]) {
    if s.len() <= 11 {
        if let Some(n) = crate::num::parse_i64(s).filter(|n| n.to_string().as_bytes() == s) {
            if let Ok(v) = i8::try_from(n) {
                out.extend_from_slice(&[0xc0, v as u8]);
                return;
            }
            if let Ok(v) = i16::try_from(n) {
                out.push(0xc1);
                out.extend_from_slice(&v.to_le_bytes());
                return;
            }
            if let Ok(v) = i32::try_from(n) {
                out.push(0xc2);
                out.extend_from_slice(&v.to_le_bytes());
                return;
            }
        }
    }
    save_len(out, s.len() as u64);
    out.extend_from_slice(s);
}

/// A reader over a payload.
pub struct Reader<'a> {
    data: &'a [u8],
    pub pos: usize,
}

impl<'a> Reader<'a> {
    pub fn new(data: &'a [u8]) -> Reader<'a> {
        Reader { data, pos: 0 }
    }

    pub fn remaining(&self) -> usize {
        self.data.len() - self.pos
    }

    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if self.remaining() < n {
            return None;
        }
        let s = &self.data[self.pos..self.pos + n];
        self.pos += n;
        Some(s)
    }

    pub fn byte(&mut self) -> Option<u8> {
        self.take(1).map(|b| b[0])
    }

    /// `rdbLoadLenByRef`: a length, or an encoding tag (`Err`).
    fn len(&mut self) -> Option<Result<u64, u8>> {
        let first = self.byte()?;
        Some(match first >> 6 {
            0 => Ok((first & 0x3f) as u64),
            1 => Ok((((first & 0x3f) as u64) << 8) | self.byte()? as u64),
            2 => match first {
                0x80 => Ok(u32::from_be_bytes(self.take(4)?.try_into().ok()?) as u64),
                0x81 => Ok(u64::from_be_bytes(self.take(8)?.try_into().ok()?)),
                _ => return None,
            },
            _ => Err(first & 0x3f),
        })
    }

    /// `rdbGenericLoadStringObject`: a string in any encoding.
    pub fn string(&mut self) -> Option<Vec<u8>> {
        match self.len()? {
            Ok(len) => self.take(usize::try_from(len).ok()?).map(|s| s.to_vec()),
            Err(0) => Some((self.byte()? as i8).to_string().into_bytes()),
            Err(1) => {
                let v = i16::from_le_bytes(self.take(2)?.try_into().ok()?);
                Some(v.to_string().into_bytes())
            }
            Err(2) => {
                let v = i32::from_le_bytes(self.take(4)?.try_into().ok()?);
                Some(v.to_string().into_bytes())
            }
            Err(3) => {
                let clen = usize::try_from(self.len()?.ok()?).ok()?;
                let len = usize::try_from(self.len()?.ok()?).ok()?;
                let compressed = self.take(clen)?;
                let out = lzf_decompress(compressed, len)?;
                (out.len() == len).then_some(out)
            }
            Err(_) => None,
        }
    }
}

/// LZF decompression: literal runs (`000LLLLL` + L+1 bytes) and back
/// references (`LLLooooo [L] oooooooo`, length L+2, offset o+1); `None` if
/// the data is corrupt or does not fit `expected` bytes.
pub fn lzf_decompress(input: &[u8], expected: usize) -> Option<Vec<u8>> {
    let mut out: Vec<u8> = Vec::with_capacity(expected.min(1 << 26));
    let mut i = 0;
    while i < input.len() {
        let ctrl = input[i] as usize;
        i += 1;
        if ctrl < 32 {
            let run = ctrl + 1;
            let lit = input.get(i..i + run)?;
            if out.len() + run > expected {
                return None;
            }
            out.extend_from_slice(lit);
            i += run;
        } else {
            let mut len = ctrl >> 5;
            if len == 7 {
                len += *input.get(i)? as usize;
                i += 1;
            }
            let back = ((ctrl & 0x1f) << 8) + *input.get(i)? as usize + 1;
            i += 1;
            let len = len + 2;
            if back > out.len() || out.len() + len > expected {
                return None;
            }
            let start = out.len() - back;
            for k in 0..len {
                let b = out[start + k];
                out.push(b);
            }
        }
    }
    Some(out)
}

/// `verifyDumpPayload`: the RDB version (which must not be newer than ours) if
/// the footer is sound and the checksum matches (a zero checksum is not
/// checked).
pub fn verify_payload(p: &[u8]) -> Option<u16> {
    if p.len() < 10 {
        return None;
    }
    let footer = &p[p.len() - 10..];
    let version = u16::from_le_bytes([footer[0], footer[1]]);
    if version > RDB_VERSION {
        return None;
    }
    let stored = u64::from_le_bytes(footer[2..10].try_into().ok()?);
    if stored != 0 && crc64(&p[..p.len() - 8]) != stored {
        return None;
    }
    Some(version)
}

/// Appends the RDB version and the checksum, closing a DUMP payload.
pub fn seal_payload(out: &mut Vec<u8>) {
    out.extend_from_slice(&RDB_VERSION.to_le_bytes());
    let crc = crc64(out);
    out.extend_from_slice(&crc.to_le_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc64_is_redis_jones() {
        assert_eq!(crc64(b"123456789"), 0xe9c6_d914_c4b8_d9ca);
        // Redis 8.6.3's FUNCTION DUMP of no libraries.
        let mut empty = Vec::new();
        seal_payload(&mut empty);
        assert_eq!(
            empty,
            [0x0d, 0x00, 0xff, 0x32, 0xd5, 0xf3, 0x08, 0xca, 0xd5, 0x1a]
        );
        assert_eq!(verify_payload(&empty), Some(13));
        let mut bad = empty.clone();
        bad[3] ^= 1;
        assert_eq!(verify_payload(&bad), None);
    }

    #[test]
    fn strings_in_every_encoding() {
        for s in [
            &b"hello"[..],
            b"-5",
            b"300",
            b"70000",
            b"007",
            &[b'x'; 70],
            &[b'y'; 20000],
        ] {
            let mut out = Vec::new();
            save_string(&mut out, s);
            let mut r = Reader::new(&out);
            assert_eq!(r.string().as_deref(), Some(s));
            assert_eq!(r.remaining(), 0);
        }
        let mut out = Vec::new();
        save_string(&mut out, b"-5");
        assert_eq!(out, [0xc0, 0xfb]);
    }

    #[test]
    fn lzf_literals_and_back_references() {
        // "abcabcabc": 3 literals, then a reference of 6 bytes, 3 back.
        let data = [0x02, b'a', b'b', b'c', 0x80, 0x02];
        assert_eq!(lzf_decompress(&data, 9).as_deref(), Some(&b"abcabcabc"[..]));
        assert_eq!(lzf_decompress(&data, 8), None);
        assert_eq!(lzf_decompress(&[0x80, 0x00], 4), None);
    }
}
