//! A lab's results: rows with the article's figure and each backend's value, written
//! as a human table (`out/<id>.txt`) and as JSON (`out/<id>.json`) for tools.
//!
//! Every backend value is a [`Cell`]: the text a reader sees, and for measured and
//! random rows the number behind it (`value` + `unit`; for a latency also `median`,
//! `p99`, `n`, `server_us` and the HDR histogram's `percentiles`), so tools compare
//! and plot without parsing text. The JSON's shape is `schema/lab-report.schema.json`
//! (checked against every baseline by a test). A report also carries the charts
//! the HTML report draws ([`crate::chart`]), as references to its rows.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::catalog::Article;
use crate::chart::Chart;
use crate::fmt;

/// How a row is compared with its baseline.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// Must equal the baseline exactly (and core must equal redis, unless the row
    /// says the two are expected to differ).
    Exact,
    /// A timing or a size that varies by machine: compared within a ratio band, or
    /// not at all when the lab gives none.
    Measured,
    /// Depends on a seed or on scheduling: compared by bounds.
    Random,
}

/// Bounds a random row's numeric values must stay within.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Bounds {
    pub min: f64,
    pub max: f64,
}

/// A number with its unit, e.g. a rate beside a duration.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Quantity {
    pub value: f64,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub unit: String,
}

/// What one backend gave for one row.
///
/// `text` is what the table shows. For an exact row it is the reply itself; for a
/// measured or random row it is the display form of `value` (+ `unit`), and every
/// number in it is also a field here. A server's error is its own text with
/// `error: true`; a step the lab did not run says so with `skipped: true`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(from = "CellRepr")]
pub struct Cell {
    pub text: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<f64>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub unit: String,
    #[serde(default, skip_serializing_if = "is_false")]
    pub error: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub skipped: bool,
    /// Latency: the median, in `unit` (µs unless the cell says otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub median: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p99: Option<f64>,
    /// How many measured calls (or runs) the figure rests on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub n: Option<u64>,
    /// Redis's own time per call (`INFO commandstats`), µs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_us: Option<f64>,
    /// `[percentile, value]` pairs of the HDR histogram (percentile 0–100).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub percentiles: Vec<[f64; 2]>,
    /// Other numbers of the same measurement, by name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub extra: BTreeMap<String, Quantity>,
    /// `[x, y]` points the backend produced (a histogram, a time series).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub points: Vec<[f64; 2]>,
    /// A structure the backend was read out of (e.g. 05k's skiplist), for drawing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<serde_json::Value>,
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// Reports written before cells had numbers stored a bare string.
#[derive(Deserialize)]
#[serde(untagged)]
enum CellRepr {
    Text(String),
    Full(Box<CellFields>),
}

#[derive(Deserialize)]
struct CellFields {
    text: String,
    #[serde(default)]
    value: Option<f64>,
    #[serde(default)]
    unit: String,
    #[serde(default)]
    error: bool,
    #[serde(default)]
    skipped: bool,
    #[serde(default)]
    median: Option<f64>,
    #[serde(default)]
    p99: Option<f64>,
    #[serde(default)]
    n: Option<u64>,
    #[serde(default)]
    server_us: Option<f64>,
    #[serde(default)]
    percentiles: Vec<[f64; 2]>,
    #[serde(default)]
    extra: BTreeMap<String, Quantity>,
    #[serde(default)]
    points: Vec<[f64; 2]>,
    #[serde(default)]
    detail: Option<serde_json::Value>,
}

impl From<CellRepr> for Cell {
    fn from(r: CellRepr) -> Cell {
        match r {
            CellRepr::Text(text) => Cell::text(text),
            CellRepr::Full(f) => Cell {
                text: f.text,
                value: f.value,
                unit: f.unit,
                error: f.error,
                skipped: f.skipped,
                median: f.median,
                p99: f.p99,
                n: f.n,
                server_us: f.server_us,
                percentiles: f.percentiles,
                extra: f.extra,
                points: f.points,
                detail: f.detail,
            },
        }
    }
}

impl Cell {
    /// A cell that is only text: a reply, an answer.
    pub fn text(text: impl Into<String>) -> Cell {
        Cell {
            text: text.into(),
            ..Default::default()
        }
    }

