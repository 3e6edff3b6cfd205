//! The hash type, as Redis keeps it: a listpack of field/value pairs while small
//! (at most 128 fields, none of the fields or values over 64 bytes), a [`Dict`]
//! beyond.
//!
//! The encoding matters for more than memory: a single HRANDFIELD draw picks a
//! uniformly random listpack entry, but on a dict it uses Redis's "fair" random key,
//! which favours fields that follow empty buckets. Lab 05h measures that bias.

use rand::RngCore;

use crate::dict::Dict;

/// Redis's `hash-max-listpack-entries` default.
pub const MAX_LISTPACK_ENTRIES: usize = 128;
/// Redis's `hash-max-listpack-value` default.
pub const MAX_LISTPACK_VALUE: usize = 64;

#[derive(Debug)]
enum Repr {
    /// Pairs in insertion order, as a listpack appends them.
    Listpack(Vec<(Vec<u8>, Vec<u8>)>),
    Table(Dict<Vec<u8>>),
}

#[derive(Debug)]
pub struct Hash {
    repr: Repr,
}

impl Default for Hash {
    fn default() -> Hash {
        Hash::new()
    }
}

impl Hash {
    pub fn new() -> Hash {
        Hash {
            repr: Repr::Listpack(Vec::new()),
        }
    }

