//! Geo: points on the Earth kept in a sorted set, as Redis keeps them.
//!
//! Redis has no geo type. GEOADD turns a (longitude, latitude) pair into a 52-bit
//! integer and stores it as the member's zset score; every geo command decodes that
//! score again. The modules here are the pure arithmetic behind it, written to give
//! the same bits and the same doubles as Redis's `geohash.c`, `geohash_helper.c` and
//! the sort Redis applies to results:
//!
//! * [`geohash`]: the 52-bit interleave (26 bits of latitude, 26 of longitude),
//!   encode, decode to the cell centre, the eight neighbours of a cell, and the
//!   11-character base-32 string GEOHASH prints;
//! * [`distance`]: Redis's haversine on a sphere of radius 6372797.560856 m, the
//!   radius and box membership tests, and the 4-decimal distance printing;
//! * [`area`]: `geohashCalculateAreasByShapeWGS84`, which picks the cell size and
//!   the (up to) 9 cells whose score ranges a search scans;
//! * [`sort`]: the two sorts that decide the order of equal distances (glibc's
//!   merge-sort `qsort` and Redis's partial `pqsort`).
//!
//! The commands that use them live in `commands/geo.rs` and `commands/geo_search.rs`.

pub mod area;
pub mod distance;
pub mod geohash;
pub mod sort;
