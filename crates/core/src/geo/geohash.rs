//! The 52-bit geohash Redis stores as a zset score.
//!
//! Longitude in [-180, 180] and latitude in [-85.05112878, 85.05112878] are each
//! scaled to a fraction of their range and cut into 2^26 slices (`GEO_STEP_MAX`
//! = 26). The two 26-bit slice numbers are then interleaved bit by bit, latitude
//! in the even positions and longitude in the odd ones, giving a 52-bit integer.
//! Interleaving is what makes the zset useful: every cell of a coarser grid (fewer
//! steps) is one contiguous range of scores, so "all points in this cell" is a
//! ZRANGEBYSCORE. 52 bits is the most a double holds exactly (53-bit mantissa), so
//! the score survives the trip through the sorted set unchanged.
//!
//! The latitude limit is Web Mercator's (EPSG:3857): the square map stops at
//! ±85.05112878°, so Redis refuses points closer to the poles.
//!
//! Decoding gives back the cell, not the point: Redis answers with the cell's
//! centre, which is why GEOPOS differs from what was added by up to about half a
//! cell (≈0.6 m at the equator at step 26).
//!
//! Everything here keeps Redis's exact order of floating-point operations and its
//! C integer conversions, so the bits and the printed doubles are identical.

/// 26 steps of each coordinate: 52 bits in all.
pub const STEP_MAX: u8 = 26;
pub const LAT_MIN: f64 = -85.05112878;
pub const LAT_MAX: f64 = 85.05112878;
pub const LONG_MIN: f64 = -180.0;
pub const LONG_MAX: f64 = 180.0;

/// A cell: `step` bits of each coordinate, interleaved into `bits`.
/// `bits == 0 && step == 0` is Redis's "zeroed" (excluded) neighbour.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HashBits {
    pub bits: u64,
    pub step: u8,
}

impl HashBits {
    pub fn is_zero(&self) -> bool {
        self.bits == 0 && self.step == 0
    }

    /// The cell's first score on the 52-bit scale (`geohashAlign52Bits`).
    pub fn align52(&self) -> u64 {
        self.bits << (52 - u32::from(self.step) * 2)
    }

    /// The half-open score range `[min, max)` holding every point of the cell
    /// (`scoresOfGeoHashBox`): the prefix, and the next prefix.
    pub fn score_range(&self) -> (u64, u64) {
        let next = HashBits {
            bits: self.bits.wrapping_add(1),
            step: self.step,
        };
        (self.align52(), next.align52())
    }
}

/// A coordinate interval.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Range {
    pub min: f64,
    pub max: f64,
}

impl Range {
    fn is_zero(&self) -> bool {
        self.min == 0.0 && self.max == 0.0
    }
}

/// The area a cell covers.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Area {
    pub hash: HashBits,
    pub longitude: Range,
    pub latitude: Range,
}

/// Redis's coordinate ranges (`geohashGetCoordRange`).
pub const WGS84_LONG: Range = Range {
    min: LONG_MIN,
    max: LONG_MAX,
};
pub const WGS84_LAT: Range = Range {
    min: LAT_MIN,
    max: LAT_MAX,
};
/// The standard geohash ranges GEOHASH re-encodes with.
pub const STANDARD_LAT: Range = Range {
    min: -90.0,
    max: 90.0,
};

/// Spreads the low 32 bits of `x` into the even bits and those of `y` into the odd
/// bits (the "binary magic numbers" interleave).
pub fn interleave64(xlo: u32, ylo: u32) -> u64 {
    const B: [u64; 5] = [
        0x5555555555555555,
        0x3333333333333333,
        0x0F0F0F0F0F0F0F0F,
        0x00FF00FF00FF00FF,
        0x0000FFFF0000FFFF,
    ];
    const S: [u32; 5] = [1, 2, 4, 8, 16];
    let (mut x, mut y) = (u64::from(xlo), u64::from(ylo));
    for i in (0..5).rev() {
        x = (x | (x << S[i])) & B[i];
        y = (y | (y << S[i])) & B[i];
    }
    x | (y << 1)
}

/// The inverse: even bits into the low 32 bits, odd bits into the high 32.
pub fn deinterleave64(interleaved: u64) -> u64 {
    const B: [u64; 6] = [
        0x5555555555555555,
        0x3333333333333333,
        0x0F0F0F0F0F0F0F0F,
        0x00FF00FF00FF00FF,
        0x0000FFFF0000FFFF,
        0x00000000FFFFFFFF,
    ];
    const S: [u32; 6] = [0, 1, 2, 4, 8, 16];
    let mut x = interleaved;
    let mut y = interleaved >> 1;
    for i in 0..6 {
        x = (x | (x >> S[i])) & B[i];
        y = (y | (y >> S[i])) & B[i];
    }
    x | (y << 32)
}

/// C's conversion of a non-negative double to `uint32_t` (truncation); the
/// offsets here are always within `[0, 2^step]`.
fn to_u32(v: f64) -> u32 {
    v as u32
}

