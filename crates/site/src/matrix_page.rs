//! `matrix.html`: the version matrix (`matrix.json`) as a page — the summary per
//! server, the "what changed" list with links to its rows, and one table row per
//! exact lab row: the article, the core, then every server, each cell that differs
//! from the reference highlighted (amber: another answer, red: an error where the
//! reference answered, grey: no answer, with the reason).

use std::fmt::Write as _;

use redislab_harness::matrix::{Matrix, Status};

use crate::{esc, head};

fn anchor(id: &str) -> String {
    format!("m-{}", id.replace(['/', ' '], "-"))
}

fn class(status: Status) -> &'static str {
    match status {
        Status::Reference => "mref",
        Status::Equal => "meq",
        Status::Different => "mdiff",
        Status::Unsupported => "munsup",
        Status::NotRun => "mnot",
    }
}

pub fn page(m: &Matrix, origin: &str) -> String {
    let mut h = head("redis-labs: the version matrix");
    let _ = writeln!(
        h,
        "<header><p class=\"nav\"><a href=\"index.html\">← all labs</a></p><h1>Version matrix</h1>\n<p>Every exact row of {} labs on {} servers; each server's answer is compared with {}'s. Highlighted: <span class=\"badge mdiff\">another answer</span> <span class=\"badge munsup\">an error where {} answered</span> <span class=\"badge mnot\">no answer (the lab did not run there)</span>.</p>\n<p class=\"meta\">from {}</p></header>\n<main>",
        m.labs.len(),
        m.servers.len(),
        esc(&m.server_label(&m.reference)),
        esc(&m.reference),
        esc(origin)
    );
    h.push_str("<table class=\"index\">\n<thead><tr><th>server</th><th>version</th><th>equal</th><th>different</th><th>unsupported</th><th>not run</th></tr></thead>\n<tbody>\n");
    for c in &m.summary {
        let version = m
            .servers
            .iter()
            .find(|s| s.name == c.server)
            .map_or("", |s| s.version.as_str());
        let _ = writeln!(
            h,
            "<tr><td>{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
            esc(&c.server),
            esc(version),
            c.equal,
            c.different,
            c.unsupported,
            c.not_run
        );
    }
    h.push_str("</tbody></table>\n<h2>What changed</h2>\n<ul class=\"notes\">\n");
    for c in &m.changes {
        let links: Vec<String> = c
            .rows
            .iter()
            .map(|id| format!("<a href=\"#{}\">{}</a>", anchor(id), esc(id)))
            .collect();
        let _ = writeln!(
            h,
            "<li>{}<div class=\"note\">rows: {}</div></li>",
            esc(&c.text),
            links.join(", ")
        );
    }
    h.push_str("</ul>\n");
    if !m.not_run.is_empty() {
        h.push_str("<h2>Labs without a report on some server</h2>\n<ul class=\"notes\">\n");
        for (lab, why) in &m.not_run {
            for (server, reason) in why {
                let _ = writeln!(
                    h,
                    "<li>{} on {}: {}</li>",
                    esc(lab),
                    esc(server),
                    esc(reason)
                );
            }
        }
        h.push_str("</ul>\n");
    }
    h.push_str(
        "<table class=\"rows matrix\">\n<thead><tr><th>row</th><th>article</th><th>core</th>",
    );
    for s in &m.servers {
        let _ = write!(h, "<th>{}</th>", esc(&m.server_label(&s.name)));
    }
    h.push_str("</tr></thead>\n<tbody>\n");
    for r in &m.rows {
        let _ = write!(
            h,
            "<tr id=\"{}\"><td><a href=\"{}.html#row-{}\">{}</a><div class=\"note\">{}</div></td><td><pre>{}</pre></td><td><pre>{}</pre></td>",
            anchor(&r.id),
            esc(&r.lab),
            esc(&r.id[r.lab.len() + 1..]),
            esc(&r.id),
            esc(&r.label),
            esc(r.article.as_deref().unwrap_or("–")),
            esc(r.core.as_deref().unwrap_or("–"))
        );
        for s in &m.servers {
            let c = &r.cells[&s.name];
            let _ = write!(
                h,
                "<td class=\"{}\" title=\"{}\"><pre>{}</pre></td>",
                class(c.status),
                c.status.word(),
                esc(&c.text)
            );
        }
        h.push_str("</tr>\n");
    }
    h.push_str("</tbody></table>\n</main>\n</body>\n</html>\n");
    h
}
