//! The geo searches: GEOSEARCH, GEOSEARCHSTORE and the legacy GEORADIUS,
//! GEORADIUSBYMEMBER and their `_RO` forms, all one function as in Redis
//! (`georadiusGeneric`).
//!
//! A search runs in four stages, each as Redis runs it, because each shows in the
//! reply:
//!
//! 1. arguments: the source key is looked up first (WRONGTYPE wins), the legacy
//!    forms read their centre and radius at fixed positions, then options are
//!    parsed left to right and the first bad one answers;
//! 2. the cells: [`crate::geo::area::areas_for`] picks a step and up to nine cells;
//!    they are scanned centre, N, S, E, W, NE, NW, SE, SW, skipping a cell equal to
//!    the last one scanned (huge radii make neighbours coincide), each as the score
//!    range `[prefix, next prefix)` walked in zset order;
//! 3. the filter: each point is decoded to its cell centre and kept if within the
//!    radius, or within the box (edges included); COUNT ... ANY stops the scan as
//!    soon as that many are kept, so ANY returns the first found, not the nearest;
//! 4. the order: none without ASC/DESC (scan order: cell by cell, score order
//!    within a cell), else Redis's sorts (see [`crate::geo::sort`]); COUNT without
//!    ANY implies ASC.

use super::geo::{lon_lat, unit};
use super::{Args, CmdResult, Server};
use crate::geo::area::{areas_for, Search, Shape};
use crate::geo::distance::{format_distance, within_radius, within_rectangle};
use crate::geo::geohash::{self, HashBits};
use crate::geo::sort::{glibc_qsort, pqsort};
use crate::keyspace::Value;
use crate::reply::{errors, Reply};
use crate::server::notify;
use crate::zset::{ScoreRange, Zset};

/// Which command is running (Redis's RADIUS_* / GEOSEARCH* flags).
#[derive(Clone, Copy, Default)]
struct Mode {
    coords: bool,
    member: bool,
    nostore: bool,
    geosearch: bool,
    geosearchstore: bool,
}

pub fn georadius(s: &mut Server, a: &Args) -> CmdResult {
    generic(
        s,
        a,
        1,
        Mode {
            coords: true,
            ..Mode::default()
        },
    )
}

pub fn georadius_ro(s: &mut Server, a: &Args) -> CmdResult {
    generic(
        s,
        a,
        1,
        Mode {
            coords: true,
            nostore: true,
            ..Mode::default()
        },
    )
}

pub fn georadiusbymember(s: &mut Server, a: &Args) -> CmdResult {
    generic(
        s,
        a,
        1,
        Mode {
            member: true,
            ..Mode::default()
        },
    )
}

pub fn georadiusbymember_ro(s: &mut Server, a: &Args) -> CmdResult {
    generic(
        s,
        a,
        1,
        Mode {
            member: true,
            nostore: true,
            ..Mode::default()
        },
    )
}

pub fn geosearch(s: &mut Server, a: &Args) -> CmdResult {
    generic(
        s,
        a,
        1,
        Mode {
            geosearch: true,
            ..Mode::default()
        },
    )
}

pub fn geosearchstore(s: &mut Server, a: &Args) -> CmdResult {
    generic(
        s,
        a,
        2,
        Mode {
            geosearch: true,
            geosearchstore: true,
            ..Mode::default()
        },
    )
}

/// One point found: Redis's `geoPoint`, with the member as an index into the
/// names collected beside it (so the sorts move small copies).
#[derive(Clone, Copy, Debug)]
pub struct GeoPoint {
    pub longitude: f64,
    pub latitude: f64,
    pub dist: f64,
    pub score: f64,
    pub member: usize,
}

fn sort_asc(a: &GeoPoint, b: &GeoPoint) -> i32 {
    if a.dist > b.dist {
        1
    } else if a.dist == b.dist {
        0
    } else {
        -1
    }
}

fn sort_desc(a: &GeoPoint, b: &GeoPoint) -> i32 {
    -sort_asc(a, b)
}

