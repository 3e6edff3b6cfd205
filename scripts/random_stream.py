#!/usr/bin/env python3
"""Random command streams, the same to the core and to Redis, replies compared byte for byte.

Driven by scripts/random-stream.sh, which starts both servers privately. Each
command goes to both servers on one connection each; after it, every key of
the stream is compared by content (type, encoding, value or members, whether
it has a TTL). A difference is reported with the command and the last commands
that touched its keys, then both servers are given Redis's copy of the keys
(DUMP / RESTORE) so one difference does not hide the next.

Differences Redis itself does not repeat from run to run are not counted:
the order of SCAN and of hashtable-encoded hashes and sets (Redis seeds its
hash function at random), random draws (HRANDFIELD, SRANDMEMBER, SPOP,
ZRANDMEMBER), sampled sizes (MEMORY USAGE) and DUMP's bytes of hashtables,
and times a millisecond or a second apart (relative TTLs set a moment apart
on the two servers, OBJECT IDLETIME). Everything else counts.

The arguments are chosen to reach edges: integers at and past 64 bits, floats
with inf/nan/huge exponents, deadlines up to PXAT 2^63-1, empty and 70-byte
members, bytes that are not UTF-8, options repeated or contradictory.
"""
import argparse
import json
import random
import socket
import sys

KEYS = ["k1", "k2", "k3", "{t}a", "{t}b"]
UNORDERED = {"SCAN", "HGETALL", "HKEYS", "HVALS", "SMEMBERS", "HSCAN", "SSCAN", "ZSCAN",
             "SINTER", "SUNION", "SDIFF", "SORT", "SORT_RO"}
RANDOM_OR_SAMPLED = {"HRANDFIELD", "SRANDMEMBER", "SPOP", "ZRANDMEMBER", "MEMORY", "DUMP"}
RANDOM_WRITES = {"SPOP"}
TIMES = {"TTL", "PTTL", "EXPIRETIME", "PEXPIRETIME", "HTTL", "HPTTL", "HEXPIRETIME", "HPEXPIRETIME"}


def encode(argv):
    out = [b"*%d\r\n" % len(argv)]
    for a in argv:
        a = a if isinstance(a, bytes) else str(a).encode("utf-8", "surrogateescape")
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


class Conn:
    """One RESP connection; replies read as nested tuples of raw lines."""

    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.sock.settimeout(10)
        self.buf = b""

    def _fill(self):
        data = self.sock.recv(65536)
        if not data:
            raise EOFError("connection closed")
        self.buf += data

    def _line(self):
        while b"\r\n" not in self.buf:
            self._fill()
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def _exact(self, n):
        while len(self.buf) < n + 2:
            self._fill()
        data, self.buf = self.buf[:n], self.buf[n + 2:]
        return data

    def reply(self):
        line = self._line()
        kind, rest = line[:1], line[1:]
        if kind in b"$=!" and int(rest) >= 0:
            return line + b"|" + self._exact(int(rest))
        if kind in b"*~>%|" and int(rest) >= 0:
            count = int(rest) * (2 if kind in b"%|" else 1)
            return (line, tuple(self.reply() for _ in range(count)))
        return line

    def call(self, argv):
        self.sock.sendall(encode(argv))
        return self.reply()


def flat(reply):
    if isinstance(reply, tuple):
        return [x for item in reply[1] for x in flat(item)]
    return [reply]


