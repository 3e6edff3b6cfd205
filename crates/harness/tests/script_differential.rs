//! Lua scripts sent to a real Redis and to the core (in process): every reply must
//! be byte-identical on the wire. The cases are the articles' scripts (the
//! one-job pop-due script and the sliding-window limiter, with fixed times so the
//! replies are deterministic), every reply conversion in both directions, the
//! error paths (pcall, error_reply, status_reply, unknown commands, wrong arity,
//! wrong numkeys, NOSCRIPT, compile errors, the sandbox), SCRIPT LOAD / EXISTS /
//! FLUSH with EVALSHA; the `cjson`, `cmsgpack`, `struct` and `bit` libraries;
//! Redis Functions (FUNCTION LOAD/LIST/DELETE/FLUSH/STATS/HELP/RESTORE, FCALL,
//! FCALL_RO, `register_function`'s arguments and errors); `redis.setresp(3)`
//! through a RESP2 and a RESP3 client; script flags against
//! `min-replicas-to-write`; the error statistics (INFO errorstats and the
//! calls/rejected/failed counts of commandstats) after scripts that fail in
//! every way; and FUNCTION DUMP payloads restored across the two servers.

use redislab_core::server::{ClientKind, ConnectInfo};
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
        // Bytes that are not UTF-8 pass through errors unchanged.
        "return redis.error_reply('ERR \\255\\254')",
        "return {err = 'bad \\195'}",
        "return redis.pcall('nocmd\\255')",
        "return redis.pcall('OBJECT', '\\255')",
        "return redis.call('CLIENT', '\\255x')",
        "error('x\\255')",
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
        "return redis.acl_check_cmd('set', 'x', '1')",
        "return redis.acl_check_cmd('get')",
        "return redis.acl_check_cmd('nope')",
        "return redis.acl_check_cmd('config', 'bogus')",
        "return redis.acl_check_cmd('config', 'get', 'x')",
        "return redis.acl_check_cmd()",
        "return redis.acl_check_cmd({})",
        "return redis.acl_check_cmd('eval', 'script')",
        "\x1bLuaQ",
        "return redis.breakpoint()",
        "return redis.debug('x', 1)",
        "return redis.call('publish', 'chan', 'msg')",
        "#!lua flags=no-writes\nreturn redis.call('publish', 'chan', 'msg')",
        "return redis.call('script', 'flush')",
        "return redis.call('function', 'list')",
        "return redis.call('fcall', 'x', '0')",
        "return redis.call('multi')",
        "return redis.call('config', 'bogus')",
        "return redis.call('config')",
        "return redis.call('client', 'id') > 0",
        "return pairs(nil)",
        "return pairs()",
        "local ok, e = pcall(pairs) return e",
        "return next({}, 'x')",
        "return next(nil)",
        "return rawget({})",
        "return rawget(1, 2)",
        "return ipairs(1)",
        "return unpack(1)",
        "return {unpack({1, 2}, 'a')}",
        "local n = 0 for k in pairs(_G) do n = n + 1 end return n > 20",
        "local n = 0 for k, v in pairs(os) do n = n + 1 end return n",
        "local t = {} for k in pairs(redis) do t[#t + 1] = k end table.sort(t) return t",
        "local t = {} for k in pairs(cjson) do t[#t + 1] = k end table.sort(t) return t",
        "local t = {} for k in pairs(string) do t[#t + 1] = k end table.sort(t) return t",
        "local t = {} for k in pairs(math) do t[#t + 1] = k end table.sort(t) return t",
        "local t = {} for k in pairs(table) do t[#t + 1] = k end table.sort(t) return t",
        "local t = {} for i, v in ipairs({1, 2, 3}) do t[i] = v * 2 end return t",
        "return rawget(redis, 'call') ~= nil",
        "return rawget(_G, 'redis') ~= nil",
        "return next(os)",
        "return getmetatable(_G) ~= nil",
        "getmetatable(_G).__index = {}",
        "return type(getmetatable(_G).__index)",
        "setmetatable(_G, {})",
        "return type(__redis__err__handler)",
        "return loadstring(string.dump(function() return 1 end))",
        "return {loadstring(string.dump(function() return 1 end))}",
        "return {loadstring(string.dump(function() return 1 end), 'named')}",
        "return {loadstring(string.dump(function() return 1 end), '=eq')}",
        "return {loadstring('return +')}",
        "return load(function() return nil end)()",
        "local parts = {'return ', '4', '2'} local i = 0 return load(function() i = i + 1 return parts[i] end)()",
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
    c.push(cmd(&["SCRIPT", "DEBUG", "NO"]));
    c.push(cmd(&["SCRIPT", "DEBUG", "bogus"]));
    c.push(cmd(&["SCRIPT", "DEBUG"]));
    c.push(cmd(&["SCRIPT", "FLUSH", "SYNC", "x"]));
    // An EVAL also caches its script for EVALSHA.
    c.push(cmd(&["EVAL", "return 2", "0"]));
    c.push(cmd(&[
        "EVALSHA",
        "7f923f79fe76194c868d7e1d0820de36700eb649",
        "0",
    ]));
    c
}

/// The core in process, behind a connection-kind client (so HELLO switches its
/// protocol and replies are encoded as a transport would send them).
struct Core {
    server: Server,
    client: u64,
}

impl Core {
    fn new() -> Core {
        let mut server = Server::new();
        let client = server.connect(ConnectInfo {
            kind: ClientKind::Connection,
            addr: "127.0.0.1:50000".into(),
            laddr: "127.0.0.1:6379".into(),
        });
        Core { server, client }
    }

    fn call(&mut self, argv: &[Vec<u8>]) -> Vec<u8> {
        let mut out = Vec::new();
        self.server.call_into(self.client, argv, &mut out);
        out
    }
}

fn bytes(argv: &[String]) -> Vec<Vec<u8>> {
    argv.iter().map(|a| a.as_bytes().to_vec()).collect()
}

fn shown(argv: &[Vec<u8>]) -> Vec<String> {
    argv.iter()
        .map(|a| {
            let s = String::from_utf8_lossy(a);
            if s.len() > 200 {
                format!("{}...", &s[..200])
            } else {
                s.into_owned()
            }
        })
        .collect()
}

