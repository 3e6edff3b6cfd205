//! LZF, the compression RDB applies to strings longer than 20 bytes when
//! `rdbcompression` is on (`lzf_c.c`, `lzf_d.c` in Redis, liblzf 3.6 as Redis
//! configures it: `HLOG` 16, `VERY_FAST`, no `ULTRA_FAST`).
//!
//! The compressor must produce the very bytes Redis writes, so it follows
//! liblzf's greedy parse step for step: the same 3-byte hash
//! (`IDX(h) = ((h >> 8) - h*5) & 0xffff`), a hash slot holding the *last*
//! position seen, offsets below 8192, matches of at most 264 bytes (with the
//! 16-way unrolled compare that can let a match near the end run two bytes past
//! `maxlen`), a literal run of at most 32 bytes, the two positions hashed again
//! after a match, and the same "no room in the output" exits. A reference to
//! position 0 is never taken (`ref > in_data`).
//!
//! How this differs from the C code: Redis leaves the 64K-slot table on the
//! stack uninitialised (`INIT_HTAB 0`), so a slot can hold a pointer from an
//! earlier call; such a pointer is only followed when it lands inside the
//! current input before the current position with three equal bytes, which
//! for a fresh input and a fresh buffer does not happen. Here the table starts
//! empty every call. The decompressor checks every length against both buffers
//! (liblzf's `CHECK_INPUT`) and reports corruption instead of reading past them.

/// `HLOG`: 2^16 hash slots.
const HSIZE: usize = 1 << 16;
/// `MAX_LIT`: the longest literal run.
const MAX_LIT: usize = 1 << 5;
/// `MAX_OFF`: the farthest back a reference reaches.
const MAX_OFF: usize = 1 << 13;
/// `MAX_REF`: the longest reference.
const MAX_REF: usize = (1 << 8) + (1 << 3);

fn idx(h: u32) -> usize {
    ((h >> 8).wrapping_sub(h.wrapping_mul(5)) as usize) & (HSIZE - 1)
}

/// `lzf_compress(in, in_len, out, out_len)`: the compressed bytes if they fit
/// in `out_len` bytes, `None` otherwise (liblzf returns 0).
pub fn compress(input: &[u8], out_len: usize) -> Option<Vec<u8>> {
    let in_len = input.len();
    if in_len == 0 || out_len == 0 {
        return None;
    }
    // Slot values are position + 1; 0 is an empty slot (a null pointer).
    let mut htab = vec![0u32; HSIZE];
    let mut out = vec![0u8; out_len];
    let at = |i: usize| input.get(i).copied().map_or(0u32, u32::from);
    let mut op: usize = 0;
    let mut ip: usize = 0;
    let mut lit: usize = 0;
    op += 1; // start run

    let mut hval: u32 = (at(0) << 8) | at(1);
    while ip + 2 < in_len {
        hval = (hval << 8) | at(ip + 2);
        let slot = idx(hval);
        let reference = htab[slot];
        htab[slot] = (ip + 1) as u32;

        let candidate = (reference as usize).checked_sub(1).filter(|&r| {
            r < ip
                && ip - r - 1 < MAX_OFF
                && r > 0
                && input[r + 2] == input[ip + 2]
                && input[r] == input[ip]
                && input[r + 1] == input[ip + 1]
        });
        if let Some(r) = candidate {
            let off = ip - r - 1;
            let mut len = 2usize;
            let maxlen = (in_len - ip - len).min(MAX_REF);

            if op + 3 + 1 >= out_len && op - usize::from(lit == 0) + 3 + 1 >= out_len {
                return None;
            }
            out[op - lit - 1] = (lit as u8).wrapping_sub(1); // stop run
            op -= usize::from(lit == 0); // undo run if length is zero

            let mut done = false;
            if maxlen > 16 {
                for _ in 0..16 {
                    len += 1;
                    if input[r + len] != input[ip + len] {
                        done = true;
                        break;
                    }
                }
            }
            if !done {
                loop {
                    len += 1;
                    if !(len < maxlen && input[r + len] == input[ip + len]) {
                        break;
                    }
                }
            }

            len -= 2; // the length field
            ip += 1;
            if len < 7 {
                out[op] = ((off >> 8) + (len << 5)) as u8;
                op += 1;
            } else {
                out[op] = ((off >> 8) + (7 << 5)) as u8;
                out[op + 1] = (len - 7) as u8;
                op += 2;
            }
            out[op] = off as u8;
            op += 1;
            lit = 0;
            op += 1; // start run
            ip += len + 1;
            if ip + 2 >= in_len {
                break;
            }
            // VERY_FAST: hash the two positions before the new one.
            ip -= 2;
            hval = (at(ip) << 8) | at(ip + 1);
            hval = (hval << 8) | at(ip + 2);
            htab[idx(hval)] = (ip + 1) as u32;
            ip += 1;
            hval = (hval << 8) | at(ip + 2);
            htab[idx(hval)] = (ip + 1) as u32;
            ip += 1;
        } else {
            if op >= out_len {
                return None;
            }
            lit += 1;
            out[op] = input[ip];
            op += 1;
            ip += 1;
            if lit == MAX_LIT {
                out[op - lit - 1] = (lit - 1) as u8;
                lit = 0;
                op += 1;
            }
        }
    }
    if op + 3 > out_len {
        return None;
    }
    while ip < in_len {
        if op >= out_len {
            return None;
        }
        lit += 1;
        out[op] = input[ip];
        op += 1;
        ip += 1;
        if lit == MAX_LIT {
            out[op - lit - 1] = (lit - 1) as u8;
            lit = 0;
            op += 1;
        }
    }
    out[op - lit - 1] = (lit as u8).wrapping_sub(1); // end run
    op -= usize::from(lit == 0);
    out.truncate(op);
    Some(out)
}

