//! Lua scripts sent to a real Redis and to the core (in process): every reply must
//! be byte-identical on the wire. The cases are the articles' scripts (the
//! one-job pop-due script and the sliding-window limiter, with fixed times so the
//! replies are deterministic), every reply conversion in both directions, the
//! error paths (pcall, error_reply, status_reply, unknown commands, wrong arity,
//! wrong numkeys, NOSCRIPT, compile errors, the sandbox), and SCRIPT LOAD /
//! EXISTS / FLUSH with EVALSHA.

use redislab_core::Server;
use redislab_harness::testing::{redis_for_test, RawRedis};

const POP_DUE: &str =
    "local jobs = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, 1)
if #jobs == 0 then return false end
redis.call('ZREM', KEYS[1], jobs[1])
return jobs[1]
";

const SLIDING_WINDOW: &str = "local key = KEYS[1]
local now = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local limit = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', key, 0, now - window)
if redis.call('ZCARD', key) < limit then
redis.call('ZADD', key, now, ARGV[4])
redis.call('PEXPIRE', key, window)
return 1
end
return 0
";

fn eval(script: &str, keys: &[&str], args: &[&str]) -> Vec<String> {
    let mut argv = vec![
        "EVAL".to_string(),
        script.to_string(),
        keys.len().to_string(),
    ];
    argv.extend(keys.iter().map(|s| s.to_string()));
    argv.extend(args.iter().map(|s| s.to_string()));
    argv
}

fn cmd(parts: &[&str]) -> Vec<String> {
    parts.iter().map(|s| s.to_string()).collect()
}

