# Run inside gdb attached to a live redis-server (gdb -p PID -batch -x this):
# reads the zset skiplist of the robj at REDISLAB_ROBJ from the process memory
# and prints it as one JSON line after the marker "ZSLDUMP ", or one line after
# "ZSLERR " saying why it could not (stable text: no bytes read from memory).
#
# REDISLAB_MODE=nodes: every node (member, score, levels with forward pointers
#   and spans, backward), for a small zset;
# REDISLAB_MODE=levels: only how many nodes reach each level, by walking each
#   level's forward chain from the header (a million nodes: no members read).
#
# Two layouts of zskiplistNode (src/server.h) are read, told apart by its fields
# in the binary's debug info:
# * Redis 8.6: {double score; node *backward; struct {node *forward; unsigned
#   long span;} level[];} with the member's sds embedded after level[];
#   level[0].span holds zskiplistNodeInfo {uint16 sdsoffset; uint8 levels}, and
#   the level-0 span itself is 1 (0 for the tail);
# * Redis 7.0 and 8.0: {sds ele; double score; node *backward; level[];}: the
#   member is behind the ele pointer, every span is the real one, and a node's
#   level count is not stored: it is the highest level whose chain reaches it.
# Any other layout (e.g. Valkey 9.1's unions) is reported, not guessed at.
import json
import os

import gdb

def fail(why):
    print("ZSLERR " + why)
    raise SystemExit(0)


def field_names(t):
    # An anonymous union (Valkey 9.1's {score | length}) shows its members.
    return [
        f.name or "union{%s}" % "|".join(field_names(f.type.strip_typedefs()))
        for f in t.strip_typedefs().fields()
    ]


LAYOUT_86 = ["score", "backward", "level"]
LAYOUT_70 = ["ele", "score", "backward", "level"]
FIELDS = field_names(gdb.lookup_type("struct zskiplistNode"))
if FIELDS not in (LAYOUT_86, LAYOUT_70):
    fail(
        "zskiplistNode is {%s} in this server; the lab reads Redis 8.6's {%s} "
        "(member embedded) and Redis 7.0/8.0's {%s} (sds ele pointer)"
        % (", ".join(FIELDS), ", ".join(LAYOUT_86), ", ".join(LAYOUT_70))
    )
SDS_ELE = FIELDS == LAYOUT_70

robj = gdb.parse_and_eval("(robj *)%s" % os.environ["REDISLAB_ROBJ"])
zs = robj["ptr"].cast(gdb.lookup_type("zset").pointer())
zsl = zs["zsl"]
header = zsl["header"]
level = int(zsl["level"])
length = int(zsl["length"])
node_t = gdb.lookup_type("zskiplistNode").pointer()
char_p = gdb.lookup_type("char").pointer()


def lv(node, i):
    return (node["level"][0].address + i).dereference()


def info(node):
    raw = int(lv(node, 0)["span"])
    return raw & 0xFFFF, (raw >> 16) & 0xFF  # sdsoffset, levels


if os.environ.get("REDISLAB_MODE") == "levels":
    at_least = []
    for i in range(level):
        n, count = lv(header, i)["forward"], 0
        while int(n) != 0:
            count += 1
            n = lv(n, i)["forward"]
        at_least.append(count)
    print("ZSLDUMP " + json.dumps({"length": length, "level": level, "at_least": at_least}))
else:
    order, place = [], {}
    n = lv(header, 0)["forward"]
    while int(n) != 0:
        place[int(n)] = len(order)
        order.append(n)
        n = lv(n, 0)["forward"]

    # The 7.0 layout stores no level count: a node has as many levels as the
    # highest chain (from the header) that passes through it.
    height = {}
    if SDS_ELE:
        for i in range(level):
            n = lv(header, i)["forward"]
            while int(n) != 0:
                height[int(n)] = i + 1
                n = lv(n, i)["forward"]

    def link(node, i):
        f = lv(node, i)["forward"]
        fwd = place.get(int(f)) if int(f) != 0 else None
        if i > 0 or SDS_ELE:
            span = int(lv(node, i)["span"])
        else:
            span = 1 if int(f) != 0 else 0
        return {"forward": fwd, "span": span, "forward_addr": hex(int(f))}

    nodes = []
    for n in order:
        if SDS_ELE:
            levels = height[int(n)]
            member = n["ele"].cast(char_p).string(length=-1)
        else:
            off, levels = info(n)
            member = (n.cast(char_p) + off).string(length=-1)
        back = int(n["backward"])
        nodes.append({
            "addr": hex(int(n)),
            "member": member,
            "score": float(n["score"]),
            "levels": [link(n, i) for i in range(levels)],
            "backward": place.get(back) if back != 0 else None,
        })
    out = {
        "level": level,
        "length": length,
        "header": {"addr": hex(int(header)), "levels": [link(header, i) for i in range(level)]},
        "nodes": nodes,
        "tail": place.get(int(zsl["tail"])),
    }
    print("ZSLDUMP " + json.dumps(out))
