#!/usr/bin/env node
// A scripted session with node-redis (package `redis`, v5) or ioredis, printed as a
// canonical JSON transcript, the counterpart of session_py.py.
//
//   NODE_PATH=<dir>/node_modules node session_node.js --client node-redis|ioredis \
//       --port P --protocol 2|3 > transcript.json
//
// ioredis speaks RESP2 only. The session FLUSHALLs the server first: point it only at a
// private server (scripts/client-compat.sh starts one). Orders the protocol leaves
// unspecified (set members, SCAN batches) are sorted.
'use strict';

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : dflt;
};
const clientName = opt('--client');
const host = opt('--host', '127.0.0.1');
const port = Number(opt('--port'));
const protocol = Number(opt('--protocol', '2'));
if (!['node-redis', 'ioredis'].includes(clientName) || !port) {
  console.error('usage: session_node.js --client node-redis|ioredis --port P --protocol 2|3');
  process.exit(2);
}

const steps = [];
function canon(v) {
  if (v === undefined) return { undefined: true };
  if (v === null) return null;
  if (Buffer.isBuffer(v)) return v.toString();
  if (v instanceof Error) return { error: `${v.constructor.name}: ${v.message}` };
  if (v instanceof Map) return { map: [...v.entries()].map(([k, x]) => [canon(k), canon(x)]) };
  if (v instanceof Set) return { set: [...v].map(canon).sort(cmp) };
  if (Array.isArray(v)) return v.map(canon);
  if (typeof v === 'bigint') return { bigint: v.toString() };
  if (typeof v === 'number' && !Number.isInteger(v)) return { float: String(v) };
  if (typeof v === 'object') {
    const o = {};
    for (const k of Object.keys(v)) o[k] = canon(v[k]);
    return { object: o };
  }
  return v;
}
const cmp = (a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : JSON.stringify(a) > JSON.stringify(b) ? 1 : 0);
const srt = (v) => canon(v).slice().sort(cmp);
const withTimeout = (p, ms, what) =>
  Promise.race([p, new Promise((_, rej) => setTimeout(() => rej(new Error(`timeout: ${what}`)), ms))]);

async function step(name, fn, post) {
  try {
    let r = await withTimeout(Promise.resolve().then(fn), 5000, name);
    r = canon(r);
    if (post) r = post(r);
    steps.push({ step: name, result: r });
  } catch (e) {
    steps.push({ step: name, error: `${e.constructor.name}: ${e.message}` });
  }
}
// A failed MULTI/pipeline in node-redis rejects with the replies attached: keep them.
const replies = (e) => ({ rejected: `${e.constructor.name}: ${e.message}`, replies: e.replies, errorIndexes: e.errorIndexes });
const sleep = (ms) => new Promise((res) => setTimeout(res, ms));