fn cases() -> Vec<Vec<String>> {
    let mut c = Vec::new();
    // The pop-due script: two due jobs, one future job; the third pop is nil.
    c.push(cmd(&[
        "ZADD",
        "queue:delayed",
        "1000",
        "job-a",
        "2000",
        "job-b",
        "9000",
        "job-c",
    ]));
    for _ in 0..3 {
        c.push(eval(POP_DUE, &["queue:delayed"], &["5000"]));
    }
    c.push(cmd(&["ZRANGE", "queue:delayed", "0", "-1", "WITHSCORES"]));
    c.push(eval(POP_DUE, &["missing"], &["5000"]));
    // The sliding window, limit 3 per 1000 ms: the 4th request is refused, a
    // later one (after the window) passes again; keys are per client.
    for (now, id) in [
        ("10000", "r1"),
        ("10100", "r2"),
        ("10200", "r3"),
        ("10300", "r4"),
    ] {
        c.push(eval(SLIDING_WINDOW, &["rate:c1"], &[now, "1000", "3", id]));
    }
    c.push(eval(
        SLIDING_WINDOW,
        &["rate:c2"],
        &["10300", "1000", "3", "x1"],
    ));
    c.push(eval(
        SLIDING_WINDOW,
        &["rate:c1"],
        &["11150", "1000", "3", "r5"],
    ));
    c.push(cmd(&["ZRANGE", "rate:c1", "0", "-1", "WITHSCORES"]));
    c.push(cmd(&["ZCARD", "rate:c2"]));
    // Timestamp members: two requests in one millisecond count as one.
    c.push(eval(
        SLIDING_WINDOW,
        &["rate:ts"],
        &["20000", "1000", "3", "20000"],
    ));
    c.push(eval(
        SLIDING_WINDOW,
        &["rate:ts"],
        &["20000", "1000", "3", "20000"],
    ));
    c.push(cmd(&["ZCARD", "rate:ts"]));
    // PEXPIRE from the script left a TTL no longer than the window.
    c.push(eval(
        "local t = redis.call('PTTL', KEYS[1]) return t > 0 and t <= 1000",
        &["rate:c1"],
        &[],
    ));

    // Lua -> Redis conversions.
    for script in [
        "return 1",
        "return -7",
        "return 3.99",
        "return -3.99",
        "return 1e300",
        "return -1e300",
        "return 0/0",
        "return 'hello'",
        "return ''",
        "return true",
        "return false",
        "return nil",
        "return {}",
        "return {1, 'two', 3.5, {4, {5}}, true, false}",
        "return {1, 2, nil, 4}",
        "return {ok = 'FINE'}",
        "return {ok = 'a\\r\\nb'}",
        "return {err = 'MY error'}",
        "return {err = 'nospace'}",
        "return {err = 'a\\nb'}",
        "return {ok = 1}",
        "return {err = 1}",
        "return {double = 3.5}",
        "return {1, {err = 'inner'}, {ok = 'in'}}",
        "return redis.error_reply('bad thing')",
        "return redis.error_reply('-X bad thing')",
        "return redis.error_reply('nospace')",
        "return redis.error_reply('')",
        "return redis.error_reply()",
        "return redis.error_reply(1)",
        "return redis.status_reply('FINE')",
        "return redis.status_reply()",
        "return redis.sha1hex('')",
        "return redis.sha1hex('abc')",
        "return redis.sha1hex(12)",
        "return redis.sha1hex()",
        "return string.format('%d-%s', 5, 'x')",
        "return _VERSION",
        "return redis.REDIS_VERSION",
        "return type(os.clock())",
        "return tostring(math.floor(2.5))",
        "return table.concat({'a', 'b'}, ',')",
        "return ('x'):rep(3)",
        "return #ARGV",
        "return {math.random(10), math.random(5, 9)}",
        "local t = {} t.x = 1 return t.x",
        "local function f(n) if n == 0 then return 0 end return n + f(n - 1) end return f(10)",
        "return select('#', 1, 2, 3)",
        "return tonumber('0x10')",
    ] {
        c.push(eval(script, &[], &[]));
    }
    c.push(eval(
        "return {KEYS[1], KEYS[2], ARGV[1], ARGV[2], #KEYS}",
        &["k1", "k2"],
        &["a1", "a2"],
    ));

    // Redis -> Lua conversions.
    c.push(cmd(&["ZADD", "z", "1", "a", "2.5", "b", "1e20", "c"]));
    c.push(cmd(&["HSET", "h", "f", "v"]));
    for script in [
        "return redis.call('ZCARD', 'z')",
        "return redis.call('ZSCORE', 'z', 'b')",
        "return redis.call('ZSCORE', 'z', 'missing')",
        "return type(redis.call('ZSCORE', 'z', 'missing'))",
        "return tostring(redis.call('ZSCORE', 'z', 'missing'))",
        "return redis.call('ZRANGE', 'z', 0, -1, 'WITHSCORES')",
        "return redis.call('ZRANGE', 'nokey', 0, -1)",
        "return redis.call('PING')",
        "return redis.call('PING')['ok']",
        "return redis.call('TYPE', 'z')",
        "return redis.call('TYPE', 'nokey')",
        "return redis.call('ZPOPMIN', 'nokey')",
        "return redis.call('BZPOPMIN', 'nokey', '0')",
        "return type(redis.call('BZPOPMIN', 'nokey', '0'))",
        "return redis.call('BZPOPMIN', 'nokey', '0.5')",
        "return redis.call('HGETALL', 'h')",
        "return redis.call('ZADD', 'z2', 1.5, 'x')",
        "return redis.call('ZADD', 'z2', 0.1, 'y', 1e20, 'w', -0.0, 'v')",
        "return redis.call('ZRANGE', 'z2', 0, -1, 'WITHSCORES')",
        "return redis.call('ZINCRBY', 'z2', 1/3, 'x')",
        "return redis.call('ZADD', 'z2', 1e300 * 10, 'inf')",
        "return redis.call('ZSCORE', 'z2', 'inf')",
        "return redis.call('EXISTS', 'z', 'z2', 'nokey')",
        "return redis.call('DEL', 'z2')",
        "local r = redis.call('ZRANGE', 'z', 0, 0) return r[1]",
    ] {
        c.push(eval(script, &[], &[]));
    }

    // Errors raised by redis.call, returned by redis.pcall.
    for script in [
        "return redis.call('nope')",
        "return redis.call('NOPE', 'a')",
        "return redis.call('zadd', 'k')",
        "return redis.call('ZADD', 'z', 'x', 'a')",
        "return redis.call('HSET', 'z', 'f', 'v')",
        "return redis.call('eval', 'return 1', '0')",
        "return redis.call('evalsha', 'x', '0')",
        "return redis.call()",
        "return redis.call({})",
        "return redis.call('ping', true)",
        "redis.call('nope') return 1",
        "local x = 1\nlocal y = 2\nreturn redis.call('zscore')",
        "return redis.pcall('nope')",
        "return redis.pcall('zadd', 'k')",
        "return redis.pcall('ZADD', 'z', 'x', 'a')",
        "return redis.pcall('HSET', 'z', 'f', 'v')",
        "return redis.pcall({})",
        "return redis.pcall()",
        "local r = redis.pcall('nope') return r.err",
        "local r = redis.pcall('HSET', 'z', 'f', 'v') return r['err']",
        "local t = redis.pcall('zadd', 'k') local n = 0 for k, v in pairs(t) do n = n + 1 end return n",
        "local ok, e = pcall(function() redis.call('nope') end) return {tostring(ok), e}",
        "local ok, e = pcall(function() error({err = 'X custom'}) end) return e",
        "local ok, e = pcall(function() error('plain') end) return e",
        "local ok, e = pcall(function() local z = nil + 1 end) return e",
        "return pcall(function() error('x') end)",
    ] {
        c.push(eval(script, &[], &[]));
    }

    // Script errors and the sandbox.
    for script in [
        "error('boom')",
        "error('boom', 0)",
        "error({err = 'MY custom'})",
        "error({})",
        "error({err = 'X'}, 2)",
        "local a = 1\nerror('on line two')",
        "return nil + 1",
        "return string.rep()",
        "return 1 +",
        "return end",
        "x = 1",
        "local a = 1\n\ny = 2",
        "return undefined_name",
        "return print",
        "return io",
        "return os.exit()",
        "return os.execute",
        "return loadfile",
        "return dofile",
        "return require",
        "return debug",
        "return setfenv",
        "return getfenv",
        "return newproxy",
        "string.foo = 1",
        "redis.call = 1",
        "math.pi = 3",
        "_G.x = 1",
        "return rawset(_G, 'x', 1)",
        "return redis.log(redis.LOG_WARNING, 'from a test') or 1",
        "redis.log(redis.LOG_WARNING) return 1",
        "redis.log('x', 'y') return 1",
        "redis.log(9, 'y') return 1",
        "return redis.setresp(2) or 1",
        "return redis.setresp(4)",
        "return redis.set_repl(redis.REPL_ALL) or 1",
        "return redis.set_repl(9)",
        "return redis.replicate_commands()",
        "local f = loadstring('return 5') return f()",
        "local f = loadstring('q = 1') return f()",
        "return math.random(0)",
        "local r = math.random(0) return r",
        "return math.random('x')",
        "return math.random(1, 2, 3)",
        "return math.random(5, 1)",
        "math.randomseed(7) return {math.random(100), math.random(100)}",
        "return redis.sha1hex('a', 'b')",
        "local a = 1\nreturn redis.log(1)",
        "return rawset(1, 2, 3)",
        "return setmetatable(_G, {})",
        "return setmetatable({}, {__index = function() return 7 end}).x",
        "local t = {} rawset(t, 'k', 'v') return t.k",
        "return redis.call('ZCARD', 'z', 'extra')",
        "local ok, e = pcall(redis.call, 'nope') return {tostring(ok), e}",
        "local ok, e = pcall(math.random, 0) return e",
        "return coroutine.wrap(function() coroutine.yield(5) end)()",
        "return unpack({1, 2, 3})",
        "return tostring(nil)",
        "return getmetatable('').__index == string",
        "#!lua flags=no-writes\nreturn redis.call('ZCARD', 'z')",
        "#!lua flags=no-writes\nreturn redis.call('ZADD', 'z', 1, 'q')",
        "#!lua flags=bogus\nreturn 1",
        "#!lua bogus\nreturn 1",
        "#!python\nreturn 1",
        "#!lua",
    ] {
        c.push(eval(script, &[], &[]));
    }

    // numkeys.
    c.push(cmd(&["EVAL", "return 1", "-1"]));
    c.push(cmd(&["EVAL", "return 1", "2", "a"]));
    c.push(cmd(&["EVAL", "return 1", "x"]));
    c.push(cmd(&["EVAL", "return 1", "99999999999999999999"]));
    c.push(cmd(&["EVAL", "return 1"]));
    c.push(cmd(&["EVAL", "return #KEYS + #ARGV", "0", "a", "b"]));
    c.push(cmd(&["EVAL", "return #KEYS + #ARGV", "2", "a", "b"]));

    // Read-only scripts.
    c.push(cmd(&[
        "EVAL_RO",
        "return redis.call('ZADD', 'z', 1, 'a')",
        "0",
    ]));
    c.push(cmd(&["EVAL_RO", "return redis.call('ZCARD', 'z')", "0"]));
    c.push(cmd(&[
        "EVAL_RO",
        "#!lua\nreturn redis.call('ZCARD', 'z')",
        "0",
    ]));
    c.push(cmd(&[
        "EVAL_RO",
        "#!lua flags=no-writes\nreturn redis.call('ZCARD', 'z')",
        "0",
    ]));

    // SCRIPT LOAD / EXISTS / FLUSH and EVALSHA.
    let sha_one = "e0e1f9fabfc9d4800c877a703b823ac0578ff8db";
    c.push(cmd(&["SCRIPT", "FLUSH"]));
    c.push(cmd(&["EVALSHA", sha_one, "0"]));
    c.push(cmd(&["EVALSHA", "abc", "0"]));
    c.push(cmd(&["EVALSHA", "abc", "x"]));
    c.push(cmd(&["SCRIPT", "EXISTS", sha_one]));
    c.push(cmd(&["SCRIPT", "LOAD", "return 1"]));
    c.push(cmd(&[
        "SCRIPT",
        "EXISTS",
        sha_one,
        &sha_one.to_uppercase(),
        "abc",
    ]));
    c.push(cmd(&["EVALSHA", sha_one, "0"]));
    c.push(cmd(&["EVALSHA", &sha_one.to_uppercase(), "0"]));
    c.push(cmd(&["EVALSHA_RO", sha_one, "0"]));
    c.push(cmd(&["EVALSHA", sha_one, "-1"]));
    c.push(cmd(&["SCRIPT", "LOAD", POP_DUE]));
    c.push(cmd(&["ZADD", "q2", "1", "j1"]));
    c.push(cmd(&[
        "EVALSHA",
        "3a1c1a2a8e4e0e3c7e5a6b5d1f2d5b1e2f3a4b5c",
        "0",
    ]));
    c.push(eval("return redis.sha1hex(ARGV[1])", &[], &[POP_DUE]));
    c.push(cmd(&["SCRIPT", "LOAD", "return +"]));
    c.push(cmd(&["SCRIPT", "LOAD"]));
    c.push(cmd(&["SCRIPT"]));
    c.push(cmd(&["SCRIPT", "BOGUS"]));
    c.push(cmd(&["SCRIPT", "FLUSH", "x"]));
    c.push(cmd(&["SCRIPT", "FLUSH", "ASYNC"]));
    c.push(cmd(&["SCRIPT", "EXISTS", sha_one]));
    c.push(cmd(&["SCRIPT", "EXISTS"]));
    c.push(cmd(&["SCRIPT", "HELP"]));
    c.push(cmd(&["SCRIPT", "KILL"]));
    // An EVAL also caches its script for EVALSHA.
    c.push(cmd(&["EVAL", "return 2", "0"]));
    c.push(cmd(&[
        "EVALSHA",
        "7f923f79fe76194c868d7e1d0820de36700eb649",
        "0",
    ]));
    c
}

