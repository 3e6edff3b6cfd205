//! `./run.sh check`: compares freshly generated reports with the committed baselines.
//!
//! * exact rows: every backend's value must equal the baseline's, and core must
//!   equal redis (unless the row says they are expected to differ);
//! * a row with a band (measured rows whose figure is a ratio inside one run):
//!   every backend's fresh/baseline number within `[1/band, band]`;
//! * a row with bounds: every backend's number within them (a backend whose step
//!   is skipped, in the baseline and now, has none);
//! * measured rows without a band are reported, never failed: a timing never
//!   fails a check on noise alone;
//! * a row's `reference` (the lab's own figure) follows the same rule as its
//!   backends: equal on an exact row, within the band where there is one.
//!
//! Numbers are the cells' `value` (older baselines: the number their text starts
//! with).

use std::path::Path;

use crate::report::{Cell, Kind, Report, Row, BACKENDS, COLUMNS};

/// One reason a lab does not match its baseline.
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    pub lab: String,
    pub row: String,
    pub reason: String,
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} / {}: {}", self.lab, self.row, self.reason)
    }
}

/// Compares one lab's fresh report with its baseline.
pub fn compare(baseline: &Report, fresh: &Report) -> Vec<Failure> {
    let mut failures = Vec::new();
    let fail = |row: &str, reason: String| Failure {
        lab: baseline.lab.clone(),
        row: row.into(),
        reason,
    };
    for base in &baseline.rows {
        let Some(new) = fresh.rows.iter().find(|r| r.key == base.key) else {
            failures.push(fail(&base.key, "row is missing from the fresh run".into()));
            continue;
        };
        for reason in compare_row(base, new) {
            failures.push(fail(&base.key, reason));
        }
    }
    for new in &fresh.rows {
        if !baseline.rows.iter().any(|r| r.key == new.key) {
            failures.push(fail(
                &new.key,
                "new row not in the baseline (regenerate out/ and commit it)".into(),
            ));
        }
    }
    failures
}

fn compare_row(base: &Row, new: &Row) -> Vec<String> {
    let mut reasons = Vec::new();
    if base.kind == Kind::Exact {
        for b in COLUMNS {
            if base.text(b) != new.text(b) {
                reasons.push(format!(
                    "{b} gave {} where the baseline has {}",
                    shown(new.text(b)),
                    shown(base.text(b))
                ));
            }
        }
        if base.core_matches_redis {
            if let (Some(c), Some(r)) = (new.text("core"), new.text("redis")) {
                if c != r {
                    reasons.push(format!("core gave {c:?} but redis gave {r:?}"));
                }
            }
        }
        return reasons;
    }
    if let Some(band) = base.band {
        for b in COLUMNS {
            if let (Some(old), Some(now)) = (number(base.value(b)), number(new.value(b))) {
                if old > 0.0 && now > 0.0 && (now / old > band || old / now > band) {
                    reasons.push(format!(
                        "{b} measured {now} vs baseline {old}: outside ×{band}"
                    ));
                }
            }
        }
    }
    if let Some(bounds) = base.bounds {
        for b in COLUMNS {
            if let Some(cell) = new.value(b) {
                // A step the backend cannot run (the core is not a cluster) has no
                // number to bound, as long as the baseline did not have one either.
                if cell.skipped && base.value(b).is_some_and(|c| c.skipped) {
                    continue;
                }
                match number(Some(cell)) {
                    Some(v) if v >= bounds.min && v <= bounds.max => {}
                    Some(v) => reasons.push(format!(
                        "{b} gave {v}, outside [{}, {}]",
                        bounds.min, bounds.max
                    )),
                    None => reasons.push(format!("{b} gave {:?}, not a number", cell.text)),
                }
            }
        }
    }
    reasons
}

fn shown(v: Option<&str>) -> String {
    v.map_or("nothing".into(), |s| format!("{s:?}"))
}

/// A cell's number: its `value` (or median), else the number its text starts
/// with ("1,234 µs" → 1234), as baselines written before cells had numbers.
fn number(cell: Option<&Cell>) -> Option<f64> {
    let cell = cell?;
    if let Some(v) = cell.number() {
        return Some(v);
    }
    let text: String = cell
        .text
        .chars()
        .take_while(|c| c.is_ascii_digit() || matches!(c, '.' | '-' | ',' | 'e' | '+'))
        .collect();
    text.replace(',', "").parse().ok()
}

