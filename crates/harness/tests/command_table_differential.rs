//! The core's command table beside Redis 8.6.3's: for every command (and
//! subcommand) the core implements, COMMAND INFO must give the same arity,
//! flags, key positions and ACL categories as the real server. A row with a
//! wrong `write` flag would let a WATCHed key change unnoticed; a wrong arity
//! would answer a different error; wrong key positions break COMMAND GETKEYS.
//! Commands the core adds (INCREX, from Redis 8.8) are listed, not compared.

use std::collections::BTreeSet;

use redislab_core::Server;
use redislab_harness::testing::{redis_for_test, RawRedis};

/// A COMMAND INFO entry, read from either server.
#[derive(Debug, PartialEq)]
struct Info {
    arity: i64,
    /// In the order the server lists them (Redis's own table orders).
    flags: Vec<String>,
    keys: (i64, i64, i64),
    categories: Vec<String>,
    subcommands: BTreeSet<String>,
}

/// Minimal RESP2 reader for COMMAND INFO replies.
#[derive(Debug)]
enum V {
    Str(String),
    Int(i64),
    Arr(Vec<V>),
    Nil,
}

fn parse(bytes: &[u8], at: &mut usize) -> V {
    let end = bytes[*at..]
        .windows(2)
        .position(|w| w == b"\r\n")
        .expect("a line")
        + *at;
    let kind = bytes[*at];
    let body = String::from_utf8_lossy(&bytes[*at + 1..end]).into_owned();
    *at = end + 2;
    match kind {
        b'+' | b'-' => V::Str(body),
        b':' => V::Int(body.parse().unwrap()),
        b'$' => {
            let n: i64 = body.parse().unwrap();
            if n < 0 {
                return V::Nil;
            }
            let s = String::from_utf8_lossy(&bytes[*at..*at + n as usize]).into_owned();
            *at += n as usize + 2;
            V::Str(s)
        }
        b'*' => {
            let n: i64 = body.parse().unwrap();
            if n < 0 {
                return V::Nil;
            }
            V::Arr((0..n).map(|_| parse(bytes, at)).collect())
        }
        other => panic!("unexpected {}", other as char),
    }
}

