//! The matrix's "what changed" list: the differences in plain words, each line built
//! from the cells and naming the rows behind it.
//!
//! A line is either about a *feature* — the rows whose label uses one of a few
//! commands or options the articles teach and that arrived in some version (a fixed
//! list of names below; what is said about each comes only from the cells: which
//! servers answer its rows like the reference, which with an error, which
//! otherwise) — or about the *encodings* the servers report (a server that says
//! `ziplist` where the reference says `listpack`), or about the labs that gave no
//! report on a server (with the reason: most often the server's own error to a step
//! the lab cannot do without), or, last, the remaining differences of each server
//! grouped by lab. A feature whose rows are equal on
//! every server gets one line saying so; nothing is claimed that no row shows.

use std::collections::{BTreeMap, BTreeSet};

use super::{Change, Matrix, MatrixRow, Status};

/// A feature: rows whose label has every word of `all`, at least one of `any` and
/// none of `none`.
struct Feature {
    name: &'static str,
    all: &'static [&'static str],
    any: &'static [&'static str],
    none: &'static [&'static str],
}

const FEATURES: &[Feature] = &[
    Feature {
        name: "SET … IFEQ (compare-and-set on the value)",
        all: &["SET"],
        any: &["IFEQ", "IFNE"],
        none: &["DELEX", "DIGEST", "IFDEQ", "IFDNE"],
    },
    Feature {
        name: "DELEX (delete if the value matches)",
        all: &[],
        any: &["DELEX"],
        none: &[],
    },
    Feature {
        name: "DIGEST and SET … IFDEQ (compare-and-set on a hash of the value)",
        all: &[],
        any: &["DIGEST", "IFDEQ", "IFDNE"],
        none: &["DELEX"],
    },
    Feature {
        name: "MSETEX",
        all: &[],
        any: &["MSETEX"],
        none: &[],
    },
    Feature {
        name: "BITOP DIFF / DIFF1 / ANDOR / ONE",
        all: &["BITOP"],
        any: &["DIFF", "DIFF1", "ANDOR", "ONE"],
        none: &[],
    },
    Feature {
        name: "INCREX",
        all: &[],
        any: &["INCREX"],
        none: &[],
    },
    Feature {
        name: "ZUNION/ZINTER AGGREGATE COUNT",
        all: &["AGGREGATE", "COUNT"],
        any: &["ZUNION", "ZINTER", "ZUNIONSTORE", "ZINTERSTORE"],
        none: &[],
    },
    Feature {
        name: "hash field expiry (HEXPIRE, HTTL, HGETEX, HSETEX, HGETDEL)",
        all: &[],
        any: &[
            "HEXPIRE", "HPEXPIRE", "HTTL", "HPTTL", "HPERSIST", "HGETEX", "HSETEX", "HGETDEL",
        ],
        none: &[],
    },
    Feature {
        name: "HRANDFIELD",
        all: &[],
        any: &["HRANDFIELD"],
        none: &[],
    },
    Feature {
        name: "ZRANGESTORE",
        all: &[],
        any: &["ZRANGESTORE"],
        none: &[],
    },
    Feature {
        name: "EXPIRE NX/XX/GT/LT",
        all: &[],
        any: &["EXPIRE", "PEXPIRE"],
        none: &[],
    },
];

/// The words of a label (commands and options are whole words).
fn words(label: &str) -> Vec<&str> {
    label
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .collect()
}

impl Feature {
    fn matches(&self, label: &str) -> bool {
        let w = words(label);
        if self.name.starts_with("EXPIRE ") {
            // EXPIRE with one of 7.0's options, not any EXPIRE.
            let has_cmd = w.iter().any(|x| self.any.contains(x));
            return has_cmd && w.iter().any(|x| ["NX", "XX", "GT", "LT"].contains(x));
        }
        self.all.iter().all(|a| w.contains(a))
            && w.iter().any(|x| self.any.contains(x))
            && !w.iter().any(|x| self.none.contains(x))
    }
}

/// Whether a row (the server's text, the reference's) is of one kind of difference.
type RowTest = fn(&MatrixRow, &str, &str) -> bool;

/// Up to `n` row ids, and how many more.
fn cite(ids: &[String], n: usize) -> String {
    if ids.len() <= n {
        ids.join(", ")
    } else {
        format!("{}, … ({} more)", ids[..n].join(", "), ids.len() - n)
    }
}

/// `text` shortened to `n` characters.
pub fn short(text: &str, n: usize) -> String {
    if text.chars().count() <= n {
        text.to_string()
    } else {
        let s: String = text.chars().take(n).collect();
        format!("{s}…")
    }
}

