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
    assert_eq!(per_member_ops_allocations(Layout::Skiplist), 0);
}

#[test]
fn btree_layout_per_member_ops_allocate_only_for_node_splits() {
    let n = per_member_ops_allocations(Layout::Btree);
    assert!(n < 40, "{n} allocations over 4000 rounds");
}
