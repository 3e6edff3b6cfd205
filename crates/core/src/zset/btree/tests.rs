//! The B+tree layout against the skiplist layout: the same seeded random
//! stream of commands to two servers, one per layout, every reply compared
//! byte for byte (RESP2), and the tree's invariants checked as it goes.
//! Then the table against `Dict` directly, and the tree against a sorted vec.

use super::records::Records;
use super::tree::Tree;
use super::*;
use crate::reply::Protocol;
use crate::server::Server;
use crate::zset::Layout;
use rand::seq::SliceRandom;
use rand::Rng;

const SCORES: &[&str] = &[
    "0", "-0", "1", "1.5", "2", "7", "-3", "inf", "-inf", "100", "1e300", "x", "nan",
];
const BOUNDS: &[&str] = &["-inf", "+inf", "(1", "1", "(7", "7", "0", "(0", "-3", "2"];
const LEX: &[&str] = &["-", "+", "[a", "(a", "[m1", "(m2", "[z", "(b", "[m"];
const RANKS: &[&str] = &[
    "0", "1", "-1", "2", "-2", "10", "-100", "63", "64", "65", "500",
];

fn member(rng: &mut ChaCha8Rng) -> String {
    if rng.gen_bool(0.5) {
        format!("m{}", rng.gen_range(0..400))
    } else {
        let alphabet = ["a", "b", "c", "\u{0}", "\u{ff}", "z"];
        (0..rng.gen_range(0..4))
            .map(|_| *alphabet.choose(rng).unwrap())
            .collect()
    }
}

fn pick<'a>(rng: &mut ChaCha8Rng, items: &[&'a str]) -> &'a str {
    items.choose(rng).unwrap()
}

