//! One multiply as the hash of a key that needs no keyed hash: a client id
//! (the server's own sequence number) and a command name's words (a fixed
//! set of names, see `table.rs`). SipHash cost more than the rest of either
//! lookup.

#[derive(Clone, Copy, Default)]
pub(crate) struct BuildMulHasher;

pub(crate) struct MulHasher(u64);

impl std::hash::BuildHasher for BuildMulHasher {
    type Hasher = MulHasher;
    fn build_hasher(&self) -> MulHasher {
        MulHasher(0)
    }
}

impl std::hash::Hasher for MulHasher {
    fn finish(&self) -> u64 {
        // Fibonacci hashing: the high bits (hashbrown's tags) vary too.
        self.0.wrapping_mul(0x9e37_79b9_7f4a_7c15)
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8) ^ b as u64;
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 ^= n;
    }
}
