//! `out/matrix.txt`: the summary, the "what changed" list, then one line per exact
//! row (article, core, every server; `=` where a server answers like the reference,
//! `≠`/`✗` and its answer where not), and under each lab the full answers that differ.

use std::fmt::Write as _;

use super::changes::short;
use super::{Matrix, Status};

/// Width of one column of the row lines.
const COL: usize = 22;

fn pad(s: &str, n: usize) -> String {
    let s = short(s, n - 1);
    let len = s.chars().count();
    format!("{s}{}", " ".repeat(n.saturating_sub(len)))
}

/// The mark a cell gets in the row line.
pub fn mark(status: Status) -> &'static str {
    match status {
        Status::Reference | Status::Equal => "",
        Status::Different => "≠ ",
        Status::Unsupported => "✗ ",
        Status::NotRun => "- ",
    }
}

pub fn to_text(m: &Matrix) -> String {
    let mut t = String::new();
    let _ = writeln!(
        t,
        "version matrix — every exact row of {} labs on {} servers, compared with {}",
        m.labs.len(),
        m.servers.len(),
        m.server_label(&m.reference)
    );
    let _ = writeln!(
        t,
        "servers: {}",
        m.servers
            .iter()
            .map(|s| m.server_label(&s.name))
            .collect::<Vec<_>>()
            .join(" · ")
    );
    let _ = writeln!(t, "rows: {}\n", m.rows.len());
    let _ = writeln!(
        t,
        "{:<28} {:>6} {:>10} {:>12} {:>8}",
        "server", "equal", "different", "unsupported", "not run"
    );
    for c in &m.summary {
        let _ = writeln!(
            t,
            "{:<28} {:>6} {:>10} {:>12} {:>8}",
            short(&m.server_label(&c.server), 27),
            c.equal,
            c.different,
            c.unsupported,
            c.not_run
        );
    }
    t.push_str("\nwhat changed:\n");
    for c in &m.changes {
        let _ = writeln!(t, "* {}\n  rows: {}", c.text, c.rows.join(", "));
    }
    if !m.not_run.is_empty() {
        t.push_str("\nlabs without a report on some server:\n");
        for (lab, why) in &m.not_run {
            for (server, reason) in why {
                let _ = writeln!(t, "  {lab} on {server}: {reason}");
            }
        }
    }
    let _ = writeln!(
        t,
        "\nIn the row lines a server's cell is empty where it answers like {}; ≠ marks another answer, ✗ an error where {} answered, - no answer (the lab did not run there).",
        m.reference, m.reference
    );
    let names: Vec<&str> = m.servers.iter().map(|s| s.name.as_str()).collect();
    for lab in &m.labs {
        let rows: Vec<_> = m.rows.iter().filter(|r| &r.lab == lab).collect();
        if rows.is_empty() {
            continue;
        }
        let _ = writeln!(t, "\n=== {lab}");
        let mut header = format!(
            "{}{}{}",
            pad("row", COL),
            pad("article", COL),
            pad("core", COL)
        );
        for n in &names {
            header.push_str(&pad(n, COL));
        }
        let _ = writeln!(t, "{}", header.trim_end());
        let mut details = Vec::new();
        for r in &rows {
            let mut line = format!(
                "{}{}{}",
                pad(&r.id[lab.len() + 1..], COL),
                pad(r.article.as_deref().unwrap_or(""), COL),
                pad(r.core.as_deref().unwrap_or(""), COL)
            );
            for n in &names {
                let c = &r.cells[*n];
                let shown = match c.status {
                    Status::Equal => String::new(),
                    st => format!("{}{}", mark(st), c.text),
                };
                line.push_str(&pad(&shown, COL));
                if matches!(c.status, Status::Different | Status::Unsupported) {
                    details.push(format!(
                        "  {} ({}) on {n}: {}\n      {}: {}",
                        r.id, r.label, c.text, m.reference, r.cells[&m.reference].text
                    ));
                }
            }
            let _ = writeln!(t, "{}", line.trim_end());
            if let Some(why) = &r.sampled {
                let _ = writeln!(
                    t,
                    "  ^ sampled: {why} (./run.sh check matrix compares this row's status only)"
                );
            }
        }
        if !details.is_empty() {
            let _ = writeln!(t, "  -- answers that differ from {}:", m.reference);
            for d in details {
                let _ = writeln!(t, "{d}");
            }
        }
    }
    t
}