/// One command on keys `z`, `w` (a set whose scores are all 0, for lex
/// ranges), `d` (destinations).
fn command(rng: &mut ChaCha8Rng) -> Vec<String> {
    let s = |x: &str| x.to_string();
    let key = s(pick(rng, &["z", "z", "z", "w", "d"]));
    let lex_key = s("w");
    let mut a: Vec<String> = Vec::new();
    match rng.gen_range(0..34) {
        0..=7 => {
            let lex = key == "w";
            a.extend([s("ZADD"), key]);
            if rng.gen_bool(0.2) {
                a.push(s(pick(rng, &["NX", "XX", "GT", "LT", "CH", "INCR"])));
            }
            for _ in 0..rng.gen_range(1..4) {
                a.push(if lex { s("0") } else { s(pick(rng, SCORES)) });
                a.push(member(rng));
            }
        }
        8 => {
            // A bulk add: several leaves, and conversions past the threshold.
            a.extend([s("ZADD"), s("z")]);
            for _ in 0..rng.gen_range(50..300) {
                a.push(rng.gen_range(-50..50).to_string());
                a.push(format!("b{}", rng.gen_range(0..2000)));
            }
        }
        // Not on `w`: its scores stay equal, or lex ranges would depend on
        // the skiplist's random levels.
        9 => a.extend([
            s("ZINCRBY"),
            s(pick(rng, &["z", "d"])),
            s(pick(rng, SCORES)),
            member(rng),
        ]),
        10 => a.extend([s("ZREM"), key, member(rng), member(rng)]),
        11 => a.extend([s("ZSCORE"), key, member(rng)]),
        12 => a.extend([s(pick(rng, &["ZRANK", "ZREVRANK"])), key, member(rng)]),
        13 => {
            a.extend([s("ZRANGE"), key, s(pick(rng, RANKS)), s(pick(rng, RANKS))]);
            if rng.gen_bool(0.5) {
                a.push(s("REV"));
            }
            if rng.gen_bool(0.5) {
                a.push(s("WITHSCORES"));
            }
        }
        14 => {
            a.extend([s("ZRANGE"), key, s(pick(rng, BOUNDS)), s(pick(rng, BOUNDS))]);
            a.push(s("BYSCORE"));
            if rng.gen_bool(0.5) {
                a.push(s("REV"));
            }
            if rng.gen_bool(0.5) {
                a.extend([
                    s("LIMIT"),
                    s(pick(rng, &["0", "1", "5"])),
                    s(pick(rng, &["-1", "3", "70"])),
                ]);
            }
            if rng.gen_bool(0.5) {
                a.push(s("WITHSCORES"));
            }
        }
        15 => {
            a.extend([
                s("ZRANGE"),
                lex_key,
                s(pick(rng, LEX)),
                s(pick(rng, LEX)),
                s("BYLEX"),
            ]);
            if rng.gen_bool(0.5) {
                a.push(s("REV"));
            }
            if rng.gen_bool(0.5) {
                a.extend([
                    s("LIMIT"),
                    s(pick(rng, &["0", "2"])),
                    s(pick(rng, &["-1", "4"])),
                ]);
            }
        }
        16 => a.extend([s("ZCOUNT"), key, s(pick(rng, BOUNDS)), s(pick(rng, BOUNDS))]),
        17 => a.extend([
            s("ZLEXCOUNT"),
            lex_key,
            s(pick(rng, LEX)),
            s(pick(rng, LEX)),
        ]),
        18 => a.extend([
            s(pick(rng, &["ZPOPMIN", "ZPOPMAX"])),
            key,
            s(pick(rng, &["1", "3", "70"])),
        ]),
        19 => a.extend([
            s("ZREMRANGEBYRANK"),
            key,
            s(pick(rng, RANKS)),
            s(pick(rng, RANKS)),
        ]),
        20 => a.extend([
            s("ZREMRANGEBYSCORE"),
            key,
            s(pick(rng, BOUNDS)),
            s(pick(rng, BOUNDS)),
        ]),
        21 => a.extend([
            s("ZREMRANGEBYLEX"),
            lex_key,
            s(pick(rng, LEX)),
            s(pick(rng, LEX)),
        ]),
        22 => {
            a.extend([s("ZRANDMEMBER"), key]);
            if rng.gen_bool(0.7) {
                a.push(s(pick(rng, &["1", "5", "-5", "100", "-100"])));
                if rng.gen_bool(0.5) {
                    a.push(s("WITHSCORES"));
                }
            }
        }
        23 => a.extend([
            s("ZSCAN"),
            key,
            s(pick(rng, &["0", "0", "3", "17", "100"])),
            s("COUNT"),
            s(pick(rng, &["1", "10", "1000"])),
        ]),
        24 => a.extend([s("MEMORY"), s("USAGE"), key]),
        25 => a.extend([s("OBJECT"), s("ENCODING"), key]),
        26 => a.extend([s("DUMP"), key]),
        27 => a.extend([
            s(pick(rng, &["ZUNIONSTORE", "ZINTERSTORE", "ZDIFFSTORE"])),
            s("d"),
            s("2"),
            s("z"),
            s("w"),
        ]),
        28 => a.extend([s("COPY"), s("z"), s("d"), s("REPLACE")]),
        29 => a.extend([
            s("SORT"),
            key,
            s("BY"),
            s("nosort"),
            s("LIMIT"),
            s("0"),
            s("20"),
        ]),
        30 => a.extend([
            s("ZRANGESTORE"),
            s("d"),
            s("z"),
            s(pick(rng, RANKS)),
            s(pick(rng, RANKS)),
        ]),
        31 => a.extend([s("ZMSCORE"), key, member(rng), member(rng)]),
        32 => {
            a.extend([
                s("CONFIG"),
                s("SET"),
                s("zset-max-listpack-entries"),
                s(pick(rng, &["0", "4", "128"])),
            ]);
        }
        _ => a.extend([s("DEBUG"), s("RELOAD")]),
    }
    a
}

fn reply(s: &mut Server, argv: &[String]) -> Vec<u8> {
    let argv: Vec<Vec<u8>> = argv.iter().map(|a| a.as_bytes().to_vec()).collect();
    let mut out = Vec::new();
    s.run(&argv).encode(&mut out, Protocol::Resp2);
    out
}

fn check_trees(s: &mut Server) {
    for key in [&b"z"[..], b"w", b"d"] {
        if let Some(crate::keyspace::Value::Zset(z)) = s.keyspace.peek(key) {
            if let Some(t) = z.btree() {
                t.check();
            }
        }
    }
}

