//! Random hash commands on small (listpack) hashes, sent to the core and to a real
//! Redis: every reply must be byte-identical. Random draws are compared only where
//! they are deterministic (a count that covers the whole hash).

use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use redislab_core::Server;
use redislab_harness::testing::{redis_for_test, RawRedis};

const FIELDS: &[&str] = &["f1", "f2", "f3", "name", "Đức", "", "x y"];
const VALUES: &[&str] = &["1", "v", "", "điện thoại", "-0", "12345678901234567890"];

fn random_command(rng: &mut ChaCha8Rng) -> Vec<Vec<u8>> {
    let s = |x: &str| x.as_bytes().to_vec();
    let key = if rng.gen_bool(0.9) { "h" } else { "z" };
    let field = |rng: &mut ChaCha8Rng| s(FIELDS.choose(rng).unwrap());
    let mut argv = Vec::new();
    match rng.gen_range(0..9) {
        0 | 1 => {
            argv.extend([s(if rng.gen_bool(0.8) { "HSET" } else { "HMSET" }), s(key)]);
            for _ in 0..rng.gen_range(1..=3) {
                argv.push(field(rng));
                argv.push(s(VALUES.choose(rng).unwrap()));
            }
            if rng.gen_bool(0.05) {
                argv.pop();
            }
        }
        2 => argv.extend([s("HGET"), s(key), field(rng)]),
        3 => argv.extend([s("HDEL"), s(key), field(rng), field(rng)]),
        4 => argv.extend([s("HLEN"), s(key)]),
        5 => argv.extend([s("HEXISTS"), s(key), field(rng)]),
        6 => argv.extend([s("HGETALL"), s(key)]),
        7 => {
            argv.extend([s("HRANDFIELD"), s(["h", "missing"].choose(rng).unwrap())]);
            argv.push(s(["0", "100", "x", "-9223372036854775808"]
                .choose(rng)
                .unwrap()));
            if rng.gen_bool(0.5) {
                argv.push(s(["WITHVALUES", "WITHSCORES"].choose(rng).unwrap()));
            }
        }
        _ => {
            let name = *["TYPE", "OBJECT", "DEL", "ZADD"].choose(rng).unwrap();
            match name {
                "OBJECT" => argv.extend([s("OBJECT"), s("ENCODING"), s(key)]),
                "ZADD" => argv.extend([s("ZADD"), s("z"), s("1"), s("m")]),
                _ => argv.extend([s(name), s(key)]),
            }
        }
    }
    argv
}

#[test]
fn hash_commands_reply_like_redis() {
    let Some(server) = redis_for_test() else {
        return;
    };
    let mut redis = RawRedis::connect(server.port).expect("connect to redis");
    let mut core = Server::new();
    let mut rng = ChaCha8Rng::seed_from_u64(88);
    let mut sent = 0;
    for round in 0..20 {
        redis.call(&[b"FLUSHALL".to_vec()]).unwrap();
        core.cmd(&["FLUSHALL"]);
        for _ in 0..200 {
            let argv = random_command(&mut rng);
            let shown = argv
                .iter()
                .map(|a| String::from_utf8_lossy(a).into_owned())
                .collect::<Vec<_>>()
                .join(" ");
            let expected = redis.call(&argv).unwrap();
            let mut got = Vec::new();
            core.run(&argv)
                .encode(&mut got, redislab_core::reply::Protocol::Resp2);
            sent += 1;
            assert_eq!(
                String::from_utf8_lossy(&got),
                String::from_utf8_lossy(&expected),
                "round {round}: core and redis differ on: {shown}"
            );
        }
    }
    eprintln!("{sent} commands, identical replies from core and redis");
}
