#!/usr/bin/env python3
"""A scripted session with redis-py, printed as a canonical JSON transcript.

    session_py.py --port P --protocol 2|3 > transcript.json

Every step is one line of the transcript: {"step": name, "result": ...} or
{"step": name, "error": "<ExceptionClass>: <message>"}. The session FLUSHALLs the
server first: point it only at a private server (scripts/client-compat.sh starts one).
Orders the protocol leaves unspecified (set members, SCAN batches) are sorted.
"""
import argparse
import json
import sys
import time

import redis

ap = argparse.ArgumentParser()
ap.add_argument("--host", default="127.0.0.1")
ap.add_argument("--port", type=int, required=True)
ap.add_argument("--protocol", type=int, choices=[2, 3], required=True)
a = ap.parse_args()

steps = []


def canon(v):
    if isinstance(v, bytes):
        try:
            return v.decode()
        except UnicodeDecodeError:
            return {"bytes": v.hex()}
    if isinstance(v, dict):
        return {"map": [[canon(k), canon(x)] for k, x in v.items()]}
    if isinstance(v, (set, frozenset)):
        return {"set": sorted(canon(x) for x in v)}
    if isinstance(v, (list, tuple)):
        return [canon(x) for x in v]
    if isinstance(v, float):
        return {"float": repr(v)}
    return v


def step(name, fn, post=None):
    try:
        r = fn()
        if post:
            r = post(r)
        steps.append({"step": name, "result": canon(r)})
    except Exception as e:  # the transcript records the client's view of the error
        steps.append({"step": name, "error": f"{type(e).__name__}: {e}"})


def srt(v):
    return sorted(canon(v), key=lambda x: json.dumps(x, sort_keys=True))


def connect():
    return redis.Redis(host=a.host, port=a.port, protocol=a.protocol, decode_responses=True,
                       socket_timeout=5, socket_connect_timeout=5)


r = connect()
step("connect+ping", r.ping)
step("flushall", r.flushall)

# strings and counters
step("set", lambda: r.set("s:1", "hello"))
step("get", lambda: r.get("s:1"))
step("get missing", lambda: r.get("s:none"))
step("set nx exists", lambda: r.set("s:1", "x", nx=True))
step("set ex + ttl", lambda: (r.set("s:ttl", "v", ex=100), r.ttl("s:ttl")))
step("append+strlen", lambda: (r.append("s:1", " world"), r.strlen("s:1")))
step("getrange", lambda: r.getrange("s:1", 0, 4))
step("setrange", lambda: (r.setrange("s:1", 6, "WORLD"), r.get("s:1")))
step("mset+mget", lambda: (r.mset({"s:a": "1", "s:b": "2"}), r.mget("s:a", "s:b", "s:none")))
step("getdel", lambda: r.getdel("s:b"))
step("incr", lambda: r.incr("c:1"))
step("incrby", lambda: r.incrby("c:1", 41))
step("decrby", lambda: r.decrby("c:1", 2))
step("incrbyfloat", lambda: r.incrbyfloat("c:f", 10.5))
step("incrbyfloat precise", lambda: r.incrbyfloat("c:f", 0.1))
step("incr not int", lambda: r.incr("s:1"))
step("exists/type", lambda: (r.exists("s:1", "c:1", "nope"), r.type("s:1"), r.type("c:1")))
step("expire/ttl/persist", lambda: (r.expire("c:1", 50), r.ttl("c:1"), r.persist("c:1"), r.ttl("c:1")))

# hashes
step("hset", lambda: r.hset("h:1", mapping={"f1": "v1", "f2": "2", "f3": "v3"}))
step("hget", lambda: r.hget("h:1", "f1"))
step("hgetall", lambda: r.hgetall("h:1"))
step("hincrby", lambda: r.hincrby("h:1", "f2", 5))
step("hincrbyfloat", lambda: r.hincrbyfloat("h:1", "f2", 0.25))
step("hkeys/hvals/hlen", lambda: (r.hkeys("h:1"), r.hvals("h:1"), r.hlen("h:1")))
step("hmget", lambda: r.hmget("h:1", ["f1", "nope", "f3"]))
step("hdel/hexists", lambda: (r.hdel("h:1", "f3"), r.hexists("h:1", "f3")))

