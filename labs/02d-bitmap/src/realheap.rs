//! The week's attendance as the two structures really cost them: the core's live
//! heap in process (counting allocator) beside Redis's `used_memory` growth, for
//! the same SETBITs and SADDs (see `redislab_harness::heap`). MEMORY USAGE (the
//! rows above) stays Redis's model on both backends.

use redislab_harness::heap::{argv, Case};

use crate::attendance::Attendance;

/// The two cases: the seven days as bitmaps (per bitmap) and as sets (per member).
pub fn cases(prefix: &str, data: &Attendance) -> Vec<Case> {
    let bitmap = |d: usize| format!("{prefix}hatt:d{}", d + 1);
    let set = |d: usize| format!("{prefix}hattset:d{}", d + 1);
    let days = data.days.len();
    let mut setbits = Vec::new();
    let mut sadds = Vec::new();
    for (d, ids) in data.days.iter().enumerate() {
        for id in ids {
            setbits.push(argv(&["SETBIT", &bitmap(d), &id.to_string(), "1"]));
        }
        for part in ids.chunks(1_000) {
            let mut cmd = argv(&["SADD", &set(d)]);
            cmd.extend(part.iter().map(|id| id.to_string().into_bytes()));
            sadds.push(cmd);
        }
    }
    let members: usize = data.days.iter().map(Vec::len).sum();
    vec![
        Case {
            key: "heap-bitmap".into(),
            label: format!("the {days} days as bitmaps (SETBIT in ascending id order), per bitmap"),
            unit: "B/bitmap",
            elements: days,
            commands: setbits,
            keys: (0..days).map(|d| bitmap(d).into_bytes()).collect(),
        },
        Case {
            key: "heap-set".into(),
            label: format!(
                "the {days} days as sets of ids (SADDs of 1,000; hashtable), per member"
            ),
            unit: "B/member",
            elements: members,
            commands: sadds,
            keys: (0..days).map(|d| set(d).into_bytes()).collect(),
        },
    ]
}
