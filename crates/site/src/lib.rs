//! The HTML report: a static site from lab reports (`<id>.json`) alone.
//!
//! `index.html` lists every lab with its article (title and English gloss),
//! section and verdict counts; `<id>.html` shows one lab: the article's figure
//! beside each backend's, the verdicts in colour (`CORE ≠ REDIS`, `differs from
//! article`), the notes, and the lab's charts as inline SVG (also written as
//! `svg/<id>-<chart>.svg`). Nothing is read but the JSON: no server, no lab code,
//! so a baseline from another machine or another Redis version renders the same
//! way. The pages load nothing from the network (no script, font or style sheet
//! from elsewhere; a Content-Security-Policy says so to the browser).

pub mod bench_page;
pub mod charts;
pub mod matrix_page;
pub mod skiplist;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use redislab_harness::chart::ChartKind;
use redislab_harness::matrix::Matrix;
use redislab_harness::report::{self, Kind, Report, COLUMNS};

/// A report and where it came from (shown on the page).
pub struct Input {
    pub report: Report,
    pub origin: String,
}

/// Reads every lab report in `dirs` (later directories win for the same lab).
/// Files that are not lab reports (`tcl-suite.json`, ...) are skipped.
pub fn load(dirs: &[(PathBuf, &str)]) -> Vec<Input> {
    let mut by_lab: BTreeMap<String, Input> = BTreeMap::new();
    for (dir, origin) in dirs {
        let Ok(entries) = std::fs::read_dir(dir) else {
            continue;
        };
        let mut paths: Vec<PathBuf> = entries.filter_map(|e| Some(e.ok()?.path())).collect();
        paths.sort();
        for path in paths {
            if path.extension().and_then(|e| e.to_str()) != Some("json") {
                continue;
            }
            let Ok(report) = Report::read(&path) else {
                continue;
            };
            if report.lab.is_empty() || report.rows.is_empty() {
                continue;
            }
            let shown = std::env::current_dir()
                .ok()
                .and_then(|cwd| path.strip_prefix(cwd).ok().map(Path::to_path_buf))
                .unwrap_or_else(|| path.clone());
            let origin = format!("{origin} {}", shown.display());
            by_lab.insert(report.lab.clone(), Input { report, origin });
        }
    }
    by_lab.into_values().collect()
}

/// What was written.
pub struct Summary {
    pub pages: usize,
    pub charts: usize,
    /// Charts that could not be drawn, with the reason (shown on their page too).
    pub chart_errors: Vec<String>,
}

/// Writes the site into `out`; with a version matrix (and where it came from), its
/// page `matrix.html` too, and with a `./run.sh bench` result `bench.html`, each
/// linked from the index.
pub fn write_site(
    inputs: &[Input],
    matrix: Option<(&Matrix, &str)>,
    bench: Option<(&serde_json::Value, &str)>,
    out: &Path,
) -> Result<Summary, String> {
    let svg_dir = out.join("svg");
    std::fs::create_dir_all(&svg_dir)
        .map_err(|e| format!("cannot create {}: {e}", svg_dir.display()))?;
    let mut summary = Summary {
        pages: 0,
        charts: 0,
        chart_errors: Vec::new(),
    };
    for input in inputs {
        let page = lab_page(input, &svg_dir, &mut summary)?;
        write(&out.join(format!("{}.html", input.report.lab)), &page)?;
        summary.pages += 1;
    }
    if let Some((m, origin)) = matrix {
        write(&out.join("matrix.html"), &matrix_page::page(m, origin))?;
        summary.pages += 1;
    }
    if let Some((b, origin)) = bench {
        write(&out.join("bench.html"), &bench_page::page(b, origin))?;
        summary.pages += 1;
    }
    write(
        &out.join("index.html"),
        &index_page(inputs, matrix.is_some(), bench.is_some()),
    )?;
    write(&out.join("style.css"), STYLE)?;
    summary.pages += 1;
    Ok(summary)
}

fn write(path: &Path, body: &str) -> Result<(), String> {
    std::fs::write(path, body).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// `&`, `<`, `>`, `"` escaped for HTML text and attributes.
pub fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

const STYLE: &str = include_str!("style.css");

fn head(title: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'self'; img-src 'self' data:\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{}</title>\n<link rel=\"stylesheet\" href=\"style.css\">\n</head>\n<body>\n",
        esc(title)
    )
}

