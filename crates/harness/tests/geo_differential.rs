//! Random geo commands go to the core (in process) and to a real Redis; every reply
//! must be byte-identical on the wire.
//!
//! The sets are built to hit the corners of Redis's geo code: points near the
//! latitude limits (±85.05112878) and on them, along the antimeridian, exact
//! duplicates under several names (ties in ASC/DESC, where the sort algorithm
//! shows), dense clusters (COUNT with pqsort, COUNT ANY's early stop) and sparse
//! world-wide points (huge radii, where neighbour cells coincide). Sets run from
//! a listpack of a few dozen points to a few thousand.

use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use redislab_core::Server;
use redislab_harness::testing::{redis_for_test, RawRedis};

const UNITS: &[&str] = &["m", "km", "mi", "ft", "KM", "M", "Mi", "yd", ""];

fn s(x: &str) -> Vec<u8> {
    x.as_bytes().to_vec()
}

/// A coordinate printed the way a client might send it.
fn num(rng: &mut ChaCha8Rng, v: f64) -> String {
    match rng.gen_range(0..4) {
        0 => format!("{v}"),
        1 => format!("{v:.6}"),
        2 => format!("{v:.2}"),
        _ => format!("{v:.10}"),
    }
}

/// A point from one of the awkward regions.
fn point(rng: &mut ChaCha8Rng) -> (f64, f64) {
    match rng.gen_range(0..10) {
        0 => (
            rng.gen_range(-180.0..=180.0),
            rng.gen_range(84.9..=85.05112878),
        ),
        1 => (
            rng.gen_range(-180.0..=180.0),
            rng.gen_range(-85.05112878..=-84.9),
        ),
        2 => (
            if rng.gen_bool(0.5) {
                rng.gen_range(179.5..=180.0)
            } else {
                rng.gen_range(-180.0..=-179.5)
            },
            rng.gen_range(-60.0..60.0),
        ),
        3 => (rng.gen_range(-180.0..=180.0), rng.gen_range(-85.05..85.05)),
        4 => (
            *[180.0, -180.0, 0.0].choose(rng).unwrap(),
            *[85.05112878, -85.05112878, 0.0, 45.0].choose(rng).unwrap(),
        ),
        5 => (rng.gen_range(105.7..106.0), rng.gen_range(20.9..21.2)),
        6 => (rng.gen_range(105.84..105.86), rng.gen_range(21.02..21.04)),
        7 => (rng.gen_range(102.0..110.0), rng.gen_range(8.0..23.5)),
        _ => (rng.gen_range(-10.0..10.0), rng.gen_range(-70.0..-66.0)),
    }
}

struct World {
    members: Vec<String>,
    coords: Vec<(f64, f64)>,
}

fn preload(rng: &mut ChaCha8Rng, n: usize) -> (Vec<Vec<Vec<u8>>>, World) {
    let mut cmds = Vec::new();
    let mut world = World {
        members: Vec::new(),
        coords: Vec::new(),
    };
    let mut argv = vec![s("GEOADD"), s("g")];
    for i in 0..n {
        let (lon, lat) = if i > 0 && rng.gen_bool(0.08) {
            // A duplicate position under a new name.
            *world.coords.choose(rng).unwrap()
        } else {
            point(rng)
        };
        let name = format!("p{i}");
        argv.extend([s(&format!("{lon}")), s(&format!("{lat}")), s(&name)]);
        world.members.push(name);
        world.coords.push((lon, lat));
        if argv.len() >= 2 + 3 * 200 {
            cmds.push(std::mem::replace(&mut argv, vec![s("GEOADD"), s("g")]));
        }
    }
    if argv.len() > 2 {
        cmds.push(argv);
    }
    (cmds, world)
}

fn member(rng: &mut ChaCha8Rng, w: &World) -> Vec<u8> {
    if rng.gen_bool(0.05) {
        s("nobody")
    } else {
        s(w.members.choose(rng).unwrap())
    }
}