async function nodeRedis() {
  const { createClient } = require('redis');
  const version = require('redis/package.json').version;
  const mk = () => {
    // RESP2 is node-redis's default: the option is left out then (with `RESP: 2` set
    // explicitly, v5 sends HELLO 2 on connect).
    const o = { socket: { host, port, connectTimeout: 3000, reconnectStrategy: false } };
    if (protocol === 3) o.RESP = 3;
    const c = createClient(o);
    c.on('error', () => {});
    return c;
  };
  const r = mk();
  await step('connect+ping', async () => {
    await r.connect();
    return r.ping();
  });
  if (!r.isOpen) return `node-redis ${version}`;
  const s = async (name, fn, post) => step(name, fn, post);
  await s('flushall', () => r.flushAll());
  // strings and counters
  await s('set', () => r.set('s:1', 'hello'));
  await s('get', () => r.get('s:1'));
  await s('get missing', () => r.get('s:none'));
  await s('set nx exists', () => r.set('s:1', 'x', { NX: true }));
  await s('set ex + ttl', async () => [await r.set('s:ttl', 'v', { EX: 100 }), await r.ttl('s:ttl')]);
  await s('append+strlen', async () => [await r.append('s:1', ' world'), await r.strLen('s:1')]);
  await s('getrange', () => r.getRange('s:1', 0, 4));
  await s('setrange', async () => [await r.setRange('s:1', 6, 'WORLD'), await r.get('s:1')]);
  await s('mset+mget', async () => [await r.mSet({ 's:a': '1', 's:b': '2' }), await r.mGet(['s:a', 's:b', 's:none'])]);
  await s('getdel', () => r.getDel('s:b'));
  await s('incr', () => r.incr('c:1'));
  await s('incrby', () => r.incrBy('c:1', 41));
  await s('decrby', () => r.decrBy('c:1', 2));
  await s('incrbyfloat', () => r.incrByFloat('c:f', 10.5));
  await s('incrbyfloat precise', () => r.incrByFloat('c:f', 0.1));
  await s('incr not int', () => r.incr('s:1'));
  await s('exists/type', async () => [await r.exists(['s:1', 'c:1', 'nope']), await r.type('s:1'), await r.type('c:1')]);
  await s('expire/ttl/persist', async () => [await r.expire('c:1', 50), await r.ttl('c:1'), await r.persist('c:1'), await r.ttl('c:1')]);
  // hashes
  await s('hset', () => r.hSet('h:1', { f1: 'v1', f2: '2', f3: 'v3' }));
  await s('hget', () => r.hGet('h:1', 'f1'));
  await s('hgetall', () => r.hGetAll('h:1'));
  await s('hincrby', () => r.hIncrBy('h:1', 'f2', 5));
  await s('hincrbyfloat', () => r.hIncrByFloat('h:1', 'f2', 0.25));
  await s('hkeys/hvals/hlen', async () => [await r.hKeys('h:1'), await r.hVals('h:1'), await r.hLen('h:1')]);
  await s('hmget', () => r.hmGet('h:1', ['f1', 'nope', 'f3']));
  await s('hdel/hexists', async () => [await r.hDel('h:1', 'f3'), await r.hExists('h:1', 'f3')]);
  // lists
  await s('rpush/lpush', async () => [await r.rPush('l:1', ['a', 'b', 'c']), await r.lPush('l:1', 'z')]);
  await s('lrange', () => r.lRange('l:1', 0, -1));
  await s('lpop/rpop count', async () => [await r.lPop('l:1'), await r.rPopCount('l:1', 2)]);
  await s('linsert/lindex/llen', async () => [await r.lInsert('l:1', 'BEFORE', 'a', 'x'), await r.lIndex('l:1', 0), await r.lLen('l:1')]);
  await s('blpop ready', () => r.blPop('l:1', 1));
  await s('blpop timeout', () => r.blPop('l:empty', 0.2));
  await s('lmove', async () => [await r.rPush('l:2', ['p', 'q']), await r.lMove('l:2', 'l:3', 'LEFT', 'RIGHT'), await r.lRange('l:3', 0, -1)]);
  // sets
  await s('sadd', () => r.sAdd('set:1', ['a', 'b', 'c', 'd']));
  await s('smembers', () => r.sMembers('set:1'), (v) => (Array.isArray(v) ? v.slice().sort(cmp) : v));
  await s('sismember/smismember', async () => [await r.sIsMember('set:1', 'a'), await r.smIsMember('set:1', ['a', 'x'])]);
  await s('scard/srem', async () => [await r.sCard('set:1'), await r.sRem('set:1', ['d', 'nope'])]);
  await s('sinter/sunion', async () => [await r.sAdd('set:2', ['b', 'c', 'e']), srt(await r.sInter(['set:1', 'set:2'])), srt(await r.sUnion(['set:1', 'set:2']))]);
  // sorted sets
  await s('zadd', () => r.zAdd('z:1', [{ score: 100, value: 'amy' }, { score: 90, value: 'bob' }, { score: 100, value: 'zed' }, { score: 70.5, value: 'kim' }]));
  await s('zrange withscores', () => r.zRangeWithScores('z:1', 0, -1));
  await s('zrange rev withscores', () => r.zRangeWithScores('z:1', 0, -1, { REV: true }));
  await s('zscore', async () => [await r.zScore('z:1', 'kim'), await r.zScore('z:1', 'nope')]);
  await s('zincrby', () => r.zIncrBy('z:1', 2.5, 'bob'));
  await s('zrank/zrevrank', async () => [await r.zRank('z:1', 'bob'), await r.zRevRank('z:1', 'bob'), await r.zRank('z:1', 'nope')]);
  await s('zrangebyscore limit', () => r.zRangeByScoreWithScores('z:1', 80, '+inf', { LIMIT: { offset: 0, count: 2 } }));
  await s('zcard/zcount', async () => [await r.zCard('z:1'), await r.zCount('z:1', '-inf', 95)]);
  await s('zpopmin/zpopmax', async () => [await r.zPopMin('z:1'), await r.zPopMaxCount('z:1', 2)]);
  await s('zmscore', () => r.zmScore('z:1', ['bob', 'nope']));
  await s('zadd gt ch', () => r.zAdd('z:1', [{ score: 1, value: 'bob' }, { score: 5, value: 'new' }], { GT: true, CH: true }));
  await s('zunionstore', async () => [await r.zAdd('z:2', [{ score: 1, value: 'bob' }, { score: 2, value: 'x' }]), await r.zUnionStore('z:u', ['z:1', 'z:2']), await r.zRangeWithScores('z:u', 0, -1)]);
  // geo
  await s('geoadd', () => r.geoAdd('g:1', [{ longitude: 13.361389, latitude: 38.115556, member: 'Palermo' }, { longitude: 15.087269, latitude: 37.502669, member: 'Catania' }]));
  await s('geopos', () => r.geoPos('g:1', ['Palermo', 'nope']));
  await s('geodist km', () => r.geoDist('g:1', 'Palermo', 'Catania', 'km'));
  await s('geohash', () => r.geoHash('g:1', ['Palermo', 'Catania']));
  await s('geosearch withdist', () => r.geoSearchWith('g:1', { longitude: 15, latitude: 37 }, { radius: 200, unit: 'km' }, ['WITHDIST', 'WITHCOORD'], { SORT: 'ASC' }));
  // HyperLogLog
  await s('pfadd/pfcount', async () => [await r.pfAdd('hll:1', Array.from({ length: 100 }, (_, i) => `e${i}`)), await r.pfCount('hll:1')]);
  await s('pfmerge', async () => [await r.pfAdd('hll:2', ['e1', 'x1', 'x2']), await r.pfMerge('hll:3', ['hll:1', 'hll:2']), await r.pfCount('hll:3')]);
  // bitmaps and bitfields
  await s('setbit/getbit', async () => [await r.setBit('b:1', 7, 1), await r.setBit('b:1', 100, 1), await r.getBit('b:1', 7), await r.getBit('b:1', 8)]);
  await s('bitcount/bitpos', async () => [await r.bitCount('b:1'), await r.bitPos('b:1', 1), await r.bitCount('b:1', { start: 0, end: 0 })]);
  await s('bitop', async () => [await r.setBit('b:2', 7, 1), await r.bitOp('AND', 'b:3', ['b:1', 'b:2']), await r.bitCount('b:3')]);
  await s('bitfield', () => r.bitField('bf:1', [
    { operation: 'SET', encoding: 'u8', offset: 0, value: 200 },
    { operation: 'INCRBY', encoding: 'u8', offset: 0, increment: 100 },
    { operation: 'GET', encoding: 'u4', offset: 0 }]));
  await s('bitfield overflow sat', () => r.bitField('bf:1', [
    { operation: 'OVERFLOW', behavior: 'SAT' },
    { operation: 'INCRBY', encoding: 'u8', offset: 8, increment: 300 }]));
  // pipelines and transactions
  await s('pipeline', () => r.multi().set('p:1', 'a').incr('p:n').incr('p:n').get('p:1').lPush('p:l', ['1', '2']).lRange('p:l', 0, -1).incr('p:1').execAsPipeline().catch(replies));
  await s('multi/exec', () => r.multi().set('t:1', '1').incr('t:1').hSet('t:h', 'a', 'b').hGetAll('t:h').zAdd('t:z', { score: 1.5, value: 'm' }).zScore('t:z', 'm').exec().catch(replies));
  await s('watch conflict', async () => {
    const w = mk();
    await w.connect();
    try {
      await w.watch('t:w');
      await r.set('t:w', 'theirs');
      try {
        await w.multi().set('t:w', 'mine').exec();
        return 'executed';
      } catch (e) {
        return `${e.constructor.name}: ${e.message}`;
      }
    } finally {
      await w.quit().catch(() => {});
    }
  });
  await s('after watch', () => r.get('t:w'));
  await s('multi with runtime error', () => r.multi().set('t:e', 'x').incr('t:e').get('t:e').exec().catch(replies));
  // pub/sub
  await s('pubsub', async () => {
    const sub = mk();
    await sub.connect();
    const got = [];
    await sub.subscribe('chan:1', (msg, ch) => got.push(['message', ch, msg]));
    await sub.pSubscribe('pat:*', (msg, ch) => got.push(['pmessage', ch, msg]));
    const n = [await r.publish('chan:1', 'hello'), await r.publish('pat:x', 'world')];
    for (let i = 0; i < 30 && got.length < 2; i++) await sleep(100);
    // (node-redis 5.9's argument-less unsubscribe() never resolves: name them)
    await sub.unsubscribe('chan:1');
    await sub.pUnsubscribe('pat:*');
    await sub.quit().catch(() => {});
    return [n, got];
  });
  // scripting
  await s('eval types', () => r.eval("return {1, 'two', 3.99, {'nested', 5}, redis.status_reply('OK')}"));
  await s('eval keys/argv', () => r.eval("redis.call('SET', KEYS[1], ARGV[1]); return redis.call('GET', KEYS[1])", { keys: ['e:1'], arguments: ['val'] }));
  await s('eval error', () => r.eval("return redis.error_reply('MYERR custom')"));
  await s('eval nil/false/true', () => r.eval('return {false, true, nil, 7}'));
  await s('script load/evalsha', async () => {
    const sha = await r.scriptLoad("return ARGV[1] .. '!'");
    return [sha, await r.evalSha(sha, { arguments: ['hi'] }), await r.scriptExists([sha, '0'.repeat(40)])];
  });
  await s('evalsha missing', () => r.evalSha('0'.repeat(40)));
  // SCAN iteration
  await s('scan fill', async () => {
    const m = r.multi();
    for (let i = 0; i < 300; i++) m.set(`x:${i}`, String(i));
    const h = {};
    for (let i = 0; i < 200; i++) h[`f${i}`] = String(i);
    m.hSet('sh', h);
    m.sAdd('ss', Array.from({ length: 200 }, (_, i) => String(i)));
    m.zAdd('sz', Array.from({ length: 200 }, (_, i) => ({ score: i, value: `m${i}` })));
    await m.execAsPipeline();
    return 'filled';
  });
  const collect = async (it) => {
    const out = [];
    for await (const batch of it) {
      if (Array.isArray(batch)) out.push(...batch);
      else out.push(batch);
    }
    return out.map(canon).sort(cmp);
  };
  await s('scan match', () => collect(r.scanIterator({ MATCH: 'x:1*', COUNT: 20 })));
  await s('scan type', () => collect(r.scanIterator({ TYPE: 'zset' })));
  await s('hscan', async () => (await collect(r.hScanIterator('sh', { MATCH: 'f1*' }))).map((e) => (e && e.object ? e.object.field : e)).sort(cmp));
  await s('sscan', () => collect(r.sScanIterator('ss', { COUNT: 50 })));
  await s('zscan', async () => (await collect(r.zScanIterator('sz', { MATCH: 'm2*' }))).map((e) => (e && e.object ? e.object.value : e)).sort(cmp));
  await s('dbsize', () => r.dbSize());
  // errors
  await s('wrongtype', () => r.lPush('s:1', 'x'));
  await s('unknown command', () => r.sendCommand(['NOSUCHCMD', 'a']));
  await s('wrong arity', () => r.sendCommand(['GET']));
  await s('syntax error', () => r.sendCommand(['SET', 'k', 'v', 'BOGUS']));
  await s('zadd bad score', () => r.sendCommand(['ZADD', 'z:1', 'notafloat', 'm']));
  await s('ping after errors', () => r.ping());
  await r.quit().catch(() => {});
  return `node-redis ${version}`;
}