/// Verdict counts of one report, in a fixed order.
fn counts(r: &Report) -> Vec<(String, usize)> {
    let mut m: BTreeMap<String, usize> = BTreeMap::new();
    for row in &r.rows {
        *m.entry(report::verdict(row)).or_default() += 1;
    }
    let order = [
        "same",
        "differs from article",
        "CORE ≠ REDIS",
        "core/redis differ (expected)",
        "pg only",
        "measured",
        "random",
    ];
    let mut out: Vec<(String, usize)> = order
        .iter()
        .filter_map(|k| m.remove(*k).map(|n| (k.to_string(), n)))
        .collect();
    out.extend(m);
    out
}

fn verdict_class(v: &str) -> &'static str {
    match v {
        "same" => "same",
        "differs from article" | "same · pg differs" => "differs",
        "CORE ≠ REDIS" => "ne",
        "core/redis differ (expected)" => "expected",
        "measured" | "random" => "meas",
        _ => "other",
    }
}

fn badges(r: &Report) -> String {
    counts(r)
        .iter()
        .map(|(v, n)| {
            format!(
                "<span class=\"badge {}\">{n} {}</span>",
                verdict_class(v),
                esc(v)
            )
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn article_line(r: &Report) -> String {
    match &r.article {
        Some(a) => format!(
            "article {} · <span lang=\"vi\">{}</span> <span class=\"gloss\">({})</span> · section {}",
            esc(&a.code),
            esc(&a.title),
            esc(&a.gloss),
            esc(&r.section)
        ),
        None => esc(&r.source),
    }
}

fn index_page(inputs: &[Input], with_matrix: bool, with_bench: bool) -> String {
    let mut h = head("redis-labs: the report");
    h.push_str("<header><h1>redis-labs</h1>\n<p>The experiments of four Vietnamese articles on Redis, run on this project's core, a real Redis and a real PostgreSQL. Each lab's page puts the article's figure beside every backend's answer.</p></header>\n<main>\n");
    if with_matrix {
        h.push_str("<p><a href=\"matrix.html\">The version matrix</a>: every exact row on each real server side by side.</p>\n");
    }
    if with_bench {
        h.push_str("<p><a href=\"bench.html\">The benchmark</a>: redis-benchmark on the core and on Redis in the same run.</p>\n");
    }
    h.push_str("<table class=\"index\">\n<thead><tr><th>lab</th><th>article · section</th><th>verdicts</th><th>charts</th></tr></thead>\n<tbody>\n");
    for input in inputs {
        let r = &input.report;
        let _ = writeln!(
            h,
            "<tr><td><a href=\"{id}.html\">{id}</a><div class=\"title\">{title}</div></td><td>{article}</td><td>{badges}</td><td class=\"num\">{charts}</td></tr>",
            id = esc(&r.lab),
            title = esc(&r.title),
            article = article_line(r),
            badges = badges(r),
            charts = r.charts.len()
        );
    }
    h.push_str("</tbody></table>\n");
    let versions: BTreeMap<String, String> = inputs
        .iter()
        .flat_map(|i| i.report.versions.clone())
        .collect();
    let _ = writeln!(
        h,
        "<p class=\"meta\">versions: {}</p>",
        esc(&versions
            .iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect::<Vec<_>>()
            .join(" · "))
    );
    h.push_str("</main>\n</body>\n</html>\n");
    h
}

fn lab_page(input: &Input, svg_dir: &Path, summary: &mut Summary) -> Result<String, String> {
    let r = &input.report;
    let mut h = head(&format!("{} — {}", r.lab, r.title));
    let _ = writeln!(
        h,
        "<header><p class=\"nav\"><a href=\"index.html\">← all labs</a></p><h1>{} — {}</h1>\n<p class=\"article\">{}</p>",
        esc(&r.lab),
        esc(&r.title),
        article_line(r)
    );
    let versions: Vec<String> = r.versions.iter().map(|(k, v)| format!("{k} {v}")).collect();
    let params: Vec<String> = r.params.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let _ = writeln!(
        h,
        "<p class=\"meta\">versions: {} · params: {} · from {}</p>\n<p>{}</p></header>\n<main>",
        esc(&versions.join(" · ")),
        esc(&params.join(" ")),
        esc(&input.origin),
        badges(r)
    );
    for chart in &r.charts {
        let drawn = if chart.kind == ChartKind::Skiplist {
            skiplist_chart(chart, r)
        } else {
            charts::render(chart, r)
        };
        match drawn {
            Ok(svg) => {
                let svg = svg
                    .trim_start_matches("<?xml version=\"1.0\" encoding=\"UTF-8\"?>")
                    .trim();
                write(&svg_dir.join(format!("{}-{}.svg", r.lab, chart.id)), svg)?;
                let _ = writeln!(
                    h,
                    "<figure class=\"chart\" id=\"chart-{}\">{}<figcaption>{}</figcaption></figure>",
                    esc(&chart.id),
                    svg,
                    esc(&chart.caption)
                );
                summary.charts += 1;
            }
            Err(e) => {
                summary
                    .chart_errors
                    .push(format!("{} / {}: {e}", r.lab, chart.id));
                let _ = writeln!(
                    h,
                    "<figure class=\"chart-missing\"><p>{}: not drawn: {}</p></figure>",
                    esc(&chart.title),
                    esc(&e)
                );
            }
        }
    }
    let backends: Vec<&str> = COLUMNS
        .into_iter()
        .filter(|b| r.rows.iter().any(|row| row.value(b).is_some()))
        .collect();
    let with_reference = r.rows.iter().any(|row| row.reference.is_some());
    h.push_str("<table class=\"rows\">\n<thead><tr><th>row</th><th>article</th>");
    if with_reference {
        h.push_str("<th>reference</th>");
    }
    for b in &backends {
        let _ = write!(h, "<th>{b}</th>");
    }
    h.push_str("<th>verdict</th></tr></thead>\n<tbody>\n");
    for row in &r.rows {
        let v = report::verdict(row);
        let _ = write!(
            h,
            "<tr class=\"{}\" id=\"row-{}\"><td>{}{}</td><td>{}</td>",
            verdict_class(&v),
            esc(&row.key),
            esc(&row.label),
            row.note
                .as_ref()
                .map(|n| format!("<div class=\"note\">{}</div>", esc(n)))
                .unwrap_or_default(),
            esc(row.article.as_deref().unwrap_or("–"))
        );
        if with_reference {
            let text = row.reference.as_ref().map_or("–", |c| c.text.as_str());
            let _ = write!(h, "<td class=\"reference\"><pre>{}</pre></td>", esc(text));
        }
        for b in &backends {
            let cell = row.value(b);
            let class = match cell {
                Some(c) if c.error => " class=\"err\"",
                Some(c) if c.skipped => " class=\"skip\"",
                _ => "",
            };
            let text = cell.map(|c| c.text.as_str()).unwrap_or("–");
            // A drawing (several lines) keeps its lines and scrolls sideways.
            let pre = if text.contains('\n') {
                "<pre class=\"drawing\">"
            } else {
                "<pre>"
            };
            let _ = write!(h, "<td{class}>{pre}{}</pre></td>", esc(text));
        }
        let extra = match (row.kind, row.band, row.bounds) {
            (_, Some(b), _) => format!("<div class=\"band\">band ×{b}</div>"),
            (Kind::Random, _, Some(b)) => format!(
                "<div class=\"band\">bounds {}…{}</div>",
                redislab_harness::fmt::number(b.min),
                redislab_harness::fmt::number(b.max)
            ),
            _ => String::new(),
        };
        let _ = writeln!(h, "<td class=\"verdict\">{}{extra}</td></tr>", esc(&v));
    }
    h.push_str("</tbody></table>\n");
    if !r.notes.is_empty() {
        h.push_str("<h2>Notes</h2>\n<ul class=\"notes\">\n");
        for n in &r.notes {
            let _ = writeln!(h, "<li>{}</li>", esc(n));
        }
        h.push_str("</ul>\n");
    }
    h.push_str("</main>\n</body>\n</html>\n");
    Ok(h)
}

/// A skiplist chart: one drawing per series (backend), side by side in the SVG
/// list, from the `detail` of the row the series names.
fn skiplist_chart(chart: &redislab_harness::chart::Chart, r: &Report) -> Result<String, String> {
    let series = chart.series.first().ok_or("no series")?;
    let backend = series.backend.as_deref().unwrap_or("");
    let row = series
        .points
        .first()
        .and_then(|p| p.row.as_deref())
        .ok_or("no row")?;
    let cell = r
        .find(row)
        .and_then(|row| row.value(backend))
        .ok_or_else(|| format!("{backend} has no value in row {row}"))?;
    let detail = cell
        .detail
        .as_ref()
        .ok_or_else(|| format!("{backend}: {}", cell.text.lines().next().unwrap_or("")))?;
    skiplist::render(&chart.title, detail)
}
