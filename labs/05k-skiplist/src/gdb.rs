//! Reads a zset's skiplist out of a live redis-server with gdb.
//!
//! `DEBUG OBJECT key` gives the address of the key's object; gdb attaches to the
//! server (pausing it), and `zsl_dump.py` follows `zset->zsl`, the header and the
//! forward pointers in the process's own memory, using the types of the binary's
//! debug information (Redis builds with `-g`). Nothing is inferred from replies.
//! When gdb is missing or the kernel does not allow ptrace, the error says so and
//! the row shows it instead of a picture.

use std::process::Command;

use redislab_harness::Kv;

const SCRIPT: &str = include_str!("zsl_dump.py");

/// The object's address from `DEBUG OBJECT key` (`Value at:0x7f… refcount:…`).
pub fn object_address(kv: &mut Kv, key: &str) -> Result<String, String> {
    let reply = kv.reply(&["DEBUG", "OBJECT", key]);
    reply
        .split("Value at:")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .map(str::to_string)
        .ok_or_else(|| format!("DEBUG OBJECT {key}: {reply}"))
}

/// Runs the script in gdb attached to `pid`, on the object at `addr`, in `mode`
/// (`nodes` or `levels`); returns the JSON it printed.
pub fn read(pid: u32, addr: &str, mode: &str) -> Result<serde_json::Value, String> {
    let dir = std::env::temp_dir().join(format!("redislab-05k-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let script = dir.join("zsl_dump.py");
    std::fs::write(&script, SCRIPT).map_err(|e| e.to_string())?;
    let out = Command::new("gdb")
        .args(["-nx", "-batch", "-p", &pid.to_string(), "-x"])
        .arg(&script)
        .env("REDISLAB_ROBJ", addr)
        .env("REDISLAB_MODE", mode)
        .output();
    let _ = std::fs::remove_dir_all(&dir);
    let out =
        out.map_err(|e| format!("gdb could not run ({e}); install it with `apt-get install gdb`"))?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    if let Some(json) = stdout.lines().find_map(|l| l.strip_prefix("ZSLDUMP ")) {
        return serde_json::from_str(json).map_err(|e| format!("gdb printed bad JSON: {e}"));
    }
    if let Some(why) = stdout.lines().find_map(|l| l.strip_prefix("ZSLERR ")) {
        return Err(format!("gdb: {}", why.trim()));
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    let why = stderr
        .lines()
        .chain(stdout.lines())
        .find(|l| {
            l.contains("ptrace") || l.contains("Operation not permitted") || l.contains("Error")
        })
        .unwrap_or("gdb printed no skiplist")
        .trim();
    Err(format!(
        "gdb could not read the server's memory: {}",
        stable(why)
    ))
}

/// A Python exception's line without its message, which may quote bytes read
/// from the server's memory (`UnicodeDecodeError: … byte 0xbc …` changes run to
/// run): only the exception's name is kept.
fn stable(line: &str) -> String {
    line.split(|c: char| !c.is_ascii_alphanumeric())
        .find(|w| w.ends_with("Error") && w.len() > "Error".len())
        .map(|name| format!("{name} while following the node chain"))
        .unwrap_or_else(|| line.to_string())
}
