//! The article's sliding-window script, a fixed-window counter to compare it with,
//! and the random request ids the article uses as members.

use rand::Rng;
use redis::Connection;

/// Article 04, section 5, unchanged.
pub const SLIDING: &str = "local key = KEYS[1]
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

/// One request through the sliding window; `member` is ARGV[4].
pub fn sliding_cmd(key: &str, now: i64, window: i64, limit: i64, member: &str) -> redis::Cmd {
    let mut cmd = redis::cmd("EVAL");
    cmd.arg(SLIDING)
        .arg(1)
        .arg(key)
        .arg(now)
        .arg(window)
        .arg(limit)
        .arg(member);
    cmd
}

pub fn sliding(
    conn: &mut Connection,
    key: &str,
    now: i64,
    window: i64,
    limit: i64,
    member: &str,
) -> Result<i64, String> {
    sliding_cmd(key, now, window, limit, member)
        .query(conn)
        .map_err(|e| e.to_string())
}

/// The fixed window: INCR a counter named after the window, EXPIRE it on the first
/// request, allow while the count is within the limit.
pub fn fixed(
    conn: &mut Connection,
    prefix: &str,
    now: i64,
    window: i64,
    limit: i64,
) -> Result<i64, String> {
    let key = format!("{prefix}:{}", now / window);
    let count: i64 = redis::cmd("INCR")
        .arg(&key)
        .query(conn)
        .map_err(|e| e.to_string())?;
    if count == 1 {
        let _: i64 = redis::cmd("EXPIRE")
            .arg(&key)
            .arg(window / 1000)
            .query(conn)
            .map_err(|e| e.to_string())?;
    }
    Ok(i64::from(count <= limit))
}

/// A version-4 UUID in its usual text form (`UUID.randomUUID().toString()`).
pub fn uuid(rng: &mut impl Rng) -> String {
    let mut b: [u8; 16] = rng.gen();
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}