class Gen:
    """The random commands (one generator per seed)."""

    def __init__(self, seed):
        self.r = random.Random(seed)

    def pick(self, *items):
        return self.r.choice(items)

    def key(self):
        return self.r.choice(KEYS)

    def num(self):
        return self.pick("0", "1", "-1", "2", "-2", "5", "10", "-10", "100", "63", "64", "-64",
                         "9223372036854775807", "-9223372036854775808", "9223372036854775808",
                         "1.5", "-0", "+3", " 3", "0x10", "1e3", "", "abc", "4294967296",
                         "2147483647", "-2147483648", "007", str(self.r.randint(-50, 50)))

    def field_count(self):
        # Not 2147483646 or 2147483647: Redis 8.6.3's HEXPIRE family adds
        # the count to an argument position in `int` and crashes on them.
        return self.pick("0", "1", "2", "3", "-1", "x", "", "2147483648", "4294967296",
                         "9223372036854775807")

    def offset(self):
        return self.pick("0", "1", "7", "8", "100", "-1", "abc", "", "1.5", "4294967296",
                         "9223372036854775807", str(self.r.randint(0, 300)))

    def ttl(self):
        # No short relative TTL: one would expire between the two servers.
        return self.pick("0", "-1", "100000", "3000000", "abc", "", "9223372036854775807",
                         "-9223372036854775808", "9223372036854775", "9223372036854776",
                         "4102444800", "4102444800000", "1.5", "-100")

    def flt(self):
        return self.pick("0", "1", "-1", "1.5", "-2.5", "inf", "-inf", "+inf", "nan", "1e308",
                         "-1e308", "1e309", "0.1", "3.0000000000000004", "1e-320", "abc", "",
                         " 1", "(1", "(1.5", "(inf", "(-inf", "9007199254740993", "0x1p3",
                         "1.7976931348623157e308", repr(self.r.uniform(-100, 100)),
                         str(self.r.randint(-5, 5)))

    def member(self):
        return self.pick("a", "b", "c", "d", "", "m1", "m2", "x" * 70, "\u00e9", "\x00z", b"\xff\xfe")

    def value(self):
        return self.pick("v", "", "123", "-5", "3.5", "hello world", "x" * 50, b"\xff\x00", "10",
                         "9223372036854775807")

    def field(self):
        return self.pick("f1", "f2", "f3", "", "x" * 70, "10", b"\xff")

    def some(self, make, lo=0, hi=3):
        return [make() for _ in range(self.r.randint(lo, hi))]

    def strings_bits_hll(self, k):
        c = self.r.randrange(22)
        if c == 0:
            return ["SET", k, self.value()] + self.pick(
                [], ["EX", self.ttl()], ["PX", self.ttl()], ["NX"], ["XX"], ["GET"], ["KEEPTTL"],
                ["EXAT", self.ttl()], ["PXAT", self.ttl()], ["EX", "10", "PX", "10"], ["NX", "XX"],
                ["GET", "NX"], ["IFEQ", self.value()], ["IFNE", self.value()], ["EX"])
        if c == 1:
            return [self.pick("GET", "STRLEN", "GETDEL", "INCR", "DECR"), k]
        if c == 2:
            return [self.pick("INCRBY", "DECRBY"), k, self.num()]
        if c == 3:
            return ["INCRBYFLOAT", k, self.flt()]
        if c == 4:
            return [self.pick("APPEND", "SETNX", "GETSET"), k, self.value()]
        if c == 5:
            return ["SETRANGE", k, self.offset(), self.value()]
        if c == 6:
            return [self.pick("GETRANGE", "SUBSTR"), k, self.num(), self.num()]
        if c == 7:
            return ["GETEX", k] + self.pick([], ["EX", self.ttl()], ["PX", self.ttl()], ["PERSIST"],
                                            ["EXAT", self.ttl()], ["EX", "1", "PERSIST"])
        if c == 8:
            return ["SETBIT", k, self.offset(), self.pick("0", "1", "2", "-1", "")]
        if c == 9:
            return ["GETBIT", k, self.num()]
        if c == 10:
            return ["BITCOUNT", k] + self.pick([], [self.num(), self.num()],
                                               [self.num(), self.num(), self.pick("BIT", "BYTE", "bit", "XX")],
                                               [self.num()])
        if c == 11:
            return ["BITPOS", k, self.pick("0", "1", "2")] + self.pick(
                [], [self.num()], [self.num(), self.num()],
                [self.num(), self.num(), self.pick("BIT", "BYTE", "XX")])
        if c == 12:
            op = self.pick("AND", "OR", "XOR", "NOT", "DIFF", "DIFF1", "ANDOR", "ONE", "NAND")
            return ["BITOP", op, "{t}a"] + self.r.sample(["{t}a", "{t}b", "{t}c"], self.r.randint(0, 3))
        if c == 13:
            args = [self.pick("BITFIELD", "BITFIELD_RO"), k]
            for _ in range(self.r.randint(0, 4)):
                kind = self.pick("i8", "u8", "i64", "u63", "u64", "i1", "u1", "i0", "x8", "I8", "u16", "i32")
                at = self.pick("0", "7", "#1", "#0", "-1", "100", "#-1", str(self.r.randint(0, 40)),
                               "4294967296", "x")
                op = self.r.randrange(4)
                if op == 0:
                    args += ["GET", kind, at]
                elif op == 1:
                    args += ["SET", kind, at, self.num()]
                elif op == 2:
                    args += ["INCRBY", kind, at, self.num()]
                else:
                    args += ["OVERFLOW", self.pick("WRAP", "SAT", "FAIL", "wrap", "BAD")]
            return args
        if c == 14:
            return ["PFADD", k] + self.some(self.member, 0, 4)
        if c == 15:
            return ["PFCOUNT"] + self.r.sample(KEYS, self.r.randint(0, 3))
        if c == 16:
            return ["PFMERGE", "{t}a"] + self.r.sample(["{t}a", "{t}b"], self.r.randint(0, 2))
        if c == 17:
            return ["MSET"] + [x for _ in range(self.r.randint(0, 2)) for x in (self.key(), self.value())]
        if c == 18:
            return [self.pick("MSETNX", "MGET")] + [x for _ in range(self.r.randint(0, 2))
                                                     for x in (self.key(), self.value())]
        if c == 19:
            return ["LCS", "{t}a", "{t}b"] + self.pick([], ["LEN"], ["IDX"], ["IDX", "MINMATCHLEN", self.num()],
                                                       ["IDX", "WITHMATCHLEN"], ["LEN", "IDX"])
        if c == 20:
            return [self.pick("SETEX", "PSETEX"), k, self.ttl(), self.value()]
        return [self.pick("EXPIRE", "PEXPIRE", "EXPIREAT", "PEXPIREAT"), k, self.ttl()] + self.pick(
            [], ["NX"], ["XX"], ["GT"], ["LT"], ["NX", "XX"], ["GT", "LT"], ["BAD"])

    def zsets_geo(self, k):
        c = self.r.randrange(24)
        bound = lambda: self.pick("-", "+", "[a", "(b", "c", "[d", "[", "(")
        if c == 0:
            return ["ZADD", k] + self.pick([], ["NX"], ["XX"], ["GT"], ["LT"], ["CH"], ["INCR"], ["NX", "GT"],
                                           ["XX", "LT", "CH"], ["GT", "LT"]) + \
                [x for _ in range(self.r.randint(0, 3)) for x in (self.flt(), self.member())]
        if c == 1:
            return ["ZINCRBY", k, self.flt(), self.member()]
        if c == 2:
            return [self.pick("ZSCORE", "ZREM"), k, self.member()]
        if c == 3:
            return ["ZMSCORE", k] + self.some(self.member)
        if c == 4:
            return [self.pick("ZRANK", "ZREVRANK"), k, self.member()] + self.pick([], ["WITHSCORE"], ["WITHSCORES"])
        if c == 5:
            return ["ZRANGE", k, self.pick(self.num(), self.flt()), self.pick(self.num(), self.flt())] + self.pick(
                [], ["REV"], ["WITHSCORES"], ["BYSCORE"], ["BYSCORE", "REV"], ["BYLEX"],
                ["BYSCORE", "LIMIT", self.num(), self.num()], ["LIMIT", "0", "1"],
                ["BYSCORE", "WITHSCORES", "LIMIT", "1", "-1"], ["BYLEX", "WITHSCORES"], ["REV", "REV"],
                ["BYSCORE", "BYLEX"])
        if c == 6:
            return ["ZRANGE", k, bound(), bound(), "BYLEX"] + self.pick([], ["REV"], ["LIMIT", self.num(), self.num()])
        if c == 7:
            return [self.pick("ZRANGEBYSCORE", "ZREVRANGEBYSCORE"), k, self.flt(), self.flt()] + self.pick(
                [], ["WITHSCORES"], ["LIMIT", self.num(), self.num()], ["WITHSCORES", "LIMIT", "0", "2"], ["LIMIT"])
        if c == 8:
            return [self.pick("ZRANGEBYLEX", "ZREVRANGEBYLEX", "ZLEXCOUNT", "ZREMRANGEBYLEX"), k, bound(), bound()]
        if c == 9:
            return [self.pick("ZCOUNT", "ZREMRANGEBYSCORE"), k, self.flt(), self.flt()]
        if c == 10:
            return ["ZREMRANGEBYRANK", k, self.num(), self.num()]
        if c == 11:
            return [self.pick("ZPOPMIN", "ZPOPMAX"), k] + self.pick([], [self.num()])
        if c == 12:
            return ["ZRANGESTORE", "{t}a", "{t}b", self.num(), self.num()] + self.pick(
                [], ["REV"], ["BYSCORE"], ["BYSCORE", "LIMIT", "0", "2"])
        if c == 13:
            return [self.pick("ZUNION", "ZINTER", "ZDIFF"), self.pick("0", "1", "2", "-1", "x", "3"), "{t}a", "{t}b"] + \
                self.pick([], ["WITHSCORES"], ["WEIGHTS", self.flt(), self.flt()],
                          ["AGGREGATE", self.pick("SUM", "MIN", "MAX", "AVG")], ["WEIGHTS", "1"])
        if c == 14:
            return [self.pick("ZUNIONSTORE", "ZINTERSTORE", "ZDIFFSTORE"), "{t}a", self.pick("1", "2", "0"), "{t}a", "{t}b"]
        if c == 15:
            return ["ZINTERCARD", self.pick("1", "2", "0", "-1"), "{t}a", "{t}b"] + self.pick([], ["LIMIT", self.num()])
        if c == 16:
            return ["ZMPOP", self.pick("1", "2", "0"), "{t}a", "{t}b", self.pick("MIN", "MAX", "X")] + \
                self.pick([], ["COUNT", self.num()])
        if c == 17:
            lon = lambda: self.pick("13.36", "-180", "180", "181", "0", "105.85", self.flt())
            lat = lambda: self.pick("38.11", "85.05112878", "85.06", "-85.05112878", "0", "21.02", self.flt())
            return ["GEOADD", k] + self.pick([], ["NX"], ["XX"], ["CH"], ["NX", "XX"]) + \
                [x for _ in range(self.r.randint(0, 2)) for x in (lon(), lat(), self.member())]
        if c == 18:
            return ["GEOSEARCH", k] + self.pick(["FROMMEMBER", self.member()], ["FROMLONLAT", self.flt(), self.flt()], []) + \
                self.pick(["BYRADIUS", self.num(), self.pick("m", "km", "mi", "ft", "KM", "x")],
                          ["BYBOX", self.num(), self.num(), self.pick("m", "km")], []) + \
                self.pick([], ["ASC"], ["DESC"], ["COUNT", self.num()], ["COUNT", self.num(), "ANY"],
                          ["WITHCOORD", "WITHDIST", "WITHHASH"], ["ANY"], ["WITHDIST", "ASC", "COUNT", "2"])
        if c == 19:
            return ["GEODIST", k, self.member(), self.member()] + self.pick([], ["km"], ["mi"], ["x"])
        if c == 20:
            return [self.pick("GEOPOS", "GEOHASH"), k] + self.some(self.member)
        if c == 21:
            return [self.pick("GEORADIUS", "GEORADIUS_RO"), k, self.flt(), self.flt(), self.num(), self.pick("m", "km")] + \
                self.pick([], ["WITHDIST"], ["COUNT", self.num()], ["STORE", "{t}a"], ["ASC", "WITHCOORD"])
        if c == 22:
            return ["GEOSEARCHSTORE", "{t}a", "{t}b", "FROMLONLAT", "13", "38", "BYRADIUS", self.num(), "km"] + \
                self.pick([], ["STOREDIST"], ["COUNT", "1"], ["WITHDIST"])
        return ["ZRANDMEMBER", k] + self.pick([], ["0"], ["-0"], ["5", "WITHSCORES"], ["x"],
                                              ["-9223372036854775808"], ["9223372036854775807"])

    def hashes_sets_lists(self, k):
        c = self.r.randrange(26)
        fields = lambda: ["FIELDS", self.field_count()] + self.some(self.field)
        if c == 0:
            return ["HSET", k] + [x for _ in range(self.r.randint(0, 3)) for x in (self.field(), self.value())]
        if c == 1:
            return [self.pick("HGET", "HEXISTS", "HSTRLEN"), k, self.field()]
        if c == 2:
            return [self.pick("HMGET", "HDEL"), k] + self.some(self.field)
        if c == 3:
            return [self.pick("HGETALL", "HKEYS", "HVALS", "HLEN"), k]
        if c == 4:
            return ["HINCRBY", k, self.field(), self.num()]
        if c == 5:
            return ["HINCRBYFLOAT", k, self.field(), self.flt()]
        if c == 6:
            return ["HRANDFIELD", k] + self.pick([], ["0"], ["-0"], ["x"], ["-9223372036854775808"], ["0", "WITHVALUES"])
        if c == 7:
            return [self.pick("HEXPIRE", "HPEXPIRE", "HEXPIREAT", "HPEXPIREAT"), k, self.ttl()] + \
                self.pick([], ["NX"], ["XX"], ["GT"], ["LT"]) + self.pick(fields(), ["FIELDS", "1", "f1"], ["FIELDS"])
        if c == 8:
            return [self.pick("HTTL", "HPTTL", "HEXPIRETIME", "HPEXPIRETIME", "HPERSIST"), k] + \
                self.pick(fields(), ["FIELDS", "2", "f1", "f1"])
        if c == 9:
            return ["HGETDEL", k] + self.pick(fields(), ["FIELDS", "1", "f1"])
        if c == 10:
            return ["HGETEX", k] + self.pick([], ["EX", self.ttl()], ["PX", self.ttl()], ["PERSIST"], ["EX", "100", "PERSIST"]) + \
                self.pick(fields(), ["FIELDS", "1", "f1"])
        if c == 11:
            return ["HSETEX", k] + self.pick([], ["FNX"], ["FXX"], ["FNX", "FXX"]) + \
                self.pick([], ["EX", self.ttl()], ["KEEPTTL"], ["EX", "100", "KEEPTTL"]) + \
                self.pick(["FIELDS", "1", "f1", "v"], ["FIELDS", "2", "f1", "v"],
                          ["FIELDS", self.field_count()] + [x for _ in range(self.r.randint(0, 2)) for x in (self.field(), self.value())])
        if c == 12:
            return ["SADD", k] + self.some(lambda: self.pick("1", "2", "-5", "a", "b", "x" * 70,
                                                             "9223372036854775808", "007", ""), 0, 4)
        if c == 13:
            return [self.pick("SREM", "SMISMEMBER"), k] + self.some(lambda: self.pick("1", "2", "a", "b", ""))
        if c == 14:
            return [self.pick("SISMEMBER", "SCARD", "SMEMBERS", "LLEN"), k] + ([self.pick("1", "a")] if c == 14 and self.r.random() < 0.3 else [])
        if c == 15:
            return [self.pick("SPOP", "SRANDMEMBER"), k] + self.pick([], ["0"], ["-1"], ["x"], ["-9223372036854775808"])
        if c == 16:
            return [self.pick("SINTER", "SUNION", "SDIFF", "SINTERSTORE", "SUNIONSTORE", "SDIFFSTORE"), "{t}a", "{t}b"]
        if c == 17:
            return ["SINTERCARD", self.pick("1", "2", "0", "3"), "{t}a", "{t}b"] + self.pick([], ["LIMIT", self.num()])
        if c == 18:
            return [self.pick("LPUSH", "RPUSH", "LPUSHX", "RPUSHX"), k] + self.some(self.value)
        if c == 19:
            return [self.pick("LPOP", "RPOP"), k] + self.pick([], ["0"], ["2"], ["-1"], ["x"])
        if c == 20:
            return [self.pick("LRANGE", "LTRIM"), k, self.num(), self.num()]
        if c == 21:
            return self.pick(["LINDEX", k, self.num()], ["LSET", k, self.num(), self.value()],
                             ["LREM", k, self.num(), self.value()])
        if c == 22:
            return ["LINSERT", k, self.pick("BEFORE", "AFTER", "X"), self.value(), self.value()]
        if c == 23:
            return ["LPOS", k, self.value()] + self.pick([], ["RANK", self.num()], ["COUNT", self.num()],
                                                         ["MAXLEN", self.num()], ["RANK", "-1", "COUNT", "0"])
        if c == 24:
            return self.pick(["LMOVE", "{t}a", "{t}b", self.pick("LEFT", "RIGHT", "X"), self.pick("LEFT", "RIGHT")],
                             ["LMPOP", self.pick("1", "2", "0"), "{t}a", "{t}b", self.pick("LEFT", "RIGHT")] +
                             self.pick([], ["COUNT", self.num()]))
        return ["SORT", k] + self.pick([], ["ALPHA"], ["DESC"], ["LIMIT", self.num(), self.num()], ["BY", "nosort"])

    def keyspace(self, k):
        c = self.r.randrange(8)
        if c == 0:
            return [self.pick("TYPE", "EXISTS", "TTL", "PTTL", "PERSIST", "DEL", "EXPIRETIME", "PEXPIRETIME"), k]
        if c == 1:
            return ["OBJECT", self.pick("ENCODING", "REFCOUNT", "FREQ", "HELP", "X"), k]
        if c == 2:
            return [self.pick("COPY", "RENAME", "RENAMENX"), "{t}a", "{t}b"] + self.pick([], ["REPLACE"], ["DB", "9"])
        if c == 3:
            return ["MEMORY", "USAGE", k]
        if c == 4:
            return ["SCAN", "0"] + self.pick([], ["MATCH", "k*"], ["COUNT", self.num()],
                                              ["TYPE", self.pick("string", "hash", "zset", "set", "list", "bogus")])
        if c == 5:
            return [self.pick("HSCAN", "SSCAN", "ZSCAN"), k, self.pick("0", "x", "-1")] + \
                self.pick([], ["MATCH", "f*"], ["COUNT", self.num()], ["NOVALUES"], ["NOSCORES"])
        if c == 6:
            return [self.pick("TOUCH", "UNLINK", "EXISTS")] + self.r.sample(KEYS, self.r.randint(0, 3))
        return ["DUMP", k]

    def command(self, families):
        family = self.r.choice(families)
        return getattr(self, family)(self.key())


