//! A listpack of list elements: Redis's `listpack.c` as far as a list sees it.
//!
//! Redis keeps a small list (and each node of a big one) as one listpack: a
//! 6-byte header, the entries one after the other, and an end byte. An entry is
//! its encoding byte(s), its data and a backward length of 1 to 5 bytes; a
//! string that reads as a 64-bit integer (`lpStringToInt64`: no sign but `-`, no
//! leading zero) is stored as one, in 1 to 9 bytes. What the list commands can
//! observe of that layout is its size, `lpBytes`: MEMORY USAGE counts it, and the
//! fill factor of `list-max-listpack-size` compares against it.
//!
//! How this differs from the C code: the elements are kept as separate byte
//! strings in a deque and only the byte size is computed, entry by entry, with
//! [`crate::memory`]'s listpack arithmetic. An integer entry reads back as the
//! digits it was written with (the strict parse is a bijection with the
//! canonical text), so keeping the bytes loses nothing Redis would show.

use std::collections::VecDeque;

use crate::memory::{listpack_entry_bytes, listpack_int, LISTPACK_END, LISTPACK_HEADER};

/// `lpNew(0)`'s size: the header and the end byte.
pub const EMPTY_BYTES: usize = LISTPACK_HEADER + LISTPACK_END;

/// The whole bytes of one entry holding `value` (encoding, data, backlen).
pub fn entry_size(value: &[u8]) -> usize {
    listpack_entry_bytes(value)
}

/// Whether a listpack stores `value` as an integer entry.
pub fn is_integer_entry(value: &[u8]) -> bool {
    listpack_int(value).is_some()
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Listpack {
    entries: VecDeque<Box<[u8]>>,
    /// The sum of the entries' sizes.
    entry_bytes: usize,
}

impl Listpack {
    pub fn new() -> Listpack {
        Listpack::default()
    }

    /// A listpack holding `value` alone (`lpPrepend(lpNew(0), value)`).
    pub fn single(value: &[u8]) -> Listpack {
        let mut lp = Listpack::new();
        lp.push_back(value);
        lp
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// `lpBytes`.
    pub fn bytes(&self) -> usize {
        EMPTY_BYTES + self.entry_bytes
    }

    pub fn get(&self, index: usize) -> Option<&[u8]> {
        self.entries.get(index).map(|e| &e[..])
    }

    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &[u8]> + ExactSizeIterator {
        self.entries.iter().map(|e| &e[..])
    }

    pub fn push_front(&mut self, value: &[u8]) {
        self.entry_bytes += entry_size(value);
        self.entries.push_front(value.into());
    }

    pub fn push_back(&mut self, value: &[u8]) {
        self.entry_bytes += entry_size(value);
        self.entries.push_back(value.into());
    }

    pub fn pop_front(&mut self) -> Option<Vec<u8>> {
        let v = self.entries.pop_front()?;
        self.entry_bytes -= entry_size(&v);
        Some(v.into_vec())
    }

    pub fn pop_back(&mut self) -> Option<Vec<u8>> {
        let v = self.entries.pop_back()?;
        self.entry_bytes -= entry_size(&v);
        Some(v.into_vec())
    }

    /// Inserts `value` so that it becomes entry `index` (`index <= len`).
    pub fn insert(&mut self, index: usize, value: &[u8]) {
        self.entry_bytes += entry_size(value);
        self.entries.insert(index, value.into());
    }

    /// Removes entry `index` (which must exist).
    pub fn remove(&mut self, index: usize) -> Vec<u8> {
        let v = self.entries.remove(index).expect("listpack index in range");
        self.entry_bytes -= entry_size(&v);
        v.into_vec()
    }

    /// `lpReplace`: entry `index` (which must exist) becomes `value`.
    pub fn replace(&mut self, index: usize, value: &[u8]) {
        let slot = &mut self.entries[index];
        self.entry_bytes = self.entry_bytes - entry_size(slot) + entry_size(value);
        *slot = value.into();
    }

    /// `lpDeleteRange(lp, start, n)` for `start < len`: removes up to `n`
    /// entries from `start` on.
    pub fn delete_range(&mut self, start: usize, n: usize) {
        let end = start.saturating_add(n).min(self.entries.len());
        if start >= end {
            return;
        }
        let removed: usize = self.entries.range(start..end).map(|e| entry_size(e)).sum();
        self.entries.drain(start..end);
        self.entry_bytes -= removed;
    }

    /// Removes the entries at `positions` (ascending, each in range).
    pub fn remove_positions(&mut self, positions: &[usize]) {
        if positions.is_empty() {
            return;
        }
        let mut next = positions.iter().peekable();
        let mut index = 0;
        let mut removed = 0;
        self.entries.retain(|e| {
            let drop = next.peek() == Some(&&index);
            if drop {
                next.next();
                removed += entry_size(e);
            }
            index += 1;
            !drop
        });
        self.entry_bytes -= removed;
    }

    /// Moves the entries from `at` on into a new listpack.
    pub fn split_off(&mut self, at: usize) -> Listpack {
        let tail = self.entries.split_off(at);
        let bytes: usize = tail.iter().map(|e| entry_size(e)).sum();
        self.entry_bytes -= bytes;
        Listpack {
            entries: tail,
            entry_bytes: bytes,
        }
    }

    /// `lpMerge`: `other`'s entries after this one's. The merged size is both
    /// sizes less one header and end byte.
    pub fn append(&mut self, mut other: Listpack) {
        self.entry_bytes += other.entry_bytes;
        self.entries.append(&mut other.entries);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_follow_the_entry_encodings() {
        let mut lp = Listpack::new();
        assert_eq!(lp.bytes(), 7);
        lp.push_back(b"1"); // 7-bit uint: 1 + backlen 1
        assert_eq!(lp.bytes(), 9);
        lp.push_front(b"hello"); // 6-bit string: 1 + 5 + 1
        assert_eq!(lp.bytes(), 16);
        lp.push_back(&[b'x'; 200]); // 12-bit string: 2 + 200 + backlen 2
        assert_eq!(lp.bytes(), 16 + 204);
        lp.replace(2, b"-70000"); // 24-bit int: 4 + 1
        assert_eq!(lp.bytes(), 21);
        assert_eq!(lp.pop_back().unwrap(), b"-70000");
        assert_eq!(lp.remove(0), b"hello");
        assert_eq!(lp.bytes(), 9);
        assert!(is_integer_entry(b"-70000") && !is_integer_entry(b"007"));
    }

    #[test]
    fn split_and_merge_keep_sizes_exact() {
        let mut lp = Listpack::new();
        for i in 0..10 {
            lp.push_back(format!("v{i}").as_bytes());
        }
        let whole = lp.bytes();
        let tail = lp.split_off(4);
        assert_eq!((lp.len(), tail.len()), (4, 6));
        assert_eq!(lp.bytes() + tail.bytes() - EMPTY_BYTES, whole);
        lp.append(tail);
        assert_eq!(lp.bytes(), whole);
        lp.delete_range(2, 100);
        assert_eq!(lp.len(), 2);
        lp.remove_positions(&[0]);
        assert_eq!(lp.iter().collect::<Vec<_>>(), vec![&b"v1"[..]]);
        assert_eq!(lp.bytes(), 7 + 4);
    }
}
