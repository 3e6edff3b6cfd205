//! `CLUSTER KEYSLOT` from the core and from a real cluster-enabled Redis node, for
//! thousands of seeded keys (binary bytes, braces in every position, empty,
//! nested and unbalanced tags): every reply must be byte-identical on the wire.
//! The other CLUSTER subcommands are compared with a Redis without cluster
//! support, which is what the core is.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use redislab_core::Server;
use redislab_harness::servers::cluster::start_single_node;
use redislab_harness::servers::redis as redissrv;
use redislab_harness::testing::{random_cluster_key, redis_for_test, RawRedis};

fn argv(words: &[&[u8]]) -> Vec<Vec<u8>> {
    words.iter().map(|w| w.to_vec()).collect()
}

fn cluster_node_for_test() -> Option<redissrv::RedisServer> {
    match redissrv::binaries().and_then(|bin| start_single_node(&bin)) {
        Ok(node) => Some(node),
        Err(e) if std::env::var_os("REDISLAB_REQUIRE_SERVERS").is_some() => {
            panic!("a real Redis is required (REDISLAB_REQUIRE_SERVERS is set): {e}")
        }
        Err(e) => {
            eprintln!("SKIPPED: no real Redis for this test: {e}");
            None
        }
    }
}

#[test]
fn keyslot_replies_like_a_cluster_node() {
    let Some(node) = cluster_node_for_test() else {
        return;
    };
    let mut redis = RawRedis::connect(node.port).expect("connect to the node");
    let mut core = Server::new();
    let mut rng = ChaCha8Rng::seed_from_u64(16384);
    let fixed: &[&[u8]] = &[
        b"",
        b"{",
        b"}",
        b"{}",
        b"}{",
        b"{{}}",
        b"{a}",
        b"a{b}c",
        b"{}{a}",
        b"a{{b}}",
        b"x{a}{b}",
        b"{user1000}.following",
        b"\x00{\xff}",
        b"leaderboard:{global}:day:2026-06-01",
    ];
    let mut keys: Vec<Vec<u8>> = fixed.iter().map(|k| k.to_vec()).collect();
    keys.extend((0..5000).map(|_| random_cluster_key(&mut rng)));
    for key in &keys {
        let cmd = argv(&[b"CLUSTER", b"KEYSLOT", key]);
        let expected = redis.call(&cmd).unwrap();
        let mut got = Vec::new();
        core.run(&cmd)
            .encode(&mut got, redislab_core::reply::Protocol::Resp2);
        assert_eq!(
            String::from_utf8_lossy(&got),
            String::from_utf8_lossy(&expected),
            "key {key:?}"
        );
    }
    // Arity and unknown-subcommand errors read the same on a cluster node.
    for words in [
        &[b"CLUSTER".as_slice(), b"KEYSLOT"][..],
        &[b"cluster", b"keyslot", b"a", b"b"],
        &[b"CLUSTER", b"NOPE", b"x"],
        &[b"CLUSTER"],
    ] {
        let cmd = argv(words);
        let mut got = Vec::new();
        core.run(&cmd)
            .encode(&mut got, redislab_core::reply::Protocol::Resp2);
        assert_eq!(got, redis.call(&cmd).unwrap(), "{words:?}");
    }
    eprintln!("{} keys, identical CLUSTER KEYSLOT replies", keys.len());
}

#[test]
fn other_subcommands_reply_like_a_redis_without_cluster_support() {
    let Some(server) = redis_for_test() else {
        return;
    };
    let mut redis = RawRedis::connect(server.port).expect("connect to redis");
    let mut core = Server::new();
    for words in [
        &[b"CLUSTER".as_slice(), b"INFO"][..],
        &[b"CLUSTER", b"INFO", b"x"],
        &[b"CLUSTER", b"NODES"],
        &[b"CLUSTER", b"SLOTS"],
        &[b"CLUSTER", b"SHARDS"],
        &[b"CLUSTER", b"MYID"],
        &[b"CLUSTER", b"HELP"],
        &[b"CLUSTER", b"RESET", b"HARD"],
        &[b"CLUSTER", b"COUNTKEYSINSLOT", b"1"],
        &[b"CLUSTER", b"GETKEYSINSLOT", b"1"],
        &[b"CLUSTER", b"SLOT-STATS", b"SLOTSRANGE", b"0", b"1"],
        &[b"CLUSTER", b"SLOT-STATS"],
        &[b"CLUSTER", b"MEET", b"127.0.0.1", b"1"],
        &[b"CLUSTER", b"Fo\xffo"],
    ] {
        let cmd = argv(words);
        let mut got = Vec::new();
        core.run(&cmd)
            .encode(&mut got, redislab_core::reply::Protocol::Resp2);
        assert_eq!(
            String::from_utf8_lossy(&got),
            String::from_utf8_lossy(&redis.call(&cmd).unwrap()),
            "{words:?}"
        );
    }
}