#[test]
fn btree_layout_replies_like_the_skiplist_layout() {
    let mut rng = ChaCha8Rng::seed_from_u64(15);
    let mut sent = 0;
    let mut converted = 0;
    for round in 0..40 {
        let mut skip = Server::new();
        let mut tree = Server::new();
        for c in [&mut skip, &mut tree] {
            c.cmd(&["CONFIG", "SET", "zset-max-listpack-entries", "4"]);
        }
        assert_eq!(
            tree.cmd(&["CONFIG", "SET", "zset-layout", "btree"])
                .to_resp2(),
            b"+OK\r\n"
        );
        let mut history: Vec<String> = Vec::new();
        for _ in 0..300 {
            let argv = command(&mut rng);
            history.push(argv.join(" "));
            let (a, b) = (reply(&mut skip, &argv), reply(&mut tree, &argv));
            sent += 1;
            if a != b {
                let from = history.len().saturating_sub(12);
                panic!(
                    "round {round}: the layouts differ on the last command:\n  {}\nskiplist: {:?}\nbtree:    {:?}",
                    history[from..].join("\n  "),
                    String::from_utf8_lossy(&a),
                    String::from_utf8_lossy(&b)
                );
            }
            check_trees(&mut tree);
        }
        if let Some(crate::keyspace::Value::Zset(z)) = tree.keyspace.peek(b"z") {
            converted += usize::from(z.layout() == Layout::Btree);
        }
    }
    assert!(
        converted > 10,
        "only {converted} rounds ended with a btree-held z"
    );
    eprintln!("{sent} commands, identical replies from both layouts");
}

#[test]
fn zset_layout_is_a_config_parameter_applied_at_conversion() {
    let mut s = Server::new();
    assert_eq!(
        s.cmd(&["CONFIG", "GET", "zset-layout"]).to_resp2(),
        b"*2\r\n$11\r\nzset-layout\r\n$8\r\nskiplist\r\n"
    );
    assert_eq!(
        s.cmd(&["CONFIG", "SET", "zset-layout", "tree"]).to_resp2(),
        b"-ERR CONFIG SET failed (possibly related to argument 'zset-layout') - argument(s) must be one of the following: skiplist, btree\r\n".to_vec()
    );
    s.cmd(&["ZADD", "small", "1", "a"]);
    s.cmd(&["CONFIG", "SET", "zset-layout", "BTREE"]);
    let layout = |s: &Server, k: &[u8]| match s.keyspace.peek(k) {
        Some(crate::keyspace::Value::Zset(z)) => z.layout(),
        _ => panic!("no zset"),
    };
    assert_eq!(
        layout(&s, b"small"),
        Layout::Skiplist,
        "a listpack stays as it is"
    );
    let mut big = vec!["ZADD", "big"];
    let names: Vec<String> = (0..200).map(|i| format!("m{i}")).collect();
    for n in &names {
        big.extend(["1", n.as_str()]);
    }
    s.cmd(&big);
    assert_eq!(layout(&s, b"big"), Layout::Btree);
    assert_eq!(
        s.cmd(&["OBJECT", "ENCODING", "big"]).to_resp2(),
        b"$8\r\nskiplist\r\n"
    );
    for n in &names[..130] {
        s.cmd(&["ZADD", "small", "2", n]);
    }
    assert_eq!(
        layout(&s, b"small"),
        Layout::Btree,
        "converted on the next write"
    );
}

// ----- the pieces alone ------------------------------------------------------

#[test]
fn tree_matches_a_sorted_vec() {
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let mut recs = Records::new();
    let mut tree = Tree::new();
    let mut model: Vec<(f64, Vec<u8>, u32)> = Vec::new();
    let cmp = |a: &(f64, Vec<u8>, u32), s: f64, m: &[u8]| {
        a.0.partial_cmp(&s)
            .unwrap()
            .then_with(|| a.1.as_slice().cmp(m))
    };
    for step in 0..60_000 {
        // Grow for a while (several inner levels), then shrink to nothing.
        let grow = step < 40_000;
        if (grow && rng.gen_bool(0.7)) || model.is_empty() {
            let s = f64::from(rng.gen_range(0..50));
            let m = format!("{}", rng.gen_range(0..1_000_000)).into_bytes();
            let at = model.partition_point(|x| cmp(x, s, &m).is_lt());
            if model.get(at).is_some_and(|x| cmp(x, s, &m).is_eq()) {
                continue;
            }
            let h = recs.alloc(s, &m, 1);
            tree.insert(&recs, h);
            model.insert(at, (s, m, h));
        } else {
            let at = rng.gen_range(0..model.len());
            let (s, m, h) = model.remove(at);
            assert_eq!(tree.rank(&recs, s, &m), Some(at));
            assert!(tree.remove(&recs, h));
            assert!(!tree.remove(&recs, h), "gone already");
            recs.free(h);
        }
        if step % 997 == 0 {
            tree.check(&recs);
            let got: Vec<u32> = tree.handles_from(0).collect();
            assert!(got.iter().eq(model.iter().map(|x| &x.2)));
            let r = rng.gen_range(0..=model.len());
            assert_eq!(tree.get(r), model.get(r).map(|x| x.2));
            let below = model.partition_point(|x| x.0 < 25.0);
            assert_eq!(tree.count_while(&recs, |s, _| s < 25.0), below);
        }
    }
    for (_, _, h) in model.drain(..).rev() {
        assert!(tree.remove(&recs, h));
    }
    tree.check(&recs);
    assert!(tree.is_empty());
}

