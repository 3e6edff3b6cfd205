//! Which cells a search scans (`geohashCalculateAreasByShapeWGS84`).
//!
//! A search cannot scan the whole set, so Redis picks a grid coarse enough that the
//! search shape fits in a 3×3 block of cells around the centre: the centre's own
//! cell and its eight neighbours. Nine cells because a shape smaller than one cell
//! can still straddle the borders on every side of the cell it is centred in; each
//! cell is one contiguous score range of the zset.
//!
//! The step comes from the radius alone (`estimate_steps`): halve the Mercator
//! width until it is smaller than the radius, back off two steps, and one or two
//! more towards the poles where meridians converge. If a neighbour still does not
//! reach the edge of the search's bounding box, one step coarser is used. Then, at
//! step 2 or finer, neighbours lying wholly on the far side of the bounding box
//! are dropped ("zeroed"): when the centre cell already extends past the box's
//! southern edge, nothing south of it can be inside.
//!
//! Those choices are heuristics, and they show: the bounding box is computed on a
//! sphere with the latitude at its top (or bottom) edge, so for a box search the
//! cells kept can miss points that the final rectangle test would accept, and
//! Redis answers without them. Reproducing the heuristics exactly is what makes
//! the core return the same points, and in the same order, as Redis.

use super::distance::{deg_rad, rad_deg, EARTH_RADIUS_IN_METERS};
use super::geohash::{self, Area, HashBits, Neighbors, WGS84_LAT, WGS84_LONG};

/// Half the Mercator map's width in metres.
const MERCATOR_MAX: f64 = 20037726.37;

/// The search shape, in the caller's unit, with the factor to metres.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Shape {
    Circle { radius: f64 },
    Box { width: f64, height: f64 },
}

/// A search: centre (longitude, latitude), shape and unit factor.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Search {
    pub xy: [f64; 2],
    pub shape: Shape,
    pub conversion: f64,
}

/// The cell around the centre, its eight neighbours (some zeroed) and its area.
#[derive(Clone, Copy, Debug)]
pub struct Areas {
    pub hash: HashBits,
    pub neighbors: Neighbors,
    pub area: Area,
}

impl Areas {
    /// The nine cells in the order Redis scans them.
    pub fn scan_order(&self) -> [HashBits; 9] {
        let n = &self.neighbors;
        [
            self.hash,
            n.north,
            n.south,
            n.east,
            n.west,
            n.north_east,
            n.north_west,
            n.south_east,
            n.south_west,
        ]
    }
}

/// `geohashEstimateStepsByRadius`.
pub fn estimate_steps(range_meters: f64, lat: f64) -> u8 {
    if range_meters == 0.0 {
        return 26;
    }
    let mut range = range_meters;
    let mut step: i32 = 1;
    while range < MERCATOR_MAX {
        range *= 2.0;
        step += 1;
    }
    step -= 2;
    if !(-66.0..=66.0).contains(&lat) {
        step -= 1;
        if !(-80.0..=80.0).contains(&lat) {
            step -= 1;
        }
    }
    step.clamp(1, 26) as u8
}

/// `geohashBoundingBox`: `[min_lon, min_lat, max_lon, max_lat]`. The longitude
/// span is taken at the edge nearer the pole (the wider one in degrees).
pub fn bounding_box(search: &Search) -> [f64; 4] {
    let [longitude, latitude] = search.xy;
    let (height, width) = match search.shape {
        Shape::Circle { radius } => (search.conversion * radius, search.conversion * radius),
        Shape::Box { width, height } => (
            search.conversion * (height / 2.0),
            search.conversion * (width / 2.0),
        ),
    };
    let lat_delta = rad_deg(height / EARTH_RADIUS_IN_METERS);
    let long_delta_top =
        rad_deg(width / EARTH_RADIUS_IN_METERS / deg_rad(latitude + lat_delta).cos());
    let long_delta_bottom =
        rad_deg(width / EARTH_RADIUS_IN_METERS / deg_rad(latitude - lat_delta).cos());
    let southern = latitude < 0.0;
    let long_delta = if southern {
        long_delta_bottom
    } else {
        long_delta_top
    };
    [
        longitude - long_delta,
        latitude - lat_delta,
        longitude + long_delta,
        latitude + lat_delta,
    ]
}

