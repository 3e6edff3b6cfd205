//! `./run.sh check`: compares freshly generated reports with the committed baselines.
//!
//! * exact rows: every backend's value must equal the baseline's, and core must
//!   equal redis (unless the row says they are expected to differ);
//! * measured rows: fresh/baseline within the row's band, or not compared;
//! * random rows: each value must be a number within the row's bounds.
//!
//! A row is never failed on timing noise alone: measured rows without a band are
//! only reported.

use std::path::Path;

use crate::report::{Kind, Report, Row};

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

const BACKENDS: [&str; 3] = ["redis", "core", "pg"];

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
    match base.kind {
        Kind::Exact => {
            for b in BACKENDS {
                if base.value(b) != new.value(b) {
                    reasons.push(format!(
                        "{b} gave {} where the baseline has {}",
                        shown(new.value(b)),
                        shown(base.value(b))
                    ));
                }
            }
            if base.core_matches_redis {
                if let (Some(c), Some(r)) = (&new.core, &new.redis) {
                    if c != r {
                        reasons.push(format!("core gave {c:?} but redis gave {r:?}"));
                    }
                }
            }
        }
        Kind::Measured => {
            if let Some(band) = base.band {
                for b in BACKENDS {
                    if let (Some(old), Some(now)) = (number(base.value(b)), number(new.value(b))) {
                        if old > 0.0 && now > 0.0 && (now / old > band || old / now > band) {
                            reasons.push(format!(
                                "{b} measured {now} vs baseline {old}: outside ×{band}"
                            ));
                        }
                    }
                }
            }
        }
        Kind::Random => {
            if let Some(bounds) = base.bounds {
                for b in BACKENDS {
                    if let Some(text) = new.value(b) {
                        match number(Some(text)) {
                            Some(v) if v >= bounds.min && v <= bounds.max => {}
                            Some(v) => reasons.push(format!(
                                "{b} gave {v}, outside [{}, {}]",
                                bounds.min, bounds.max
                            )),
                            None => reasons.push(format!("{b} gave {text:?}, not a number")),
                        }
                    }
                }
            }
        }
    }
    reasons
}

fn shown(v: Option<&String>) -> String {
    v.map_or("nothing".into(), |s| format!("{s:?}"))
}

/// The leading number of a cell ("1,234 µs" → 1234).
fn number(v: Option<&String>) -> Option<f64> {
    let text: String = v?
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
        row.redis = Some("zed 100 amy 100".into());
        row.core = Some("zed 100 amy 100".into());
        let row = r.row("lat", "latency µs", Kind::Measured, None);
        row.redis = Some("20".into());
        row.band = Some(3.0);
        let row = r.row("runs", "naive runs", Kind::Random, Some("8927"));
        row.redis = Some("5000".into());
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
        baseline.rows[0].redis = Some("amy 100 zed 100".into());
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
        fresh.rows[0].core = Some("amy 100 zed 100".into());
        let failures = compare(&baseline, &fresh);
        assert!(failures.iter().any(|f| f.reason.starts_with("core gave")));
        let mut lenient = report();
        lenient.rows[0].core_matches_redis = false;
        lenient.rows[0].core = Some("amy 100 zed 100".into());
        assert!(compare(&lenient, &lenient).is_empty());
    }

    #[test]
    fn measured_rows_use_their_band_and_random_rows_their_bounds() {
        let baseline = report();
        let mut fresh = report();
        fresh.rows[1].redis = Some("50".into());
        fresh.rows[2].redis = Some("1500".into());
        let failures = compare(&baseline, &fresh);
        assert!(failures.is_empty(), "{failures:?}");
        fresh.rows[1].redis = Some("70".into());
        fresh.rows[2].redis = Some("1000".into());
        let failures = compare(&baseline, &fresh);
        assert_eq!(failures.len(), 2, "{failures:?}");
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