/// Sends every case to both servers; the differences, described.
fn compare(redis: &mut RawRedis, core: &mut Core, cases: &[Vec<String>]) -> Vec<String> {
    let mut mismatches = Vec::new();
    for argv in cases {
        let argv = bytes(argv);
        let expected = redis.call(&argv).unwrap();
        let got = core.call(&argv);
        if got != expected {
            mismatches.push(format!(
                "{:?}\n  redis: {:?}\n  core:  {:?}",
                shown(&argv),
                String::from_utf8_lossy(&expected),
                String::from_utf8_lossy(&got)
            ));
        }
    }
    mismatches
}

fn fresh() -> Option<(
    redislab_harness::servers::redis::RedisServer,
    RawRedis,
    Core,
)> {
    let server = redis_for_test()?;
    let mut redis = RawRedis::connect(server.port).expect("connect to redis");
    for c in [
        &["FLUSHALL"][..],
        &["SCRIPT", "FLUSH"],
        &["FUNCTION", "FLUSH"],
    ] {
        redis.call(&bytes(&cmd(c))).unwrap();
    }
    Some((server, redis, Core::new()))
}

fn check(name: &str, total: usize, mismatches: Vec<String>) {
    eprintln!(
        "{name}: {} of {total} cases identical on core and redis",
        total - mismatches.len()
    );
    assert!(
        mismatches.is_empty(),
        "{} cases differ:\n{}",
        mismatches.len(),
        mismatches.join("\n")
    );
}

#[test]
fn scripts_reply_like_redis() {
    let Some((_server, mut redis, mut core)) = fresh() else {
        return;
    };
    let cases = cases();
    let mismatches = compare(&mut redis, &mut core, &cases);
    check("scripts", cases.len(), mismatches);
}

/// Hex of a string, in Lua, for the binary outputs of cmsgpack and struct.
const HEX: &str = "local function hex(s) return (string.gsub(s, '.', function(c) return string.format('%02x', string.byte(c)) end)) end\n";

