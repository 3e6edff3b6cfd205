//! Short bytes kept where they are owned, in 24 bytes: the key a
//! [`crate::dict::Dict`] owns (a keyspace key, a big hash's field, a big set's
//! member) and a big hash's value.
//!
//! Redis 8 keeps a key's bytes in the allocation of the object it names (the
//! `kvobj`), and a hash field with its value in one `Entry` allocation. A dict
//! entry here is a slot in the dict's slab, so a key or a value kept as a
//! `Vec<u8>` cost the slot's 24 bytes (pointer, capacity, length) plus an
//! allocation of its own (24 usable bytes for the keys `./run.sh bench`
//! stores). An [`InlineBytes`] takes the same 24 bytes in the slot and holds up
//! to [`INLINE_MAX`] bytes in them; only longer bytes have a box (of exactly
//! their length). It reads as a `&[u8]`, and nothing about the bytes changes:
//! hashing, comparing and the order of keys are those of the bytes.

/// Bytes that still sit inside the 24 bytes (a longer run is boxed).
pub const INLINE_MAX: usize = 22;

/// Equality and hashing are those of the bytes (what `Borrow<[u8]>` asks).
#[derive(Clone)]
pub enum InlineBytes {
    Inline { len: u8, bytes: [u8; INLINE_MAX] },
    Boxed(Box<[u8]>),
}

impl InlineBytes {
    pub fn as_bytes(&self) -> &[u8] {
        match self {
            InlineBytes::Inline { len, bytes } => &bytes[..usize::from(*len)],
            InlineBytes::Boxed(b) => b,
        }
    }

    /// The key's bytes as a vector of their own (what a caller that takes
    /// the key out of the dict gets).
    pub fn into_vec(self) -> Vec<u8> {
        match self {
            InlineBytes::Inline { .. } => self.as_bytes().to_vec(),
            InlineBytes::Boxed(b) => b.into_vec(),
        }
    }

    fn inline(key: &[u8]) -> Option<InlineBytes> {
        let mut bytes = [0; INLINE_MAX];
        bytes.get_mut(..key.len())?.copy_from_slice(key);
        Some(InlineBytes::Inline {
            len: key.len() as u8,
            bytes,
        })
    }
}

impl From<Vec<u8>> for InlineBytes {
    /// A short key is copied in (and its vector freed); a longer one keeps
    /// its bytes, in a box of exactly their length.
    fn from(key: Vec<u8>) -> InlineBytes {
        InlineBytes::inline(&key).unwrap_or_else(|| InlineBytes::Boxed(key.into_boxed_slice()))
    }
}

impl From<&[u8]> for InlineBytes {
    fn from(key: &[u8]) -> InlineBytes {
        InlineBytes::inline(key).unwrap_or_else(|| InlineBytes::Boxed(key.into()))
    }
}

/// For a type of bytes kept inline or on the heap that has `as_bytes()`
/// ([`InlineBytes`], `reply::BulkBytes`): it reads as a `&[u8]`, equality is
/// that of the bytes wherever they are kept, and it prints as text.
macro_rules! reads_as_bytes {
    ($t:ty) => {
        impl std::ops::Deref for $t {
            type Target = [u8];
            fn deref(&self) -> &[u8] {
                self.as_bytes()
            }
        }

        impl AsRef<[u8]> for $t {
            fn as_ref(&self) -> &[u8] {
                self.as_bytes()
            }
        }

        impl PartialEq for $t {
            fn eq(&self, other: &$t) -> bool {
                self.as_bytes() == other.as_bytes()
            }
        }

        impl Eq for $t {}

        impl std::fmt::Debug for $t {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "{:?}", String::from_utf8_lossy(self.as_bytes()))
            }
        }
    };
}
pub(crate) use reads_as_bytes;

reads_as_bytes!(InlineBytes);

impl std::borrow::Borrow<[u8]> for InlineBytes {
    fn borrow(&self) -> &[u8] {
        self.as_bytes()
    }
}

impl std::hash::Hash for InlineBytes {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.as_bytes().hash(state);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The point of the type: a key costs the 24 bytes a `Vec<u8>` took in
    /// the entry, and no allocation up to [`INLINE_MAX`] bytes.
    #[test]
    fn a_key_takes_a_vectors_room_and_reads_back_at_every_length() {
        assert_eq!(std::mem::size_of::<InlineBytes>(), 24);
        assert_eq!(std::mem::size_of::<Option<InlineBytes>>(), 24);
        for len in 0..=64usize {
            let bytes: Vec<u8> = (0..len).map(|i| (i * 7 + 1) as u8).collect();
            let key = InlineBytes::from(bytes.clone());
            assert_eq!(key.as_bytes(), bytes.as_slice(), "length {len}");
            assert_eq!(matches!(key, InlineBytes::Inline { .. }), len <= INLINE_MAX);
            assert_eq!(InlineBytes::from(bytes.as_slice()), key);
            assert_eq!(key.clone().into_vec(), bytes);
        }
    }
}