fn radius(rng: &mut ChaCha8Rng) -> String {
    match rng.gen_range(0..12) {
        0 => "0".into(),
        1 => format!("{}", rng.gen_range(0.0..50.0)),
        2 => format!("{}", rng.gen_range(50.0..5000.0)),
        3 | 4 => format!("{}", rng.gen_range(1.0..200.0) * 1000.0),
        5 => format!("{}", rng.gen_range(500.0..5000.0) * 1000.0),
        6 => format!("{}", rng.gen_range(5000.0..21000.0) * 1000.0),
        7 => (*["-1", "abc", "inf", "1e400", "", "0x10"]
            .choose(rng)
            .unwrap())
        .into(),
        _ => format!("{}", rng.gen_range(100.0..30000.0)),
    }
}

fn unit(rng: &mut ChaCha8Rng) -> Vec<u8> {
    if rng.gen_bool(0.9) {
        s(UNITS[..4].choose(rng).unwrap())
    } else {
        s(UNITS.choose(rng).unwrap())
    }
}

/// A centre near where the points are (or anywhere, or invalid).
fn centre(rng: &mut ChaCha8Rng, w: &World) -> (String, String) {
    match rng.gen_range(0..10) {
        0 => (
            (*["200", "abc", "-180.0000001", "180"].choose(rng).unwrap()).into(),
            (*["86", "-85.06", "85.05112878", "x", "0"]
                .choose(rng)
                .unwrap())
            .into(),
        ),
        1..=3 => {
            let (lon, lat) = point(rng);
            (num(rng, lon), num(rng, lat))
        }
        _ => {
            let (lon, lat) = *w.coords.choose(rng).unwrap();
            let jitter = if rng.gen_bool(0.5) { 0.0 } else { 0.01 };
            let lon = (lon + rng.gen_range(-1.0..=1.0) * jitter).clamp(-180.0, 180.0);
            let lat = (lat + rng.gen_range(-1.0..=1.0) * jitter).clamp(-85.05112878, 85.05112878);
            (num(rng, lon), num(rng, lat))
        }
    }
}

/// The options shared by every search form, in a random order, sometimes malformed.
fn options(rng: &mut ChaCha8Rng, store_ok: bool, legacy: bool) -> Vec<Vec<u8>> {
    let mut opts: Vec<Vec<Vec<u8>>> = Vec::new();
    for (p, o) in [(0.3, "WITHDIST"), (0.2, "WITHHASH"), (0.3, "WITHCOORD")] {
        if rng.gen_bool(p) && !store_ok {
            opts.push(vec![s(o)]);
        }
    }
    if rng.gen_bool(0.02) {
        opts.push(vec![s("WITHDIST")]);
    }
    if rng.gen_bool(0.6) {
        opts.push(vec![s(["ASC", "DESC", "asc", "desc"].choose(rng).unwrap())]);
    }
    if rng.gen_bool(0.5) {
        let n = match rng.gen_range(0..10) {
            0 => "0".to_string(),
            1 => "-3".to_string(),
            2 => "x".to_string(),
            3 => "1".to_string(),
            _ => rng.gen_range(1..60).to_string(),
        };
        let mut c = vec![s("COUNT"), s(&n)];
        if rng.gen_bool(0.4) {
            c.push(s("ANY"));
        }
        opts.push(c);
    } else if rng.gen_bool(0.03) {
        opts.push(vec![s("ANY")]);
    }
    if legacy && rng.gen_bool(0.15) {
        let which = if rng.gen_bool(0.5) {
            "STORE"
        } else {
            "STOREDIST"
        };
        opts.push(vec![s(which), s("dst")]);
    }
    if !legacy && store_ok && rng.gen_bool(0.4) {
        opts.push(vec![s("STOREDIST")]);
    }
    if rng.gen_bool(0.03) {
        opts.push(vec![s(["FOO", "COUNT", "STORE"].choose(rng).unwrap())]);
    }
    opts.shuffle(rng);
    opts.concat()
}