fn lib_cases() -> Vec<Vec<String>> {
    let mut c = Vec::new();
    let hexed = |body: &str| eval(&format!("{HEX}{body}"), &[], &[]);
    // cjson: encoding.
    for script in [
        "return cjson.encode({1, 2, 3})",
        "return cjson.encode({})",
        "return cjson.encode({a = 1})",
        "return cjson.encode({a = 1, b = 'x', c = {1, 2}, d = true, e = false})",
        "return cjson.encode({alpha = 1, beta = 2, gamma = 3, delta = 4, epsilon = 5})",
        "return cjson.encode({[1] = 'a', [2] = 'b', x = 'c'})",
        "return cjson.encode({1, nil, 3})",
        "return cjson.encode({[1] = 1, [10] = 2})",
        "return cjson.encode({[1] = 1, [11] = 2})",
        "return cjson.encode({[0] = 1})",
        "return cjson.encode({[1.5] = 1})",
        "return cjson.encode({[-1] = 'neg'})",
        "return cjson.encode('a/b \"q\" \\\\ \\n\\r\\t\\b\\f \\1 \\127 é')",
        "return cjson.encode(0.1)",
        "return cjson.encode(1/3)",
        "return cjson.encode(1e20)",
        "return cjson.encode(-0)",
        "return cjson.encode(2^53)",
        "return cjson.encode(123456789012345)",
        "return cjson.encode(0/0)",
        "return cjson.encode(1/0)",
        "return cjson.encode(nil)",
        "return cjson.encode(cjson.null)",
        "return cjson.encode({cjson.null, 1})",
        "return cjson.encode(true)",
        "return cjson.encode(print)",
        "return cjson.encode(function() end)",
        "return cjson.encode({[true] = 1})",
        "return cjson.encode()",
        "return cjson.encode(1, 2)",
        "local t = {} t[1] = t return cjson.encode(t)",
        "return cjson._NAME .. ' ' .. cjson._VERSION",
        "return type(cjson.null)",
        "local j = cjson.new() j.encode_number_precision(3) return {j.encode(1/3), cjson.encode(1/3)}",
        "local j = cjson.new() return j.encode_number_precision(15)",
        "local j = cjson.new() return j.encode_number_precision(0)",
        "local j = cjson.new() return j.encode_number_precision('x')",
        "local j = cjson.new() return j.encode_max_depth(1, 2)",
        "local j = cjson.new() j.encode_max_depth(2) return j.encode({{1}})",
        "local j = cjson.new() j.encode_max_depth(2) return j.encode({{{1}}})",
        "local j = cjson.new() return {j.encode_invalid_numbers('null'), j.encode({0/0, 1/0})}",
        "local j = cjson.new() return {tostring(j.encode_invalid_numbers(true)), j.encode({1/0, -1/0, 0/0})}",
        "local j = cjson.new() return j.encode_invalid_numbers('maybe')",
        "local j = cjson.new() local a, b, c = j.encode_sparse_array(true) return {tostring(a), b, c, j.encode({[1] = 1, [20] = 2})}",
        "local j = cjson.new() local a, b, c = j.encode_sparse_array(nil, 0) return {tostring(a), b, c, j.encode({[1] = 1, [20] = 2})}",
        "local j = cjson.new() return tostring(j.encode_keep_buffer(false))",
        "local j = cjson.new() return tostring(j.decode_array_with_array_mt())",
    ] {
        c.push(eval(script, &[], &[]));
    }
    // cjson: decoding.
    for script in [
        "return cjson.decode('[1, 2, 3]')",
        "return cjson.decode('{\"a\": {\"b\": [1, \"x\", true]}}').a.b",
        "return cjson.encode(cjson.decode('{\"a\":1,\"b\":[1,2,{\"c\":null}],\"d\":\"\\\\u00e9\\\\n\"}'))",
        "return table.concat(cjson.decode('[0.0, -5e3, -1, 0.3e-3, 1023.2, 0e10]'), ' ')",
        "return tostring(cjson.decode('0x10'))",
        "return tostring(cjson.decode('1e400'))",
        "return tostring(cjson.decode('-Infinity'))",
        "return tostring(cjson.decode('nan'))",
        "return tostring(cjson.decode('+5'))",
        "return tostring(cjson.decode('007'))",
        "return cjson.decode('\"\\\\ud83d\\\\ude00\"')",
        "return cjson.decode('\"\\\\ud83d\"')",
        "return cjson.decode('\"\\\\u12\"')",
        "return cjson.decode('\"\\\\q\"')",
        "return cjson.decode('\"abc')",
        "return cjson.decode('{')",
        "return cjson.decode('[1,]')",
        "return cjson.decode('[1 2]')",
        "return cjson.decode('{\"a\" 1}')",
        "return cjson.decode('{1: 2}')",
        "return cjson.decode('{\"a\": 1,}')",
        "return cjson.decode('tru')",
        "return cjson.decode('nul')",
        "return cjson.decode('')",
        "return cjson.decode('   ')",
        "return cjson.decode('[1] x')",
        "return cjson.decode('@')",
        "return cjson.decode('-')",
        "return cjson.decode('[\"a\\0b\"]')",
        "return cjson.decode('\\0[]')",
        "return cjson.decode(12)",
        "return cjson.decode()",
        "return cjson.decode({})",
        "return type(cjson.decode('null'))",
        "return cjson.decode('null') == cjson.null",
        "return cjson.decode(string.rep('[', 1001) .. string.rep(']', 1001))",
        "return #cjson.encode(cjson.decode(string.rep('[', 999) .. string.rep(']', 999)))",
        "local j = cjson.new() j.decode_max_depth(1) return j.decode('{\"obj\": {\"array\": [1,2,3,4]}}')",
        "local j = cjson.new() j.decode_invalid_numbers(false) return j.decode('0x10')",
        "local j = cjson.new() j.decode_invalid_numbers(false) return j.decode('[1, inf]')",
        "local j = cjson.new() j.decode_array_with_array_mt(true) return {j.encode(j.decode('[]')), j.encode(j.decode('{\"a\":[]}'))}",
        "local j = cjson.new() j.decode_array_with_array_mt(true) local t = j.decode('[1,2]') t[1] = nil t[2] = nil return j.encode(t)",
        "local j = cjson.new() j.decode_array_with_array_mt(true) local t = j.decode('[]') getmetatable(t).__is_cjson_array = 1 return 1",
        "local j = cjson.new() j.decode_array_with_array_mt(true) return tostring(getmetatable(j.decode('[]')).__is_cjson_array)",
        "cjson.encode = 1",
        "return pcall(cjson.decode, '[')",
    ] {
        c.push(eval(script, &[], &[]));
    }
    // cmsgpack.
    for body in [
        "return hex(cmsgpack.pack(0, 1, 127, 128, 255, 256, 65535, 65536, 4294967295, 4294967296))",
        "return hex(cmsgpack.pack(-1, -32, -33, -128, -129, -32768, -32769, -2147483648, -2147483649, -1099511627776))",
        "return hex(cmsgpack.pack(0.1, 1.5, -0.0, 1/0, -1/0, 2^63, -2^63, 2^64))",
        "return hex(cmsgpack.pack('', 'abc', string.rep('x', 31), string.rep('y', 32)))",
        "return #cmsgpack.pack(string.rep('x', 255)) .. ' ' .. #cmsgpack.pack(string.rep('x', 256)) .. ' ' .. #cmsgpack.pack(string.rep('x', 70000))",
        "return hex(cmsgpack.pack({}, {1, 2, 3}, {a = 1}, {1, nil, 3}, {[2] = 'x'}, true, false, nil))",
        "return hex(cmsgpack.pack({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}))",
        "local t = {} for i = 1, 16 do t['k' .. i] = i end return #cmsgpack.pack(t)",
        "local a = {x = nil, y = 5} local b = {x = a} a.x = b return hex(cmsgpack.pack(a))",
        "return hex(cmsgpack.pack(print))",
        "return cmsgpack.pack()",
        "return {cmsgpack.unpack(cmsgpack.pack(1, 'two', {3}, {a = 4}))}",
        "local t = cmsgpack.unpack(cmsgpack.pack({1, 2, {x = 'y'}})) return {t[1], t[2], t[3].x}",
        "return {cmsgpack.unpack('\\204\\200\\205\\1\\0\\206\\0\\1\\0\\0\\208\\128\\209\\255\\0\\210\\255\\255\\0\\0')}",
        "return {cmsgpack.unpack('\\207\\255\\255\\255\\255\\255\\255\\255\\255')}",
        "return {cmsgpack.unpack('\\211\\255\\255\\255\\0\\0\\0\\0\\0')}",
        "return tostring(cmsgpack.unpack('\\202\\63\\192\\0\\0'))",
        "return tostring(cmsgpack.unpack('\\203\\63\\185\\153\\153\\153\\153\\153\\154'))",
        "return {cmsgpack.unpack('\\217\\3abc\\218\\0\\2de\\219\\0\\0\\0\\1f')}",
        "return cmsgpack.unpack('\\193')",
        "return cmsgpack.unpack('\\146\\1')",
        "return cmsgpack.unpack('\\217\\5ab')",
        "return cmsgpack.unpack('\\129\\192\\1')",
        "return cmsgpack.unpack('')",
        "return cmsgpack.unpack()",
        "return cmsgpack.unpack({})",
        "return {cmsgpack.unpack_one(cmsgpack.pack(1, 2, 3))}",
        "return {cmsgpack.unpack_one(cmsgpack.pack(1, 2, 3), 1)}",
        "return {cmsgpack.unpack_one(cmsgpack.pack(1, 2, 3), 2)}",
        "return {cmsgpack.unpack_one(cmsgpack.pack(1, 2, 3), 3)}",
        "return {cmsgpack.unpack_one(cmsgpack.pack(1, 2, 3), 9)}",
        "return {cmsgpack.unpack_one(cmsgpack.pack(1, 2, 3), -1)}",
        "return {cmsgpack.unpack_limit(cmsgpack.pack(1, 2, 3), 2)}",
        "return {cmsgpack.unpack_limit(cmsgpack.pack(1, 2, 3), 2, 2)}",
        "return {cmsgpack.unpack_limit(cmsgpack.pack(1, 2, 3), -1)}",
        "return {cmsgpack.unpack_limit(cmsgpack.pack(1, 2, 3))}",
        "return cmsgpack._NAME .. ' ' .. cmsgpack._VERSION",
        "cmsgpack.pack = 1",
    ] {
        c.push(hexed(body));
    }
    // struct.
    for body in [
        "return hex(struct.pack('>I2', 258))",
        "return hex(struct.pack('<i4', -1))",
        "return hex(struct.pack('b', 300))",
        "return hex(struct.pack('BhHlLT', 1, -2, 3, -4, 5, 6))",
        "return hex(struct.pack('>i3', 65536 + 2))",
        "return hex(struct.pack('s', 'ab'))",
        "return hex(struct.pack('c3', 'abcd'))",
        "return hex(struct.pack('c0', 'abcd'))",
        "return struct.pack('c5', 'ab')",
        "return hex(struct.pack('!4 b i4', 1, 2))",
        "return hex(struct.pack('! b d', 1, 2))",
        "return hex(struct.pack('>d', 1.5))",
        "return hex(struct.pack('<f', 1.5))",
        "return hex(struct.pack('x b x', 7))",
        "return struct.pack('z')",
        "return struct.pack('!3 b')",
        "return struct.pack('i33', 1)",
        "return struct.pack('i', 'x')",
        "return struct.pack('i')",
        "return struct.pack()",
        "return {struct.unpack('>I2', '\\1\\2')}",
        "return {struct.unpack('<i4', '\\255\\255\\255\\255')}",
        "return {struct.unpack('bB', '\\255\\255')}",
        "return {struct.unpack('s', 'ab\\0cd')}",
        "return {struct.unpack('s', 'abc')}",
        "return {struct.unpack('c2', 'abc')}",
        "return {struct.unpack('b c0', '\\2abc')}",
        "return {struct.unpack('c0', 'abc')}",
        "return {struct.unpack('b', '')}",
        "return {struct.unpack('b', 'abc', 2)}",
        "return {struct.unpack('b', 'abc', 0)}",
        "return {struct.unpack('b', 'abc', 4)}",
        "return {struct.unpack('!4 b i4', '\\1\\0\\0\\0\\2\\0\\0\\0')}",
        "return tostring(struct.unpack('>d', struct.pack('>d', 0.1)))",
        "return tostring(struct.unpack('<f', struct.pack('<f', 0.1)))",
        "return {struct.size('>i4h'), struct.size('!8 b d'), struct.size('c10'), struct.size('')}",
        "return struct.size('s')",
        "return struct.size('c0')",
        "return struct.size('y')",
        "struct.pack = 1",
    ] {
        c.push(hexed(body));
    }
    // bit.
    for script in [
        "return {bit.tobit(1), bit.tobit(2^32 + 5), bit.tobit(-1), bit.tobit(2^31), bit.tobit(1.5), bit.tobit(-1.5), bit.tobit('12')}",
        "return {bit.tohex(255), bit.tohex(-1), bit.tohex(-1, -4), bit.tohex(0x1234, 2), bit.tohex(1, 0), bit.tohex(65535, -2147483648), bit.tohex(1, 20)}",
        "return {bit.band(0xff, 0x0f, 0x3), bit.bor(1, 2, 4, 8), bit.bxor(5, 3), bit.bnot(0), bit.band(1)}",
        "return {bit.lshift(1, 31), bit.lshift(1, 32), bit.rshift(-1, 28), bit.arshift(-256, 4), bit.rol(0x12345678, 8), bit.ror(0x12345678, 8), bit.bswap(0x12345678)}",
        "return bit.tobit('x')",
        "return bit.band(1, 'x')",
        "return bit.lshift()",
        "return bit.tobit()",
        "return bit.tobit({})",
        "return pcall(bit.bor, nil)",
        "bit.band = 1",
    ] {
        c.push(eval(script, &[], &[]));
    }
    c
}

