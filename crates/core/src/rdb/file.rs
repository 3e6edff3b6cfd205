//! A whole RDB image (`rdbSaveRio` / `rdbLoadRio`), kept in memory: what DEBUG
//! RELOAD saves and loads back.
//!
//! Layout: `REDIS0013`, then for each non-empty database `SELECTDB` and
//! `RESIZEDB` (keys, keys with a TTL), each key as `[EXPIRETIME_MS t]` type, key,
//! body; `EOF` and the CRC64 of everything before it. How this differs from the
//! C code: no AUX fields (version, creation time, replication ids), no
//! functions, no module data, no IDLE/FREQ opcodes (Redis writes those only
//! under an LRU/LFU `maxmemory-policy`); the loader skips AUX fields and those
//! opcodes if another writer put them in.

use super::{crc64, opcode, read, write, LoadError, Options, RDB_VERSION};
use crate::keyspace::Value;

/// One key as loaded: database, key, value, absolute expiry (Unix ms).
pub type LoadedKey = (usize, Vec<u8>, Value, Option<i64>);

/// The image's header, `REDIS` and the version in 4 digits.
pub fn begin() -> Vec<u8> {
    format!("REDIS{RDB_VERSION:04}").into_bytes()
}

/// Appends database `db` with its (key, value, expiry) entries (nothing for
/// an empty database).
pub fn push_db(
    out: &mut Vec<u8>,
    db: usize,
    keys: &[(&[u8], &Value, Option<i64>)],
    compress: bool,
) {
    if keys.is_empty() {
        return;
    }
    out.push(opcode::SELECTDB);
    write::save_len(out, db as u64);
    out.push(opcode::RESIZEDB);
    write::save_len(out, keys.len() as u64);
    let volatile = keys.iter().filter(|(_, _, t)| t.is_some()).count();
    write::save_len(out, volatile as u64);
    for &(key, value, expiry) in keys {
        if let Some(t) = expiry {
            out.push(opcode::EXPIRETIME_MS);
            out.extend_from_slice(&t.to_le_bytes());
        }
        write::save_object_type(out, value);
        write::save_raw_string(out, key, compress);
        write::save_object(out, value, compress);
    }
}

/// Ends the image: `EOF` and the CRC64.
pub fn finish(mut out: Vec<u8>) -> Vec<u8> {
    out.push(opcode::EOF);
    let crc = crc64::crc64(0, &out);
    out.extend_from_slice(&crc.to_le_bytes());
    out
}

/// Loads an image [`save`] (or Redis, for the types the core has) wrote.
pub fn load(image: &[u8], opts: &Options) -> Result<Vec<LoadedKey>, LoadError> {
    if image.len() < 9 + 1 + 8 || &image[..5] != b"REDIS" {
        return Err(LoadError::Corrupt);
    }
    let version: u16 = std::str::from_utf8(&image[5..9])
        .ok()
        .and_then(|v| v.parse().ok())
        .ok_or(LoadError::Corrupt)?;
    if version > RDB_VERSION {
        return Err(LoadError::Corrupt);
    }
    let (body, crc) = image.split_at(image.len() - 8);
    let mut c = [0u8; 8];
    c.copy_from_slice(crc);
    let crc = u64::from_le_bytes(c);
    if crc != 0 && crc != crc64::crc64(0, body) {
        return Err(LoadError::Corrupt);
    }
    let mut r = read::Reader::new(&body[9..]);
    let mut db = 0usize;
    let mut expiry: Option<i64> = None;
    let mut keys = Vec::new();
    loop {
        let t = r.byte()?;
        match t {
            opcode::EOF => break,
            opcode::SELECTDB => {
                db = usize::try_from(r.length()?).map_err(|_| LoadError::Corrupt)?;
                if db >= crate::server::DATABASES {
                    return Err(LoadError::Corrupt);
                }
            }
            opcode::RESIZEDB => {
                r.length()?;
                r.length()?;
            }
            opcode::EXPIRETIME_MS => expiry = Some(r.ms()? as i64),
            opcode::EXPIRETIME => {
                let d = r.take(4)?;
                let secs = i32::from_le_bytes([d[0], d[1], d[2], d[3]]);
                expiry = Some(i64::from(secs) * 1000);
            }
            opcode::AUX => {
                r.string()?;
                r.string()?;
            }
            opcode::IDLE => {
                r.length()?;
            }
            opcode::FREQ => {
                r.byte()?;
            }
            _ => {
                let key = r.string()?;
                let deadline = expiry.take();
                // An empty collection is skipped, as `rdbLoadRio` skips it.
                match read::load_object(&mut r, t, key.len(), opts) {
                    Ok(value) => keys.push((db, key, value, deadline)),
                    Err(LoadError::EmptyKey) => {}
                    Err(e) => return Err(e),
                }
            }
        }
    }
    if r.remaining() != 0 {
        return Err(LoadError::Corrupt);
    }
    Ok(keys)
}
