//! The random sampling helpers behind ZRANDMEMBER, HRANDFIELD, SRANDMEMBER and
//! SPOP with a count, as Redis draws on a listpack (`lpRandomPairs`,
//! `lpRandomEntries`: independent uniform picks; `lpRandomPairsUnique`,
//! `lpNextRandom`: selection sampling in listpack order) and on a copied array
//! (HRANDFIELD's "discard until count remain" strategy).
//!
//! Redis uses libc's `rand()` here: a 31-bit number. The core draws the same shape
//! of number from its own seeded generator, so the draws follow Redis's
//! distributions but not its sequence.
//!
//! A negative count asks for that many draws with repeats. Redis writes them to
//! the client as it makes them, however many there are (a count of -2^63+1 runs
//! until memory runs out). The core builds each reply whole, so it refuses more
//! than [`MAX_DRAWS`] draws with Redis's `value is out of range` error instead.

use rand::RngCore;

use crate::reply::Reply;

/// The most draws with repeats one command may ask for (2^24): about a gigabyte
/// of reply in the core, 100+ MB on the wire.
pub const MAX_DRAWS: u64 = 1 << 24;

/// Refuses a count whose draws the core cannot hold (see the module docs).
pub fn check_draws(count: i64) -> Result<(), Reply> {
    if count < 0 && count.unsigned_abs() > MAX_DRAWS {
        return Err(Reply::error("ERR value is out of range"));
    }
    Ok(())
}

/// libc `RAND_MAX` on Linux.
const RAND_MAX: u32 = 0x7fff_ffff;

/// A `rand()`-like 31-bit draw.
pub fn c_rand(rng: &mut impl RngCore) -> u32 {
    rng.next_u32() >> 1
}

/// `lpRandomPairs`: `count` independent picks out of `n` entries, in draw order
/// (repeats allowed).
pub fn draws_with_repeats(n: usize, count: usize, rng: &mut impl RngCore) -> Vec<usize> {
    (0..count).map(|_| c_rand(rng) as usize % n).collect()
}

/// `lpRandomPairsUnique`: selection sampling — walk the entries once and keep each
/// with probability remaining/available, so the picks come out in listpack order.
pub fn unique_in_order(n: usize, count: usize, rng: &mut impl RngCore) -> Vec<usize> {
    let count = count.min(n);
    let mut picked = Vec::with_capacity(count);
    let mut i = 0;
    while picked.len() < count && i < n {
        let available = (n - i) as f64;
        let remaining = (count - picked.len()) as f64;
        let r = c_rand(rng) as f64 / RAND_MAX as f64;
        if r <= remaining / available {
            picked.push(i);
        }
        i += 1;
    }
    picked
}

/// HRANDFIELD's strategy when `count` is close to the size: copy everything, then
/// discard random entries (swap-remove with the last) until `count` remain.
pub fn discard_down_to<T>(mut items: Vec<T>, count: usize, rng: &mut impl RngCore) -> Vec<T> {
    while items.len() > count {
        let victim = c_rand(rng) as usize % items.len();
        items.swap_remove(victim);
    }
    items
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn unique_picks_are_distinct_ordered_and_complete() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        for count in [1, 5, 10, 20] {
            let picks = unique_in_order(10, count, &mut rng);
            assert_eq!(picks.len(), count.min(10));
            assert!(picks.windows(2).all(|w| w[0] < w[1]));
        }
        let kept = discard_down_to((0..10).collect::<Vec<_>>(), 4, &mut rng);
        assert_eq!(kept.len(), 4);
    }
}
