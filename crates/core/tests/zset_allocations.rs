//! The sorted set's per-member operations allocate nothing once the set is
//! built: a score update that keeps the node in place or moves it (ZADD of an
//! existing member, ZINCRBY), a score lookup (ZSCORE), a rank with its score
//! (ZRANK/ZREVRANK) and a walk over a rank range (what ZRANGE's reply is built
//! from) reuse the node the dict finds and borrow the members where they are
//! stored. Counted with a global allocator over this test binary. In the
//! skiplist layout (Redis's structure, the default) that is none at all; in
//! the B+tree layout (`zset-layout btree`) a move now and then splits a
//! tree node, which allocates the new node: held to under one allocation per
//! hundred rounds.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use redislab_core::zset::{AddFlags, AddOutcome, Layout, Limits, Zset};

#[global_allocator]
static GLOBAL: redislab_alloc::CountingAlloc = redislab_alloc::CountingAlloc::new();

/// The counter is the whole process's: tests of this file run one at a time
/// (under `cargo test` they share the process; under nextest each has its own).
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

const MEMBERS: usize = 20_000;

fn member(i: usize) -> Vec<u8> {
    format!("m:{i:012}").into_bytes()
}

fn built(layout: Layout) -> (Zset, Vec<Vec<u8>>) {
    let limits = Limits {
        layout,
        ..Limits::default()
    };
    let mut z = Zset::new();
    let members: Vec<Vec<u8>> = (0..MEMBERS).map(member).collect();
    for (i, m) in members.iter().enumerate() {
        z.add(i as f64, m, AddFlags::default(), &limits);
    }
    assert_eq!(z.layout(), layout);
    (z, members)
}

/// Allocations over 4000 rounds of ZADD, ZINCRBY, ZSCORE, ZREVRANK and a
/// 10-member range on a 20,000-member set.
fn per_member_ops_allocations(layout: Layout) -> u64 {
    let (mut z, members) = built(layout);
    let limits = Limits {
        layout,
        ..Limits::default()
    };
    let incr = AddFlags {
        incr: true,
        ..AddFlags::default()
    };
    let mut rng = ChaCha8Rng::seed_from_u64(15);
    // Draw everything first: the draws themselves must not be counted.
    let picks: Vec<(usize, f64, f64)> = (0..4000)
        .map(|_| {
            (
                rng.gen_range(0..MEMBERS),
                rng.gen_range(0.0..MEMBERS as f64).floor(),
                [0.25, 1.0, 3.0, -2.0][rng.gen_range(0..4)],
            )
        })
        .collect();
    let (mut moved, mut checksum) = (0, 0usize);
    let before = GLOBAL.calls();
    for &(i, score, step) in &picks {
        let m = &members[i];
        // ZADD of an existing member to a far score, then ZINCRBY by a little.
        if let AddOutcome::Updated(_) = z.add(score, m, AddFlags::default(), &limits) {
            moved += 1;
        }
        assert!(matches!(
            z.add(step, m, incr, &limits),
            AddOutcome::Updated(_)
        ));
        let s = z.score(m).expect("a member has a score");
        let (rank, with) = z.rank_with_score(m, true).expect("a member has a rank");
        assert_eq!(s, with);
        checksum += rank;
        let (start, end) = (rank.min(MEMBERS - 10), rank.min(MEMBERS - 10) + 9);
        checksum += z
            .rank_range(start, end, true)
            .map(|(_, m)| m.len())
            .sum::<usize>();
    }
    let after = GLOBAL.calls();
    assert!(moved > 3000, "most ZADDs moved their member ({moved})");
    assert!(checksum > 0);
    after - before
}

#[test]
fn skiplist_layout_per_member_ops_allocate_nothing() {
    let _serial = one_at_a_time();
    assert_eq!(per_member_ops_allocations(Layout::Skiplist), 0);
}

#[test]
fn btree_layout_per_member_ops_allocate_only_for_node_splits() {
    let _serial = one_at_a_time();
    let n = per_member_ops_allocations(Layout::Btree);
    assert!(n < 40, "{n} allocations over 4000 rounds");
}

/// The commands' own allocations only: a call that a loaded machine keeps
/// past the slowlog's 10 ms would add its entry (command_allocations failed
/// that way beside a parallel build).
fn slowlog_off(s: &mut redislab_core::Server, id: redislab_core::server::ClientId) {
    command_allocations(s, id, &["CONFIG", "SET", "slowlog-log-slower-than", "-1"]);
}