/// "a, b and c".
fn and_list(items: &[String]) -> String {
    match items.len() {
        0 => String::new(),
        1 => items[0].clone(),
        n => format!("{} and {}", items[..n - 1].join(", "), items[n - 1]),
    }
}

pub fn what_changed(m: &Matrix) -> Vec<Change> {
    let others: Vec<&str> = m
        .servers
        .iter()
        .map(|s| s.name.as_str())
        .filter(|s| *s != m.reference)
        .collect();
    let reference = m.server_label(&m.reference);
    let mut out = Vec::new();
    let mut explained: BTreeSet<(String, String)> = BTreeSet::new();
    for f in FEATURES {
        let rows: Vec<&MatrixRow> = m.rows.iter().filter(|r| f.matches(&r.label)).collect();
        if rows.is_empty() {
            continue;
        }
        let all_ids: Vec<String> = rows.iter().map(|r| r.id.clone()).collect();
        let mut same = Vec::new();
        let mut parts = Vec::new();
        let mut cited: Vec<String> = Vec::new();
        for s in &others {
            let errs: Vec<&MatrixRow> = rows
                .iter()
                .copied()
                .filter(|r| r.cells[*s].status == Status::Unsupported)
                .collect();
            let diffs: Vec<&MatrixRow> = rows
                .iter()
                .copied()
                .filter(|r| r.cells[*s].status == Status::Different)
                .collect();
            let missing = rows
                .iter()
                .filter(|r| r.cells[*s].status == Status::NotRun)
                .count();
            let label = m.server_label(s);
            if errs.is_empty() && diffs.is_empty() {
                if missing == 0 {
                    same.push(label);
                } else {
                    parts.push(format!(
                        "{label} has no answer to {missing} of its {} rows (the lab did not run there)",
                        rows.len()
                    ));
                }
                continue;
            }
            for r in errs.iter().chain(diffs.iter()) {
                explained.insert((s.to_string(), r.id.clone()));
                if !cited.contains(&r.id) {
                    cited.push(r.id.clone());
                }
            }
            let mut said = Vec::new();
            if let Some(first) = errs.first() {
                said.push(format!(
                    "answers {} of its {} rows with an error (e.g. \"{}\")",
                    errs.len(),
                    rows.len(),
                    short(&first.cells[*s].text, 70)
                ));
            }
            if let Some(first) = diffs.first() {
                said.push(format!(
                    "answers {} otherwise (e.g. {}: \"{}\" where {} says \"{}\")",
                    diffs.len(),
                    first.id,
                    short(&first.cells[*s].text, 50),
                    m.reference,
                    short(&first.cells[&m.reference].text, 50)
                ));
            }
            parts.push(format!("{label} {}", said.join(" and ")));
        }
        // Rows where the reference itself answers with an error (a command newer
        // than it): "like the reference" then means "with the same error".
        let reference_refuses = rows
            .iter()
            .filter(|r| r.cells[&m.reference].text.starts_with("ERR "))
            .count();
        let first_refused = rows
            .iter()
            .find(|r| r.cells[&m.reference].text.starts_with("ERR "));
        let text = if let (true, Some(first)) = (parts.is_empty(), first_refused) {
            format!(
                "{}: no server run has it — every one answers its {} rows like {reference}, which answers {} of them with an error (e.g. \"{}\").",
                f.name,
                rows.len(),
                reference_refuses,
                short(&first.cells[&m.reference].text, 60)
            )
        } else if parts.is_empty() {
            format!(
                "{}: every server answers its {} rows like {reference}.",
                f.name,
                rows.len()
            )
        } else {
            let mut t = format!("{}: {}", f.name, parts.join("; "));
            if !same.is_empty() {
                t.push_str(&format!(
                    "; {} answer{} like {reference}",
                    and_list(&same),
                    if same.len() == 1 { "s" } else { "" }
                ));
            }
            t.push('.');
            t
        };
        let rows = if cited.is_empty() { all_ids } else { cited };
        out.push(Change { text, rows });
    }
    // Two kinds of difference that need no feature list: sizes MEMORY USAGE reports,
    // and the same numbers printed with other digits (checked by parsing them).
    let kinds: [(&str, RowTest); 2] = [
        ("reports other MEMORY USAGE sizes", |r, _, _| {
            r.label.contains("MEMORY USAGE")
        }),
        ("prints the same numbers with other digits", |_, a, b| {
            same_numbers(a, b)
        }),
    ];
    for (what, test) in kinds {
        for s in &others {
            let hits: Vec<&MatrixRow> = m
                .rows
                .iter()
                .filter(|r| {
                    r.cells[*s].status == Status::Different
                        && !explained.contains(&(s.to_string(), r.id.clone()))
                        && test(r, &r.cells[*s].text, &r.cells[&m.reference].text)
                })
                .collect();
            let Some(first) = hits.first() else {
                continue;
            };
            let ids: Vec<String> = hits.iter().map(|r| r.id.clone()).collect();
            for id in &ids {
                explained.insert((s.to_string(), id.clone()));
            }
            out.push(Change {
                text: format!(
                    "{} {what} than {reference} on {} rows (e.g. {}: \"{}\" where {} says \"{}\").",
                    m.server_label(s),
                    ids.len(),
                    first.id,
                    short(&first.cells[*s].text, 50),
                    m.reference,
                    short(&first.cells[&m.reference].text, 50)
                ),
                rows: ids,
            });
        }
    }
    // Encodings: a server naming another encoding than the reference for the same row.
    for s in &others {
        let renamed: Vec<&MatrixRow> = m
            .rows
            .iter()
            .filter(|r| {
                r.cells[*s].text.contains("ziplist")
                    && r.cells[&m.reference].text.contains("listpack")
            })
            .collect();
        if !renamed.is_empty() {
            let ids: Vec<String> = renamed.iter().map(|r| r.id.clone()).collect();
            for id in &ids {
                explained.insert((s.to_string(), id.clone()));
            }
            out.push(Change {
                text: format!(
                    "encodings: {} reports ziplist where {reference} reports listpack ({} rows, e.g. {}: \"{}\").",
                    m.server_label(s),
                    ids.len(),
                    renamed[0].id,
                    short(&renamed[0].cells[*s].text, 60)
                ),
                rows: ids,
            });
        }
    }
    // Labs that stopped at a server's answer (a step they cannot do without).
    for s in &others {
        let failed: Vec<(&String, &String)> = m
            .not_run
            .iter()
            .filter_map(|(lab, why)| Some((lab, why.get(*s)?)))
            .collect();
        if failed.is_empty() {
            continue;
        }
        let labs: Vec<String> = failed
            .iter()
            .map(|(lab, reason)| format!("{lab} ({})", short(reason, 90)))
            .collect();
        let ids: Vec<String> = m
            .rows
            .iter()
            .filter(|r| failed.iter().any(|(lab, _)| **lab == r.lab))
            .map(|r| r.id.clone())
            .collect();
        out.push(Change {
            text: format!(
                "{}: {} lab{} gave no report: {}.",
                m.server_label(s),
                failed.len(),
                if failed.len() == 1 { "" } else { "s" },
                labs.join("; ")
            ),
            rows: ids,
        });
    }
    // The rest, per server and lab.
    for s in &others {
        let mut by_lab: BTreeMap<&str, Vec<String>> = BTreeMap::new();
        for r in &m.rows {
            let st = r.cells[*s].status;
            if (st == Status::Different || st == Status::Unsupported)
                && !explained.contains(&(s.to_string(), r.id.clone()))
            {
                by_lab.entry(r.lab.as_str()).or_default().push(r.id.clone());
            }
        }
        if by_lab.is_empty() {
            continue;
        }
        let labs: Vec<String> = by_lab
            .iter()
            .map(|(lab, ids)| format!("{lab} ({})", ids.len()))
            .collect();
        let ids: Vec<String> = by_lab.values().flatten().cloned().collect();
        out.push(Change {
            text: format!(
                "{} also answers {} other rows differently from {reference}: {} (e.g. {}).",
                m.server_label(s),
                ids.len(),
                labs.join(", "),
                cite(&ids, 3)
            ),
            rows: ids,
        });
    }
    out
}

/// True when `a` and `b` differ only in how their numbers are printed: the same
/// words, and every pair of differing words parses to the same number
/// (`61.200000000000003` and `61.2`, `5.0000000821e+17` and `500000008210000000`).
fn same_numbers(a: &str, b: &str) -> bool {
    let split = |t: &str| -> Vec<String> {
        t.split(|c: char| c.is_whitespace() || "[](),/".contains(c))
            .filter(|w| !w.is_empty())
            .map(str::to_string)
            .collect()
    };
    let (wa, wb) = (split(a), split(b));
    a != b
        && wa.len() == wb.len()
        && wa.iter().zip(&wb).all(|(x, y)| {
            x == y || matches!((x.parse::<f64>(), y.parse::<f64>()), (Ok(p), Ok(q)) if p == q)
        })
}