#[derive(Clone, Copy, PartialEq)]
enum Sort {
    None,
    Asc,
    Desc,
}

/// The points a search keeps, in scan order, and their names.
#[derive(Default)]
pub struct Found {
    pub points: Vec<GeoPoint>,
    pub members: Vec<Vec<u8>>,
}

/// `geoWithinShape`: the decoded point and its distance, if inside the shape.
fn within(search: &Search, score: f64) -> Option<([f64; 2], f64)> {
    let xy = geohash::decode_score(score);
    let [cx, cy] = search.xy;
    let d = match search.shape {
        Shape::Circle { radius } => {
            within_radius(cx, cy, xy[0], xy[1], radius * search.conversion)?
        }
        Shape::Box { width, height } => within_rectangle(
            width * search.conversion,
            height * search.conversion,
            cx,
            cy,
            xy[0],
            xy[1],
        )?,
    };
    Some((xy, d))
}

/// `geoGetPointsInRange` for one cell: the zset elements with `min <= score < max`.
fn scan_cell(zset: &Zset, cell: HashBits, search: &Search, found: &mut Found, limit: usize) {
    let (min, max) = cell.score_range();
    let range = ScoreRange {
        min: min as f64,
        max: max as f64,
        minex: false,
        maxex: true,
    };
    let Some(first) = zset.first_in_score_range(&range) else {
        return;
    };
    for (score, member) in zset.iter_from_rank(first) {
        if !range.lte_max(score) {
            break;
        }
        if let Some((xy, dist)) = within(search, score) {
            found.points.push(GeoPoint {
                longitude: xy[0],
                latitude: xy[1],
                dist,
                score,
                member: found.members.len(),
            });
            found.members.push(member.to_vec());
        }
        if !found.points.is_empty() && limit != 0 && found.points.len() >= limit {
            break;
        }
    }
}

/// `membersOfAllNeighbors`: the nine cells in Redis's order; a zeroed cell is
/// skipped, and so is a cell equal to the last one scanned (never compared with
/// the centre, which is cell 0, exactly as Redis's `last_processed` test).
pub fn search_points(zset: &Zset, search: &Search, limit: usize) -> Found {
    let cells = areas_for(search).scan_order();
    let mut found = Found::default();
    let mut last_processed = 0;
    for (i, cell) in cells.iter().enumerate() {
        if cell.is_zero() {
            continue;
        }
        if last_processed != 0 && *cell == cells[last_processed] {
            continue;
        }
        if !found.points.is_empty() && limit != 0 && found.points.len() >= limit {
            break;
        }
        scan_cell(zset, *cell, search, &mut found, limit);
        last_processed = i;
    }
    found
}

/// `extractDistanceOrReply`: radius, then its sign, then the unit.
fn radius_and_unit(a: &Args, at: usize) -> Result<(f64, f64), Reply> {
    let r = crate::num::parse_double_arg(a.bytes(at))
        .ok_or_else(|| Reply::error("ERR need numeric radius"))?;
    if r < 0.0 {
        return Err(Reply::error("ERR radius cannot be negative"));
    }
    Ok((r, unit(a, at + 1)?))
}

/// `extractBoxOrReply`: width, height, their signs, then the unit.
fn box_and_unit(a: &Args, at: usize) -> Result<(f64, f64, f64), Reply> {
    let w = crate::num::parse_double_arg(a.bytes(at))
        .ok_or_else(|| Reply::error("ERR need numeric width"))?;
    let h = crate::num::parse_double_arg(a.bytes(at + 1))
        .ok_or_else(|| Reply::error("ERR need numeric height"))?;
    if h < 0.0 || w < 0.0 {
        return Err(Reply::error("ERR height or width cannot be negative"));
    }
    Ok((w, h, unit(a, at + 2)?))
}

