//! Redis's intset (`intset.c`): a set of integers kept as one sorted array of
//! fixed-width little-endian integers, every element as wide as the widest
//! one needs (2, 4 or 8 bytes: the *encoding*).
//!
//! What it models, as Redis does it:
//!
//! * **Lookups are a binary search** over the array (`intsetSearch`); the
//!   set's order is the integers' order, which is the order SMEMBERS and
//!   SSCAN give for an intset-encoded set.
//! * **Inserting a wider value upgrades the whole array** (`intsetUpgradeAndAdd`):
//!   every element is rewritten at the new width, and the new value, being
//!   out of the old range, goes at one end. A set of small numbers that takes
//!   one value past 32,767 doubles its bytes at once.
//! * **Nothing ever downgrades**: removing the only wide value leaves the
//!   width where it was (Redis never shrinks an encoding either), so MEMORY
//!   USAGE and DUMP see the width the history left.
//!
//! The array is a `Vec<u8>` in exactly Redis's layout, so a DUMP payload's
//! intset blob is its header and these bytes. What it leaves out: Redis's
//! `contents` is inside the same allocation as the two header words; here the
//! header is the struct.

/// The widths an intset takes, in bytes (`INTSET_ENC_INT16/32/64`).
const WIDTHS: [usize; 3] = [2, 4, 8];

/// `_intsetValueEncoding`: the narrowest width holding `v`.
pub fn width_of(v: i64) -> usize {
    if i16::try_from(v).is_ok() {
        2
    } else if i32::try_from(v).is_ok() {
        4
    } else {
        8
    }
}

/// A sorted set of distinct integers at one width. See the module doc.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Intset {
    bytes: Vec<u8>,
    width: usize,
}

impl Default for Intset {
    fn default() -> Intset {
        Intset::new()
    }
}

impl Intset {
    /// An empty intset (`intsetNew`: 16-bit).
    pub fn new() -> Intset {
        Intset {
            bytes: Vec::new(),
            width: 2,
        }
    }

    /// An intset of `values` (sorted, distinct) at `width`, which must hold
    /// every one of them (a loaded blob's own width may be wider than they
    /// need).
    pub fn from_sorted(values: &[i64], width: usize) -> Intset {
        assert!(WIDTHS.contains(&width), "an intset is 2, 4 or 8 bytes wide");
        debug_assert!(values.windows(2).all(|w| w[0] < w[1]));
        assert!(values.iter().all(|&v| width_of(v) <= width));
        let mut bytes = Vec::with_capacity(values.len() * width);
        for &v in values {
            bytes.extend_from_slice(&v.to_le_bytes()[..width]);
        }
        Intset { bytes, width }
    }

    pub fn len(&self) -> usize {
        self.bytes.len() / self.width
    }

    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// Bytes per element: 2, 4 or 8.
    pub fn width(&self) -> usize {
        self.width
    }

    /// The element at `i` (below [`Intset::len`]).
    pub fn get(&self, i: usize) -> i64 {
        let at = i * self.width;
        let b = &self.bytes[at..at + self.width];
        match *b {
            [b0, b1] => i64::from(i16::from_le_bytes([b0, b1])),
            [b0, b1, b2, b3] => i64::from(i32::from_le_bytes([b0, b1, b2, b3])),
            _ => i64::from_le_bytes(b.try_into().expect("an element is 8 bytes here")),
        }
    }

    /// `intsetSearch`: where `v` is, or where it would go.
    pub fn search(&self, v: i64) -> Result<usize, usize> {
        if width_of(v) > self.width {
            // Out of this width's range: past one end.
            return Err(if v < 0 { 0 } else { self.len() });
        }
        let (mut lo, mut hi) = (0, self.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            match self.get(mid).cmp(&v) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Ok(mid),
            }
        }
        Err(lo)
    }

    pub fn contains(&self, v: i64) -> bool {
        self.search(v).is_ok()
    }

    /// `intsetAdd`: false if `v` is there already. A value wider than the
    /// set's width first rewrites every element at the new width.
    pub fn insert(&mut self, v: i64) -> bool {
        let need = width_of(v);
        if need > self.width {
            let values: Vec<i64> = self.iter().collect();
            *self = Intset::from_sorted(&values, need);
        }
        let Err(at) = self.search(v) else {
            return false;
        };
        let at = at * self.width;
        self.bytes
            .splice(at..at, v.to_le_bytes()[..self.width].iter().copied());
        true
    }

    /// `intsetRemove`: false if `v` was not there. The width stays.
    pub fn remove(&mut self, v: i64) -> bool {
        let Ok(i) = self.search(v) else {
            return false;
        };
        let at = i * self.width;
        self.bytes.drain(at..at + self.width);
        true
    }

    /// The elements, lowest first.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = i64> + '_ {
        (0..self.len()).map(|i| self.get(i))
    }

    pub fn first(&self) -> Option<i64> {
        (!self.is_empty()).then(|| self.get(0))
    }

    pub fn last(&self) -> Option<i64> {
        (!self.is_empty()).then(|| self.get(self.len() - 1))
    }

    /// The intset as Redis serializes it (`RDB_TYPE_SET_INTSET`'s blob): the
    /// width and the length as 32-bit little-endian words, then the elements.
    pub fn blob(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(8 + self.bytes.len());
        b.extend_from_slice(&(self.width as u32).to_le_bytes());
        b.extend_from_slice(&(self.len() as u32).to_le_bytes());
        b.extend_from_slice(&self.bytes);
        b
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    /// Against a sorted vector, through inserts that cross both widths,
    /// removals and lookups: the same elements in the same order, and the
    /// width the widest value ever inserted needed (never less).
    #[test]
    fn follows_a_sorted_vector_and_never_narrows() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        let mut set = Intset::new();
        let mut model: Vec<i64> = Vec::new();
        let mut widest = 2;
        for round in 0..4_000 {
            let v: i64 = match round % 7 {
                0 => rng.gen_range(-40_000..40_000),
                1 if round > 2_000 => rng.gen_range(i64::MIN..i64::MAX),
                _ => rng.gen_range(-300..300),
            };
            if rng.gen_bool(0.7) {
                let new = model.binary_search(&v).is_err();
                assert_eq!(set.insert(v), new, "{v}");
                if new {
                    model.insert(model.binary_search(&v).unwrap_err(), v);
                    widest = widest.max(width_of(v));
                }
            } else {
                let there = model.binary_search(&v).is_ok();
                assert_eq!(set.remove(v), there, "{v}");
                model.retain(|&x| x != v);
            }
            assert_eq!(set.width(), widest);
            assert_eq!(set.contains(v), model.binary_search(&v).is_ok());
        }
        assert_eq!(set.iter().collect::<Vec<_>>(), model);
        assert_eq!(
            (set.first(), set.last()),
            (model.first().copied(), model.last().copied())
        );
    }

    /// An element takes exactly its width: a set of 16-bit values is two
    /// bytes each, and one 32-bit value rewrites it at four.
    #[test]
    fn elements_take_their_width() {
        let mut set = Intset::from_sorted(&(0..100).collect::<Vec<_>>(), 2);
        assert_eq!(set.bytes.len(), 200);
        set.insert(70_000);
        assert_eq!((set.width(), set.bytes.len()), (4, 404));
        assert_eq!(set.get(100), 70_000);
        assert!(set.insert(-70_000));
        assert_eq!(set.first(), Some(-70_000));
        let blob = set.blob();
        assert_eq!(&blob[..8], &[4, 0, 0, 0, 102, 0, 0, 0]);
        assert_eq!(blob.len(), 8 + 102 * 4);
    }
}