    /// The name OBJECT ENCODING prints.
    pub fn encoding_name(&self) -> &'static str {
        match self.repr {
            Repr::Listpack(_) => "listpack",
            Repr::Table(_) => "hashtable",
        }
    }

    pub fn len(&self) -> usize {
        match &self.repr {
            Repr::Listpack(pairs) => pairs.len(),
            Repr::Table(dict) => dict.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// `hashTypeTryConversion`, before an HSET writes `args` (fields and values):
    /// more new pairs than a listpack may hold, or any string over 64 bytes, turns
    /// the listpack into a dict first.
    pub fn prepare_for(&mut self, args: &[&[u8]]) {
        if !matches!(self.repr, Repr::Listpack(_)) {
            return;
        }
        let new_fields = args.len() / 2;
        if new_fields > MAX_LISTPACK_ENTRIES {
            self.convert();
            if let Repr::Table(dict) = &mut self.repr {
                dict.expand(new_fields);
            }
        } else if args.iter().any(|a| a.len() > MAX_LISTPACK_VALUE) {
            self.convert();
        }
    }

    /// `hashTypeConvert`: a dict presized to the current length, filled in listpack
    /// order.
    fn convert(&mut self) {
        if let Repr::Listpack(pairs) = &mut self.repr {
            let mut dict = Dict::new();
            dict.expand(pairs.len());
            for (field, value) in pairs.drain(..) {
                dict.add(field, value);
            }
            self.repr = Repr::Table(dict);
        }
    }

    pub fn get(&mut self, field: &[u8]) -> Option<&[u8]> {
        match &mut self.repr {
            Repr::Listpack(pairs) => pairs
                .iter()
                .find(|(f, _)| f == field)
                .map(|(_, v)| v.as_slice()),
            Repr::Table(dict) => dict.get(field).map(Vec::as_slice),
        }
    }

    /// Sets a field; returns true when the field is new. A listpack that grows past
    /// 128 fields becomes a dict.
    pub fn set(&mut self, field: &[u8], value: &[u8]) -> bool {
        let created = match &mut self.repr {
            Repr::Listpack(pairs) => match pairs.iter_mut().find(|(f, _)| f == field) {
                Some((_, v)) => {
                    *v = value.to_vec();
                    false
                }
                None => {
                    pairs.push((field.to_vec(), value.to_vec()));
                    true
                }
            },
            Repr::Table(dict) => dict.insert(field.to_vec(), value.to_vec()).is_none(),
        };
        if matches!(self.repr, Repr::Listpack(_)) && self.len() > MAX_LISTPACK_ENTRIES {
            self.convert();
        }
        created
    }

    pub fn remove(&mut self, field: &[u8]) -> bool {
        match &mut self.repr {
            Repr::Listpack(pairs) => match pairs.iter().position(|(f, _)| f == field) {
                Some(i) => {
                    pairs.remove(i);
                    true
                }
                None => false,
            },
            Repr::Table(dict) => dict.remove(field).is_some(),
        }
    }

    /// One random field and its value, the way HRANDFIELD without a count draws:
    /// uniform over a listpack (`lpRandomPair`), Redis's fair-but-biased dict draw
    /// otherwise.
    pub fn random_pair(&mut self, rng: &mut impl RngCore) -> Option<(&[u8], &[u8])> {
        match &mut self.repr {
            Repr::Listpack(pairs) if pairs.is_empty() => None,
            Repr::Listpack(pairs) => {
                let i = (rng.next_u32() >> 1) as usize % pairs.len();
                Some((pairs[i].0.as_slice(), pairs[i].1.as_slice()))
            }
            Repr::Table(dict) => dict.fair_random_entry(rng).map(|(f, v)| (f, v.as_slice())),
        }
    }

    /// Every pair, in the order Redis walks them (listpack order, or dict order).
    pub fn pairs(&self) -> Vec<(&[u8], &[u8])> {
        match &self.repr {
            Repr::Listpack(pairs) => pairs
                .iter()
                .map(|(f, v)| (f.as_slice(), v.as_slice()))
                .collect(),
            Repr::Table(dict) => dict.iter().map(|(f, v)| (f, v.as_slice())).collect(),
        }
    }
}

// ----- HSCAN and COPY (the keyspace commands' accessors) -----

impl Hash {
    /// HSCAN over a hashtable hash: one `dictScan` step of its dict, emitting
    /// the field/value pairs of the buckets the cursor names; the next cursor
    /// (0 at the end). `None` for a listpack, which HSCAN returns whole, in
    /// [`Hash::pairs`] order, with cursor 0.
    pub fn scan_table(&self, cursor: u64, mut emit: impl FnMut(&[u8], &[u8])) -> Option<u64> {
        match &self.repr {
            Repr::Table(dict) => Some(dict.scan(cursor, |f, v| emit(f, v))),
            Repr::Listpack(_) => None,
        }
    }

    /// `hashTypeDup` (COPY): a listpack is copied as is; a dict is rebuilt,
    /// presized to the hash's length and filled in iteration order.
    pub fn dup(&self) -> Hash {
        let repr = match &self.repr {
            Repr::Listpack(pairs) => Repr::Listpack(pairs.clone()),
            Repr::Table(dict) => {
                let mut copy = Dict::new();
                copy.expand(dict.len());
                for (f, v) in dict.iter() {
                    copy.add(f.to_vec(), v.clone());
                }
                Repr::Table(copy)
            }
        };
        Hash { repr }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn stays_a_listpack_until_129_fields_or_a_long_value() {
        let mut h = Hash::new();
        for i in 0..128 {
            assert!(h.set(format!("f{i}").as_bytes(), b"v"));
        }
        assert_eq!(h.encoding_name(), "listpack");
        assert!(!h.set(b"f0", b"w"));
        h.set(b"f128", b"v");
        assert_eq!(h.encoding_name(), "hashtable");
        assert_eq!(h.get(b"f0"), Some(&b"w"[..]));

        let mut small = Hash::new();
        let long = [b'x'; 65];
        small.prepare_for(&[b"f", &long]);
        assert_eq!(small.encoding_name(), "hashtable");
    }

    #[test]
    fn random_pairs_come_from_the_hash() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let mut h = Hash::new();
        assert!(h.random_pair(&mut rng).is_none());
        h.set(b"a", b"1");
        h.set(b"b", b"2");
        for _ in 0..20 {
            let (f, _) = h.random_pair(&mut rng).unwrap();
            assert!(f == b"a" || f == b"b");
        }
    }
}