async function ioRedis() {
  const Redis = require('ioredis');
  const version = require('ioredis/package.json').version;
  const mk = () => {
    const c = new Redis({ host, port, lazyConnect: true, connectTimeout: 3000, maxRetriesPerRequest: 0,
      retryStrategy: () => null, enableOfflineQueue: false });
    c.on('error', () => {});
    return c;
  };
  const r = mk();
  await step('connect+ping', async () => {
    await r.connect();
    return r.ping();
  });
  if (r.status !== 'ready') return `ioredis ${version}`;
  const s = step;
  await s('flushall', () => r.flushall());
  await s('set', () => r.set('s:1', 'hello'));
  await s('get', () => r.get('s:1'));
  await s('get missing', () => r.get('s:none'));
  await s('set nx exists', () => r.set('s:1', 'x', 'NX'));
  await s('set ex + ttl', async () => [await r.set('s:ttl', 'v', 'EX', 100), await r.ttl('s:ttl')]);
  await s('append+strlen', async () => [await r.append('s:1', ' world'), await r.strlen('s:1')]);
  await s('getrange', () => r.getrange('s:1', 0, 4));
  await s('setrange', async () => [await r.setrange('s:1', 6, 'WORLD'), await r.get('s:1')]);
  await s('mset+mget', async () => [await r.mset({ 's:a': '1', 's:b': '2' }), await r.mget('s:a', 's:b', 's:none')]);
  await s('getdel', () => r.getdel('s:b'));
  await s('incr', () => r.incr('c:1'));
  await s('incrby', () => r.incrby('c:1', 41));
  await s('decrby', () => r.decrby('c:1', 2));
  await s('incrbyfloat', () => r.incrbyfloat('c:f', 10.5));
  await s('incrbyfloat precise', () => r.incrbyfloat('c:f', 0.1));
  await s('incr not int', () => r.incr('s:1'));
  await s('exists/type', async () => [await r.exists('s:1', 'c:1', 'nope'), await r.type('s:1'), await r.type('c:1')]);
  await s('expire/ttl/persist', async () => [await r.expire('c:1', 50), await r.ttl('c:1'), await r.persist('c:1'), await r.ttl('c:1')]);
  await s('hset', () => r.hset('h:1', { f1: 'v1', f2: '2', f3: 'v3' }));
  await s('hget', () => r.hget('h:1', 'f1'));
  await s('hgetall', () => r.hgetall('h:1'));
  await s('hincrby', () => r.hincrby('h:1', 'f2', 5));
  await s('hincrbyfloat', () => r.hincrbyfloat('h:1', 'f2', 0.25));
  await s('hkeys/hvals/hlen', async () => [await r.hkeys('h:1'), await r.hvals('h:1'), await r.hlen('h:1')]);
  await s('hmget', () => r.hmget('h:1', 'f1', 'nope', 'f3'));
  await s('hdel/hexists', async () => [await r.hdel('h:1', 'f3'), await r.hexists('h:1', 'f3')]);
  await s('rpush/lpush', async () => [await r.rpush('l:1', 'a', 'b', 'c'), await r.lpush('l:1', 'z')]);
  await s('lrange', () => r.lrange('l:1', 0, -1));
  await s('lpop/rpop count', async () => [await r.lpop('l:1'), await r.rpop('l:1', 2)]);
  await s('linsert/lindex/llen', async () => [await r.linsert('l:1', 'BEFORE', 'a', 'x'), await r.lindex('l:1', 0), await r.llen('l:1')]);
  await s('blpop ready', () => r.blpop('l:1', 1));
  await s('blpop timeout', () => r.blpop('l:empty', 0.2));
  await s('lmove', async () => [await r.rpush('l:2', 'p', 'q'), await r.lmove('l:2', 'l:3', 'LEFT', 'RIGHT'), await r.lrange('l:3', 0, -1)]);
  await s('sadd', () => r.sadd('set:1', 'a', 'b', 'c', 'd'));
  await s('smembers', () => r.smembers('set:1'), (v) => (Array.isArray(v) ? v.slice().sort(cmp) : v));
  await s('sismember/smismember', async () => [await r.sismember('set:1', 'a'), await r.smismember('set:1', 'a', 'x')]);
  await s('scard/srem', async () => [await r.scard('set:1'), await r.srem('set:1', 'd', 'nope')]);
  await s('sinter/sunion', async () => [await r.sadd('set:2', 'b', 'c', 'e'), srt(await r.sinter('set:1', 'set:2')), srt(await r.sunion('set:1', 'set:2'))]);
  await s('zadd', () => r.zadd('z:1', 100, 'amy', 90, 'bob', 100, 'zed', 70.5, 'kim'));
  await s('zrange withscores', () => r.zrange('z:1', 0, -1, 'WITHSCORES'));
  await s('zrevrange withscores', () => r.zrevrange('z:1', 0, 1, 'WITHSCORES'));
  await s('zrange rev withscores', () => r.zrange('z:1', 0, -1, 'REV', 'WITHSCORES'));
  await s('zscore', async () => [await r.zscore('z:1', 'kim'), await r.zscore('z:1', 'nope')]);
  await s('zincrby', () => r.zincrby('z:1', 2.5, 'bob'));
  await s('zrank/zrevrank', async () => [await r.zrank('z:1', 'bob'), await r.zrevrank('z:1', 'bob'), await r.zrank('z:1', 'nope')]);
  await s('zrank withscore', () => r.zrank('z:1', 'bob', 'WITHSCORE'));
  await s('zrangebyscore limit', () => r.zrangebyscore('z:1', 80, '+inf', 'WITHSCORES', 'LIMIT', 0, 2));
  await s('zcard/zcount', async () => [await r.zcard('z:1'), await r.zcount('z:1', '-inf', 95)]);
  await s('zpopmin/zpopmax', async () => [await r.zpopmin('z:1'), await r.zpopmax('z:1', 2)]);
  await s('zmscore', () => r.zmscore('z:1', 'bob', 'nope'));
  await s('zadd gt ch', () => r.zadd('z:1', 'GT', 'CH', 1, 'bob', 5, 'new'));
  await s('zunionstore', async () => [await r.zadd('z:2', 1, 'bob', 2, 'x'), await r.zunionstore('z:u', 2, 'z:1', 'z:2'), await r.zrange('z:u', 0, -1, 'WITHSCORES')]);
  await s('geoadd', () => r.geoadd('g:1', 13.361389, 38.115556, 'Palermo', 15.087269, 37.502669, 'Catania'));
  await s('geopos', () => r.geopos('g:1', 'Palermo', 'nope'));
  await s('geodist km', () => r.geodist('g:1', 'Palermo', 'Catania', 'km'));
  await s('geohash', () => r.geohash('g:1', 'Palermo', 'Catania'));
  await s('geosearch withdist', () => r.geosearch('g:1', 'FROMLONLAT', 15, 37, 'BYRADIUS', 200, 'km', 'ASC', 'WITHDIST', 'WITHCOORD'));
  await s('pfadd/pfcount', async () => [await r.pfadd('hll:1', ...Array.from({ length: 100 }, (_, i) => `e${i}`)), await r.pfcount('hll:1')]);
  await s('pfmerge', async () => [await r.pfadd('hll:2', 'e1', 'x1', 'x2'), await r.pfmerge('hll:3', 'hll:1', 'hll:2'), await r.pfcount('hll:3')]);
  await s('setbit/getbit', async () => [await r.setbit('b:1', 7, 1), await r.setbit('b:1', 100, 1), await r.getbit('b:1', 7), await r.getbit('b:1', 8)]);
  await s('bitcount/bitpos', async () => [await r.bitcount('b:1'), await r.bitpos('b:1', 1), await r.bitcount('b:1', 0, 0)]);
  await s('bitop', async () => [await r.setbit('b:2', 7, 1), await r.bitop('AND', 'b:3', 'b:1', 'b:2'), await r.bitcount('b:3')]);
  await s('bitfield', () => r.bitfield('bf:1', 'SET', 'u8', 0, 200, 'INCRBY', 'u8', 0, 100, 'GET', 'u4', 0));
  await s('bitfield overflow sat', () => r.bitfield('bf:1', 'OVERFLOW', 'SAT', 'INCRBY', 'u8', 8, 300));
  await s('pipeline', () => r.pipeline().set('p:1', 'a').incr('p:n').incr('p:n').get('p:1').lpush('p:l', 1, 2).lrange('p:l', 0, -1).incr('p:1').exec());
  await s('multi/exec', () => r.multi().set('t:1', '1').incr('t:1').hset('t:h', 'a', 'b').hgetall('t:h').zadd('t:z', 1.5, 'm').zscore('t:z', 'm').exec());
  await s('watch conflict', async () => {
    const w = mk();
    await w.connect();
    try {
      await w.watch('t:w');
      await r.set('t:w', 'theirs');
      const res = await w.multi().set('t:w', 'mine').exec();
      return res === null ? 'aborted (null)' : ['executed', res];
    } finally {
      w.disconnect();
    }
  });
  await s('after watch', () => r.get('t:w'));
  await s('multi with runtime error', () => r.multi().set('t:e', 'x').incr('t:e').get('t:e').exec());
  await s('pubsub', async () => {
    const sub = mk();
    await sub.connect();
    const got = [];
    sub.on('message', (ch, msg) => got.push(['message', ch, msg]));
    sub.on('pmessage', (pat, ch, msg) => got.push(['pmessage', pat, ch, msg]));
    const subs = [await sub.subscribe('chan:1'), await sub.psubscribe('pat:*')];
    const n = [await r.publish('chan:1', 'hello'), await r.publish('pat:x', 'world')];
    for (let i = 0; i < 30 && got.length < 2; i++) await sleep(100);
    sub.disconnect();
    return [subs, n, got];
  });
  await s('eval types', () => r.eval("return {1, 'two', 3.99, {'nested', 5}, redis.status_reply('OK')}", 0));
  await s('eval keys/argv', () => r.eval("redis.call('SET', KEYS[1], ARGV[1]); return redis.call('GET', KEYS[1])", 1, 'e:1', 'val'));
  await s('eval error', () => r.eval("return redis.error_reply('MYERR custom')", 0));
  await s('eval nil/false/true', () => r.eval('return {false, true, nil, 7}', 0));
  await s('script load/evalsha', async () => {
    const sha = await r.script('LOAD', "return ARGV[1] .. '!'");
    return [sha, await r.evalsha(sha, 0, 'hi'), await r.script('EXISTS', sha, '0'.repeat(40))];
  });
  await s('evalsha missing', () => r.evalsha('0'.repeat(40), 0));
  await s('scan fill', async () => {
    const p = r.pipeline();
    for (let i = 0; i < 300; i++) p.set(`x:${i}`, String(i));
    const h = {};
    for (let i = 0; i < 200; i++) h[`f${i}`] = String(i);
    p.hset('sh', h);
    p.sadd('ss', ...Array.from({ length: 200 }, (_, i) => String(i)));
    const z = [];
    for (let i = 0; i < 200; i++) z.push(i, `m${i}`);
    p.zadd('sz', ...z);
    await p.exec();
    return 'filled';
  });
  const stream = (st, pairs) => new Promise((res, rej) => {
    const out = [];
    st.on('data', (batch) => {
      for (let i = 0; i < batch.length; i += pairs ? 2 : 1) out.push(batch[i]);
    });
    st.on('end', () => res(out.sort()));
    st.on('error', rej);
  });
  await s('scan match', () => stream(r.scanStream({ match: 'x:1*', count: 20 }), false));
  await s('scan type', () => stream(r.scanStream({ type: 'zset' }), false));
  await s('hscan', () => stream(r.hscanStream('sh', { match: 'f1*' }), true));
  await s('sscan', () => stream(r.sscanStream('ss', { count: 50 }), false));
  await s('zscan', () => stream(r.zscanStream('sz', { match: 'm2*' }), true));
  await s('dbsize', () => r.dbsize());
  await s('wrongtype', () => r.lpush('s:1', 'x'));
  await s('unknown command', () => r.call('NOSUCHCMD', 'a'));
  await s('wrong arity', () => r.call('GET'));
  await s('syntax error', () => r.call('SET', 'k', 'v', 'BOGUS'));
  await s('zadd bad score', () => r.zadd('z:1', 'notafloat', 'm'));
  await s('ping after errors', () => r.ping());
  r.disconnect();
  return `ioredis ${version}`;
}

(async () => {
  let client;
  try {
    client = clientName === 'node-redis' ? await nodeRedis() : await ioRedis();
  } catch (e) {
    steps.push({ step: '(session aborted)', error: `${e.constructor.name}: ${e.message}` });
    client = clientName;
  }
  process.stdout.write(JSON.stringify({ client, protocol, steps }, null, 1) + '\n');
  process.exit(0);
})();
