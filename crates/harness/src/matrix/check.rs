//! `./run.sh check matrix`: a fresh matrix against the committed `out/matrix.json`.
//! Every cell of every exact row must be the same text with the same status, for
//! every server of the baseline and for the core (a lab that did not run on a server
//! must still not run there; its reason is not compared); a row, lab or server only one side
//! has is a failure too. A server's changed version is a note, not a failure. A row
//! the lab marks sampled (some server answers it with an estimate that moves run to
//! run: MEMORY USAGE of a big set) is compared by status only (equal / different /
//! unsupported), not by the servers' texts; the core's text is compared as always.

use super::{Matrix, Status};

/// Failures (one line each) and notes.
pub fn compare(baseline: &Matrix, fresh: &Matrix) -> (Vec<String>, Vec<String>) {
    let mut failures = Vec::new();
    let mut notes = Vec::new();
    for s in &baseline.servers {
        match fresh.servers.iter().find(|f| f.name == s.name) {
            None => failures.push(format!("server {} is not in the fresh matrix", s.name)),
            Some(f) if f.version != s.version => notes.push(format!(
                "server {}: version {} (baseline {})",
                s.name, f.version, s.version
            )),
            Some(_) => {}
        }
    }
    for row in &baseline.rows {
        let Some(new) = fresh.rows.iter().find(|r| r.id == row.id) else {
            failures.push(format!("{}: row missing from the fresh matrix", row.id));
            continue;
        };
        // The core's answer is its own, computed the same way every run: always
        // compared, also on a sampled row.
        let sampled = row.sampled.is_some() || new.sampled.is_some();
        if new.core != row.core {
            failures.push(format!(
                "{} core: {:?} (baseline {:?})",
                row.id, new.core, row.core
            ));
        }
        for (server, cell) in &row.cells {
            match new.cells.get(server) {
                None => failures.push(format!("{} {server}: no cell in the fresh matrix", row.id)),
                // Why a lab did not run is its last words (they may hold a client's
                // number or a port): the status is compared, not the text.
                Some(c) if c.status == Status::NotRun && cell.status == Status::NotRun => {}
                // A sampled estimate: only its status must stay.
                Some(c) if sampled && c.status == cell.status => {}
                Some(c) if c != cell => failures.push(format!(
                    "{} {server}: {} \"{}\" (baseline {} \"{}\")",
                    row.id,
                    c.status.word(),
                    c.text,
                    cell.status.word(),
                    cell.text
                )),
                Some(_) => {}
            }
        }
    }
    for row in &fresh.rows {
        if baseline.labs.contains(&row.lab) && !baseline.rows.iter().any(|r| r.id == row.id) {
            failures.push(format!("{}: new row, not in the baseline", row.id));
        }
    }
    (failures, notes)
}