/// The radius that decides the step: the circle's, or the box's half-diagonal.
fn radius_meters(search: &Search) -> f64 {
    let r = match search.shape {
        Shape::Circle { radius } => radius,
        Shape::Box { width, height } => {
            ((width / 2.0) * (width / 2.0) + (height / 2.0) * (height / 2.0)).sqrt()
        }
    };
    r * search.conversion
}

fn cell(longitude: f64, latitude: f64, steps: u8) -> (HashBits, Neighbors, Area) {
    // The centre is always inside Redis's limits, so encoding succeeds; Redis
    // would go on with a zero hash otherwise.
    let hash =
        geohash::encode(WGS84_LONG, WGS84_LAT, longitude, latitude, steps).unwrap_or(HashBits {
            bits: 0,
            step: steps,
        });
    let neighbors = geohash::neighbors(hash);
    let area = geohash::decode(WGS84_LONG, WGS84_LAT, hash).unwrap_or_default();
    (hash, neighbors, area)
}

fn decoded(hash: HashBits) -> Area {
    geohash::decode(WGS84_LONG, WGS84_LAT, hash).unwrap_or_default()
}

/// `geohashCalculateAreasByShapeWGS84`.
pub fn areas_for(search: &Search) -> Areas {
    let [min_lon, min_lat, max_lon, max_lat] = bounding_box(search);
    let [longitude, latitude] = search.xy;
    let mut steps = estimate_steps(radius_meters(search), latitude);
    let (mut hash, mut neighbors, mut area) = cell(longitude, latitude, steps);

    let decrease_step = decoded(neighbors.north).latitude.max < max_lat
        || decoded(neighbors.south).latitude.min > min_lat
        || decoded(neighbors.east).longitude.max < max_lon
        || decoded(neighbors.west).longitude.min > min_lon;
    if steps > 1 && decrease_step {
        steps -= 1;
        (hash, neighbors, area) = cell(longitude, latitude, steps);
    }

    if steps >= 2 {
        let zero = HashBits::default();
        if area.latitude.min < min_lat {
            neighbors.south = zero;
            neighbors.south_west = zero;
            neighbors.south_east = zero;
        }
        if area.latitude.max > max_lat {
            neighbors.north = zero;
            neighbors.north_east = zero;
            neighbors.north_west = zero;
        }
        if area.longitude.min < min_lon {
            neighbors.west = zero;
            neighbors.south_west = zero;
            neighbors.north_west = zero;
        }
        if area.longitude.max > max_lon {
            neighbors.east = zero;
            neighbors.south_east = zero;
            neighbors.north_east = zero;
        }
    }
    Areas {
        hash,
        neighbors,
        area,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_follow_the_radius_and_the_latitude() {
        assert_eq!(estimate_steps(0.0, 0.0), 26);
        assert_eq!(estimate_steps(1000.0, 21.0), 14);
        assert_eq!(estimate_steps(1000.0, 70.0), 13);
        assert_eq!(estimate_steps(1000.0, -81.0), 12);
        assert_eq!(estimate_steps(1e9, 0.0), 1);
    }

    #[test]
    fn nine_cells_cover_a_small_circle() {
        let search = Search {
            xy: [105.85, 21.03],
            shape: Shape::Circle { radius: 10.0 },
            conversion: 1000.0,
        };
        let areas = areas_for(&search);
        let cells = areas.scan_order();
        assert!(!cells[0].is_zero());
        assert!(cells
            .iter()
            .all(|c| c.is_zero() || c.step == areas.hash.step));
    }
}