/// `geohashEncode`: `None` where Redis returns 0 (a bad step, or a point outside
/// Redis's limits or outside the given ranges).
pub fn encode(
    long_range: Range,
    lat_range: Range,
    longitude: f64,
    latitude: f64,
    step: u8,
) -> Option<HashBits> {
    if step > 32 || step == 0 || lat_range.is_zero() || long_range.is_zero() {
        return None;
    }
    if !(LONG_MIN..=LONG_MAX).contains(&longitude) || !(LAT_MIN..=LAT_MAX).contains(&latitude) {
        return None;
    }
    if latitude < lat_range.min
        || latitude > lat_range.max
        || longitude < long_range.min
        || longitude > long_range.max
    {
        return None;
    }
    let mut lat_offset = (latitude - lat_range.min) / (lat_range.max - lat_range.min);
    let mut long_offset = (longitude - long_range.min) / (long_range.max - long_range.min);
    let cells = (1u64 << step) as f64;
    lat_offset *= cells;
    long_offset *= cells;
    Some(HashBits {
        bits: interleave64(to_u32(lat_offset), to_u32(long_offset)),
        step,
    })
}

/// Encodes with Redis's ranges (`geohashEncodeWGS84`).
pub fn encode_wgs84(longitude: f64, latitude: f64, step: u8) -> Option<HashBits> {
    encode(WGS84_LONG, WGS84_LAT, longitude, latitude, step)
}

/// The score GEOADD stores: the 26-step hash aligned to 52 bits.
pub fn score_of(longitude: f64, latitude: f64) -> Option<u64> {
    encode_wgs84(longitude, latitude, STEP_MAX).map(|h| h.align52())
}

/// `geohashDecode`: the area of a cell.
pub fn decode(long_range: Range, lat_range: Range, hash: HashBits) -> Option<Area> {
    if hash.is_zero() || lat_range.is_zero() || long_range.is_zero() {
        return None;
    }
    let step = hash.step;
    let sep = deinterleave64(hash.bits);
    let lat_scale = lat_range.max - lat_range.min;
    let long_scale = long_range.max - long_range.min;
    let ilato = sep as u32;
    let ilono = (sep >> 32) as u32;
    let cells = (1u64 << step) as f64;
    // `(ilato + 1)` is unsigned 32-bit arithmetic in C and wraps.
    let lat_min = lat_range.min + (f64::from(ilato) * 1.0 / cells) * lat_scale;
    let lat_max = lat_range.min + (f64::from(ilato.wrapping_add(1)) * 1.0 / cells) * lat_scale;
    let long_min = long_range.min + (f64::from(ilono) * 1.0 / cells) * long_scale;
    let long_max = long_range.min + (f64::from(ilono.wrapping_add(1)) * 1.0 / cells) * long_scale;
    Some(Area {
        hash,
        longitude: Range {
            min: long_min,
            max: long_max,
        },
        latitude: Range {
            min: lat_min,
            max: lat_max,
        },
    })
}

/// The centre of an area, clamped to Redis's limits (`geohashDecodeAreaToLongLat`).
pub fn area_centre(area: &Area) -> [f64; 2] {
    let lon = ((area.longitude.min + area.longitude.max) / 2.0).clamp(LONG_MIN, LONG_MAX);
    let lat = ((area.latitude.min + area.latitude.max) / 2.0).clamp(LAT_MIN, LAT_MAX);
    [lon, lat]
}

/// C's `(uint64_t)score` as gcc compiles it for x86-64: below 2^63 a signed
/// truncation (negative scores wrap, NaN and -inf give 2^63), from 2^63 on the
/// value minus 2^63 with the top bit flipped (inf and ≥ 2^64 give 0).
pub fn score_to_u64(score: f64) -> u64 {
    const TWO63: f64 = 9223372036854775808.0;
    fn cvttsd2si(v: f64) -> u64 {
        if (-TWO63..TWO63).contains(&v) {
            v as i64 as u64
        } else {
            1u64 << 63
        }
    }
    // NaN takes the first branch, as the unordered comparison does.
    if score >= TWO63 {
        cvttsd2si(score - TWO63) ^ (1u64 << 63)
    } else {
        cvttsd2si(score)
    }
}

/// `decodeGeohash`: a zset score back to (longitude, latitude), the cell centre.
/// With `step` 26 a hash is never "zero", so every score decodes (scores past 52
/// bits land outside the map and are clamped to its edges, as in Redis).
pub fn decode_score(score: f64) -> [f64; 2] {
    let hash = HashBits {
        bits: score_to_u64(score),
        step: STEP_MAX,
    };
    let area = decode(WGS84_LONG, WGS84_LAT, hash).expect("step 26 is never zero");
    area_centre(&area)
}

