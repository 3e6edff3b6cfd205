//! The matrix built from hand-made passes: statuses, counts, the "what changed"
//! lines and the check.

use serde_json::json;

use super::*;

/// A lab report with exact rows `(key, label, redis text)` and one measured row.
fn report(lab: &str, version: &str, rows: &[(&str, &str, &str)]) -> Report {
    let mut all: Vec<serde_json::Value> = rows
        .iter()
        .map(|(key, label, text)| {
            json!({"key": key, "label": label, "kind": "exact", "article": "OK",
                   "redis": {"text": text}, "core": {"text": "core says"}})
        })
        .collect();
    all.push(json!({"key": "t", "label": "a timing", "kind": "measured",
                    "redis": {"text": "1 µs", "value": 1.0, "unit": "µs"}}));
    all.push(
        json!({"key": "p", "label": "PostgreSQL only", "kind": "exact",
                    "pg": {"text": "42"}}),
    );
    serde_json::from_value(json!({"lab": lab, "title": "t", "source": "s",
        "versions": {"redis": version}, "rows": all}))
    .unwrap()
}

fn run(name: &str, labs: Vec<(&str, Result<Report, String>)>) -> ServerRun {
    ServerRun {
        name: name.to_string(),
        labs: labs.into_iter().map(|(l, r)| (l.to_string(), r)).collect(),
    }
}

fn sample() -> Matrix {
    let reference = run(
        "redis-8.6.3",
        vec![
            (
                "02c",
                Ok(report(
                    "02c",
                    "8.6.3",
                    &[
                        ("msetex", "MSETEX 2 a 1 b 2 EX 60", "1"),
                        ("get", "GET a", "\"1\""),
                        ("enc", "OBJECT ENCODING h", "listpack"),
                    ],
                )),
            ),
            (
                "92g",
                Ok(report(
                    "92g",
                    "8.6.3",
                    &[("slot", "CLUSTER KEYSLOT x", "16287")],
                )),
            ),
        ],
    );
    let old = run(
        "redis-7.0.15",
        vec![
            (
                "02c",
                Ok(report(
                    "02c",
                    "7.0.15",
                    &[
                        (
                            "msetex",
                            "MSETEX 2 a 1 b 2 EX 60",
                            "ERR unknown command 'MSETEX'",
                        ),
                        ("get", "GET a", "\"1\""),
                        ("enc", "OBJECT ENCODING h", "ziplist"),
                    ],
                )),
            ),
            ("92g", Err("the lab failed: boom".to_string())),
        ],
    );
    let labs = vec!["02c".to_string(), "92g".to_string()];
    build(&[old, reference], "redis-8.6.3", &labs).unwrap()
}

#[test]
fn cells_are_classified_against_the_reference() {
    let m = sample();
    assert_eq!(
        m.rows.len(),
        4,
        "exact rows only: the measured row is left out"
    );
    let cell = |id: &str, s: &str| m.rows.iter().find(|r| r.id == id).unwrap().cells[s].clone();
    assert_eq!(
        cell("02c/msetex", "redis-7.0.15").status,
        Status::Unsupported
    );
    assert_eq!(
        cell("02c/msetex", "redis-7.0.15").text,
        "ERR unknown command 'MSETEX'"
    );
    assert_eq!(cell("02c/get", "redis-7.0.15").status, Status::Equal);
    assert_eq!(cell("02c/enc", "redis-7.0.15").status, Status::Different);
    assert_eq!(cell("92g/slot", "redis-7.0.15").status, Status::NotRun);
    assert_eq!(
        cell("92g/slot", "redis-7.0.15").text,
        "the lab failed: boom"
    );
    assert_eq!(cell("02c/get", "redis-8.6.3").status, Status::Reference);
    assert_eq!(m.rows[0].core.as_deref(), Some("core says"));
    assert_eq!(m.rows[0].article.as_deref(), Some("OK"));
    assert_eq!(
        m.summary,
        vec![Counts {
            server: "redis-7.0.15".into(),
            equal: 1,
            different: 1,
            unsupported: 1,
            not_run: 1
        }]
    );
    assert_eq!(m.servers[0].version, "7.0.15");
    assert_eq!(m.not_run["92g"]["redis-7.0.15"], "the lab failed: boom");
}