FAMILIES = ["strings_bits_hll", "zsets_geo", "hashes_sets_lists", "keyspace"]


def comparable(argv, reply):
    """The reply with what Redis does not repeat run to run taken out."""
    name = str(argv[0]).upper()
    if name in UNORDERED or (name == "OBJECT" and str(argv[1]).upper() in ("IDLETIME", "FREQ")):
        return (reply[0], sorted(map(repr, flat(reply)))) if isinstance(reply, tuple) else reply
    if name in RANDOM_OR_SAMPLED:
        return reply[0] if isinstance(reply, tuple) else reply[:1]
    return reply


def scan_cursor(reply):
    """A SCAN-family reply's cursor, or None for another reply."""
    if isinstance(reply, tuple) and len(reply[1]) == 2 and isinstance(reply[1][0], bytes):
        return reply[1][0].split(b"|", 1)[-1]
    return None


def same(argv, got, expected):
    """Whether two replies agree, times within 2 units (relative deadlines
    were set a moment apart on the two servers)."""
    name = str(argv[0]).upper()
    if name.endswith("SCAN"):
        cursors = (scan_cursor(got), scan_cursor(expected))
        if None not in cursors and cursors != (b"0", b"0"):
            # A scan cut short stops at a bucket that depends on the hash
            # seed; only a complete one (cursor 0) is compared, as a set.
            return True
    if name not in TIMES:
        return comparable(argv, got) == comparable(argv, expected)
    a, b = flat(got), flat(expected)
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if x[:1] == y[:1] == b":" and abs(int(x[1:])) > 1000 and abs(int(y[1:])) > 1000:
            if abs(int(x[1:]) - int(y[1:])) > 2:
                return False
        elif x != y:
            return False
    return True