#[test]
fn lua_libraries_reply_like_redis() {
    let Some((_server, mut redis, mut core)) = fresh() else {
        return;
    };
    let cases = lib_cases();
    let mismatches = compare(&mut redis, &mut core, &cases);
    check("libraries", cases.len(), mismatches);
}

fn library(name: &str, body: &str) -> String {
    format!("#!lua name={name}\n{body}")
}

fn function_cases() -> Vec<Vec<String>> {
    let mut c = Vec::new();
    let load = |code: String| cmd(&["FUNCTION", "LOAD", &code]);
    let replace = |code: String| cmd(&["FUNCTION", "LOAD", "REPLACE", &code]);
    c.push(cmd(&["FUNCTION", "FLUSH"]));
    c.push(cmd(&["FUNCTION", "LIST"]));
    c.push(cmd(&["FUNCTION", "STATS"]));
    c.push(cmd(&["FUNCTION", "DUMP"]));
    // Loading, and the errors of the metadata line.
    c.push(load(library(
        "lib1",
        "redis.register_function('f1', function(keys, args) return {keys[1], args[1], #keys, #args} end)",
    )));
    c.push(load(library(
        "lib1",
        "redis.register_function('f2', function() return 1 end)",
    )));
    c.push(load(library(
        "lib2",
        "redis.register_function('F1', function() return 1 end)",
    )));
    c.push(load(library(
        "lib3",
        "redis.register_function('Q1', function() return 1 end)",
    )));
    c.push(replace(library(
        "lib3",
        "redis.register_function{function_name='q2', callback=function() return 'q2' end, flags={'no-writes', 'allow-oom'}, description='the q2'}",
    )));
    c.push(cmd(&["FCALL", "q1", "0"]));
    c.push(cmd(&["FCALL", "Q2", "0"]));
    c.push(cmd(&["FUNCTION", "LIST", "LIBRARYNAME", "lib3"]));
    c.push(cmd(&[
        "FUNCTION",
        "LIST",
        "WITHCODE",
        "LIBRARYNAME",
        "LIB1",
    ]));
    c.push(cmd(&["FUNCTION", "LIST", "LIBRARYNAME", "nomatch*"]));
    c.push(cmd(&["FUNCTION", "STATS"]));
    for code in [
        "nope",
        "#!lua name=x",
        "#!lua\n",
        "#!lua name=x extra=y\n",
        "#!lua name=x name=y\n",
        "#!lua NAME=upper\nredis.register_function('upper', function() return 'up' end)",
        "#!LUA name=enginecase\nredis.register_function('enginecase', function() return 1 end)",
        "#!luajit name=x\n",
        "#!lua name=\n",
        "#!lua name=a-b\n",
        "#!lua \"name=quoted\"\nredis.register_function('quoted', function() return 1 end)",
        "#!lua name=\"open\n",
        "#!lua name=x\nreturn 1",
        "#!lua name=x\nreturn +",
        "#!lua name=x\n\n\nlocal a = math.floor(1)",
        "#!lua name=x\nredis.call('ping')",
        "#!lua name=x\nredis.setresp(3)",
        "#!lua name=x\nredis.acl_check_cmd('ping')",
        "#!lua name=x\nerror('boom')",
        "#!lua name=x\nlocal t = redis.nope",
        "#!lua name=x\nredis.register_function()",
        "#!lua name=x\nredis.register_function('a', function() end, 3)",
        "#!lua name=x\nredis.register_function('a')",
        "#!lua name=x\nredis.register_function(1, function() return 1 end)",
        "#!lua name=x\nredis.register_function({}, function() end)",
        "#!lua name=x\nredis.register_function('a', 'b')",
        "#!lua name=x\nredis.register_function('a-b', function() end)",
        "#!lua name=x\nredis.register_function('', function() end)",
        "#!lua name=x\nredis.register_function('dup', function() end) redis.register_function('dup', function() end)",
        "#!lua name=x\nredis.register_function('f1', function() end)",
        "#!lua name=x\nredis.register_function('a')",
        "#!lua name=x\nredis.register_function(5)",
        "#!lua name=x\nredis.register_function{}",
        "#!lua name=x\nredis.register_function{function_name='a'}",
        "#!lua name=x\nredis.register_function{callback=function() end}",
        "#!lua name=x\nredis.register_function{function_name={}, callback=function() end}",
        "#!lua name=x\nredis.register_function{function_name='a', callback='b'}",
        "#!lua name=x\nredis.register_function{function_name='a', callback=function() end, description={}}",
        "#!lua name=x\nredis.register_function{function_name='a', callback=function() end, flags='no-writes'}",
        "#!lua name=x\nredis.register_function{function_name='a', callback=function() end, flags={'bogus'}}",
        "#!lua name=x\nredis.register_function{function_name='a', callback=function() end, flags={1}}",
        "#!lua name=x\nredis.register_function{function_name='a', callback=function() end, other=1}",
        "#!lua name=x\nredis.log(redis.LOG_NOTICE, 'loading') redis.register_function('logged', function() return redis.REDIS_VERSION_NUM end)",
        "#!lua name=x2\nredis.register_function{function_name='allflags', callback=function() return 1 end, flags={'ALLOW-CROSS-SLOT-KEYS', 'no-cluster', 'allow-stale', 'allow-oom', 'no-writes'}}",
        "#!lua name=x3\nlocal rf = redis.register_function\nrf('late', function() return rf('later', function() end) end)",
        "#!lua name=x4\nredis.register_function('setglobal', function() x = 1 end)",
    ] {
        c.push(load(code.to_string()));
    }
    c.push(cmd(&["FUNCTION", "LIST", "LIBRARYNAME", "x2"]));
    c.push(cmd(&["FCALL", "logged", "0"]));
    c.push(cmd(&["FCALL", "late", "0"]));
    c.push(cmd(&["FCALL", "setglobal", "0"]));
    c.push(cmd(&["FCALL", "upper", "0"]));
    c.push(cmd(&["FUNCTION", "LOAD", "REPLACE"]));
    c.push(cmd(&["FUNCTION", "LOAD", "BOGUS", "x"]));
    c.push(cmd(&["FUNCTION", "LOAD"]));
    // Calling functions.
    c.push(load(library(
        "calls",
        "redis.register_function('echo', function(keys, args) return {keys, args} end)\n\
         redis.register_function('globals', function() return KEYS end)\n\
         redis.register_function('fail', function() error('failed here') end)\n\
         redis.register_function('failtable', function() error({err='MYERR custom'}) end)\n\
         redis.register_function('nocmd', function() return redis.call('nope') end)\n\
         redis.register_function('writes', function(keys) return redis.call('set', keys[1], 'v') end)\n\
         redis.register_function{function_name='ro', callback=function(keys) return redis.call('get', keys[1]) end, flags={'no-writes'}}\n\
         redis.register_function{function_name='rowrite', callback=function(keys) return redis.call('set', keys[1], 'x') end, flags={'no-writes'}}\n\
         redis.register_function('resp3', function() redis.setresp(3) return {redis.call('zscore', 'nokey', 'm'), true, false, {double=1.5}} end)\n\
         redis.register_function('nested', function() return redis.register_function end)\n\
         redis.register_function('breakpoint', function() return redis.breakpoint() end)\n\
         redis.register_function('pcallerr', function() return redis.pcall('incr', 'calls:str') end)",
    )));
    c.push(cmd(&["SET", "calls:str", "text"]));
    for call in [
        &["FCALL", "echo", "2", "k1", "k2", "a1"][..],
        &["FCALL", "echo", "0"],
        &["FCALL", "ECHO", "0", "x"],
        &["FCALL", "echo", "3", "a"],
        &["FCALL", "echo", "-1"],
        &["FCALL", "echo", "x"],
        &["FCALL", "echo"],
        &["FCALL", "missing", "0"],
        &["FCALL", "missing", "x"],
        &["FCALL", "globals", "0"],
        &["FCALL", "fail", "0"],
        &["FCALL", "failtable", "0"],
        &["FCALL", "nocmd", "0"],
        &["FCALL", "writes", "1", "fk"],
        &["FCALL_RO", "writes", "1", "fk"],
        &["FCALL", "ro", "1", "fk"],
        &["FCALL_RO", "ro", "1", "fk"],
        &["FCALL", "rowrite", "1", "fk"],
        &["FCALL_RO", "rowrite", "1", "fk"],
        &["FCALL", "resp3", "0"],
        &["FCALL", "nested", "0"],
        &["FCALL", "breakpoint", "0"],
        &["FCALL", "pcallerr", "0"],
        &["FCALL_RO", "missing", "0"],
    ] {
        c.push(cmd(call));
    }
    // Other subcommands and their errors.
    for sub in [
        &["FUNCTION", "DELETE", "calls"][..],
        &["FUNCTION", "DELETE", "calls"],
        &["FUNCTION", "DELETE", "LIB1"],
        &["FUNCTION", "DELETE"],
        &["FUNCTION", "LIST", "bogus"],
        &["FUNCTION", "LIST", "LIBRARYNAME"],
        &["FUNCTION", "LIST", "WITHCODE", "WITHCODE"],
        &["FUNCTION", "LIST", "LIBRARYNAME", "a", "LIBRARYNAME", "b"],
        &["FUNCTION", "LIST", "x\r\n+INJECTED"],
        &["FUNCTION", "STATS", "x"],
        &["FUNCTION", "KILL"],
        &["FUNCTION", "KILL", "x"],
        &["FUNCTION", "FLUSH", "bogus"],
        &["FUNCTION", "FLUSH", "a", "b"],
        &["FUNCTION", "RESTORE", "garbage"],
        &["FUNCTION", "RESTORE", "x", "BOGUS"],
        &["FUNCTION", "RESTORE", "x", "FLUSH", "extra"],
        &["FUNCTION", "HELP"],
        &["FUNCTION", "help", "x"],
        &["FUNCTION", "NOPE"],
        &["FUNCTION"],
        &["SCRIPT", "KILL"],
        &["FUNCTION", "FLUSH", "SYNC"],
        &["FUNCTION", "LIST"],
        &["FUNCTION", "DUMP"],
        &["FUNCTION", "STATS"],
    ] {
        c.push(cmd(sub));
    }
    // Restoring a Redis-made payload (the libraries' code is short enough
    // that Redis stores it uncompressed, so the core's DUMP is identical).
    c.push(load(library(
        "short",
        "redis.register_function('s', function() return 1 end)",
    )));
    c.push(cmd(&["FUNCTION", "DUMP"]));
    c
}