# lists
step("rpush/lpush", lambda: (r.rpush("l:1", "a", "b", "c"), r.lpush("l:1", "z")))
step("lrange", lambda: r.lrange("l:1", 0, -1))
step("lpop/rpop count", lambda: (r.lpop("l:1"), r.rpop("l:1", 2)))
step("linsert/lindex/llen", lambda: (r.linsert("l:1", "before", "a", "x"), r.lindex("l:1", 0), r.llen("l:1")))
step("blpop ready", lambda: r.blpop(["l:1"], timeout=1))
step("blpop timeout", lambda: r.blpop(["l:empty"], timeout=0.2))
step("lmove", lambda: (r.rpush("l:2", "p", "q"), r.lmove("l:2", "l:3", "LEFT", "RIGHT"), r.lrange("l:3", 0, -1)))

# sets
step("sadd", lambda: r.sadd("set:1", "a", "b", "c", "d"))
step("smembers", lambda: r.smembers("set:1"), srt)
step("sismember/smismember", lambda: (r.sismember("set:1", "a"), r.smismember("set:1", ["a", "x"])))
step("scard/srem", lambda: (r.scard("set:1"), r.srem("set:1", "d", "nope")))
step("sinter/sunion", lambda: (r.sadd("set:2", "b", "c", "e"), sorted(r.sinter("set:1", "set:2")),
                               sorted(r.sunion("set:1", "set:2"))))
step("sadd ints + smembers", lambda: (r.sadd("set:i", 3, 1, 2), r.smembers("set:i")), srt)

# sorted sets
step("zadd", lambda: r.zadd("z:1", {"amy": 100, "bob": 90, "zed": 100, "kim": 70.5}))
step("zrange withscores", lambda: r.zrange("z:1", 0, -1, withscores=True))
step("zrevrange withscores", lambda: r.zrevrange("z:1", 0, 1, withscores=True))
step("zrange rev withscores", lambda: r.zrange("z:1", 0, -1, desc=True, withscores=True))
step("zscore", lambda: (r.zscore("z:1", "kim"), r.zscore("z:1", "nope")))
step("zincrby", lambda: r.zincrby("z:1", 2.5, "bob"))
step("zrank/zrevrank", lambda: (r.zrank("z:1", "bob"), r.zrevrank("z:1", "bob"), r.zrank("z:1", "nope")))
step("zrank withscore", lambda: r.zrank("z:1", "bob", withscore=True))
step("zrangebyscore limit", lambda: r.zrangebyscore("z:1", 80, "+inf", start=0, num=2, withscores=True))
step("zcard/zcount", lambda: (r.zcard("z:1"), r.zcount("z:1", "-inf", 95)))
step("zpopmin/zpopmax", lambda: (r.zpopmin("z:1"), r.zpopmax("z:1", 2)))
step("zmscore", lambda: r.zmscore("z:1", ["bob", "nope"]))
step("zadd gt ch", lambda: r.zadd("z:1", {"bob": 1, "new": 5}, gt=True, ch=True))
step("zunionstore", lambda: (r.zadd("z:2", {"bob": 1, "x": 2}), r.zunionstore("z:u", ["z:1", "z:2"]),
                             r.zrange("z:u", 0, -1, withscores=True)))

# geo
step("geoadd", lambda: r.geoadd("g:1", [13.361389, 38.115556, "Palermo", 15.087269, 37.502669, "Catania"]))
step("geopos", lambda: r.geopos("g:1", "Palermo", "nope"))
step("geodist km", lambda: r.geodist("g:1", "Palermo", "Catania", unit="km"))
step("geohash", lambda: r.geohash("g:1", "Palermo", "Catania"))
step("geosearch withdist", lambda: r.geosearch("g:1", longitude=15, latitude=37, radius=200, unit="km",
                                               withdist=True, withcoord=True, sort="ASC"))

# HyperLogLog
step("pfadd/pfcount", lambda: (r.pfadd("hll:1", *[f"e{i}" for i in range(100)]), r.pfcount("hll:1")))
step("pfmerge", lambda: (r.pfadd("hll:2", "e1", "x1", "x2"), r.pfmerge("hll:3", "hll:1", "hll:2"), r.pfcount("hll:3")))

# bitmaps and bitfields
step("setbit/getbit", lambda: (r.setbit("b:1", 7, 1), r.setbit("b:1", 100, 1), r.getbit("b:1", 7), r.getbit("b:1", 8)))
step("bitcount/bitpos", lambda: (r.bitcount("b:1"), r.bitpos("b:1", 1), r.bitcount("b:1", 0, 0)))
step("bitop", lambda: (r.setbit("b:2", 7, 1), r.bitop("AND", "b:3", "b:1", "b:2"), r.bitcount("b:3")))
step("bitfield", lambda: r.bitfield("bf:1").set("u8", 0, 200).incrby("u8", 0, 100).get("u4", 0).execute())
step("bitfield overflow sat", lambda: r.bitfield("bf:1", default_overflow="SAT").incrby("u8", 8, 300).execute())