def snapshot(conn, key):
    """A key by content: type, encoding, value or members, whether it has a TTL."""
    kind = conn.call(["TYPE", key])
    if kind == b"+none":
        return kind
    body = None
    if kind == b"+string":
        body = conn.call(["GET", key])
    elif kind == b"+hash":
        body = sorted(flat(conn.call(["HGETALL", key])))
    elif kind == b"+set":
        body = sorted(flat(conn.call(["SMEMBERS", key])))
    elif kind == b"+zset":
        body = flat(conn.call(["ZRANGE", key, "0", "-1", "WITHSCORES"]))
    elif kind == b"+list":
        body = flat(conn.call(["LRANGE", key, "0", "-1"]))
    return (kind, conn.call(["OBJECT", "ENCODING", key]), body, conn.call(["PTTL", key]) == b":-1")


def copy_from_redis(core, redis):
    """Every key of the stream as Redis has it, restored into both servers
    (so both hold the encodings RESTORE gives)."""
    # The deadline as an absolute time (ABSTTL): a relative one read and
    # given back a millisecond later would move, and near PXAT 2^63-1 overflow.
    dumps = {key: (redis.call(["DUMP", key]), redis.call(["PEXPIRETIME", key])) for key in KEYS}
    for key, (dump, deadline) in dumps.items():
        for conn in (core, redis):
            conn.call(["DEL", key])
            if dump[:1] == b"$" and not dump.startswith(b"$-1"):
                at = max(int(deadline[1:]), 0)
                conn.call(["RESTORE", key, str(at), dump.split(b"|", 1)[1], "ABSTTL"])