/// `lzf_decompress` into exactly `out_len` bytes: `None` if the data is
/// corrupt, would write past `out_len`, or decompresses to fewer bytes.
pub fn decompress(input: &[u8], out_len: usize) -> Option<Vec<u8>> {
    let mut out: Vec<u8> = Vec::with_capacity(out_len);
    let mut ip = 0usize;
    while ip < input.len() {
        let ctrl = usize::from(input[ip]);
        ip += 1;
        if ctrl < (1 << 5) {
            let run = ctrl + 1;
            if out.len() + run > out_len || ip + run > input.len() {
                return None;
            }
            out.extend_from_slice(&input[ip..ip + run]);
            ip += run;
        } else {
            let mut len = ctrl >> 5;
            let mut back = (ctrl & 0x1f) << 8;
            if ip >= input.len() {
                return None;
            }
            if len == 7 {
                len += usize::from(input[ip]);
                ip += 1;
                if ip >= input.len() {
                    return None;
                }
            }
            back += usize::from(input[ip]);
            ip += 1;
            if out.len() + len + 2 > out_len {
                return None;
            }
            let start = out.len().checked_sub(back + 1)?;
            for i in 0..len + 2 {
                let b = out[start + i];
                out.push(b);
            }
        }
    }
    (out.len() == out_len).then_some(out)
}

/// The most bytes `compressed` bytes of LZF can expand to (a 3-byte reference
/// copies at most 264): a bound for a declared length before allocating it.
pub fn max_expansion(compressed: usize) -> usize {
    compressed.saturating_mul(MAX_REF / 3 + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_refuses_incompressible_data() {
        let data = b"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
        let c = compress(data, data.len() - 4).unwrap();
        assert!(c.len() < 10, "{c:?}");
        assert_eq!(decompress(&c, data.len()).unwrap(), data);
        // 32 distinct bytes cannot shrink by 4.
        let distinct: Vec<u8> = (0u8..32).collect();
        assert_eq!(compress(&distinct, 28), None);
        // A wrong declared length is corruption.
        assert_eq!(decompress(&c, data.len() + 1), None);
        assert_eq!(decompress(&c, data.len() - 1), None);
        // A reference before the start of the output is corruption.
        assert_eq!(decompress(&[0x20, 0x05], 3), None);
    }

    #[test]
    fn literals_and_back_references() {
        // "abcabcabc": 3 literals, then a reference of 6 bytes, 3 back.
        let data = [0x02, b'a', b'b', b'c', 0x80, 0x02];
        assert_eq!(decompress(&data, 9).as_deref(), Some(&b"abcabcabc"[..]));
        assert_eq!(decompress(&data, 8), None);
        assert_eq!(decompress(&[0x80, 0x00], 4), None);
    }

    #[test]
    fn known_redis_output() {
        // DUMP of SET k (a x 100) on Redis 8.6.3 holds this LZF blob: "aa" as
        // a literal run (position 0 is never referenced), 96 bytes copied from
        // one byte back, then "aa" again.
        let data = vec![b'a'; 100];
        let c = compress(&data, 96).unwrap();
        assert_eq!(c, [0x01, 0x61, 0x61, 0xe0, 0x57, 0x00, 0x01, 0x61, 0x61]);
    }
}