/// Allocations of one command run through the server (`Server::call_into`:
/// the command path, the handler, the RESP encoding into a buffer with room).
fn command_allocations(
    s: &mut redislab_core::Server,
    id: redislab_core::server::ClientId,
    argv: &[&str],
) -> u64 {
    let argv: Vec<Vec<u8>> = argv.iter().map(|a| a.as_bytes().to_vec()).collect();
    let mut out = Vec::with_capacity(1 << 20);
    let before = GLOBAL.calls();
    s.call_into(id, &argv, &mut out);
    let n = GLOBAL.calls() - before;
    assert!(
        out.len() > 3 && out[0] != b'-',
        "{}",
        String::from_utf8_lossy(&out)
    );
    n
}

/// Redis formats each score of a reply into the client's buffer: the core's
/// ZRANGE replies (WITHSCORES, BYSCORE LIMIT) and ZREMRANGEBYRANK allocate as
/// much for 1000 elements as for 10 (nothing per element), in both protocols.
#[test]
fn range_replies_and_rank_removal_allocate_nothing_per_element() {
    let _serial = one_at_a_time();
    let mut s = redislab_core::Server::new();
    let id = s.connect(redislab_core::server::ConnectInfo::in_process());
    slowlog_off(&mut s, id);
    for chunk in 0..(MEMBERS / 1000) {
        let mut argv = vec!["ZADD".to_string(), "lb".to_string()];
        for i in chunk * 1000..(chunk + 1) * 1000 {
            argv.push(format!("{}.5", i));
            argv.push(String::from_utf8(member(i)).unwrap());
        }
        let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
        command_allocations(&mut s, id, &argv);
    }
    for protocol in ["2", "3"] {
        command_allocations(&mut s, id, &["HELLO", protocol]);
        let few = command_allocations(&mut s, id, &["ZRANGE", "lb", "0", "9", "REV", "WITHSCORES"]);
        let many = command_allocations(
            &mut s,
            id,
            &["ZRANGE", "lb", "0", "999", "REV", "WITHSCORES"],
        );
        assert_eq!(few, many, "ZRANGE WITHSCORES, RESP{protocol}");
        fn limit(n: &str) -> [&str; 9] {
            [
                "ZRANGE",
                "lb",
                "5000",
                "9000",
                "BYSCORE",
                "LIMIT",
                "7",
                n,
                "WITHSCORES",
            ]
        }
        let few = command_allocations(&mut s, id, &limit("10"));
        let many = command_allocations(&mut s, id, &limit("1000"));
        assert_eq!(few, many, "BYSCORE LIMIT, RESP{protocol}");
    }
    let removal = |s: &mut redislab_core::Server, stop: &str| {
        command_allocations(s, id, &["ZRANGESTORE", "top", "lb", "0", "1999", "REV"]);
        command_allocations(s, id, &["ZREMRANGEBYRANK", "top", "100", stop])
    };
    // Each ZRANGESTORE makes a new set (a new arena): the freed records' free
    // lists grow by doubling, a few dozen allocations for 1000 removals
    // (before, the members were copied out: one allocation each).
    let few = removal(&mut s, "109");
    let many = removal(&mut s, "1099");
    assert!(
        many <= few + 40,
        "ZREMRANGEBYRANK: {few} for 10, {many} for 1000"
    );
}

/// ZINTERCARD counts without collecting: walking the smaller set and probing
/// the other allocates as much for 2,000 common members as for 10 (before, it
/// copied every member of the first set into a vector, then the common ones
/// into a second).
#[test]
fn intercard_allocates_nothing_per_member() {
    let _serial = one_at_a_time();
    let mut s = redislab_core::Server::new();
    let id = s.connect(redislab_core::server::ConnectInfo::in_process());
    slowlog_off(&mut s, id);
    for (key, n) in [
        ("few:a", 10),
        ("few:b", 10),
        ("many:a", 2000),
        ("many:b", 2000),
    ] {
        let mut argv = vec!["ZADD".to_string(), key.to_string()];
        for i in 0..n {
            argv.push(i.to_string());
            argv.push(String::from_utf8(member(i)).unwrap());
        }
        let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
        command_allocations(&mut s, id, &argv);
    }
    let count = |s: &mut redislab_core::Server, a: &str, b: &str| {
        command_allocations(s, id, &["ZINTERCARD", "2", a, b])
    };
    count(&mut s, "few:a", "few:b");
    let few = count(&mut s, "few:a", "few:b");
    let many = count(&mut s, "many:a", "many:b");
    assert_eq!(few, many, "ZINTERCARD: {few} for 10, {many} for 2000");
}