#[test]
fn functions_reply_like_redis() {
    let Some((_server, mut redis, mut core)) = fresh() else {
        return;
    };
    let cases = function_cases();
    let mismatches = compare(&mut redis, &mut core, &cases);
    check("functions", cases.len(), mismatches);
}

/// A FUNCTION DUMP of each server restores into the other, and a one-library
/// dump is the same bytes on both (long code LZF-compressed, as Redis writes
/// it; the core used to write it plain). With two libraries the order follows
/// each server's hash table, so only the restores are compared.
#[test]
fn function_dumps_restore_across_servers() {
    let Some((_server, mut redis, mut core)) = fresh() else {
        return;
    };
    let long = format!(
        "#!lua name=longlib\n-- {}\nredis.register_function('long', function(keys, args) return 'long ' .. (args[1] or '') end)",
        "padding that LZF compresses ".repeat(20)
    );
    let short = "#!lua name=shortlib\nredis.register_function('short', function() return 7 end)";
    for code in [long.as_str(), short] {
        let argv = bytes(&cmd(&["FUNCTION", "LOAD", code]));
        redis.call(&argv).unwrap();
    }
    let bulk = |reply: Vec<u8>| -> Vec<u8> {
        let start = reply.iter().position(|&b| b == b'\n').unwrap() + 1;
        reply[start..reply.len() - 2].to_vec()
    };
    let dump = vec![b"FUNCTION".to_vec(), b"DUMP".to_vec()];
    let from_redis = bulk(redis.call(&dump).unwrap());
    let restore = |payload: &[u8]| {
        vec![
            b"FUNCTION".to_vec(),
            b"RESTORE".to_vec(),
            payload.to_vec(),
            b"REPLACE".to_vec(),
        ]
    };
    assert_eq!(core.call(&restore(&from_redis)), b"+OK\r\n");
    let list = bytes(&cmd(&[
        "FUNCTION",
        "LIST",
        "WITHCODE",
        "LIBRARYNAME",
        "longlib",
    ]));
    assert_eq!(core.call(&list), redis.call(&list).unwrap());
    let fcall = bytes(&cmd(&["FCALL", "long", "0", "x"]));
    assert_eq!(core.call(&fcall), b"$6\r\nlong x\r\n");
    // One library alone: the same payload bytes.
    let flush = bytes(&cmd(&["FUNCTION", "DELETE", "shortlib"]));
    redis.call(&flush).unwrap();
    core.call(&flush);
    let one_redis = bulk(redis.call(&dump).unwrap());
    let one_core = bulk(core.call(&dump));
    assert_eq!(one_core, one_redis, "a one-library FUNCTION DUMP");
    assert!(one_core.len() < long.len(), "the code was compressed");
    redis
        .call(&bytes(&cmd(&["FUNCTION", "LOAD", short])))
        .unwrap();
    core.call(&bytes(&cmd(&["FUNCTION", "LOAD", short])));
    // And back: the core's payload into a flushed Redis.
    let from_core = bulk(core.call(&dump));
    redis.call(&bytes(&cmd(&["FUNCTION", "FLUSH"]))).unwrap();
    assert_eq!(redis.call(&restore(&from_core)).unwrap(), b"+OK\r\n");
    for lib in ["longlib", "shortlib"] {
        let list = bytes(&cmd(&["FUNCTION", "LIST", "WITHCODE", "LIBRARYNAME", lib]));
        assert_eq!(core.call(&list), redis.call(&list).unwrap(), "{lib}");
    }
    assert_eq!(redis.call(&fcall).unwrap(), b"$6\r\nlong x\r\n");
    eprintln!(
        "function dumps: redis payload {} bytes, core payload {} bytes, both restore",
        from_redis.len(),
        from_core.len()
    );
}