/// Compares every `<id>.json` in `baseline_dir` whose lab is in `labs` with the same
/// file in `fresh_dir`. Returns the failures and notes (e.g. version changes).
pub fn compare_dirs(
    baseline_dir: &Path,
    fresh_dir: &Path,
    labs: &[String],
) -> (Vec<Failure>, Vec<String>) {
    let mut failures = Vec::new();
    let mut notes = Vec::new();
    for lab in labs {
        let base_path = baseline_dir.join(format!("{lab}.json"));
        let fresh_path = fresh_dir.join(format!("{lab}.json"));
        let fail = |reason: String| Failure {
            lab: lab.clone(),
            row: "-".into(),
            reason,
        };
        let baseline = match Report::read(&base_path) {
            Ok(r) => r,
            Err(e) => {
                failures.push(fail(format!(
                    "no baseline: {e} (run ./run.sh {lab} and commit out/)"
                )));
                continue;
            }
        };
        let fresh = match Report::read(&fresh_path) {
            Ok(r) => r,
            Err(e) => {
                failures.push(fail(format!("the lab produced no report: {e}")));
                continue;
            }
        };
        for (name, old) in &baseline.versions {
            match fresh.versions.get(name) {
                Some(new) if new != old => {
                    notes.push(format!("{lab}: {name} version changed {old} -> {new}"))
                }
                None => notes.push(format!("{lab}: {name} did not run (baseline had {old})")),
                _ => {}
            }
        }
        failures.extend(compare(&baseline, &fresh));
    }
    (failures, notes)
}

/// `./run.sh bless`: lists what changed between `baseline_dir/<lab>.json` and the
/// fresh report (rows added, removed, and each backend value whose text changed),
/// then copies the fresh `.json` and `.txt` over the baseline. A fresh report with
/// no backend values at all is refused.
pub fn bless(baseline_dir: &Path, fresh_dir: &Path, lab: &str) -> Result<Vec<String>, String> {
    let fresh_path = fresh_dir.join(format!("{lab}.json"));
    let fresh = Report::read(&fresh_path)?;
    if !fresh
        .rows
        .iter()
        .any(|r| BACKENDS.iter().any(|b| r.value(b).is_some()))
    {
        return Err("the fresh report has no backend values; not blessed".into());
    }
    let mut lines = Vec::new();
    match Report::read(&baseline_dir.join(format!("{lab}.json"))) {
        Err(_) => lines.push(format!("{lab}: new baseline ({} rows)", fresh.rows.len())),
        Ok(old) => {
            let mut changed = 0;
            for new in &fresh.rows {
                let Some(base) = old.find(&new.key) else {
                    lines.push(format!("  + {}: new row", new.key));
                    changed += 1;
                    continue;
                };
                for b in COLUMNS {
                    if base.text(b) != new.text(b) {
                        lines.push(format!(
                            "  ~ {} [{b}, {}]: {} -> {}",
                            new.key,
                            kind_word(new.kind),
                            shown(base.text(b)),
                            shown(new.text(b))
                        ));
                        changed += 1;
                    }
                }
            }
            for base in &old.rows {
                if fresh.find(&base.key).is_none() {
                    lines.push(format!("  - {}: row removed", base.key));
                    changed += 1;
                }
            }
            lines.insert(0, format!("{lab}: {changed} change(s)"));
        }
    }
    std::fs::create_dir_all(baseline_dir)
        .map_err(|e| format!("cannot create {}: {e}", baseline_dir.display()))?;
    for ext in ["json", "txt"] {
        let from = fresh_dir.join(format!("{lab}.{ext}"));
        let to = baseline_dir.join(format!("{lab}.{ext}"));
        std::fs::copy(&from, &to).map_err(|e| format!("cannot copy {}: {e}", from.display()))?;
    }
    Ok(lines)
}