fn random_command(rng: &mut ChaCha8Rng, w: &World) -> Vec<Vec<u8>> {
    let key = if rng.gen_bool(0.93) {
        "g"
    } else {
        ["missing", "str", "small"].choose(rng).unwrap()
    };
    let mut argv: Vec<Vec<u8>> = Vec::new();
    match rng.gen_range(0..20) {
        0 | 1 => {
            argv.extend([s("GEOADD"), s(key)]);
            for f in ["NX", "XX", "CH"] {
                if rng.gen_bool(0.15) {
                    argv.push(s(f));
                }
            }
            for _ in 0..rng.gen_range(1..=3) {
                let (lon, lat) = if rng.gen_bool(0.2) {
                    (rng.gen_range(-200.0..200.0), rng.gen_range(-95.0..95.0))
                } else {
                    point(rng)
                };
                if rng.gen_bool(0.1) {
                    // The article's mistake: latitude first.
                    argv.extend([s(&num(rng, lat)), s(&num(rng, lon))]);
                } else {
                    argv.extend([s(&num(rng, lon)), s(&num(rng, lat))]);
                }
                argv.push(if rng.gen_bool(0.5) {
                    member(rng, w)
                } else {
                    s(&format!("n{}", rng.gen_range(0..50)))
                });
            }
            if rng.gen_bool(0.05) {
                argv.pop();
            }
        }
        2 => {
            argv.extend([s("GEOPOS"), s(key)]);
            for _ in 0..rng.gen_range(1..4) {
                argv.push(member(rng, w));
            }
        }
        3 => {
            argv.extend([s("GEOHASH"), s(key)]);
            for _ in 0..rng.gen_range(1..4) {
                argv.push(member(rng, w));
            }
        }
        4 | 5 => {
            argv.extend([s("GEODIST"), s(key), member(rng, w), member(rng, w)]);
            if rng.gen_bool(0.7) {
                argv.push(unit(rng));
            }
            if rng.gen_bool(0.03) {
                argv.push(s("extra"));
            }
        }
        6..=11 => {
            let store = rng.gen_bool(0.25);
            if store {
                argv.extend([s("GEOSEARCHSTORE"), s("dst"), s(key)]);
            } else {
                argv.extend([s("GEOSEARCH"), s(key)]);
            }
            let mut parts: Vec<Vec<Vec<u8>>> = Vec::new();
            match rng.gen_range(0..10) {
                0 => {}
                1..=4 => parts.push(vec![s("FROMMEMBER"), member(rng, w)]),
                _ => {
                    let (lon, lat) = centre(rng, w);
                    parts.push(vec![s("FROMLONLAT"), s(&lon), s(&lat)]);
                }
            }
            if rng.gen_bool(0.03) {
                parts.push(vec![s("FROMMEMBER"), member(rng, w)]);
            }
            match rng.gen_range(0..10) {
                0 => {}
                1..=5 => parts.push(vec![s("BYRADIUS"), s(&radius(rng)), unit(rng)]),
                _ => parts.push(vec![
                    s("BYBOX"),
                    s(&radius(rng)),
                    s(&radius(rng)),
                    unit(rng),
                ]),
            }
            if rng.gen_bool(0.03) {
                parts.push(vec![s("BYRADIUS"), s("10"), s("km")]);
            }
            parts.shuffle(rng);
            argv.extend(parts.concat());
            argv.extend(options(rng, store, false));
        }
        12..=14 => {
            let name = *["GEORADIUS", "GEORADIUS_RO"].choose(rng).unwrap();
            let (lon, lat) = centre(rng, w);
            argv.extend([
                s(name),
                s(key),
                s(&lon),
                s(&lat),
                s(&radius(rng)),
                unit(rng),
            ]);
            argv.extend(options(rng, false, true));
        }
        15 | 16 => {
            let name = *["GEORADIUSBYMEMBER", "GEORADIUSBYMEMBER_RO"]
                .choose(rng)
                .unwrap();
            argv.extend([s(name), s(key), member(rng, w), s(&radius(rng)), unit(rng)]);
            argv.extend(options(rng, false, true));
        }
        17 => argv.extend([s("ZRANGE"), s("dst"), s("0"), s("-1"), s("WITHSCORES")]),
        18 => {
            // A member with a score GEOADD would never write, then read as geo.
            let score = *[
                "-1",
                "1.5",
                "4503599627370496",
                "4503599627370497",
                "1e18",
                "-1e300",
                "inf",
                "-inf",
                "3973593206939046.5",
            ]
            .choose(rng)
            .unwrap();
            argv.extend([s("ZADD"), s("small"), s(score), s("odd")]);
        }
        _ => {
            let name = *["TYPE", "ZCARD", "EXISTS", "TTL"].choose(rng).unwrap();
            argv.extend([s(name), s(["dst", "g", "small"].choose(rng).unwrap())]);
        }
    }
    argv
}