#[test]
fn ascending_inserts_fill_leaves() {
    let mut recs = Records::new();
    let mut tree = Tree::new();
    for i in 0..10_000u32 {
        let h = recs.alloc(f64::from(i), &i.to_be_bytes(), 1);
        tree.insert(&recs, h);
    }
    tree.check(&recs);
    // Full leaves: ~157 leaves of 64, not ~313 half-full ones.
    assert!(
        tree.heap_bytes() < 200 * 268 + 10 * 772,
        "{}",
        tree.heap_bytes()
    );
}

/// The member table is `dict::Tables` over the records (links in the
/// records, hashes computed again on rehash); `Dict` is the same tables over
/// its slab (cached hashes). Through the same operations both must hold the
/// same buckets: same scans, draws and iteration order.
#[test]
fn table_scans_and_draws_like_dict() {
    use crate::dict::Dict;
    let mut rng = ChaCha8Rng::seed_from_u64(8);
    let mut dict: Dict<(), Vec<u8>> = Dict::new();
    let mut table = crate::dict::Tables::default();
    let mut recs = Records::new();
    let mut members: Vec<Vec<u8>> = Vec::new();
    for step in 0..20_000 {
        if rng.gen_bool(0.6) || members.is_empty() {
            let m = format!("k{}", rng.gen_range(0..5000)).into_bytes();
            let hash = table.hash_of(&m);
            if table.lookup(&mut recs, hash, super::holds(&m)).is_none() {
                dict.lookup_by(hash, |k| k == &m);
                let h = recs.alloc(0.0, &m, 1);
                table.insert_absent(&mut recs, hash, h);
                dict.insert_absent_by(hash, m.clone(), ());
                members.push(m);
            } else {
                assert!(dict.lookup_by(hash, |k| k == &m).is_some());
            }
        } else {
            let m = members.swap_remove(rng.gen_range(0..members.len()));
            let hash = table.hash_of(&m);
            let h = table.remove(&mut recs, hash, super::holds(&m));
            assert!(dict.remove_by(hash, |k| k == &m).is_some());
            recs.free(h.expect("present"));
        }
        if step % 101 == 0 {
            assert_eq!(table.bucket_count(), dict.bucket_count());
            let mut a = Vec::new();
            let mut b = Vec::new();
            let cursor = rng.gen_range(0..64);
            let ca = table.scan(&recs, cursor, |h| a.push(recs.member(h).to_vec()));
            let cb = dict.scan_by(cursor, |k, _| b.push(k.clone()));
            assert_eq!((ca, &a), (cb, &b), "scan at step {step}");
            let seed = rng.gen();
            let x = table
                .fair_random(&mut recs, &mut ChaCha8Rng::seed_from_u64(seed))
                .map(|h| recs.member(h).to_vec());
            let y = dict
                .fair_random_by(&mut ChaCha8Rng::seed_from_u64(seed))
                .map(|(k, _)| k.clone());
            assert_eq!(x, y, "fair draw at step {step}");
            let ka: Vec<Vec<u8>> = table
                .slots(&recs)
                .map(|h| recs.member(h).to_vec())
                .collect();
            let kb: Vec<Vec<u8>> = dict.keys().cloned().collect();
            assert_eq!(ka, kb);
        }
    }
}
