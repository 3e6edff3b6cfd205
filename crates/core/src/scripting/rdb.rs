//! The bits of Redis's RDB format that FUNCTION DUMP / RESTORE use
//! (src/functions.c `functionsCreateWithLibraryCtx`, src/cluster.c
//! `verifyDumpPayload`), on top of the value serialization in [`crate::rdb`].
//!
//! A payload is, for each library, the opcode `RDB_OPCODE_FUNCTION2` (245) and
//! the library's code as an RDB string; then the RDB version and the CRC64 footer
//! that every DUMP payload carries.
//!
//! The code is written as Redis's `rdbSaveRawString` writes strings: LZF
//! compressed when longer than 20 bytes and `rdbcompression` is on, so a
//! library's dump is byte for byte Redis's.

pub use crate::rdb::read::Reader;
pub use crate::rdb::{seal_payload, verify_payload};

pub const OPCODE_FUNCTION2: u8 = 245;
pub const OPCODE_FUNCTION_PRE_GA: u8 = 246;

/// `rdbSaveRawString`: short canonical integers in an integer encoding, long
/// strings LZF-compressed if `compress` (and if that saves space), anything
/// else with its length.
pub fn save_string(out: &mut Vec<u8>, s: &[u8], compress: bool) {
    crate::rdb::write::save_raw_string(out, s, compress);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_dump_is_redis_s() {
        // Redis 8.6.3's FUNCTION DUMP of no libraries.
        let mut empty = Vec::new();
        seal_payload(&mut empty);
        assert_eq!(
            empty,
            [0x0d, 0x00, 0xff, 0x32, 0xd5, 0xf3, 0x08, 0xca, 0xd5, 0x1a]
        );
        assert!(verify_payload(&empty));
        let mut bad = empty.clone();
        bad[3] ^= 1;
        assert!(!verify_payload(&bad));
    }

    #[test]
    fn strings_in_every_encoding() {
        for s in [
            &b"hello"[..],
            b"-5",
            b"300",
            b"70000",
            b"007",
            &[b'x'; 70],
            &[b'y'; 20000],
        ] {
            let mut out = Vec::new();
            save_string(&mut out, s, false);
            let mut r = Reader::new(&out);
            assert_eq!(r.string().ok().as_deref(), Some(s));
            assert_eq!(r.remaining(), 0);
        }
        let mut out = Vec::new();
        save_string(&mut out, b"-5", false);
        assert_eq!(out, [0xc0, 0xfb]);
    }
}
