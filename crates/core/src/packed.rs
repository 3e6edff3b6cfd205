//! A listpack-shaped buffer of byte strings: the small encodings' storage (a
//! listpack hash's fields and values, a listpack set's members), in one
//! allocation, as Redis keeps them.
//!
//! Redis's listpack (`listpack.c`, and [`crate::lpcodec`] for its bytes) is one
//! contiguous allocation: a 6-byte header (total bytes, element count), then
//! each element as an encoding byte or two with the length, the data, and a
//! 1-5 byte backward length, then an end byte. This buffer keeps the same
//! idea, one allocation for all the elements, each a length header followed by
//! its bytes, with these differences:
//!
//! * **Strings stay strings.** Redis stores an element that reads as an
//!   integer as that integer (1 to 9 bytes); here every element keeps its bytes,
//!   so a lookup hands out a slice of the buffer without formatting digits (an
//!   8-digit value is 9 bytes here, 6 in Redis's listpack).
//! * **The length header** is the listpack's string encodings: `10xxxxxx` for up
//!   to 63 bytes, `1110xxxx xxxxxxxx` for up to 4,095; longer strings `F0` and
//!   an 8-byte length (a listpack's `F0` has 4).
//! * **No backward length**: nothing walks this buffer right to left.
//! * **No header or end byte**: the count is a field beside the buffer, and
//!   the buffer's length is the `Vec`'s.
//!
//! MEMORY USAGE never reads this layout: it reports Redis's `lpBytes`, which the
//! owners compute from the elements ([`crate::memory::listpack_entry_bytes`]).

use std::ops::Range;

/// Byte strings in one buffer, in order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Packed {
    buf: Vec<u8>,
    len: usize,
}

/// `10xxxxxx`: a string of up to 63 bytes.
const STR6: u8 = 0x80;
/// `1110xxxx`: a string of up to 4,095 bytes.
const STR12: u8 = 0xE0;
/// `F0`: a longer string; here an 8-byte little-endian length follows.
const STR_LONG: u8 = 0xF0;

fn push_header(buf: &mut Vec<u8>, len: usize) {
    let (header, n) = header(len);
    buf.extend_from_slice(&header[..n]);
}

/// The header of an element of `len` bytes: its bytes, and how many of them.
fn header(len: usize) -> ([u8; 9], usize) {
    let mut h = [0; 9];
    if len < 64 {
        h[0] = STR6 | len as u8;
        (h, 1)
    } else if len < 4096 {
        h[..2].copy_from_slice(&[STR12 | (len >> 8) as u8, len as u8]);
        (h, 2)
    } else {
        h[0] = STR_LONG;
        h[1..].copy_from_slice(&(len as u64).to_le_bytes());
        (h, 9)
    }
}

impl Packed {
    pub fn new() -> Packed {
        Packed::default()
    }

    /// How many elements.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The buffer's length in bytes.
    pub fn bytes(&self) -> usize {
        self.buf.len()
    }

    /// The element starting at byte `at`: its data, and where the next starts.
    fn element(&self, at: usize) -> (Range<usize>, usize) {
        let h = self.buf[at];
        let (start, len) = if h & 0xC0 == STR6 {
            (at + 1, usize::from(h & 0x3F))
        } else if h & 0xF0 == STR12 {
            (
                at + 2,
                usize::from(h & 0x0F) << 8 | usize::from(self.buf[at + 1]),
            )
        } else {
            let mut n = [0u8; 8];
            n.copy_from_slice(&self.buf[at + 1..at + 9]);
            (at + 9, u64::from_le_bytes(n) as usize)
        };
        (start..start + len, start + len)
    }

    /// Appends `s` at the end. The buffer grows to the exact size, as
    /// `lpInsert` reallocates a listpack to its new `lpBytes` (no doubling).
    pub fn push(&mut self, s: &[u8]) {
        self.buf.reserve_exact(header(s.len()).1 + s.len());
        push_header(&mut self.buf, s.len());
        self.buf.extend_from_slice(s);
        self.len += 1;
    }