fn strings(v: &V) -> Vec<String> {
    match v {
        V::Arr(items) => items
            .iter()
            .filter_map(|i| match i {
                V::Str(s) => Some(s.clone()),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

fn info_of(v: &V) -> Option<(String, Info)> {
    let V::Arr(f) = v else { return None };
    let (V::Str(name), V::Int(arity), V::Int(first), V::Int(last), V::Int(step)) =
        (&f[0], &f[1], &f[3], &f[4], &f[5])
    else {
        return None;
    };
    let subcommands = match f.get(9) {
        Some(V::Arr(subs)) => subs
            .iter()
            .filter_map(|s| match s {
                V::Arr(sf) => match &sf[0] {
                    V::Str(n) => Some(n.clone()),
                    _ => None,
                },
                _ => None,
            })
            .collect(),
        _ => BTreeSet::new(),
    };
    Some((
        name.clone(),
        Info {
            arity: *arity,
            flags: strings(&f[2]),
            keys: (*first, *last, *step),
            categories: strings(&f[6]),
            subcommands,
        },
    ))
}

fn argv(parts: &[&str]) -> Vec<Vec<u8>> {
    parts.iter().map(|s| s.as_bytes().to_vec()).collect()
}

#[test]
fn every_command_row_matches_redis_command_info() {
    let Some(server) = redis_for_test() else {
        return;
    };
    let mut redis = RawRedis::connect(server.port).unwrap();
    let mut core = Server::new();
    let names: Vec<String> = Server::command_names().map(|s| s.to_string()).collect();
    let mut compared = 0;
    let mut core_only = Vec::new();
    let mut mismatches = Vec::new();
    for name in &names {
        let mut full = vec![name.clone()];
        // Subcommands are compared too, by their full names.
        let core_bytes = core.run(&argv(&["COMMAND", "INFO", name])).to_resp2();
        let core_v = parse(&core_bytes, &mut 0);
        let V::Arr(entries) = &core_v else { panic!() };
        let Some((_, core_info)) = info_of(&entries[0]) else {
            panic!("core has no COMMAND INFO for {name}")
        };
        full.extend(core_info.subcommands.iter().cloned());
        for cmd in full {
            let r = redis.call(&argv(&["COMMAND", "INFO", &cmd])).unwrap();
            let V::Arr(re) = parse(&r, &mut 0) else {
                panic!()
            };
            let Some((_, redis_info)) = info_of(&re[0]) else {
                core_only.push(cmd);
                continue;
            };
            let c = core.run(&argv(&["COMMAND", "INFO", &cmd])).to_resp2();
            let V::Arr(ce) = parse(&c, &mut 0) else {
                panic!()
            };
            let (_, core_info) = info_of(&ce[0]).expect("core info");
            // The core may implement fewer subcommands than Redis has.
            let redis_cmp = Info {
                subcommands: BTreeSet::new(),
                ..redis_info
            };
            let core_cmp = Info {
                subcommands: BTreeSet::new(),
                ..core_info
            };
            if redis_cmp != core_cmp {
                mismatches.push(format!("{cmd}: core {core_cmp:?}\n    redis {redis_cmp:?}"));
            }
            compared += 1;
        }
    }
    eprintln!(
        "{compared} commands and subcommands compared with Redis's COMMAND INFO; core only: {core_only:?}"
    );
    assert!(
        mismatches.is_empty(),
        "{} rows differ from Redis:\n{}",
        mismatches.len(),
        mismatches.join("\n")
    );
}

/// CONFIG SET of every numeric parameter the core keeps, with values that
/// separate Redis's readings (a memory value, a plain integer, a sign, an
/// empty string, an overflow), then CONFIG GET, then the default back: the
/// same bytes from both servers, and the same defaults to begin with. The
/// core took units where Redis takes a plain integer, read a memory
/// parameter's "-1" as an integer, and had hash-max-listpack-entries at 128
/// (Redis 8.6.3: 512).
#[test]
fn config_set_reads_numbers_like_redis() {
    let Some(server) = redis_for_test() else {
        return;
    };
    let mut redis = RawRedis::connect(server.port).unwrap();
    let mut core = Server::new();
    let params = [
        "zset-max-listpack-entries",
        "zset-max-listpack-value",
        "set-max-intset-entries",
        "set-max-listpack-entries",
        "set-max-listpack-value",
        "hash-max-listpack-entries",
        "hash-max-listpack-value",
        "hll-sparse-max-bytes",
        "proto-max-bulk-len",
        "client-query-buffer-limit",
        "maxmemory",
        "slowlog-max-len",
        "hz",
    ];
    let values = [
        "1kb",
        "1k",
        "2MB",
        "1b",
        "-1",
        "+5",
        "",
        "x",
        "1.5gb",
        "0x10",
        " 1",
        "7",
        "0",
        "2000000",
        "99999999999999999999gb",
    ];
    let mut compared = 0;
    for param in params {
        let get = argv(&["CONFIG", "GET", param]);
        let default = redis.call(&get).unwrap();
        assert_eq!(core.run(&get).to_resp2(), default, "default of {param}");
        let V::Arr(pair) = parse(&default, &mut 0) else {
            panic!("CONFIG GET {param}")
        };
        let V::Str(default_value) = &pair[1] else {
            panic!("CONFIG GET {param}")
        };
        for value in values {
            for cmd in [argv(&["CONFIG", "SET", param, value]), get.clone()] {
                let expected = redis.call(&cmd).unwrap();
                let got = core.run(&cmd).to_resp2();
                assert_eq!(
                    String::from_utf8_lossy(&got),
                    String::from_utf8_lossy(&expected),
                    "CONFIG SET {param} {value:?}"
                );
                compared += 1;
            }
            let restore = argv(&["CONFIG", "SET", param, default_value]);
            redis.call(&restore).unwrap();
            core.run(&restore);
        }
    }
    eprintln!("{compared} CONFIG replies identical");
}

/// An unknown command, subcommand, option or argument is named in the error
/// with the client's own bytes, as C's `%.128s` or `%s` prints them (up to a
/// NUL, line breaks as spaces), whether or not they are UTF-8. The core showed
/// bytes that are not UTF-8 as U+FFFD.
#[test]
fn errors_name_arguments_with_their_bytes_like_redis() {
    let Some(server) = redis_for_test() else {
        return;
    };
    let mut redis = RawRedis::connect(server.port).unwrap();
    let mut core = Server::new();
    let ten = b"0123456789".to_vec();
    let cases: Vec<Vec<Vec<u8>>> = vec![
        vec![b"XINFO\xff".to_vec()],
        vec![b"\xcb3".to_vec(), b"\xff\xfe".to_vec()],
        vec![b"nope\x00hidden".to_vec(), b"a\x00b".to_vec()],
        vec![b"nope".to_vec(), b"a\r\nb".to_vec()],
        std::iter::once(b"nope".to_vec())
            .chain(std::iter::repeat_n(ten, 20))
            .collect(),
        vec![vec![b'n'; 200]],
        vec![b"CLIENT".to_vec(), b"\xffx".to_vec()],
        vec![b"OBJECT".to_vec(), b"\xff".to_vec()],
        vec![b"SCRIPT".to_vec(), b"a\x00b".to_vec()],
        vec![b"CONFIG".to_vec(), vec![b'x'; 200]],
        vec![
            b"HSET".to_vec(),
            b"h".to_vec(),
            b"f1".to_vec(),
            b"v".to_vec(),
        ],
        vec![
            b"HGETEX".to_vec(),
            b"h".to_vec(),
            b"FIELDS".to_vec(),
            b"1".to_vec(),
            b"f1".to_vec(),
            b"\xff".to_vec(),
        ],
        vec![
            b"HEXPIRE".to_vec(),
            b"h".to_vec(),
            b"10".to_vec(),
            b"\xffz\x00y".to_vec(),
            b"FIELDS".to_vec(),
            b"1".to_vec(),
            b"f1".to_vec(),
        ],
        vec![
            b"EXPIRE".to_vec(),
            b"h".to_vec(),
            b"10".to_vec(),
            b"\xfe".to_vec(),
        ],
        vec![b"FUNCTION".to_vec(), b"LIST".to_vec(), b"\xff".to_vec()],
        vec![
            b"CLIENT".to_vec(),
            b"SETINFO".to_vec(),
            b"\xff".to_vec(),
            b"x".to_vec(),
        ],
    ];
    for argv in &cases {
        let expected = redis.call(argv).unwrap();
        let got = core.run(argv).to_resp2();
        assert_eq!(got, expected, "{argv:?}");
    }
}