#[test]
fn what_changed_names_the_rows_that_show_it() {
    let m = sample();
    let msetex = m
        .changes
        .iter()
        .find(|c| c.text.starts_with("MSETEX"))
        .unwrap();
    assert_eq!(msetex.rows, vec!["02c/msetex"]);
    assert!(
        msetex
            .text
            .contains("redis-7.0.15 answers 1 of its 1 rows with an error"),
        "{}",
        msetex.text
    );
    assert!(
        msetex.text.contains("ERR unknown command 'MSETEX'"),
        "{}",
        msetex.text
    );
    let enc = m
        .changes
        .iter()
        .find(|c| c.text.starts_with("encodings"))
        .unwrap();
    assert_eq!(enc.rows, vec!["02c/enc"]);
    let failed = m
        .changes
        .iter()
        .find(|c| c.text.contains("gave no report"))
        .unwrap();
    assert_eq!(
        failed.text,
        "redis-7.0.15: 1 lab gave no report: 92g (the lab failed: boom)."
    );
    assert_eq!(failed.rows, vec!["92g/slot"]);
    // A feature no row uses says nothing; the encoding row is not counted twice.
    assert!(!m.changes.iter().any(|c| c.text.contains("INCREX")));
    assert!(!m.changes.iter().any(|c| c.text.contains("also answers")));
    let text = render::to_text(&m);
    assert!(text.contains("✗ ERR unknown command"), "{text}");
    assert!(
        text.contains("02c/enc (OBJECT ENCODING h) on redis-7.0.15: ziplist"),
        "{text}"
    );
}

#[test]
fn a_feature_every_server_answers_alike_says_so() {
    let reference = run(
        "a",
        vec![(
            "l",
            Ok(report("l", "8.6.3", &[("z", "ZRANGESTORE d s 0 -1", "3")])),
        )],
    );
    let other = run(
        "b",
        vec![(
            "l",
            Ok(report("l", "7.0.15", &[("z", "ZRANGESTORE d s 0 -1", "3")])),
        )],
    );
    let m = build(&[reference, other], "a", &["l".to_string()]).unwrap();
    assert_eq!(m.changes.len(), 1);
    assert_eq!(
        m.changes[0].text,
        "ZRANGESTORE: every server answers its 1 rows like a (8.6.3)."
    );
}

#[test]
fn check_fails_on_a_changed_cell_and_notes_a_new_version() {
    let base = sample();
    let same = sample();
    assert_eq!(check::compare(&base, &same), (vec![], vec![]));
    let mut fresh = sample();
    fresh.rows[1].cells.get_mut("redis-7.0.15").unwrap().text = "\"2\"".into();
    fresh.servers[0].version = "7.0.16".into();
    let (failures, notes) = check::compare(&base, &fresh);
    assert_eq!(failures.len(), 1, "{failures:?}");
    assert!(
        failures[0].starts_with("02c/get redis-7.0.15"),
        "{failures:?}"
    );
    assert_eq!(
        notes,
        vec!["server redis-7.0.15: version 7.0.16 (baseline 7.0.15)"]
    );
    // A lab that did not run: its reason may change, its status may not.
    let mut fresh = sample();
    fresh.rows[3].cells.get_mut("redis-7.0.15").unwrap().text = "the lab failed: port 24001".into();
    assert_eq!(check::compare(&base, &fresh).0, Vec::<String>::new());
    fresh.rows[3].cells.insert(
        "redis-7.0.15".into(),
        MatrixCell {
            text: "1".into(),
            status: Status::Different,
        },
    );
    assert_eq!(check::compare(&base, &fresh).0.len(), 1);
    let round: Matrix = serde_json::from_str(&base.to_json()).unwrap();
    assert_eq!(round, base);
}