def run_seed(seed, count, protocol, families, core_port, redis_port, shown, out):
    core, redis = Conn(core_port), Conn(redis_port)
    for conn in (core, redis):
        conn.call(["SELECT", "9"])
        conn.call(["FLUSHDB"])
        if protocol == 3:
            conn.call(["HELLO", "3"])
    gen = Gen(seed)
    history = []
    differences = []
    for i in range(count):
        argv = gen.command(families)
        history.append(argv)
        try:
            got = core.call(argv)
        except (EOFError, OSError) as e:
            raise SystemExit(f"random_stream: the core stopped answering at seed {seed} #{i}: {argv!r} ({e})")
        try:
            expected = redis.call(argv)
        except (EOFError, OSError) as e:
            raise SystemExit(f"random_stream: Redis stopped answering at seed {seed} #{i}: {argv!r} ({e}); "
                             "its log says why (a crash of Redis's own is a finding, not the core's)")
        what = None
        if not same(argv, got, expected):
            what = ("reply", got, expected)
        elif str(argv[0]).upper() in RANDOM_WRITES:
            # What it removed was drawn at random: Redis's keys become both.
            copy_from_redis(core, redis)
            continue
        else:
            for key in KEYS:
                a, b = snapshot(core, key), snapshot(redis, key)
                if a != b:
                    what = ("state of " + key, a, b)
                    break
        if what is None:
            continue
        touched = [x for x in argv[1:] if x in KEYS]
        before = [h for h in history[:-1] if any(x in h[1:] for x in touched)][-6:]
        differences.append({"seed": seed, "index": i, "command": [repr(a) for a in argv], "what": what[0],
                            "core": repr(what[1])[:400], "redis": repr(what[2])[:400],
                            "earlier": [[repr(a) for a in h] for h in before]})
        if len(differences) <= shown:
            print(f"seed {seed} #{i}: {' '.join(map(repr, argv))}", file=out)
            print(f"  {what[0]}: core  {repr(what[1])[:300]}", file=out)
            print(f"  {' ' * len(what[0])}  redis {repr(what[2])[:300]}", file=out)
        # Both servers get Redis's copy of every key, so one difference does not
        # hide the next.
        copy_from_redis(core, redis)
    for conn in (core, redis):
        conn.call(["FLUSHDB"])
    return differences


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--core-port", type=int, required=True)
    ap.add_argument("--redis-port", type=int, required=True)
    ap.add_argument("--seeds", default="1-8", help="a range A-B or a list A,B,C")
    ap.add_argument("--commands", type=int, default=4000, help="per seed")
    ap.add_argument("--resp", type=int, choices=(2, 3), default=0, help="default: odd seeds RESP2, even RESP3")
    ap.add_argument("--families", default=",".join(FAMILIES))
    ap.add_argument("--json-out")
    args = ap.parse_args()
    if "-" in args.seeds:
        lo, hi = map(int, args.seeds.split("-"))
        seeds = list(range(lo, hi + 1))
    else:
        seeds = [int(s) for s in args.seeds.split(",")]
    families = args.families.split(",")
    unknown = [f for f in families if f not in FAMILIES]
    if unknown:
        sys.exit(f"random_stream: unknown family {unknown}; the families: {', '.join(FAMILIES)}")
    total, differences = 0, []
    for seed in seeds:
        protocol = args.resp or (3 if seed % 2 == 0 else 2)
        found = run_seed(seed, args.commands, protocol, families, args.core_port, args.redis_port,
                         shown=10 - len(differences), out=sys.stdout)
        total += args.commands
        differences += found
        print(f"seed {seed} (RESP{protocol}): {args.commands} commands, {len(found)} differences", flush=True)
    print(f"total: {total} commands over {len(seeds)} seeds, {len(differences)} differences")
    if args.json_out:
        with open(args.json_out, "w") as f:
            json.dump({"commands": total, "seeds": seeds, "families": families,
                       "differences": differences}, f, indent=1)
            f.write("\n")
    sys.exit(1 if differences else 0)


if __name__ == "__main__":
    main()
