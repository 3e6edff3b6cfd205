//! A lab's results: rows with the article's figure and each backend's value, written
//! as a human table (`out/<id>.txt`) and as JSON (`out/<id>.json`) for tools.
//!
//! JSON schema (stable; documented in the README):
//! `{"lab", "title", "source", "versions": {"redis","postgres","core"}, "params": {..},
//!   "rows": [{"key", "label", "kind", "article"?, "redis"?, "core"?, "pg"?,
//!             "core_matches_redis"?, "band"?, "bounds"?, "note"?}]}`

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

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

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Row {
    pub key: String,
    pub label: String,
    pub kind: Kind,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub article: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub redis: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub core: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub pg: Option<String>,
    /// For exact rows: whether core and redis must agree (false where the real server
    /// lacks a feature the article uses, e.g. an 8.8 command on 8.6.3).
    #[serde(default = "yes")]
    pub core_matches_redis: bool,
    /// For measured rows: fresh/baseline must stay within [1/band, band].
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub band: Option<f64>,
    /// For random rows: every backend's value must parse as a number in bounds.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub bounds: Option<Bounds>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub note: Option<String>,
}

fn yes() -> bool {
    true
}

impl Row {
    pub fn value(&self, backend: &str) -> Option<&String> {
        match backend {
            "redis" => self.redis.as_ref(),
            "core" => self.core.as_ref(),
            "pg" => self.pg.as_ref(),
            _ => None,
        }
    }

    fn value_mut(&mut self, backend: &str) -> &mut Option<String> {
        match backend {
            "redis" => &mut self.redis,
            "core" => &mut self.core,
            "pg" => &mut self.pg,
            other => panic!("unknown backend {other}"),
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Report {
    pub lab: String,
    pub title: String,
    pub source: String,
    pub versions: BTreeMap<String, String>,
    #[serde(default)]
    pub params: BTreeMap<String, String>,
    pub rows: Vec<Row>,
    /// Free text printed under the table: what the rows show and why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// Collects one backend's values; merged into the report when the step ends.
pub struct Recorder {
    pub backend: &'static str,
    values: Vec<(String, String)>,
}

impl Recorder {
    pub fn new(backend: &'static str) -> Recorder {
        Recorder {
            backend,
            values: Vec::new(),
        }
    }

    pub fn put(&mut self, key: &str, value: impl Into<String>) {
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
            redis: None,
            core: None,
            pg: None,
            core_matches_redis: true,
            band: None,
            bounds: None,
            note: None,
        });
        self.rows.last_mut().unwrap()
    }

    pub fn exact(&mut self, key: &str, label: &str, article: &str) -> &mut Row {
        self.row(key, label, Kind::Exact, Some(article))
    }

    /// Merges what a backend recorded; a key that was never declared is a lab bug.
    pub fn merge(&mut self, recorder: Recorder) -> Result<(), String> {
        for (key, value) in recorder.values {
            let row = self
                .rows
                .iter_mut()
                .find(|r| r.key == key)
                .ok_or_else(|| format!("lab bug: value for undeclared row '{key}'"))?;
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

        let backends: Vec<&str> = ["redis", "core", "pg"]
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
                cells.push(row.value(b).cloned().unwrap_or_else(|| "-".into()));
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
        if widest <= MAX_TABLE_WIDTH {
            out.push_str(&columns);
        } else {
            out.push_str(&format_blocks(&table));
        }
        if !self.notes.is_empty() {
            out.push('\n');
            for note in &self.notes {
                out.push_str(&format!("* {note}\n"));
            }
        }
        out
    }
}

/// A short word for a reader: do the backends agree with each other and the article?
fn verdict(row: &Row) -> String {
    if row.kind != Kind::Exact {
        return row.kind_name().into();
    }
    if row.core.is_none() && row.redis.is_none() {
        return "pg only".into();
    }
    let same_kv = match (&row.core, &row.redis) {
        (Some(c), Some(r)) => c == r,
        _ => true,
    };
    let as_article = match &row.article {
        Some(a) => [&row.redis, &row.core]
            .iter()
            .all(|v| v.as_ref().is_none_or(|v| v == a)),
        None => true,
    };
    match (same_kv, as_article) {
        (true, true) => "same".into(),
        (true, false) => "differs from article".into(),
        (false, _) if !row.core_matches_redis => "core/redis differ (expected)".into(),
        (false, _) => "CORE ≠ REDIS".into(),
    }
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