fn resp3_cases() -> Vec<Vec<String>> {
    let mut c = Vec::new();
    c.push(cmd(&["HSET", "h3", "field", "value"]));
    c.push(cmd(&["ZADD", "z3", "1.5", "m"]));
    c.push(cmd(&["SADD", "s3", "only"]));
    for script in [
        // (Maps and sets from CONFIG GET and COMMAND INFO: the hash and set
        // families answer with RESP3 shapes on another branch.)
        "redis.setresp(3) return redis.call('config', 'get', 'maxmemory')",
        "redis.setresp(3) return redis.call('config', 'get', 'maxmemory').map.maxmemory",
        "redis.setresp(3) local f = redis.call('command', 'info', 'ping')[1][3] return {type(f.set), tostring(f.set.fast)}",
        "redis.setresp(2) return redis.call('hgetall', 'h3')",
        "redis.setresp(2) return redis.call('config', 'get', 'maxmemory')",
        "redis.setresp(3) return redis.call('zscore', 'z3', 'm')",
        "redis.setresp(3) local d = redis.call('zscore', 'z3', 'm') return {type(d), d.double}",
        "redis.setresp(3) return redis.call('zscore', 'z3', 'nope')",
        "redis.setresp(3) return type(redis.call('zscore', 'z3', 'nope'))",
        "redis.setresp(3) return redis.call('get', 'missing')",
        "redis.setresp(3) return redis.call('ping')",
        "return {map = {a = 1}}",
        "return {set = {a = true}}",
        "return {double = 3.141}",
        "return {double = 1/0}",
        "return {big_number = '1234567999999999999999999999999999999'}",
        "return {big_number = '123\\r\\n123'}",
        "return {verbatim_string = {format = 'txt', string = 'This is a verbatim\\nstring'}}",
        "return true",
        "return false",
        "return nil",
        "redis.setresp(3) return true",
        "redis.setresp(3) return false",
        "redis.setresp(3) return {true, false, nil}",
        "redis.setresp(3) return {map = {a = {set = {b = true}}}}",
        "redis.setresp(3) return {1, {double = 0.5}, {big_number = '7'}}",
        "redis.setresp(3) redis.setresp(2) return true",
        "return redis.setresp()",
        "return redis.setresp('3') or 'ok'",
    ] {
        c.push(eval(script, &[], &[]));
    }
    c.push(cmd(&["FUNCTION", "FLUSH"]));
    c.push(cmd(&[
        "FUNCTION",
        "LOAD",
        "#!lua name=r3\nredis.register_function{function_name='r3', callback=function() return 1 end, flags={'no-writes', 'allow-stale'}, description='d'}",
    ]));
    c.push(cmd(&["FUNCTION", "LIST"]));
    c.push(cmd(&["FUNCTION", "STATS"]));
    c
}

