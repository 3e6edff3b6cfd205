//! OVERFLOW on a u7 cell holding 120, incremented by 10: WRAP (the default), SAT
//! and FAIL; and BITFIELD_RO, which only reads.

use redislab_harness::{Kv, Recorder, Report};

/// (row key, label, OVERFLOW mode or none, article).
const MODES: &[(&str, &str, Option<&str>, &str)] = &[
    (
        "default",
        "no OVERFLOW (default): INCRBY u7 0 10 from 120",
        None,
        "2",
    ),
    (
        "wrap",
        "OVERFLOW WRAP INCRBY u7 0 10 from 120",
        Some("WRAP"),
        "2",
    ),
    (
        "sat",
        "OVERFLOW SAT INCRBY u7 0 10 from 120",
        Some("SAT"),
        "127",
    ),
    (
        "fail",
        "OVERFLOW FAIL INCRBY u7 0 10 from 120",
        Some("FAIL"),
        "(nil)",
    ),
];

pub fn declare(r: &mut Report) {
    for &(key, label, _, article) in MODES {
        r.exact(
            &format!("ovf-{key}"),
            &format!("BITFIELD ov {label}"),
            article,
        );
    }
    r.exact(
        "ovf-after-fail",
        "… BITFIELD_RO ov GET u7 0 after FAIL",
        "120",
    );
    r.exact(
        "ro-set",
        "BITFIELD_RO ov SET u7 0 1",
        "ERR BITFIELD_RO only supports the GET subcommand",
    );
}

pub fn run(kv: &mut Kv, rec: &mut Recorder) -> Result<(), String> {
    let key = kv.key("ov");
    for &(row, _, mode, _) in MODES {
        kv.cmd(&["BITFIELD", &key, "SET", "u7", "0", "120"])?;
        let mut args = vec!["BITFIELD", &key];
        if let Some(mode) = mode {
            args.extend(["OVERFLOW", mode]);
        }
        args.extend(["INCRBY", "u7", "0", "10"]);
        rec.put(&format!("ovf-{row}"), kv.reply(&args));
    }
    rec.put(
        "ovf-after-fail",
        kv.reply(&["BITFIELD_RO", &key, "GET", "u7", "0"]),
    );
    rec.put(
        "ro-set",
        kv.reply(&["BITFIELD_RO", &key, "SET", "u7", "0", "1"]),
    );
    Ok(())
}
