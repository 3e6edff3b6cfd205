//! The bytes of a bulk-string reply, the short ones kept inside the reply.
//!
//! Redis writes a GET's value straight from the key's object into the client's
//! output buffer (`addReplyBulk`): nothing is allocated for the reply. A
//! [`Reply`](super::Reply) is a value handed back from the command, so its bulk
//! bytes must be owned; a `Vec<u8>` made of a three-byte value cost GET a
//! `malloc` and a `free` (measured under callgrind: about a quarter of the
//! instructions of the whole command path of a GET that hits). A [`BulkBytes`]
//! holds up to [`INLINE_BULK`] bytes inside the reply (it is the reply's
//! largest shape: a [`Reply`](super::Reply) is 64 bytes), and keeps a vector
//! a command already built as it is, without copying it.

/// Bytes that are kept inside the reply (longer ones are a vector).
pub const INLINE_BULK: usize = 62;

/// Equality is that of the bytes, wherever they are kept
/// (the `reads_as_bytes!` impls of `inline_bytes.rs`).
#[derive(Clone)]
pub enum BulkBytes {
    Inline { len: u8, bytes: [u8; INLINE_BULK] },
    Heap(Vec<u8>),
}

impl BulkBytes {
    /// A copy of `bytes`: inside the reply when short enough.
    #[inline]
    pub fn copied(bytes: &[u8]) -> BulkBytes {
        let mut inline = [0; INLINE_BULK];
        if bytes.len() <= 16 {
            // One 16-byte store: the reply is moved by 16-byte loads on its
            // way out (closure, catch_unwind, the caller), and a load that
            // spans several narrower stores (what a byte copy of a
            // three-byte value leaves) cannot be forwarded from them and
            // waits for them to reach the cache, a stall GET measured.
            inline[..16].copy_from_slice(&first_16(bytes).to_le_bytes());
            return BulkBytes::Inline {
                len: bytes.len() as u8,
                bytes: inline,
            };
        }
        match inline.get_mut(..bytes.len()) {
            Some(room) => {
                room.copy_from_slice(bytes);
                BulkBytes::Inline {
                    len: bytes.len() as u8,
                    bytes: inline,
                }
            }
            None => BulkBytes::Heap(bytes.to_vec()),
        }
    }

    /// The decimal text of `v`, formatted on the stack (`addReplyBulk` of an
    /// int-encoded string prints it into the reply as `ll2string` does): no
    /// allocation, where a `String` was made and dropped for every GET of a
    /// counter.
    pub fn of_i64(v: i64) -> BulkBytes {
        BulkBytes::copied(crate::num::i64_text(v, &mut [0; 21]))
    }

    #[inline]
    pub fn as_bytes(&self) -> &[u8] {
        match self {
            BulkBytes::Inline { len, bytes } => &bytes[..usize::from(*len)],
            BulkBytes::Heap(v) => v,
        }
    }

    /// The bytes as a vector of their own.
    pub fn into_vec(self) -> Vec<u8> {
        match self {
            BulkBytes::Inline { .. } => self.as_bytes().to_vec(),
            BulkBytes::Heap(v) => v,
        }
    }
}

/// The bytes of `s` (at most 16) little-endian in a `u128`, zero above
/// them, read with at most two loads: two overlapping reads hold the same
/// bytes where they overlap, so OR-ing them places each byte once (under 8
/// bytes, the dict hash's tail read).
#[inline(always)]
fn first_16(s: &[u8]) -> u128 {
    let n = s.len();
    debug_assert!(n <= 16);
    if n < 8 {
        return u128::from(crate::dict::tail_word(s));
    }
    let word8 = |at: usize| u64::from_le_bytes(s[at..at + 8].try_into().expect("8 bytes"));
    u128::from(word8(0)) | u128::from(word8(n - 8)) << (8 * (n - 8))
}

impl From<Vec<u8>> for BulkBytes {
    /// A vector a command built is kept, not copied.
    fn from(v: Vec<u8>) -> BulkBytes {
        BulkBytes::Heap(v)
    }
}

crate::inline_bytes::reads_as_bytes!(BulkBytes);

#[cfg(test)]
mod tests {
    use super::*;

    /// Short bytes cost no allocation and the reply no room beyond the
    /// inline bulk itself.
    #[test]
    fn bytes_read_back_at_every_length_and_short_ones_stay_inline() {
        // The inline bulk is the reply's largest shape and sets its size
        // (64 bytes): no room is added for it.
        assert_eq!(
            std::mem::size_of::<super::super::Reply>(),
            std::mem::size_of::<BulkBytes>()
        );
        for v in [0, 7, -7, 10, 99, 100, -100, 12345, i64::MAX, i64::MIN] {
            let bulk = BulkBytes::of_i64(v);
            assert_eq!(bulk.as_bytes(), v.to_string().as_bytes(), "{v}");
            assert!(matches!(bulk, BulkBytes::Inline { .. }));
        }
        for len in 0..=200usize {
            let bytes: Vec<u8> = (0..len).map(|i| (i * 13 + 5) as u8).collect();
            let bulk = BulkBytes::copied(&bytes);
            assert_eq!(bulk.as_bytes(), bytes.as_slice(), "length {len}");
            assert_eq!(matches!(bulk, BulkBytes::Inline { .. }), len <= INLINE_BULK);
            assert_eq!(BulkBytes::from(bytes.clone()), bulk);
            assert_eq!(bulk.clone().into_vec(), bytes);
        }
    }
}
