//! Redis's `redisLrand48` (src/rand.c), the generator behind `math.random` in
//! scripts.
//!
//! Redis replaces Lua's `math.random` (which calls libc `rand()`) with the classic
//! 48-bit linear congruential generator of `lrand48`, so every platform draws the
//! same sequence. Since Redis 7 the generator is no longer reseeded before each
//! script: one sequence runs from server start (or from `math.randomseed`).

const A: u64 = 0x5_DEEC_E66D;
const C: u64 = 0xB;
const MASK: u64 = (1 << 48) - 1;
/// The state before any seeding: X2 X1 X0 = 0x1234 0xABCD 0x330E.
const INITIAL: u64 = 0x1234_ABCD_330E;

#[derive(Debug, Clone)]
pub struct Rand48 {
    x: u64,
}

impl Default for Rand48 {
    fn default() -> Rand48 {
        Rand48 { x: INITIAL }
    }
}

impl Rand48 {
    /// The next value in `[0, 2^31)`.
    pub fn draw(&mut self) -> i32 {
        self.x = (A.wrapping_mul(self.x).wrapping_add(C)) & MASK;
        (self.x >> 17) as i32
    }

    /// `redisSrand48`: the seed's 32 bits above the fixed low word 0x330E.
    pub fn seed(&mut self, seed: i32) {
        self.x = ((seed as u32 as u64) << 16) | 0x330E;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_lrand48_from_its_default_state() {
        // Redis's first math.random(10) is 4: floor(851401618 / (2^31 - 1) * 10) + 1.
        let mut r = Rand48::default();
        assert_eq!(r.draw(), 851401618);
        assert_eq!(r.draw(), 1804928587);
        r.seed(0);
        // glibc: srand48(0); lrand48() == 366850414
        assert_eq!(r.draw(), 366850414);
    }
}