/// The 11-character geohash GEOHASH prints: Redis re-encodes the decoded centre
/// with the standard latitude range ±90 (its own grid stops at ±85.05), takes the
/// 52 bits five at a time, and pads the 11th character (bits 53-55) with `0`.
pub fn standard_string(score: f64) -> String {
    const ALPHABET: &[u8; 32] = b"0123456789bcdefghjkmnpqrstuvwxyz";
    let [lon, lat] = decode_score(score);
    // Redis ignores the return value; bits stay 0 if encoding fails.
    let bits = encode(WGS84_LONG, STANDARD_LAT, lon, lat, STEP_MAX).map_or(0, |h| h.bits);
    (0..11)
        .map(|i| {
            let idx = if i == 10 {
                0
            } else {
                (bits >> (52 - (i + 1) * 5)) & 0x1f
            };
            ALPHABET[idx as usize] as char
        })
        .collect()
}

/// Moves a cell one step east (`d > 0`) or west along longitude (odd bits),
/// wrapping around the map (`geohash_move_x`).
fn move_x(hash: &mut HashBits, d: i8) {
    if d == 0 {
        return;
    }
    let mut x = hash.bits & 0xaaaaaaaaaaaaaaaa;
    let y = hash.bits & 0x5555555555555555;
    let shift = 64 - u32::from(hash.step) * 2;
    let zz = 0x5555555555555555u64 >> shift;
    if d > 0 {
        x = x.wrapping_add(zz + 1);
    } else {
        x |= zz;
        x = x.wrapping_sub(zz + 1);
    }
    x &= 0xaaaaaaaaaaaaaaaau64 >> shift;
    hash.bits = x | y;
}

/// Moves a cell one step north (`d > 0`) or south along latitude (even bits).
fn move_y(hash: &mut HashBits, d: i8) {
    if d == 0 {
        return;
    }
    let x = hash.bits & 0xaaaaaaaaaaaaaaaa;
    let mut y = hash.bits & 0x5555555555555555;
    let shift = 64 - u32::from(hash.step) * 2;
    let zz = 0xaaaaaaaaaaaaaaaau64 >> shift;
    if d > 0 {
        y = y.wrapping_add(zz + 1);
    } else {
        y |= zz;
        y = y.wrapping_sub(zz + 1);
    }
    y &= 0x5555555555555555u64 >> shift;
    hash.bits = x | y;
}

/// The eight cells around a cell, at the same step (`geohashNeighbors`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Neighbors {
    pub north: HashBits,
    pub east: HashBits,
    pub west: HashBits,
    pub south: HashBits,
    pub north_east: HashBits,
    pub south_east: HashBits,
    pub north_west: HashBits,
    pub south_west: HashBits,
}

pub fn neighbors(hash: HashBits) -> Neighbors {
    let at = |dx: i8, dy: i8| {
        let mut h = hash;
        move_x(&mut h, dx);
        move_y(&mut h, dy);
        h
    };
    Neighbors {
        east: at(1, 0),
        west: at(-1, 0),
        south: at(0, -1),
        north: at(0, 1),
        north_west: at(-1, 1),
        north_east: at(1, 1),
        south_east: at(1, -1),
        south_west: at(-1, -1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn article_point_hoan_kiem() {
        let score = score_of(105.8542, 21.0285).unwrap();
        assert_eq!(score, 3973593206939046);
        let [lon, lat] = decode_score(score as f64);
        assert_eq!(crate::num::format_double(lon), "105.85420221090317");
        assert_eq!(crate::num::format_double(lat), "21.028499185602875");
        assert_eq!(standard_string(score as f64), "w7er8u0evs0");
    }

    #[test]
    fn interleave_round_trips() {
        for (x, y) in [
            (0u32, 0u32),
            (1, 0),
            (0, 1),
            (0x3ffffff, 0x1234567),
            (u32::MAX, 7),
        ] {
            let sep = deinterleave64(interleave64(x, y));
            assert_eq!((sep as u32, (sep >> 32) as u32), (x, y));
        }
    }

    #[test]
    fn limits_and_c_conversions() {
        assert!(score_of(105.0, 86.0).is_none());
        assert!(score_of(180.0, 85.05112878).is_some());
        assert!(score_of(180.1, 0.0).is_none());
        assert_eq!(score_to_u64(-1.5), u64::MAX);
        assert_eq!(score_to_u64(f64::INFINITY), 0);
        assert_eq!(score_to_u64(f64::NEG_INFINITY), 1 << 63);
        assert_eq!(score_to_u64(1e19), 10000000000000000000);
    }

    #[test]
    fn neighbours_wrap_around_the_map() {
        let h = HashBits { bits: 0, step: 2 };
        let n = neighbors(h);
        // West of the westmost column wraps to the eastmost one.
        let sep = deinterleave64(n.west.bits);
        assert_eq!((sep >> 32) as u32, 3);
        let sep = deinterleave64(n.north.bits);
        assert_eq!(sep as u32, 1);
    }
}