#[test]
fn geo_commands_reply_like_redis() {
    let Some(server) = redis_for_test() else {
        return;
    };
    let mut redis = RawRedis::connect(server.port).expect("connect to redis");
    let mut core = Server::new();
    let mut rng = ChaCha8Rng::seed_from_u64(0x6e0);
    let sizes = [40usize, 120, 300, 800, 1500, 3000];
    let (mut sent, mut mismatches) = (0usize, Vec::<String>::new());
    // Reply shapes seen: errors, empty arrays, arrays of more than 10, others.
    let mut shapes = [0usize; 4];
    let mut send = |argv: &[Vec<u8>], history: &[String], round: usize| {
        let expected = redis.call(argv).unwrap();
        let head = String::from_utf8_lossy(&expected[..expected.len().min(12)]).into_owned();
        let big = head
            .strip_prefix('*')
            .and_then(|r| r.split("\r\n").next())
            .and_then(|n| n.parse::<i64>().ok())
            .is_some_and(|n| n > 10);
        let kind = match () {
            _ if head.starts_with('-') => 0,
            _ if head.starts_with("*0\r\n") => 1,
            _ if big => 2,
            _ => 3,
        };
        shapes[kind] += 1;
        let mut got = Vec::new();
        core.run(argv)
            .encode(&mut got, redislab_core::reply::Protocol::Resp2);
        if got != expected {
            let tail = history
                .iter()
                .rev()
                .take(4)
                .rev()
                .cloned()
                .collect::<Vec<_>>();
            mismatches.push(format!(
                "round {round}:\n  {}\nredis: {:?}\ncore:  {:?}",
                tail.join("\n  "),
                String::from_utf8_lossy(&expected),
                String::from_utf8_lossy(&got)
            ));
        }
    };
    let rounds = 72;
    for round in 0..rounds {
        let n = sizes[round % sizes.len()];
        let (loads, world) = preload(&mut rng, n);
        let mut history: Vec<String> = Vec::new();
        let mut setup = vec![vec![s("FLUSHALL")], vec![s("SET"), s("str"), s("x")]];
        setup.push(vec![
            s("GEOADD"),
            s("small"),
            s("105.8542"),
            s("21.0285"),
            s("hoan-kiem"),
        ]);
        setup.extend(loads);
        for argv in &setup {
            history.push(String::from_utf8_lossy(&argv[0]).into_owned());
            send(argv, &history, round);
            sent += 1;
        }
        for _ in 0..400 {
            let argv = random_command(&mut rng, &world);
            history.push(
                argv.iter()
                    .map(|a| String::from_utf8_lossy(a).into_owned())
                    .collect::<Vec<_>>()
                    .join(" "),
            );
            send(&argv, &history, round);
            sent += 1;
        }
    }
    for m in mismatches.iter().take(8) {
        eprintln!("{m}\n");
    }
    eprintln!(
        "{sent} commands, {} identical, {} different",
        sent - mismatches.len(),
        mismatches.len()
    );
    eprintln!(
        "replies: {} errors, {} empty arrays, {} arrays of more than 10, {} others",
        shapes[0], shapes[1], shapes[2], shapes[3]
    );
    assert!(mismatches.is_empty(), "{} replies differ", mismatches.len());
}