/// `redis.setresp` through a RESP2 client, then the same through a RESP3 one.
#[test]
fn resp3_scripts_reply_like_redis() {
    let Some((_server, mut redis, mut core)) = fresh() else {
        return;
    };
    let cases = resp3_cases();
    let mut mismatches = compare(&mut redis, &mut core, &cases);
    let hello3 = bytes(&cmd(&["HELLO", "3"]));
    redis.call(&hello3).unwrap();
    core.call(&hello3);
    mismatches.extend(compare(&mut redis, &mut core, &cases));
    check("resp3", 2 * cases.len(), mismatches);
}

/// Script flags against `min-replicas-to-write` (the core has no replicas,
/// like this Redis).
#[test]
fn noreplicas_rules_like_redis() {
    let Some((_server, mut redis, mut core)) = fresh() else {
        return;
    };
    let mut cases = vec![cmd(&["SET", "x", "v"])];
    cases.push(cmd(&["CONFIG", "SET", "min-replicas-to-write", "1"]));
    for script in [
        "#!lua flags=no-writes\nreturn redis.call('get','x')",
        "return redis.call('get','x')",
        "#!lua\nreturn redis.call('get','x')",
        "return redis.call('set','x', 1)",
        "return redis.pcall('set','x', 1)",
        "redis.call('get','x') return redis.pcall('del','x')",
    ] {
        cases.push(eval(script, &["x"], &[]));
    }
    cases.push(cmd(&["CONFIG", "GET", "min-slaves-to-write"]));
    cases.push(cmd(&["CONFIG", "SET", "min-replicas-to-write", "0"]));
    cases.push(eval("#!lua\nreturn redis.call('set','x', 2)", &["x"], &[]));
    let mismatches = compare(&mut redis, &mut core, &cases);
    check("noreplicas", cases.len(), mismatches);
}

/// The counts INFO reports: errorstats whole, and calls / rejected_calls /
/// failed_calls of each commandstats line (the times differ).
fn counts(info: &[u8]) -> Vec<String> {
    let text = String::from_utf8_lossy(info);
    let mut out = Vec::new();
    for line in text.lines() {
        if line.starts_with("errorstat_") || line.starts_with("total_error_replies") {
            out.push(line.to_string());
        } else if let Some(rest) = line.strip_prefix("cmdstat_") {
            let (name, fields) = rest.split_once(':').unwrap_or((rest, ""));
            let kept: Vec<&str> = fields
                .split(',')
                .filter(|f| {
                    f.starts_with("calls=")
                        || f.starts_with("rejected_calls=")
                        || f.starts_with("failed_calls=")
                })
                .collect();
            if !matches!(name, "info" | "config|resetstat") {
                out.push(format!("{name}:{}", kept.join(",")));
            }
        }
    }
    out.sort();
    out
}