#[test]
fn scripts_reply_like_redis() {
    let Some(server) = redis_for_test() else {
        return;
    };
    let mut redis = RawRedis::connect(server.port).expect("connect to redis");
    let mut core = Server::new();
    redis.call(&[b"FLUSHALL".to_vec()]).unwrap();
    redis
        .call(&[b"SCRIPT".to_vec(), b"FLUSH".to_vec()])
        .unwrap();
    let cases = cases();
    let mut matched = 0;
    let mut mismatches = Vec::new();
    for argv in &cases {
        let argv: Vec<Vec<u8>> = argv.iter().map(|a| a.as_bytes().to_vec()).collect();
        let expected = redis.call(&argv).unwrap();
        let mut got = Vec::new();
        core.run(&argv)
            .encode(&mut got, redislab_core::reply::Protocol::Resp2);
        if got == expected {
            matched += 1;
        } else {
            mismatches.push(format!(
                "{:?}\n  redis: {:?}\n  core:  {:?}",
                argv.iter()
                    .map(|a| String::from_utf8_lossy(a).into_owned())
                    .collect::<Vec<_>>(),
                String::from_utf8_lossy(&expected),
                String::from_utf8_lossy(&got)
            ));
        }
    }
    eprintln!(
        "{matched} of {} script cases identical on core and redis",
        cases.len()
    );
    assert!(
        mismatches.is_empty(),
        "{} cases differ:\n{}",
        mismatches.len(),
        mismatches.join("\n")
    );
}
