//! The version matrix (`./run.sh matrix`): every *exact* row of the labs, as each
//! real server answered it, side by side with the core's answer and the article's.
//!
//! The labs run once per server (each pass writes its own directory of `<id>.json`);
//! this module only reads those reports. One server is the reference (Redis 8.6.3,
//! the version every lab is written against): each other server's cell is `equal`
//! to it, `different`, `unsupported` (the server answered with an error where the
//! reference did not — a command or option it lacks), or `not run` (the lab failed
//! or does not apply to that server, with the reason). The summary counts those per
//! server, and [`changes`] turns the differences into a short list in plain words,
//! each line naming the rows that show it.

pub mod changes;
pub mod check;
pub mod render;

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::report::{Cell, Kind, Report};

/// One server's pass: what each lab wrote, or why it has no report.
pub struct ServerRun {
    /// The column's name (`redis-7.0.15`, or the user's `name` of `--redis-url name=URL`).
    pub name: String,
    /// Lab id → its report, or the reason it has none (the lab failed, or was not run).
    pub labs: BTreeMap<String, Result<Report, String>>,
}

impl ServerRun {
    /// Reads `dir/<id>.json` for every lab; a lab without one takes its reason from
    /// `dir/<id>.skip` (written when the lab does not apply to this server) or the
    /// last lines of `dir/<id>.log` (a lab that failed).
    pub fn read(name: &str, dir: &Path, labs: &[String]) -> ServerRun {
        let mut out = BTreeMap::new();
        for id in labs {
            let json = dir.join(format!("{id}.json"));
            let result = if json.exists() {
                Report::read(&json)
            } else if let Ok(reason) = std::fs::read_to_string(dir.join(format!("{id}.skip"))) {
                Err(reason.trim().to_string())
            } else {
                let log =
                    std::fs::read_to_string(dir.join(format!("{id}.log"))).unwrap_or_default();
                let tail: Vec<&str> = log
                    .lines()
                    .filter(|l| !l.trim().is_empty())
                    .rev()
                    .take(2)
                    .collect();
                let tail: Vec<&str> = tail.into_iter().rev().collect();
                Err(if tail.is_empty() {
                    "the lab wrote no report".to_string()
                } else {
                    format!("the lab failed: {}", tail.join(" | "))
                })
            };
            out.insert(id.clone(), result);
        }
        ServerRun {
            name: name.to_string(),
            labs: out,
        }
    }
}

/// How a server's answer compares with the reference's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// The reference server's own cell.
    Reference,
    Equal,
    Different,
    /// An error where the reference answered (a command or option the server lacks).
    Unsupported,
    /// No answer: the lab failed or does not apply to this server (`text` says why).
    NotRun,
}

impl Status {
    pub fn word(self) -> &'static str {
        match self {
            Status::Reference => "reference",
            Status::Equal => "equal",
            Status::Different => "different",
            Status::Unsupported => "unsupported",
            Status::NotRun => "not run",
        }
    }
}

/// One server's answer to one row.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MatrixCell {
    /// The server's own answer (its error text where it has one), as the lab shows it.
    pub text: String,
    pub status: Status,
}

/// One exact row of one lab across the servers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MatrixRow {
    /// `<lab>/<row key>`: what the summary's lines cite.
    pub id: String,
    pub lab: String,
    pub label: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub article: Option<String>,
    /// The core's answer, from the reference pass (the core runs once).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub core: Option<String>,
    /// Server name → its cell, for every server of the matrix.
    pub cells: BTreeMap<String, MatrixCell>,
    /// The lab's word that some server answers this row with a sampled estimate
    /// ([`Report`]'s `Row::sampled`): [`check`] compares only the cells' status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sampled: Option<String>,
}

/// A server's column: its name and the version it reported (`INFO server`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ServerInfo {
    pub name: String,
    pub version: String,
}

/// Per server: how many rows fall in each status.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Counts {
    pub server: String,
    pub equal: usize,
    pub different: usize,
    pub unsupported: usize,
    pub not_run: usize,
}

/// A line of the "what changed" list and the rows behind it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Change {
    pub text: String,
    pub rows: Vec<String>,
}

/// `out/matrix.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Matrix {
    /// The server every other one is compared with.
    pub reference: String,
    /// The columns, in the order given.
    pub servers: Vec<ServerInfo>,
    /// Labs that ran, in order.
    pub labs: Vec<String>,
    pub rows: Vec<MatrixRow>,
    pub summary: Vec<Counts>,
    pub changes: Vec<Change>,
    /// Labs a server has no report of, and why (lab → server → reason).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub not_run: BTreeMap<String, BTreeMap<String, String>>,
}

/// True when `text` holds a server error reply (`ERR …`, `WRONGTYPE …`, …) or the
/// cell says it is one. Lab cells join several replies with spaces, so the markers
/// are counted wherever they start a word.
fn error_marks(cell: &Cell) -> usize {
    const MARKS: [&str; 6] = [
        "ERR",
        "WRONGTYPE",
        "NOSCRIPT",
        "CROSSSLOT",
        "NOPERM",
        "EXECABORT",
    ];
    let words = cell
        .text
        .split(|c: char| c.is_whitespace() || c == '(' || c == '[' || c == '"' || c == ',')
        .filter(|w| MARKS.contains(w))
        .count();
    words.max(usize::from(cell.error))
}

