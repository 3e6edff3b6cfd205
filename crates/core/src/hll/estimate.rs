//! The cardinality estimate from the register histogram: Otmar Ertl's "improved"
//! estimator ("New cardinality estimation algorithms for HyperLogLog sketches",
//! arXiv:1702.01284), which Redis has used since 5.0 in place of the raw
//! HyperLogLog formula with its small- and large-range corrections.
//!
//! Only the histogram matters (how many registers hold 0, 1, ..., 51), so the dense,
//! sparse and one-byte-per-register forms all count the same. The arithmetic is
//! done in the same order and precision as Redis (doubles; the final rounding
//! half away from zero), so the numbers agree to the unit.

use super::{Q, REGISTERS};

/// `HLL_ALPHA_INF`, 1 / (2 ln 2).
const ALPHA_INF: f64 = 0.721_347_520_444_481_7;

/// Ertl's σ(x) = x + Σ x^(2^k) 2^(k-1), summed until it stops changing.
fn sigma(mut x: f64) -> f64 {
    if x == 1.0 {
        return f64::INFINITY;
    }
    let mut y = 1.0;
    let mut z = x;
    loop {
        x *= x;
        let before = z;
        z += x * y;
        y += y;
        if before == z {
            return z;
        }
    }
}

/// Ertl's τ(x) = (1 - x - Σ (1 - x^(2^-k))² 2^-k) / 3.
fn tau(mut x: f64) -> f64 {
    if x == 0.0 || x == 1.0 {
        return 0.0;
    }
    let mut y = 1.0;
    let mut z = 1.0 - x;
    loop {
        x = x.sqrt();
        let before = z;
        y *= 0.5;
        // `pow(1 - x, 2)`, which the compiler turns into a product.
        let d = 1.0 - x;
        z -= d * d * y;
        if before == z {
            return z / 3.0;
        }
    }
}

/// `hllCount`'s estimate from a histogram of register values.
pub fn estimate(histo: &[u32; 64]) -> u64 {
    let m = REGISTERS as f64;
    let mut z = m * tau((m - f64::from(histo[Q + 1])) / m);
    for j in (1..=Q).rev() {
        z += f64::from(histo[j]);
        z *= 0.5;
    }
    z += m * sigma(f64::from(histo[0]) / m);
    (ALPHA_INF * m * m / z).round() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_sketch_counts_zero() {
        let mut histo = [0u32; 64];
        histo[0] = REGISTERS as u32;
        assert_eq!(estimate(&histo), 0);
    }

    #[test]
    fn one_register_at_one_counts_one() {
        let mut histo = [0u32; 64];
        histo[0] = REGISTERS as u32 - 1;
        histo[1] = 1;
        assert_eq!(estimate(&histo), 1);
    }
}