    /// A number with its unit; the text is [`fmt::quantity`] of it.
    pub fn num(value: f64, unit: &str) -> Cell {
        Cell {
            text: fmt::quantity(value, unit),
            value: Some(value),
            unit: unit.into(),
            ..Default::default()
        }
    }

    /// A whole number (a count) with its unit.
    pub fn count(value: u64, unit: &str) -> Cell {
        Cell::num(value as f64, unit)
    }

    /// [`Cell::num`] at `decimals` places.
    pub fn num_with(value: f64, unit: &str, decimals: usize) -> Cell {
        Cell {
            text: fmt::quantity_with(value, unit, decimals),
            ..Cell::num(value, unit)
        }
    }

    /// A server's error (or another backend's refusal), as its own text.
    pub fn error(text: impl Into<String>) -> Cell {
        Cell {
            text: text.into(),
            error: true,
            ..Default::default()
        }
    }

    /// A step the lab did not run, and why.
    pub fn skipped(why: impl Into<String>) -> Cell {
        Cell {
            text: why.into(),
            skipped: true,
            ..Default::default()
        }
    }

    /// Replaces the display text (the numbers stay).
    pub fn with_text(mut self, text: impl Into<String>) -> Cell {
        self.text = text.into();
        self
    }

    /// Adds another number of the same measurement; the text is left as it is.
    pub fn with(mut self, name: &str, value: f64, unit: &str) -> Cell {
        self.extra.insert(
            name.into(),
            Quantity {
                value,
                unit: unit.into(),
            },
        );
        self
    }

    /// [`Cell::with`], and the number appended to the text: `9.0 s · 111,505 ZADD/s`.
    pub fn and(self, name: &str, value: f64, unit: &str) -> Cell {
        let shown = fmt::quantity(value, unit);
        let mut cell = self.with(name, value, unit);
        cell.text = format!("{} · {shown}", cell.text);
        cell
    }

    /// `[x, y]` points (a histogram, a series over time).
    pub fn with_points(mut self, points: Vec<[f64; 2]>) -> Cell {
        self.points = points;
        self
    }

    /// A structured read-out, for drawing.
    pub fn with_detail(mut self, detail: serde_json::Value) -> Cell {
        self.detail = Some(detail);
        self
    }

    /// The number a check or a chart uses: `value`, else the `median`.
    pub fn number(&self) -> Option<f64> {
        self.value.or(self.median)
    }

    /// A named number: `value`, `median`, `p99`, `n`, `server_us`, or an `extra`.
    pub fn field(&self, name: &str) -> Option<f64> {
        match name {
            "value" => self.number(),
            "median" => self.median,
            "p99" => self.p99,
            "n" => self.n.map(|n| n as f64),
            "server_us" => self.server_us,
            other => self.extra.get(other).map(|q| q.value),
        }
    }