/// Error statistics after scripts that fail in every way: each error counted
/// once, in the right code, with the right command failed or rejected.
#[test]
fn error_stats_count_like_redis() {
    let Some((_server, mut redis, mut core)) = fresh() else {
        return;
    };
    let setup = [
        cmd(&["SET", "str", "text"]),
        cmd(&["FUNCTION", "LOAD", "#!lua name=errs\nredis.register_function('ferr', function() return redis.call('incr', 'str') end)\nredis.register_function('fpcall', function() return redis.pcall('incr', 'str') end)"]),
    ];
    let scripts: Vec<Vec<String>> = vec![
        eval("return redis.call('incr', 'str')", &[], &[]),
        eval("return redis.pcall('incr', 'str')", &[], &[]),
        eval("local t = redis.pcall('incr', 'str') return 1", &[], &[]),
        eval("return redis.call('nope')", &[], &[]),
        eval("return redis.pcall('get')", &[], &[]),
        eval("return redis.call('select', 99)", &[], &[]),
        eval("local t = redis.pcall('select', 99) return t.err", &[], &[]),
        eval("return redis.error_reply('MY_CODE custom')", &[], &[]),
        eval("return redis.error_reply('')", &[], &[]),
        eval("error('plain')", &[], &[]),
        eval("error({err = 'TABLE err'})", &[], &[]),
        eval("return {err = 'RET err'}", &[], &[]),
        eval(
            "return {1, {err = 'NESTED one'}, redis.pcall('incr', 'str')}",
            &[],
            &[],
        ),
        eval("return redis.call()", &[], &[]),
        eval("return redis.call({})", &[], &[]),
        eval("return redis.status_reply('FINE')", &[], &[]),
        cmd(&["EVAL_RO", "return redis.call('set', 'x', 'y')", "0"]),
        cmd(&[
            "EVAL_RO",
            "local t = redis.pcall('set', 'x', 'y') return 1",
            "0",
        ]),
        cmd(&[
            "EVAL",
            "return redis.call('GEOADD', 'str', '13.361389', '38.115556', 'Palermo')",
            "0",
        ]),
        cmd(&["EVAL", "return 1", "-1"]),
        cmd(&["EVALSHA", "e0e1f9fabfc9d4800c877a703b823ac0578ff8db", "0"]),
        cmd(&["FCALL", "ferr", "0"]),
        cmd(&["FCALL", "fpcall", "0"]),
        cmd(&["FCALL", "nope", "0"]),
        cmd(&["FUNCTION", "DELETE", "nope"]),
    ];
    let reset = bytes(&cmd(&["CONFIG", "RESETSTAT"]));
    let info = bytes(&cmd(&["INFO", "ALL"]));
    let mut mismatches = Vec::new();
    for argv in &setup {
        let argv = bytes(argv);
        redis.call(&argv).unwrap();
        core.call(&argv);
    }
    let mut total = 0;
    for script in &scripts {
        redis.call(&reset).unwrap();
        core.call(&reset);
        mismatches.extend(compare(&mut redis, &mut core, std::slice::from_ref(script)));
        let want = counts(&redis.call(&info).unwrap());
        let got = counts(&core.call(&info));
        total += 1;
        if want != got {
            mismatches.push(format!(
                "{:?}\n  redis stats: {want:?}\n  core stats:  {got:?}",
                shown(&bytes(script))
            ));
        }
    }
    check("error stats", total, mismatches);
}

/// A RESP2 reply, parsed (for COMMAND INFO).
#[derive(Debug, PartialEq, Clone)]
enum Resp {
    Text(String),
    Int(i64),
    Nil,
    List(Vec<Resp>),
}

fn parse(bytes: &[u8], at: &mut usize) -> Resp {
    let end = at_line_end(bytes, *at);
    let line = String::from_utf8_lossy(&bytes[*at + 1..end]).into_owned();
    let kind = bytes[*at];
    *at = end + 2;
    match kind {
        b'+' | b'-' => Resp::Text(line),
        b':' => Resp::Int(line.parse().unwrap()),
        b'$' => {
            let n: i64 = line.parse().unwrap();
            if n < 0 {
                return Resp::Nil;
            }
            let s = String::from_utf8_lossy(&bytes[*at..*at + n as usize]).into_owned();
            *at += n as usize + 2;
            Resp::Text(s)
        }
        _ => {
            let n: i64 = line.parse().unwrap();
            Resp::List((0..n.max(0)).map(|_| parse(bytes, at)).collect())
        }
    }
}

fn at_line_end(bytes: &[u8], from: usize) -> usize {
    from + bytes[from..].windows(2).position(|w| w == b"\r\n").unwrap()
}

/// name, arity, flags, first/last/step key and ACL categories of a COMMAND
/// INFO entry and of its subcommands (the key specs, tips and docs of
/// Redis's table are not modelled by the core).
fn command_rows(entry: &Resp, out: &mut Vec<String>) {
    let Resp::List(f) = entry else { return };
    let sorted = |r: &Resp| -> String {
        let Resp::List(items) = r else {
            return String::new();
        };
        let mut v: Vec<String> = items.iter().map(|i| format!("{i:?}")).collect();
        v.sort();
        v.join(" ")
    };
    out.push(format!(
        "{:?} arity={:?} flags=[{}] keys={:?},{:?},{:?} acl=[{}]",
        f[0],
        f[1],
        sorted(&f[2]),
        f[3],
        f[4],
        f[5],
        sorted(&f[6])
    ));
    if let Some(Resp::List(subs)) = f.get(9) {
        for sub in subs {
            command_rows(sub, out);
        }
    }
}

#[test]
fn scripting_commands_are_described_like_redis() {
    let Some((_server, mut redis, mut core)) = fresh() else {
        return;
    };
    let argv = bytes(&cmd(&[
        "COMMAND",
        "INFO",
        "eval",
        "evalsha",
        "eval_ro",
        "evalsha_ro",
        "fcall",
        "fcall_ro",
        "script",
        "function",
    ]));
    let rows = |reply: Vec<u8>| {
        let Resp::List(entries) = parse(&reply, &mut 0) else {
            panic!("not a list")
        };
        let mut out = Vec::new();
        for e in &entries {
            command_rows(e, &mut out);
        }
        // Redis lists subcommands in its hash table's order.
        out.sort();
        out
    };
    let want = rows(redis.call(&argv).unwrap());
    let got = rows(core.call(&argv));
    assert_eq!(want.len(), 23, "{want:#?}");
    let mismatches: Vec<String> = want
        .iter()
        .zip(&got)
        .filter(|(w, g)| w != g)
        .map(|(w, g)| format!("redis: {w}\n  core:  {g}"))
        .collect();
    assert_eq!(want.len(), got.len());
    check("command info", want.len(), mismatches);
}
