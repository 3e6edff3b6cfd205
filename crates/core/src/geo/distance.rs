//! Distances as Redis computes them: the haversine formula on a sphere.
//!
//! Redis treats the Earth as a sphere of radius 6372797.560856 m (its
//! `EARTH_RADIUS_IN_METERS`, a mean radius) rather than the WGS84 ellipsoid, so its
//! distances are off by up to about 0.5% from a geodesic (lab 05i measures it on
//! Hanoi–Ho Chi Minh City). What matters here is to be off in exactly the same way:
//! the operations below are Redis's, in Redis's order, on glibc's `sin`, `cos`,
//! `asin` and `sqrt` (the ones Rust links to on Linux as well).
//!
//! The two membership tests are the final filters of a search: a point is inside
//! a radius if its distance is not greater than the radius (so points exactly on
//! the circle are included, and a NaN distance, possible for nearly antipodal
//! points, passes too); inside a box if its north-south distance and its east-west
//! distance *along its own parallel* are each at most half the box, edges included.

/// Redis's Earth radius in metres.
pub const EARTH_RADIUS_IN_METERS: f64 = 6372797.560856;
/// `M_PI / 180.0`.
const D_R: f64 = std::f64::consts::PI / 180.0;

pub fn deg_rad(ang: f64) -> f64 {
    ang * D_R
}

pub fn rad_deg(ang: f64) -> f64 {
    ang / D_R
}

/// `geohashGetLatDistance`: along a meridian the haversine reduces to the arc.
pub fn lat_distance(lat1d: f64, lat2d: f64) -> f64 {
    EARTH_RADIUS_IN_METERS * (deg_rad(lat2d) - deg_rad(lat1d)).abs()
}

/// `geohashGetDistance`: the haversine great-circle distance in metres.
pub fn distance(lon1d: f64, lat1d: f64, lon2d: f64, lat2d: f64) -> f64 {
    let lon1r = deg_rad(lon1d);
    let lon2r = deg_rad(lon2d);
    let v = ((lon2r - lon1r) / 2.0).sin();
    if v == 0.0 {
        return lat_distance(lat1d, lat2d);
    }
    let lat1r = deg_rad(lat1d);
    let lat2r = deg_rad(lat2d);
    let u = ((lat2r - lat1r) / 2.0).sin();
    let a = u * u + lat1r.cos() * lat2r.cos() * v * v;
    2.0 * EARTH_RADIUS_IN_METERS * a.sqrt().asin()
}

/// `geohashGetDistanceIfInRadiusWGS84`: the distance if not greater than `radius`.
pub fn within_radius(x1: f64, y1: f64, x2: f64, y2: f64, radius: f64) -> Option<f64> {
    let d = distance(x1, y1, x2, y2);
    if d > radius {
        None
    } else {
        Some(d)
    }
}

/// `geohashGetDistanceIfInRectangle`: `(x1, y1)` is the box centre, `(x2, y2)` the
/// point. Returns the distance from the centre when the point is inside.
pub fn within_rectangle(
    width_m: f64,
    height_m: f64,
    x1: f64,
    y1: f64,
    x2: f64,
    y2: f64,
) -> Option<f64> {
    if lat_distance(y2, y1) > height_m / 2.0 {
        return None;
    }
    if distance(x2, y2, x1, y2) > width_m / 2.0 {
        return None;
    }
    Some(distance(x1, y1, x2, y2))
}

/// `fixedpoint_d2string(.., 4)`: a distance with exactly four decimals, rounded by
/// `llrint` (to nearest, ties to even). A value `llrint` cannot represent (NaN,
/// huge) gives x86's "integer indefinite" `LLONG_MIN`, which Redis then prints.
pub fn format_distance(d: f64) -> String {
    if d == 0.0 {
        return "0.0000".to_string();
    }
    let scaled = d * 10000.0;
    let svalue: i64 = if scaled.is_finite() && scaled.abs() < 9223372036854775808.0 {
        let r = scaled.round_ties_even();
        if r >= 9223372036854775808.0 {
            i64::MIN
        } else {
            r as i64
        }
    } else {
        i64::MIN
    };
    let (sign, value) = if svalue < 0 {
        ("-", svalue.unsigned_abs())
    } else {
        ("", svalue as u64)
    };
    format!("{sign}{}.{:04}", value / 10000, value % 10000)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_point_matches_redis_tests() {
        assert_eq!(format_distance(0.0), "0.0000");
        assert_eq!(format_distance(0.0001), "0.0001");
        assert_eq!(format_distance(6.06429515983917e-5), "0.0001");
        assert_eq!(format_distance(0.01), "0.0100");
        assert_eq!(format_distance(1143827.12346), "1143827.1235");
        assert_eq!(format_distance(f64::NAN), "-922337203685477.5808");
    }

    #[test]
    fn hanoi_to_saigon() {
        let d = distance(105.8542, 21.0285, 106.7009, 10.7769);
        assert!((d - 1_143_827.0).abs() < 1000.0, "{d}");
    }
}