# pipelines and transactions
def pipeline():
    p = r.pipeline(transaction=False)
    p.set("p:1", "a").incr("p:n").incr("p:n").get("p:1").lpush("p:l", 1, 2).lrange("p:l", 0, -1)
    p.incr("p:1")  # an error inside a pipeline
    return p.execute(raise_on_error=False)


step("pipeline", pipeline, lambda res: [repr(x) if isinstance(x, Exception) else x for x in res])


def multi():
    p = r.pipeline(transaction=True)
    p.set("t:1", "1").incr("t:1").hset("t:h", "a", "b").hgetall("t:h").zadd("t:z", {"m": 1.5}).zscore("t:z", "m")
    return p.execute()


step("multi/exec", multi)


def watch_conflict():
    with r.pipeline() as p:
        p.watch("t:w")
        p.multi()
        p.set("t:w", "mine")
        r2 = connect()
        r2.set("t:w", "theirs")
        r2.close()
        try:
            p.execute()
            return "executed"
        except redis.WatchError as e:
            return f"WatchError: {e}"


step("watch conflict", watch_conflict)
step("after watch", lambda: r.get("t:w"))


def exec_error():
    p = r.pipeline(transaction=True)
    p.set("t:e", "x").incr("t:e").get("t:e")
    return [repr(x) if isinstance(x, Exception) else x for x in p.execute(raise_on_error=False)]


step("multi with runtime error", exec_error)

# pub/sub
def pubsub():
    sub = connect()
    ps = sub.pubsub()
    out = []
    ps.subscribe("chan:1")
    ps.psubscribe("pat:*")
    deadline = time.time() + 3
    while len(out) < 2 and time.time() < deadline:
        m = ps.get_message(timeout=0.2)
        if m:
            out.append(m)
    out.append(("publish", r.publish("chan:1", "hello"), r.publish("pat:x", "world")))
    got = 0
    deadline = time.time() + 3
    while got < 2 and time.time() < deadline:
        m = ps.get_message(timeout=0.2)
        if m:
            out.append(m)
            got += 1
    ps.unsubscribe()
    ps.punsubscribe()
    ps.close()
    sub.close()
    return out


step("pubsub", pubsub)

# scripting
step("eval types", lambda: r.eval("return {1, 'two', 3.99, {'nested', 5}, redis.status_reply('OK')}", 0))
step("eval keys/argv", lambda: r.eval("redis.call('SET', KEYS[1], ARGV[1]); return redis.call('GET', KEYS[1])",
                                      1, "e:1", "val"))
step("eval error", lambda: r.eval("return redis.error_reply('MYERR custom')", 0))
step("eval nil/false/true", lambda: r.eval("return {false, true, nil, 7}", 0))


def evalsha():
    sha = r.script_load("return ARGV[1] .. '!'")
    return sha, r.evalsha(sha, 0, "hi"), r.script_exists(sha, "0" * 40)


step("script load/evalsha", evalsha)
step("evalsha missing", lambda: r.evalsha("0" * 40, 0))

# SCAN iteration
def fill_scan():
    p = r.pipeline(transaction=False)
    for i in range(300):
        p.set(f"x:{i}", i)
    p.hset("sh", mapping={f"f{i}": i for i in range(200)})
    p.sadd("ss", *range(200))
    p.zadd("sz", {f"m{i}": i for i in range(200)})
    p.execute()
    return "filled"


step("scan fill", fill_scan)
step("scan match", lambda: sorted(r.scan_iter(match="x:1*", count=20)))
step("scan type", lambda: sorted(r.scan_iter(_type="zset")))
step("hscan", lambda: sorted(k for k, _ in r.hscan_iter("sh", match="f1*")))
step("sscan", lambda: sorted(r.sscan_iter("ss", count=50)), lambda v: [str(x) for x in v])
step("zscan", lambda: sorted(r.zscan_iter("sz", match="m2*")))
step("dbsize", r.dbsize)

# errors
step("wrongtype", lambda: r.lpush("s:1", "x"))
step("unknown command", lambda: r.execute_command("NOSUCHCMD", "a"))
step("wrong arity", lambda: r.execute_command("GET"))
step("syntax error", lambda: r.execute_command("SET", "k", "v", "BOGUS"))
step("zadd bad score", lambda: r.zadd("z:1", {"m": "notafloat"}))
step("ping after errors", r.ping)

json.dump({"client": f"redis-py {redis.__version__}", "protocol": a.protocol, "steps": steps},
          sys.stdout, indent=1)
sys.stdout.write("\n")