fn kind_word(kind: Kind) -> &'static str {
    match kind {
        Kind::Exact => "exact",
        Kind::Measured => "measured",
        Kind::Random => "random",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::Bounds;

    fn report() -> Report {
        let mut r = Report {
            lab: "05a-order".into(),
            ..Default::default()
        };
        let row = r.exact(
            "zrange-rev",
            "ZRANGE lb 0 -1 REV WITHSCORES",
            "zed 100 amy 100",
        );
        row.redis = Some(Cell::text("zed 100 amy 100"));
        row.core = Some(Cell::text("zed 100 amy 100"));
        let row = r.row("lat", "latency µs", Kind::Measured, None);
        row.redis = Some(Cell::text("20"));
        row.band = Some(3.0);
        let row = r.row("runs", "naive runs", Kind::Random, Some("8927"));
        row.redis = Some(Cell::text("5000"));
        row.bounds = Some(Bounds {
            min: 1001.0,
            max: 11000.0,
        });
        r
    }

    #[test]
    fn identical_reports_pass() {
        assert!(compare(&report(), &report()).is_empty());
    }

    #[test]
    fn a_changed_exact_value_in_the_baseline_fails_and_names_lab_and_row() {
        let fresh = report();
        let mut baseline = report();
        baseline.rows[0].redis = Some(Cell::text("amy 100 zed 100"));
        let failures = compare(&baseline, &fresh);
        assert_eq!(failures.len(), 1);
        assert_eq!(failures[0].lab, "05a-order");
        assert_eq!(failures[0].row, "zrange-rev");
        assert!(failures[0].reason.contains("redis gave"), "{}", failures[0]);
    }

    #[test]
    fn core_disagreeing_with_redis_fails_unless_expected() {
        let baseline = report();
        let mut fresh = report();
        fresh.rows[0].core = Some(Cell::text("amy 100 zed 100"));
        let failures = compare(&baseline, &fresh);
        assert!(failures.iter().any(|f| f.reason.starts_with("core gave")));
        let mut lenient = report();
        lenient.rows[0].core_matches_redis = false;
        lenient.rows[0].core = Some(Cell::text("amy 100 zed 100"));
        assert!(compare(&lenient, &lenient).is_empty());
    }

    #[test]
    fn measured_rows_use_their_band_and_random_rows_their_bounds() {
        let baseline = report();
        let mut fresh = report();
        fresh.rows[1].redis = Some(Cell::text("50"));
        fresh.rows[2].redis = Some(Cell::text("1500"));
        let failures = compare(&baseline, &fresh);
        assert!(failures.is_empty(), "{failures:?}");
        fresh.rows[1].redis = Some(Cell::text("70"));
        fresh.rows[2].redis = Some(Cell::text("1000"));
        let failures = compare(&baseline, &fresh);
        assert_eq!(failures.len(), 2, "{failures:?}");
    }

    #[test]
    fn the_labs_reference_is_checked_like_a_backend() {
        let mut baseline = report();
        baseline.rows[0].reference = Some(Cell::text("zed 100 amy 100"));
        baseline.rows[1].reference = Some(Cell::num(100.0, "µs"));
        assert!(compare(&baseline, &baseline).is_empty());
        let mut fresh = baseline.clone();
        fresh.rows[0].reference = Some(Cell::text("amy 100 zed 100"));
        fresh.rows[1].reference = Some(Cell::num(250.0, "µs"));
        let reasons: Vec<String> = compare(&baseline, &fresh)
            .into_iter()
            .map(|f| format!("{}: {}", f.row, f.reason))
            .collect();
        assert_eq!(reasons.len(), 1, "{reasons:?}");
        assert!(reasons[0].starts_with("zrange-rev: reference gave"));
        fresh.rows[1].reference = Some(Cell::num(400.0, "µs"));
        let rows: Vec<String> = compare(&baseline, &fresh)
            .into_iter()
            .map(|f| f.row)
            .collect();
        assert_eq!(rows, ["zrange-rev", "lat"]);
    }

    #[test]
    fn a_skipped_cell_in_a_bounded_row_passes_only_if_the_baseline_skipped_it_too() {
        let mut baseline = report();
        baseline.rows[2].core = Some(Cell::skipped("not a cluster"));
        assert!(compare(&baseline, &baseline).is_empty());
        let mut fresh = report();
        fresh.rows[2].core = Some(Cell::skipped("not a cluster"));
        let mut had_number = report();
        had_number.rows[2].core = Some(Cell::num(5000.0, ""));
        let failures = compare(&had_number, &fresh);
        assert_eq!(failures.len(), 1, "{failures:?}");
        assert!(
            failures[0].reason.contains("not a number"),
            "{}",
            failures[0]
        );
    }

    #[test]
    fn missing_and_new_rows_are_reported() {
        let baseline = report();
        let mut fresh = report();
        fresh.rows.remove(0);
        fresh.row("extra", "extra", Kind::Exact, None);
        let rows: Vec<String> = compare(&baseline, &fresh)
            .into_iter()
            .map(|f| f.row)
            .collect();
        assert_eq!(rows, ["zrange-rev", "extra"]);
    }
}
