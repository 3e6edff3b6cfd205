//! Charts a lab declares for the HTML report: which rows to draw, and how.
//!
//! A chart holds no measured number of its own. Its series point at rows of the
//! same report (`row`, and `x` where the row does not say it), and the report
//! renderer reads each backend's number from that row's cell, so a chart drawn from
//! another machine's `out/<id>.json` shows that machine's figures. The only numbers
//! a chart carries are *references* the lab computed itself (the ±1.04/√m band,
//! P = 0.25's expectation, the article's figures), drawn as dashed lines and named
//! as such, never as a backend.
//!
//! Kinds:
//! * [`ChartKind::Xy`]: numeric x and y (either may be logarithmic), one line per
//!   series; `markers` draw vertical lines (a threshold such as 128 members);
//! * [`ChartKind::Bars`]: grouped bars, one group per category, one bar per series;
//! * [`ChartKind::Ladder`]: latency distributions, one line per category and series:
//!   p1–p99 whisker, p25–p75 box and the median, from the cells' `percentiles`;
//! * [`ChartKind::Skiplist`]: a skiplist read out of a server (a cell's `detail`).

use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ChartKind {
    Xy,
    Bars,
    Ladder,
    Skiplist,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Axis {
    pub label: String,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub log: bool,
}

/// One point of a series: `x` (for bars and ladders, the category's index) and
/// either `y` (a reference) or the row whose cell gives it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Point {
    pub x: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub y: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub row: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Series {
    pub label: String,
    /// `redis`, `core` or `pg`: whose cells the points read. None for a reference.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backend: Option<String>,
    /// Which number of the cell: `value` (default), `median`, `p99`, an `extra`, or
    /// `points` (the cell's own `[x, y]` points; then `points` here names one row).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    pub points: Vec<Point>,
    /// A number the lab computed (a formula, the article's figure): dashed.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub reference: bool,
}

/// A vertical line at `x` with a label (e.g. "listpack → skiplist at 129").
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Marker {
    pub x: f64,
    pub label: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Chart {
    /// Unique within the report; the SVG's file name.
    pub id: String,
    pub title: String,
    pub kind: ChartKind,
    #[serde(default)]
    pub x: Axis,
    #[serde(default)]
    pub y: Axis,
    /// Category names for bars and ladders (x = index).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub categories: Vec<String>,
    #[serde(default)]
    pub series: Vec<Series>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub markers: Vec<Marker>,
    /// One or two sentences under the chart: what its shape says.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub caption: String,
}

impl Chart {
    pub fn new(id: &str, kind: ChartKind, title: &str) -> Chart {
        Chart {
            id: id.into(),
            title: title.into(),
            kind,
            x: Axis::default(),
            y: Axis::default(),
            categories: Vec::new(),
            series: Vec::new(),
            markers: Vec::new(),
            caption: String::new(),
        }
    }

    pub fn x(mut self, label: &str, log: bool) -> Chart {
        self.x = Axis {
            label: label.into(),
            log,
        };
        self
    }

    pub fn y(mut self, label: &str, log: bool) -> Chart {
        self.y = Axis {
            label: label.into(),
            log,
        };
        self
    }

    pub fn caption(mut self, text: &str) -> Chart {
        self.caption = text.into();
        self
    }

    pub fn categories<S: Into<String>>(mut self, names: impl IntoIterator<Item = S>) -> Chart {
        self.categories = names.into_iter().map(Into::into).collect();
        self
    }

    pub fn marker(mut self, x: f64, label: &str) -> Chart {
        self.markers.push(Marker {
            x,
            label: label.into(),
        });
        self
    }

    /// A series of `backend`'s numbers (`field`, default `value`) from rows at x.
    pub fn rows<S: AsRef<str>>(
        mut self,
        backend: &str,
        field: Option<&str>,
        points: impl IntoIterator<Item = (f64, S)>,
    ) -> Chart {
        self.series.push(Series {
            label: backend.into(),
            backend: Some(backend.into()),
            field: field.map(str::to_string),
            points: points
                .into_iter()
                .map(|(x, row)| Point {
                    x,
                    y: None,
                    row: Some(row.as_ref().into()),
                })
                .collect(),
            reference: false,
        });
        self
    }

    /// [`Chart::rows`] for every Redis-protocol backend (redis, core).
    pub fn kv_rows<S: AsRef<str> + Clone>(
        self,
        field: Option<&str>,
        points: impl IntoIterator<Item = (f64, S)> + Clone,
    ) -> Chart {
        self.rows("redis", field, points.clone())
            .rows("core", field, points)
    }

    /// The cell's own points (`row`'s `points` on `backend`).
    pub fn cell_points(mut self, backend: &str, label: &str, row: &str) -> Chart {
        self.series.push(Series {
            label: label.into(),
            backend: Some(backend.into()),
            field: Some("points".into()),
            points: vec![Point {
                x: 0.0,
                y: None,
                row: Some(row.into()),
            }],
            reference: false,
        });
        self
    }

    /// A reference the lab computed (dashed, named by `label`).
    pub fn reference(mut self, label: &str, points: impl IntoIterator<Item = (f64, f64)>) -> Chart {
        self.series.push(Series {
            label: label.into(),
            backend: None,
            field: None,
            points: points
                .into_iter()
                .map(|(x, y)| Point {
                    x,
                    y: Some(y),
                    row: None,
                })
                .collect(),
            reference: true,
        });
        self
    }

    /// Renames the last series (e.g. `redis · uuid`).
    pub fn named(mut self, label: &str) -> Chart {
        if let Some(s) = self.series.last_mut() {
            s.label = label.into();
        }
        self
    }
}