/// Compares one server's cell with the reference's.
fn status_of(cell: &Cell, reference: Option<&Cell>) -> Status {
    let Some(reference) = reference else {
        // The reference has no answer here: nothing to compare with.
        return Status::Different;
    };
    if cell.text == reference.text && cell.error == reference.error {
        Status::Equal
    } else if error_marks(cell) > error_marks(reference) {
        Status::Unsupported
    } else {
        Status::Different
    }
}

/// Builds the matrix from the passes; `reference` names one of them.
pub fn build(runs: &[ServerRun], reference: &str, labs: &[String]) -> Result<Matrix, String> {
    let reference_run = runs
        .iter()
        .find(|r| r.name == reference)
        .ok_or_else(|| format!("no pass of the reference server {reference}"))?;
    let servers = runs
        .iter()
        .map(|run| ServerInfo {
            name: run.name.clone(),
            version: run
                .labs
                .values()
                .filter_map(|r| r.as_ref().ok())
                .find_map(|r| r.versions.get("redis").cloned())
                .unwrap_or_else(|| "unknown".to_string()),
        })
        .collect();
    let mut rows = Vec::new();
    let mut not_run: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    for lab in labs {
        for run in runs {
            if let Some(Err(reason)) = run.labs.get(lab) {
                not_run
                    .entry(lab.clone())
                    .or_default()
                    .insert(run.name.clone(), reason.clone());
            }
        }
        // The rows of a lab, in the reference's order, then any only another pass has.
        let mut keys: Vec<(String, String, Option<String>, Option<String>)> = Vec::new();
        let ordered =
            std::iter::once(reference_run).chain(runs.iter().filter(|r| r.name != reference));
        for run in ordered {
            if let Some(Ok(report)) = run.labs.get(lab) {
                for row in report.rows.iter().filter(|r| r.kind == Kind::Exact) {
                    if !keys.iter().any(|(k, ..)| *k == row.key) {
                        keys.push((
                            row.key.clone(),
                            row.label.clone(),
                            row.article.clone(),
                            row.sampled.clone(),
                        ));
                    }
                }
            }
        }
        let reference_report = reference_run.labs.get(lab).and_then(|r| r.as_ref().ok());
        for (key, label, article, sampled) in keys {
            let find = |report: &Report| report.rows.iter().find(|r| r.key == key).cloned();
            // A row no server answered (PostgreSQL's, the lab's own reference) is not
            // about servers: it stays out of the matrix.
            let answered = runs.iter().any(|run| {
                matches!(run.labs.get(lab), Some(Ok(report))
                    if find(report).is_some_and(|r| r.redis.is_some()))
            });
            if !answered {
                continue;
            }
            let reference_row = reference_report.and_then(find);
            let reference_cell = reference_row.as_ref().and_then(|r| r.redis.as_ref());
            let mut cells = BTreeMap::new();
            for run in runs {
                let cell = match run.labs.get(lab) {
                    Some(Ok(report)) => {
                        match find(report).as_ref().and_then(|r| r.redis.as_ref()) {
                            Some(cell) if cell.skipped => MatrixCell {
                                text: format!("skipped: {}", cell.text),
                                status: Status::NotRun,
                            },
                            Some(cell) => MatrixCell {
                                text: cell.text.clone(),
                                status: if run.name == reference {
                                    Status::Reference
                                } else {
                                    status_of(cell, reference_cell)
                                },
                            },
                            None => MatrixCell {
                                text: "no such row in this server's run".to_string(),
                                status: Status::NotRun,
                            },
                        }
                    }
                    Some(Err(reason)) => MatrixCell {
                        text: reason.clone(),
                        status: Status::NotRun,
                    },
                    None => MatrixCell {
                        text: "not run".to_string(),
                        status: Status::NotRun,
                    },
                };
                cells.insert(run.name.clone(), cell);
            }
            rows.push(MatrixRow {
                id: format!("{lab}/{key}"),
                lab: lab.clone(),
                label,
                article,
                core: reference_row
                    .as_ref()
                    .and_then(|r| r.core.as_ref())
                    .map(|c| c.text.clone()),
                cells,
                sampled,
            });
        }
    }
    let summary = runs
        .iter()
        .filter(|r| r.name != reference)
        .map(|run| {
            let mut c = Counts {
                server: run.name.clone(),
                ..Counts::default()
            };
            for row in &rows {
                match row.cells[&run.name].status {
                    Status::Equal => c.equal += 1,
                    Status::Different => c.different += 1,
                    Status::Unsupported => c.unsupported += 1,
                    Status::NotRun => c.not_run += 1,
                    Status::Reference => {}
                }
            }
            c
        })
        .collect();
    let mut matrix = Matrix {
        reference: reference.to_string(),
        servers,
        labs: labs.to_vec(),
        rows,
        summary,
        changes: Vec::new(),
        not_run,
    };
    matrix.changes = changes::what_changed(&matrix);
    Ok(matrix)
}

impl Matrix {
    pub fn read(path: &Path) -> Result<Matrix, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        serde_json::from_str(&text).map_err(|e| format!("{} is not a matrix: {e}", path.display()))
    }

    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).expect("a matrix serializes");
        s.push('\n');
        s
    }

    /// The column of `name` with its version, as a header shows it.
    pub fn server_label(&self, name: &str) -> String {
        match self.servers.iter().find(|s| s.name == name) {
            Some(s) if !s.name.contains(s.version.trim_start_matches("valkey ")) => {
                format!("{} ({})", s.name, s.version)
            }
            _ => name.to_string(),
        }
    }
}

#[cfg(test)]
mod tests;