#[test]
fn a_sampled_row_is_checked_by_status_only() {
    let mut base = sample();
    // 02c/get: mark it sampled, as a lab's Row::sampled reaches the matrix.
    base.rows[1].sampled = Some("an estimate on some server".into());
    let mut fresh = base.clone();
    let cell = fresh.rows[1].cells.get_mut("redis-7.0.15").unwrap();
    let status = cell.status;
    cell.text = "another estimate".into();
    assert_eq!(check::compare(&base, &fresh).0, Vec::<String>::new());
    // Its status still counts: an error where there was an answer fails.
    fresh.rows[1].cells.insert(
        "redis-7.0.15".into(),
        MatrixCell {
            text: "ERR unknown command".into(),
            status: if status == Status::Unsupported {
                Status::Different
            } else {
                Status::Unsupported
            },
        },
    );
    assert_eq!(check::compare(&base, &fresh).0.len(), 1);
    // The core's answer is compared as on any row.
    let mut fresh = base.clone();
    fresh.rows[1].core = Some("core says otherwise".into());
    assert_eq!(check::compare(&base, &fresh).0.len(), 1);
    assert!(render::to_text(&base).contains("sampled"));
}

#[test]
fn a_sampled_row_of_a_report_reaches_the_matrix() {
    let mut r = report("02d", "8.6.3", &[("bytes", "MEMORY USAGE s", "100")]);
    r.rows[0].sampled = Some("Valkey samples".into());
    let m = build(
        &[run("redis-8.6.3", vec![("02d", Ok(r))])],
        "redis-8.6.3",
        &["02d".into()],
    )
    .unwrap();
    assert_eq!(m.rows[0].sampled.as_deref(), Some("Valkey samples"));
}

#[test]
fn a_feature_no_server_has_says_so_from_the_reference_error() {
    let err = "ERR unknown command 'INCREX', with args beginning with: 'k'";
    let reference = run(
        "a",
        vec![(
            "l",
            Ok(report("l", "8.6.3", &[("i", "INCREX k BYINT 1", err)])),
        )],
    );
    let other = run(
        "b",
        vec![(
            "l",
            Ok(report("l", "7.0.15", &[("i", "INCREX k BYINT 1", err)])),
        )],
    );
    let m = build(&[reference, other], "a", &["l".to_string()]).unwrap();
    assert_eq!(m.rows[0].cells["b"].status, Status::Equal);
    assert!(
        m.changes[0]
            .text
            .starts_with("INCREX: no server run has it"),
        "{}",
        m.changes[0].text
    );
}

#[test]
fn a_lab_missing_on_one_server_is_not_run_with_its_reason() {
    let dir = std::env::temp_dir().join(format!("matrix-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("x.log"), "starting\nerror: the server refused\n\n").unwrap();
    std::fs::write(dir.join("y.skip"), "not run: a cluster lab\n").unwrap();
    let run = ServerRun::read(
        "s",
        &dir,
        &["x".to_string(), "y".to_string(), "z".to_string()],
    );
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(
        run.labs["x"].as_ref().err().unwrap(),
        "the lab failed: starting | error: the server refused"
    );
    assert_eq!(
        run.labs["y"].as_ref().err().unwrap(),
        "not run: a cluster lab"
    );
    assert_eq!(
        run.labs["z"].as_ref().err().unwrap(),
        "the lab wrote no report"
    );
}

#[test]
fn the_same_numbers_printed_otherwise_are_told_apart_from_other_answers() {
    let rows = [
        ("f", "ZINCRBY f 0.1 x", "0.9999999999999999"),
        ("m", "MEMORY USAGE k", "56"),
        ("o", "GET o", "v"),
    ];
    let reference = run("a", vec![("l", Ok(report("l", "8.6.3", &rows)))]);
    let other_rows = [
        ("f", "ZINCRBY f 0.1 x", "0.99999999999999989"),
        ("m", "MEMORY USAGE k", "72"),
        ("o", "GET o", "w"),
    ];
    let other = run("b", vec![("l", Ok(report("l", "7.0.15", &other_rows)))]);
    let m = build(&[reference, other], "a", &["l".to_string()]).unwrap();
    let texts: Vec<&str> = m.changes.iter().map(|c| c.text.as_str()).collect();
    assert!(
        texts[0]
            .starts_with("b (7.0.15) reports other MEMORY USAGE sizes than a (8.6.3) on 1 rows"),
        "{texts:?}"
    );
    assert!(texts[1].starts_with("b (7.0.15) prints the same numbers with other digits than a (8.6.3) on 1 rows (e.g. l/f"), "{texts:?}");
    assert!(
        texts[2].starts_with("b (7.0.15) also answers 1 other rows differently"),
        "{texts:?}"
    );
    assert_eq!(m.changes[2].rows, vec!["l/o"]);
}
