//! The lab's own geometry: the data, the fixed points, the WGS84 geodesic
//! (geographiclib-rs) for the reference column, and the plane the built-in
//! `point` type is given (an equirectangular projection around Hoan Kiem, in
//! metres: PostgreSQL's `point` knows no Earth, so the lab must choose a plane).

use geographiclib_rs::{DirectGeodesic, Geodesic, InverseGeodesic};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// (longitude, latitude), as GEOADD takes them.
pub const HOAN_KIEM: (f64, f64) = (105.8542, 21.0285);
pub const QUAN_1: (f64, f64) = (106.7009, 10.7769);
/// Vietnam's bounding box (lon, lat), as in 05i.
const LON: (f64, f64) = (102.14, 109.47);
const LAT: (f64, f64) = (8.18, 23.39);
/// Metres per degree of latitude on the sphere of mean radius 6,371,008.8 m.
const M_PER_DEG: f64 = 6_371_008.8 * std::f64::consts::PI / 180.0;

/// `n` shops uniform in the box, from a seeded generator.
pub fn shops(seed: u64, n: usize) -> Vec<(f64, f64)> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..n)
        .map(|_| (rng.gen_range(LON.0..LON.1), rng.gen_range(LAT.0..LAT.1)))
        .collect()
}

/// The point 5 km north-east of Hoan Kiem along the WGS84 geodesic.
pub fn near() -> (f64, f64) {
    let (lat, lon) = Geodesic::wgs84().direct(HOAN_KIEM.1, HOAN_KIEM.0, 45.0, 5_000.0);
    (lon, lat)
}

/// The WGS84 geodesic between two (lon, lat) points, metres.
pub fn geodesic(a: (f64, f64), b: (f64, f64)) -> f64 {
    Geodesic::wgs84().inverse(a.1, a.0, b.1, b.0)
}

/// (lon, lat) on the plane the `point` rows use: metres east and north of Hoan
/// Kiem, longitude scaled by cos(21.0285°). Exact along Hoan Kiem's meridian and
/// parallel near the centre; distorted further out (east–west by the cosine of
/// the other latitude).
pub fn plane(p: (f64, f64)) -> (f64, f64) {
    let k = HOAN_KIEM.1.to_radians().cos();
    (
        (p.0 - HOAN_KIEM.0) * k * M_PER_DEG,
        (p.1 - HOAN_KIEM.1) * M_PER_DEG,
    )
}