    /// For a measured or random cell a lab filled with text only: the number the
    /// text starts with (`1,817 (min …)` → 1817) and the word after it as the unit,
    /// so the JSON still has the number; an error line is marked as one.
    fn infer_number(&mut self) {
        if self.value.is_some() || self.median.is_some() || self.error || self.skipped {
            return;
        }
        let t = self.text.trim();
        if t.starts_with("skipped") {
            self.skipped = true;
            return;
        }
        let lead: String = t
            .chars()
            .take_while(|c| c.is_ascii_digit() || matches!(c, '.' | '-' | ',' | 'e' | '+'))
            .collect();
        match lead.replace(',', "").parse::<f64>() {
            Ok(v) if !lead.is_empty() => {
                self.value = Some(v);
                let rest = t[lead.len()..].trim_start();
                let unit: String = rest.chars().take_while(|c| !c.is_whitespace()).collect();
                let unit = unit.trim_end_matches([',', ';', ')']);
                if matches!(
                    unit,
                    "µs" | "ms" | "s" | "ns" | "B" | "B/member" | "B/point" | "ops/s" | "×" | "%"
                ) {
                    self.unit = unit.into();
                } else if let Some(u) = rest.strip_prefix('×') {
                    let _ = u;
                    self.unit = "×".into();
                }
            }
            _ => self.error = true,
        }
    }
}

impl From<String> for Cell {
    fn from(text: String) -> Cell {
        Cell::text(text)
    }
}

impl From<&str> for Cell {
    fn from(text: &str) -> Cell {
        Cell::text(text)
    }
}

impl From<&String> for Cell {
    fn from(text: &String) -> Cell {
        Cell::text(text.clone())
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Row {
    pub key: String,
    pub label: String,
    pub kind: Kind,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub article: Option<String>,
    /// What the lab itself computed for this row (a constant, a formula, a reference
    /// library's answer): shown in its own column, never as a backend's.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub reference: Option<Cell>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub redis: Option<Cell>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub core: Option<Cell>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub pg: Option<Cell>,
    /// For exact rows: whether core and redis must agree (false where the real server
    /// lacks a feature the article uses, e.g. an 8.8 command on 8.6.3).
    #[serde(default = "yes")]
    pub core_matches_redis: bool,
    /// For exact rows: a server may answer with an estimate that moves run to run
    /// (MEMORY USAGE of a big set samples a few of its elements), and why. The row
    /// stays exact for `./run.sh check` (the reference server's answer is stable);
    /// the version matrix's check compares only its cells' status.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub sampled: Option<String>,
    /// fresh/baseline of every backend's number must stay within [1/band, band].
    /// Given to measured rows whose figure is a ratio inside one run (core/redis,
    /// BITOP/SINTERCARD, ...), which does not move with the machine's speed.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub band: Option<f64>,
    /// Every backend's number must lie within these bounds.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub bounds: Option<Bounds>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub note: Option<String>,
}

fn yes() -> bool {
    true
}

/// The backends a row has a column for, in the table's order.
pub const BACKENDS: [&str; 3] = ["redis", "core", "pg"];

/// The value columns of a row: the lab's own reference, then the backends.
pub const COLUMNS: [&str; 4] = ["reference", "redis", "core", "pg"];

impl Row {
    pub fn value(&self, backend: &str) -> Option<&Cell> {
        match backend {
            "redis" => self.redis.as_ref(),
            "core" => self.core.as_ref(),
            "pg" => self.pg.as_ref(),
            "reference" => self.reference.as_ref(),
            _ => None,
        }
    }

    /// The text `backend` gave, if it gave anything.
    pub fn text(&self, backend: &str) -> Option<&str> {
        self.value(backend).map(|c| c.text.as_str())
    }

    fn value_mut(&mut self, backend: &str) -> &mut Option<Cell> {
        match backend {
            "redis" => &mut self.redis,
            "core" => &mut self.core,
            "pg" => &mut self.pg,
            "reference" => &mut self.reference,
            other => panic!("unknown backend {other}"),
        }
    }

    /// Sets the ratio band (see [`Row::band`]).
    pub fn band(&mut self, band: f64) -> &mut Row {
        self.band = Some(band);
        self
    }

    /// Sets the bounds (see [`Row::bounds`]).
    pub fn bounds(&mut self, min: f64, max: f64) -> &mut Row {
        self.bounds = Some(Bounds { min, max });
        self
    }

    /// Puts what the lab computed itself (see [`Row::reference`]) in the row's
    /// reference column.
    pub fn reference(&mut self, value: impl Into<Cell>) -> &mut Row {
        let mut cell = value.into();
        if self.kind != Kind::Exact {
            cell.infer_number();
        }
        self.reference = Some(cell);
        self
    }

    /// Marks the row's answer as a sampled estimate on some server (see
    /// [`Row::sampled`]); `why` says where and why.
    pub fn sampled(&mut self, why: impl Into<String>) -> &mut Row {
        self.sampled = Some(why.into());
        self
    }

    pub fn note(&mut self, note: impl Into<String>) -> &mut Row {
        self.note = Some(note.into());
        self
    }
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Report {
    pub lab: String,
    pub title: String,
    /// The article, its section, as one line (`article 05 · <title> (<gloss>) · section 3.2`).
    pub source: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub article: Option<Article>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub section: String,
    pub versions: BTreeMap<String, String>,
    #[serde(default)]
    pub params: BTreeMap<String, String>,
    pub rows: Vec<Row>,
    /// Free text printed under the table: what the rows show and why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// What the HTML report draws, from the rows above.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub charts: Vec<Chart>,
}

/// Collects one backend's values; merged into the report when the step ends.
pub struct Recorder {
    pub backend: &'static str,
    values: Vec<(String, Cell)>,
}

impl Recorder {
    pub fn new(backend: &'static str) -> Recorder {
        Recorder {
            backend,
            values: Vec::new(),
        }
    }

    /// Records what this backend gave for row `key`: text (an exact reply), or a
    /// [`Cell`] with numbers ([`Cell::num`], a [`crate::timing::Timing`], ...).
    pub fn put(&mut self, key: &str, value: impl Into<Cell>) {
        self.values.push((key.to_string(), value.into()));
    }
}

impl Report {
    /// Declares a row. Rows appear in the order they are declared.
    pub fn row(&mut self, key: &str, label: &str, kind: Kind, article: Option<&str>) -> &mut Row {
        assert!(
            self.rows.iter().all(|r| r.key != key),
            "row {key} declared twice"
        );
        self.rows.push(Row {
            key: key.into(),
            label: label.into(),
            kind,
            article: article.map(str::to_string),
            reference: None,
            redis: None,
            core: None,
            pg: None,
            core_matches_redis: true,
            sampled: None,
            band: None,
            bounds: None,
            note: None,
        });
        self.rows.last_mut().unwrap()
    }

    pub fn exact(&mut self, key: &str, label: &str, article: &str) -> &mut Row {
        self.row(key, label, Kind::Exact, Some(article))
    }

    /// A measured row (a timing, a size, a rate); give it a [`Row::band`] when its
    /// figure is a ratio inside one run.
    pub fn measured(&mut self, key: &str, label: &str, article: Option<&str>) -> &mut Row {
        self.row(key, label, Kind::Measured, article)
    }

    /// A random row (seed- or scheduling-dependent), checked by its [`Row::bounds`].
    pub fn random(&mut self, key: &str, label: &str, article: Option<&str>) -> &mut Row {
        self.row(key, label, Kind::Random, article)
    }

    /// Adds a chart the HTML report draws from this report's rows.
    pub fn chart(&mut self, chart: Chart) {
        assert!(
            self.charts.iter().all(|c| c.id != chart.id),
            "chart {} declared twice",
            chart.id
        );
        self.charts.push(chart);
    }

    /// Fills row `dst` with core's number ÷ redis's number in row `src` (both of
    /// this run), in the core column: `0.80× redis`. A ratio of two backends of one
    /// run moves little with the machine, so `dst` can carry a [`Row::band`].
    /// Nothing is written when either backend has no number.
    pub fn core_over_redis(&mut self, src: &str, dst: &str) {
        let Some(row) = self.find(src) else {
            return;
        };
        let num = |b: &str| row.value(b).and_then(Cell::number);
        if let (Some(c), Some(r)) = (num("core"), num("redis")) {
            if r != 0.0 {
                let ratio = c / r;
                let cell = Cell::num(ratio, "×").with_text(format!(
                    "{} redis ({} / {})",
                    fmt::quantity(ratio, "×"),
                    fmt::number(c),
                    fmt::number(r)
                ));
                if let Some(d) = self.rows.iter_mut().find(|x| x.key == dst) {
                    d.core = Some(cell);
                }
            }
        }
    }

    /// Fills row `dst` (core column) with the geometric mean of core ÷ redis over
    /// the numbers of rows `srcs` (e.g. the medians of every timed command): one
    /// figure for "how much slower or faster is the core here", with its count.
    pub fn core_over_redis_geomean(&mut self, srcs: &[&str], dst: &str) {
        let ratios: Vec<f64> = srcs
            .iter()
            .filter_map(|k| {
                let row = self.find(k)?;
                let c = row.value("core")?.number()?;
                let r = row.value("redis")?.number()?;
                (c > 0.0 && r > 0.0).then(|| c / r)
            })
            .collect();
        if ratios.is_empty() {
            return;
        }
        let g = (ratios.iter().map(|r| r.ln()).sum::<f64>() / ratios.len() as f64).exp();
        let lo = ratios.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = ratios.iter().copied().fold(0.0, f64::max);
        let mut cell = Cell::num(g, "×").with_text(format!(
            "{} redis (geometric mean of {} ratios, {}–{})",
            fmt::quantity(g, "×"),
            ratios.len(),
            fmt::quantity(lo, "×"),
            fmt::quantity(hi, "×")
        ));
        cell.n = Some(ratios.len() as u64);
        if let Some(d) = self.rows.iter_mut().find(|x| x.key == dst) {
            d.core = Some(cell.with("min", lo, "×").with("max", hi, "×"));
        }
    }

    pub fn find(&self, key: &str) -> Option<&Row> {
        self.rows.iter().find(|r| r.key == key)
    }

    /// The row `key`, to fill after the backends ran (e.g. its reference).
    pub fn find_mut(&mut self, key: &str) -> Option<&mut Row> {
        self.rows.iter_mut().find(|r| r.key == key)
    }

    /// Merges what a backend recorded; a key that was never declared is a lab bug.
    pub fn merge(&mut self, recorder: Recorder) -> Result<(), String> {
        for (key, value) in recorder.values {
            let row = self
                .rows
                .iter_mut()
                .find(|r| r.key == key)
                .ok_or_else(|| format!("lab bug: value for undeclared row '{key}'"))?;
            let mut value = value;
            if row.kind != Kind::Exact {
                value.infer_number();
            }
            *row.value_mut(recorder.backend) = Some(value);
        }
        Ok(())
    }

    pub fn write(&self, dir: &Path) -> Result<(), String> {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        let json = serde_json::to_string_pretty(self).expect("report serialises") + "\n";
        let txt = self.to_text();
        for (ext, body) in [("json", json), ("txt", txt)] {
            let path = dir.join(format!("{}.{ext}", self.lab));
            std::fs::write(&path, body)
                .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        }
        Ok(())
    }

    pub fn read(path: &Path) -> Result<Report, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        serde_json::from_str(&text)
            .map_err(|e| format!("{} is not a lab report: {e}", path.display()))
    }

    /// The human table: one column per backend that ran, beside the article's
    /// figure, and a verdict column.
    pub fn to_text(&self) -> String {
        self.render(false)
    }

    /// [`Report::to_text`] with the verdicts in colour (for a terminal).
    pub fn to_coloured_text(&self) -> String {
        self.render(true)
    }

    fn render(&self, colour: bool) -> String {
        let mut out = String::new();
        out.push_str(&format!("{} — {}\n", self.lab, self.title));
        out.push_str(&format!("source: {}\n", self.source));
        let versions: Vec<String> = self
            .versions
            .iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect();
        out.push_str(&format!("versions: {}\n", versions.join(" · ")));
        if !self.params.is_empty() {
            let params: Vec<String> = self
                .params
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect();
            out.push_str(&format!("params: {}\n", params.join(" ")));
        }
        out.push('\n');

        let backends: Vec<&str> = COLUMNS
            .into_iter()
            .filter(|b| self.rows.iter().any(|r| r.value(b).is_some()))
            .collect();
        let mut header = vec!["row".to_string(), "article".to_string()];
        header.extend(backends.iter().map(|b| b.to_string()));
        header.push("verdict".into());
        let mut table = vec![header];
        for row in &self.rows {
            let mut cells = vec![
                row.label.clone(),
                row.article.clone().unwrap_or_else(|| "-".into()),
            ];
            for b in &backends {
                cells.push(row.text(b).unwrap_or("-").to_string());
            }
            cells.push(verdict(row));
            table.push(cells);
        }
        let columns = format_table(&table);
        // Long values make a side-by-side table unreadable in a terminal: then each
        // row becomes a small block with one line per source.
        let widest = columns
            .lines()
            .map(|l| l.chars().count())
            .max()
            .unwrap_or(0);
        let body = if widest <= MAX_TABLE_WIDTH {
            columns
        } else {
            format_blocks(&table)
        };
        out.push_str(&if colour { paint_verdicts(&body) } else { body });
        if !self.notes.is_empty() {
            out.push('\n');
            for note in &self.notes {
                out.push_str(&format!("* {note}\n"));
            }
        }
        out
    }
}

/// The verdicts a reader must not miss, coloured (red: the core disagrees with
/// Redis; yellow: the servers disagree with the article; green: all agree).
fn paint_verdicts(text: &str) -> String {
    const RESET: &str = "\x1b[0m";
    let mut out = text.to_string();
    for (word, style) in [
        ("CORE ≠ REDIS", "\x1b[1;31m"),
        ("differs from article", "\x1b[33m"),
        ("[same]", "\x1b[32m"),
        ("same · pg differs", "\x1b[33m"),
    ] {
        out = out.replace(word, &format!("{style}{word}{RESET}"));
    }
    out
}

/// A short word for a reader: do the backends agree with each other and the article?
/// pg counts too where it answers: a row whose pg cell disagrees with the article is
/// not `same` even when both key-value servers match it.
pub fn verdict(row: &Row) -> String {
    if row.kind != Kind::Exact {
        return row.kind_name().into();
    }
    if row.core.is_none() && row.redis.is_none() {
        return if row.pg.is_some() {
            "pg only"
        } else {
            "reference"
        }
        .into();
    }
    let same_kv = match (&row.core, &row.redis) {
        (Some(c), Some(r)) => c.text == r.text,
        _ => true,
    };
    let agrees = |v: &Option<Cell>| match (&row.article, v) {
        (Some(a), Some(v)) => agrees_with_article(a, &v.text),
        _ => true,
    };
    let as_article = agrees(&row.redis) && agrees(&row.core);
    let pg_as_article = agrees(&row.pg);
    match (same_kv, as_article) {
        (true, true) if pg_as_article => "same".into(),
        (true, true) => "same · pg differs".into(),
        (true, false) => "differs from article".into(),
        (false, _) if !row.core_matches_redis => "core/redis differ (expected)".into(),
        (false, _) => "CORE ≠ REDIS".into(),
    }
}

/// Whether a reply agrees with the article's figure: the same text, or a number
/// inside a range the article gives (`1500 < n ≤ 2000`, `1500–2000`).
pub fn agrees_with_article(article: &str, text: &str) -> bool {
    if article == text {
        return true;
    }
    let Some(v) = parse_plain_number(text) else {
        return false;
    };
    article_range(article).is_some_and(|(lo, lo_open, hi, hi_open)| {
        (if lo_open { v > lo } else { v >= lo }) && (if hi_open { v < hi } else { v <= hi })
    })
}

/// `a < n ≤ b` (each side `<` or `≤`) or `a–b`: (low, low open, high, high open).
fn article_range(article: &str) -> Option<(f64, bool, f64, bool)> {
    let words: Vec<&str> = article.split_whitespace().collect();
    if let [lo, op1, _, op2, hi] = words.as_slice() {
        let open = |op: &str| match op {
            "<" => Some(true),
            "≤" | "<=" => Some(false),
            _ => None,
        };
        return Some((
            parse_plain_number(lo)?,
            open(op1)?,
            parse_plain_number(hi)?,
            open(op2)?,
        ));
    }
    let (lo, hi) = article.split_once('–')?;
    Some((
        parse_plain_number(lo)?,
        false,
        parse_plain_number(hi)?,
        false,
    ))
}

/// A number written with optional thousands separators and nothing else.
fn parse_plain_number(s: &str) -> Option<f64> {
    let s = s.trim().replace(',', "");
    if s.is_empty()
        || !s
            .chars()
            .all(|c| c.is_ascii_digit() || c == '.' || c == '-')
    {
        return None;
    }
    s.parse().ok()
}

impl Row {
    fn kind_name(&self) -> &'static str {
        match self.kind {
            Kind::Exact => "exact",
            Kind::Measured => "measured",
            Kind::Random => "random",
        }
    }
}

const MAX_TABLE_WIDTH: usize = 160;

/// One block per row: the label and verdict, then `source  value` lines.
fn format_blocks(table: &[Vec<String>]) -> String {
    let header = &table[0];
    let width = header.iter().map(|h| h.chars().count()).max().unwrap_or(0);
    let mut out = String::new();
    for row in &table[1..] {
        let verdict = row.last().map(String::as_str).unwrap_or("");
        out.push_str(&format!("{}  [{verdict}]\n", row[0]));
        let sources = header
            .iter()
            .zip(row)
            .skip(1)
            .take(row.len().saturating_sub(2));
        // Backends with nothing to say about this row are left out of its block.
        for (name, value) in sources.filter(|(n, v)| *n == "article" || v.as_str() != "-") {
            // A value of several lines (a drawing) keeps its column.
            let value = value.replace('\n', &format!("\n    {:width$}  ", ""));
            out.push_str(&format!("    {name:<width$}  {value}\n"));
        }
        out.push('\n');
    }
    out
}

/// Left-aligned columns separated by two spaces; widths count characters, not bytes.
fn format_table(rows: &[Vec<String>]) -> String {
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns)
        .map(|c| {
            rows.iter()
                .map(|r| r.get(c).map_or(0, |s| s.chars().count()))
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for (i, row) in rows.iter().enumerate() {
        let line: Vec<String> = row
            .iter()
            .enumerate()
            .map(|(c, cell)| format!("{cell}{}", " ".repeat(widths[c] - cell.chars().count())))
            .collect();
        out.push_str(line.join("  ").trim_end());
        out.push('\n');
        if i == 0 {
            let rule: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
            out.push_str(&rule.join("  "));
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reference_gets_its_own_column_only_where_a_lab_gives_one() {
        let mut r = Report {
            lab: "05z-example".into(),
            ..Default::default()
        };
        r.measured("t", "ZADD at 10⁸", Some("0.5–2 ms")).redis = Some(Cell::num(21.0, "µs"));
        assert!(!r.to_text().contains("reference"));
        r.find_mut("t")
            .unwrap()
            .reference(Cell::num(30.0, "µs").with_text("≈ 30 µs (extrapolation)"));
        let text = r.to_text();
        let header = text.lines().find(|l| l.starts_with("row")).unwrap();
        let words: Vec<&str> = header.split_whitespace().collect();
        assert_eq!(words, ["row", "article", "reference", "redis", "verdict"]);
        assert!(text.contains("≈ 30 µs (extrapolation)"));
        let json = serde_json::to_string(&r).unwrap();
        let back: Report = serde_json::from_str(&json).unwrap();
        assert_eq!(back.rows[0].reference, r.rows[0].reference);
    }
}

#[cfg(test)]
mod verdict_tests {
    use super::*;

    #[test]
    fn a_value_inside_the_articles_range_agrees() {
        assert!(agrees_with_article("1500 < n ≤ 2000", "1707"));
        assert!(agrees_with_article("1500 < n ≤ 2000", "2000"));
        assert!(!agrees_with_article("1500 < n ≤ 2000", "1500"));
        assert!(!agrees_with_article("1500 < n ≤ 2000", "2001"));
        assert!(agrees_with_article("10–20", "10"));
        assert!(!agrees_with_article("10–20", "x"));
        assert!(agrees_with_article("dense", "dense"));
    }

    #[test]
    fn pg_that_answers_otherwise_is_not_same() {
        let mut r = Report::default();
        let row = r.exact("k", "k", "9007199254740992");
        row.redis = Some(Cell::text("9007199254740992"));
        row.core = Some(Cell::text("9007199254740992"));
        assert_eq!(verdict(row), "same");
        row.pg = Some(Cell::text("9007199254740993"));
        assert_eq!(verdict(row), "same · pg differs");
    }
}
