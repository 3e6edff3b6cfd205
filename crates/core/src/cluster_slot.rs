//! The Redis Cluster key slot: which of the 16384 hash slots a key belongs to.
//!
//! Redis Cluster shards the keyspace by slot, and a multi-key command (ZUNIONSTORE,
//! MGET, ...) is refused with CROSSSLOT unless every key has the same slot. The
//! slot is `CRC16(key) mod 16384`, where the CRC is the XMODEM variant of
//! CRC16-CCITT (polynomial 0x1021, initial value 0, no reflection, no final XOR),
//! and where only part of the key is hashed when it has a *hash tag*:
//!
//! * find the first `{` in the key;
//! * then the first `}` after it;
//! * if both exist and at least one byte lies between them, hash only those bytes;
//!   otherwise (no `{`, no `}` after it, or `{}` empty) hash the whole key.
//!
//! So `leaderboard:{global}:day:2026-06-01` and `leaderboard:{global}:all` both
//! hash `global` and share a slot; `{}x` hashes all of `{}x`; `a{{b}}` hashes `{b`;
//! `x{a}{b}` hashes `a`. These are the rules of the Cluster specification and of
//! `keyHashSlot` in Redis; this module is checked against a real server's
//! `CLUSTER KEYSLOT` by `crates/harness/tests/keyslot_differential.rs`.

/// Number of hash slots in a Redis Cluster.
pub const SLOTS: u16 = 16384;

/// CRC16 lookup table for polynomial 0x1021 (MSB first), built at compile time.
const TABLE: [u16; 256] = build_table();

const fn build_table() -> [u16; 256] {
    let mut table = [0u16; 256];
    let mut byte = 0;
    while byte < 256 {
        let mut crc = (byte as u16) << 8;
        let mut bit = 0;
        while bit < 8 {
            crc = if crc & 0x8000 != 0 {
                (crc << 1) ^ 0x1021
            } else {
                crc << 1
            };
            bit += 1;
        }
        table[byte] = crc;
        byte += 1;
    }
    table
}

/// CRC16/XMODEM of `bytes` (the check value of `123456789` is 0x31C3).
pub fn crc16(bytes: &[u8]) -> u16 {
    bytes.iter().fold(0u16, |crc, &b| {
        (crc << 8) ^ TABLE[(((crc >> 8) as u8) ^ b) as usize]
    })
}

/// The part of `key` that is hashed: the hash tag if there is a non-empty one,
/// else the whole key.
pub fn hash_tag(key: &[u8]) -> &[u8] {
    let Some(open) = key.iter().position(|&b| b == b'{') else {
        return key;
    };
    let rest = &key[open + 1..];
    match rest.iter().position(|&b| b == b'}') {
        Some(close) if close > 0 => &rest[..close],
        _ => key,
    }
}

/// The slot Redis Cluster assigns to `key`, in `0..16384`.
pub fn key_slot(key: &[u8]) -> u16 {
    // 16384 is a power of two: the modulo is a mask, as in Redis.
    crc16(hash_tag(key)) & (SLOTS - 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc16_check_value() {
        assert_eq!(crc16(b"123456789"), 0x31C3);
        assert_eq!(crc16(b""), 0);
    }

    #[test]
    fn slots_of_known_keys() {
        // Values read from a real Redis 8.6.3 with CLUSTER KEYSLOT.
        for (key, slot) in [
            ("foo", 12182),
            ("123456789", 12739),
            ("{user1000}.following", 3443),
            ("leaderboard:day:2026-06-01", 10104),
            ("leaderboard:week:2026-W22", 8411),
            ("leaderboard:{global}:all", 10408),
            ("global", 10408),
            ("{}foo", 9500),
            ("foo{}{bar}", 8363),
            ("foo{{bar}}zap", 4015),
            ("foo{bar}{zap}", 5061),
            ("", 0),
        ] {
            assert_eq!(key_slot(key.as_bytes()), slot, "{key}");
        }
    }

    #[test]
    fn hash_tag_rules() {
        assert_eq!(hash_tag(b"a{b}c"), b"b");
        assert_eq!(hash_tag(b"{}x"), b"{}x");
        assert_eq!(hash_tag(b"x{"), b"x{");
        assert_eq!(hash_tag(b"x}y{z"), b"x}y{z");
        assert_eq!(hash_tag(b"a{{b}}"), b"{b");
        assert_eq!(hash_tag(b"x{a}{b}"), b"a");
        assert_eq!(hash_tag(b"{}{a}"), b"{}{a}");
        assert_eq!(key_slot(b"{user1000}.following"), key_slot(b"user1000"));
    }
}
