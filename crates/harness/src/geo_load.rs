//! Loading many points into one geo set, as the geo labs (05i, 05n) do before
//! they search: GEOADD commands of `per_command` points each, 20 commands per
//! pipeline, with progress on a terminal. Member `i` is named `s<i>`.

use crate::backend::{error_text, Kv};
use crate::timing;

/// GEOADDs every `(longitude, latitude)` of `points` into `key`.
pub fn geoadd_points(
    kv: &mut Kv,
    key: &str,
    points: &[(f64, f64)],
    per_command: usize,
) -> Result<(), String> {
    let name = kv.name;
    let per_command = per_command.max(1);
    timing::bulk_load(
        &format!("{name}: GEOADD {key}"),
        points.len(),
        per_command * 20,
        |start, end| {
            let mut pipe = redis::pipe();
            for from in (start..end).step_by(per_command) {
                let cmd = pipe.cmd("GEOADD").arg(key);
                let to = (from + per_command).min(end);
                for (i, (lon, lat)) in points[from..to].iter().enumerate() {
                    cmd.arg(*lon).arg(*lat).arg(format!("s{}", from + i));
                }
                cmd.ignore();
            }
            pipe.query::<()>(kv.conn())
                .map_err(|e| format!("{name}: GEOADD pipeline: {}", error_text(&e)))
        },
    )
}