    /// The elements in order.
    pub fn iter(&self) -> Iter<'_> {
        Iter { p: self, at: 0 }
    }

    /// The elements in order, each with where it starts ([`Packed::replace`],
    /// [`Packed::remove`] take that offset).
    pub fn iter_at(&self) -> IterAt<'_> {
        IterAt { p: self, at: 0 }
    }

    /// The element at index `i` (walking from the start, as `lpSeek` does).
    pub fn nth(&self, i: usize) -> Option<&[u8]> {
        self.iter().nth(i)
    }

    /// The element starting at byte `at` (an offset [`Packed::iter_at`]
    /// gave).
    pub fn at(&self, at: usize) -> &[u8] {
        &self.buf[self.element(at).0]
    }

    /// Replaces the element starting at byte `at` with `s`.
    pub fn replace(&mut self, at: usize, s: &[u8]) {
        let (_, next) = self.element(at);
        let (header, n) = header(s.len());
        // An exact-size iterator: splice moves the tail once, with no
        // vector of the new element in between.
        self.buf
            .splice(at..next, header[..n].iter().chain(s).copied());
    }

    /// Removes `count` elements from the one starting at byte `at`.
    pub fn remove(&mut self, at: usize, count: usize) {
        let mut end = at;
        for _ in 0..count {
            end = self.element(end).1;
        }
        self.buf.drain(at..end);
        self.len -= count;
        if self.len == 0 {
            self.buf = Vec::new();
        }
    }
}

/// [`Packed::iter`].
pub struct Iter<'a> {
    p: &'a Packed,
    at: usize,
}

impl<'a> Iterator for Iter<'a> {
    type Item = &'a [u8];

    fn next(&mut self) -> Option<&'a [u8]> {
        if self.at >= self.p.buf.len() {
            return None;
        }
        let (data, next) = self.p.element(self.at);
        self.at = next;
        Some(&self.p.buf[data])
    }
}

/// [`Packed::iter_at`].
pub struct IterAt<'a> {
    p: &'a Packed,
    at: usize,
}

impl<'a> Iterator for IterAt<'a> {
    type Item = (usize, &'a [u8]);

    fn next(&mut self) -> Option<(usize, &'a [u8])> {
        if self.at >= self.p.buf.len() {
            return None;
        }
        let start = self.at;
        let (data, next) = self.p.element(start);
        self.at = next;
        Some((start, &self.p.buf[data]))
    }
}

impl<'a> FromIterator<&'a [u8]> for Packed {
    fn from_iter<I: IntoIterator<Item = &'a [u8]>>(items: I) -> Packed {
        let mut p = Packed::new();
        for s in items {
            p.push(s);
        }
        p
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_header_size_round_trips() {
        let long = vec![b'x'; 5000];
        let mid = vec![b'y'; 64];
        let items: [&[u8]; 5] = [b"", b"field", &mid, &long, b"end"];
        let mut p: Packed = items.iter().copied().collect();
        assert_eq!(p.len(), 5);
        assert_eq!(p.iter().collect::<Vec<_>>(), items);
        assert_eq!(p.buf.len(), 1 + 6 + (2 + 64) + (9 + 5000) + 4);
        // Replace the 64-byte string with a short one, remove two from there.
        let at = p.iter_at().nth(2).unwrap().0;
        p.replace(at, b"z");
        assert_eq!(p.nth(2), Some(&b"z"[..]));
        assert_eq!(p.nth(3), Some(&long[..]));
        p.remove(at, 2);
        assert_eq!(p.iter().collect::<Vec<_>>(), [&b""[..], b"field", b"end"]);
        p.remove(0, 3);
        assert!(p.is_empty() && p.buf.capacity() == 0);
    }

    /// `replace` into every header size from every header size, shorter and
    /// longer, leaves the neighbours intact; `at` reads the element back.
    #[test]
    fn replace_changes_one_element_whatever_the_sizes() {
        let sizes = [0, 5, 63, 64, 4095, 4096, 5000];
        for &from in &sizes {
            for &to in &sizes {
                let old = vec![b'o'; from];
                let new = vec![b'n'; to];
                let mut p: Packed = [&b"before"[..], &old, b"after"].into_iter().collect();
                let at = p.iter_at().nth(1).unwrap().0;
                p.replace(at, &new);
                assert_eq!(p.at(at), &new[..], "{from} -> {to}");
                assert_eq!(
                    p.iter().collect::<Vec<_>>(),
                    [&b"before"[..], &new, b"after"]
                );
                assert_eq!(p.bytes(), 7 + header(to).1 + to + 6, "{from} -> {to}");
            }
        }
    }
}