/// The centre of a FROMMEMBER / BYMEMBER search.
fn member_xy(s: &Server, key: &[u8], member: &[u8]) -> Result<[f64; 2], Reply> {
    match s.keyspace.peek(key) {
        Some(Value::Zset(z)) => z
            .score(member)
            .map(geohash::decode_score)
            .ok_or_else(|| Reply::error("ERR could not decode requested zset member")),
        _ => Err(Reply::error("ERR could not decode requested zset member")),
    }
}

/// `georadiusGeneric`.
fn generic(s: &mut Server, a: &Args, src: usize, mode: Mode) -> CmdResult {
    let src_key = a.bytes(src);
    let exists = super::zset::read_source(s, src_key)?.is_some();
    let mut storekey: Option<&[u8]> = None;
    let mut storedist = false;
    let mut xy = [0.0, 0.0];
    let mut shape = Shape::Circle { radius: 0.0 };
    let mut conversion = 0.0;

    let base;
    if mode.coords {
        base = 6;
        xy = lon_lat(a, 2)?;
        let (radius, conv) = radius_and_unit(a, 4)?;
        (shape, conversion) = (Shape::Circle { radius }, conv);
    } else if mode.member && !exists {
        base = 5;
    } else if mode.member {
        base = 5;
        xy = member_xy(s, src_key, a.bytes(2))?;
        let (radius, conv) = radius_and_unit(a, 3)?;
        (shape, conversion) = (Shape::Circle { radius }, conv);
    } else {
        base = if mode.geosearchstore { 3 } else { 2 };
        if mode.geosearchstore {
            storekey = Some(a.bytes(1));
        }
    }

    let (mut withdist, mut withhash, mut withcoords) = (false, false, false);
    let (mut frommember, mut fromloc, mut byradius, mut bybox) = (false, false, false, false);
    let mut sort = Sort::None;
    let mut any = false;
    let mut count: i64 = 0;
    let remaining = a.len().saturating_sub(base);
    let mut i = 0;
    while i < remaining {
        let at = base + i;
        let has = |n: usize| i + n < remaining;
        if a.is(at, "withdist") {
            withdist = true;
        } else if a.is(at, "withhash") {
            withhash = true;
        } else if a.is(at, "withcoord") {
            withcoords = true;
        } else if a.is(at, "any") {
            any = true;
        } else if a.is(at, "asc") {
            sort = Sort::Asc;
        } else if a.is(at, "desc") {
            sort = Sort::Desc;
        } else if a.is(at, "count") && has(1) {
            count = a.int(at + 1)?;
            if count <= 0 {
                return Err(Reply::error("ERR COUNT must be > 0"));
            }
            i += 1;
        } else if a.is(at, "store") && has(1) && !mode.nostore && !mode.geosearch {
            storekey = Some(a.bytes(at + 1));
            storedist = false;
            i += 1;
        } else if a.is(at, "storedist") && has(1) && !mode.nostore && !mode.geosearch {
            storekey = Some(a.bytes(at + 1));
            storedist = true;
            i += 1;
        } else if a.is(at, "storedist") && mode.geosearch && mode.geosearchstore {
            storedist = true;
        } else if a.is(at, "frommember") && has(1) && mode.geosearch && !fromloc {
            if exists {
                xy = member_xy(s, src_key, a.bytes(at + 1))?;
            }
            frommember = true;
            i += 1;
        } else if a.is(at, "fromlonlat") && has(2) && mode.geosearch && !frommember {
            xy = lon_lat(a, at + 1)?;
            fromloc = true;
            i += 2;
        } else if a.is(at, "byradius") && has(2) && mode.geosearch && !bybox {
            let (radius, conv) = radius_and_unit(a, at + 1)?;
            (shape, conversion) = (Shape::Circle { radius }, conv);
            byradius = true;
            i += 2;
        } else if a.is(at, "bybox") && has(3) && mode.geosearch && !byradius {
            let (width, height, conv) = box_and_unit(a, at + 1)?;
            (shape, conversion) = (Shape::Box { width, height }, conv);
            bybox = true;
            i += 3;
        } else {
            return Err(Reply::error(errors::SYNTAX));
        }
        i += 1;
    }

    if storekey.is_some() && (withdist || withhash || withcoords) {
        return Err(Reply::error(format!(
            "ERR {} is not compatible with WITHDIST, WITHHASH and WITHCOORD options",
            if mode.geosearchstore {
                "GEOSEARCHSTORE"
            } else {
                "STORE option in GEORADIUS"
            }
        )));
    }
    let name = String::from_utf8_lossy(a.bytes(0)).replace(['\r', '\n'], " ");
    if mode.geosearch && !(frommember || fromloc) {
        return Err(Reply::error(format!(
            "ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for {name}"
        )));
    }
    if mode.geosearch && !(byradius || bybox) {
        return Err(Reply::error(format!(
            "ERR exactly one of BYRADIUS and BYBOX can be specified for {name}"
        )));
    }
    if any && count == 0 {
        return Err(Reply::error("ERR the ANY argument requires COUNT argument"));
    }

    let Some(Value::Zset(zset)) = s.keyspace.peek(src_key) else {
        return Ok(match storekey {
            Some(dst) => {
                if s.keyspace.remove_stored(dst) {
                    s.notify_here(notify::GENERIC, "del", dst);
                }
                Reply::Integer(0)
            }
            None => Reply::Array(Vec::new()),
        });
    };
    if count != 0 && sort == Sort::None && !any {
        sort = Sort::Asc;
    }
    let search = Search {
        xy,
        shape,
        conversion,
    };
    let limit = if any { count as usize } else { 0 };
    let Found {
        mut points,
        mut members,
    } = search_points(zset, &search, limit);

    if points.is_empty() && storekey.is_none() {
        return Ok(Reply::Array(Vec::new()));
    }
    let result_length = points.len();
    let returned = if count == 0 || (result_length as i64) < count {
        result_length
    } else {
        count as usize
    };
    if sort != Sort::None {
        let cmp = if sort == Sort::Asc {
            sort_asc
        } else {
            sort_desc
        };
        if returned == result_length {
            glibc_qsort(&mut points, cmp);
        } else {
            pqsort(&mut points, cmp, 0, returned - 1);
        }
    }
    points.truncate(returned);

    match storekey {
        None => {
            let options = [withdist, withhash, withcoords]
                .iter()
                .filter(|b| **b)
                .count();
            let items = points
                .iter()
                .map(|p| {
                    let member = Reply::bulk_vec(std::mem::take(&mut members[p.member]));
                    if options == 0 {
                        return member;
                    }
                    let mut item = vec![member];
                    if withdist {
                        item.push(Reply::bulk(format_distance(p.dist / conversion)));
                    }
                    if withhash {
                        item.push(Reply::Integer(p.score as i64));
                    }
                    if withcoords {
                        item.push(Reply::Array(vec![
                            Reply::double(p.longitude),
                            Reply::double(p.latitude),
                        ]));
                    }
                    Reply::Array(item)
                })
                .collect();
            Ok(Reply::Array(items))
        }
        Some(dst) => {
            let dst = dst.to_vec();
            if returned == 0 {
                if s.keyspace.remove_stored(&dst) {
                    s.notify_here(notify::GENERIC, "del", &dst);
                }
                return Ok(Reply::Integer(0));
            }
            let items = points
                .iter()
                .map(|p| {
                    let score = if storedist {
                        p.dist / conversion
                    } else {
                        p.score
                    };
                    (std::mem::take(&mut members[p.member]), score)
                })
                .collect();
            let limits = super::zset::limits(s);
            let replaced = s.overwrite_probe(&dst);
            s.keyspace.insert(
                &dst,
                Value::Zset(Box::new(Zset::from_result(items, &limits))),
            );
            s.notify_overwritten(&dst, replaced);
            let event = if mode.geosearch {
                "geosearchstore"
            } else {
                "georadiusstore"
            };
            s.notify_here(notify::ZSET, event, &dst);
            Ok(Reply::Integer(returned as i64))
        }
    }
}
