//! Strings and hashes beside the zsets: what the same data really takes on each
//! side, the core's live heap in process (counting allocator) against Redis's
//! `used_memory` growth (see `redislab_harness::heap`). MEMORY USAGE (the rows
//! above) stays Redis's model on both backends; these rows are the real figures.

use redislab_harness::heap::{argv, Case};

/// String keys and hash fields per case at scale 1.
const N: f64 = 100_000.0;
/// Fields of each small (listpack) hash, under hash-max-listpack-entries (512).
const SMALL_FIELDS: usize = 10;

/// The cases, sized by `scale` (at least 1,000 elements each).
pub fn cases(prefix: &str, scale: f64) -> Vec<Case> {
    let n = ((N * scale).round() as usize).max(1_000);
    let value = |i: usize| crate::member("uuid", i);
    let strings: Vec<_> = (0..n)
        .map(|i| argv(&["SET", &format!("{prefix}s:{i:08}"), &value(i)]))
        .collect();
    let small = n / SMALL_FIELDS;
    let small_hashes: Vec<_> = (0..small)
        .map(|h| {
            let mut cmd = argv(&["HSET", &format!("{prefix}hs:{h:07}")]);
            for f in 0..SMALL_FIELDS {
                cmd.push(format!("f{f}").into_bytes());
                cmd.push(crate::member("id", h * SMALL_FIELDS + f).into_bytes());
            }
            cmd
        })
        .collect();
    let big = format!("{prefix}hb");
    let big_hash: Vec<_> = (0..n)
        .step_by(1_000)
        .map(|start| {
            let mut cmd = argv(&["HSET", &big]);
            for i in start..(start + 1_000).min(n) {
                cmd.push(crate::member("id", i).into_bytes());
                cmd.push(value(i).into_bytes());
            }
            cmd
        })
        .collect();
    let keys_of = |cmds: &[Vec<Vec<u8>>]| cmds.iter().map(|c| c[1].clone()).collect();
    vec![
        Case {
            key: "heap-string".into(),
            label: format!("{n} string keys (11-char key, 36-char UUID value, embstr), per key"),
            unit: "B/key",
            elements: n,
            keys: keys_of(&strings),
            commands: strings,
        },
        Case {
            key: "heap-hash-small".into(),
            label: format!(
                "{small} hashes of {SMALL_FIELDS} fields (listpack; 8-digit values), per field"
            ),
            unit: "B/field",
            elements: small * SMALL_FIELDS,
            keys: keys_of(&small_hashes),
            commands: small_hashes,
        },
        Case {
            key: "heap-hash-big".into(),
            label: format!(
                "one hash of {n} fields (hashtable; 8-digit field, UUID value), per field"
            ),
            unit: "B/field",
            elements: n,
            keys: vec![big.into_bytes()],
            commands: big_hash,
        },
    ]
}
