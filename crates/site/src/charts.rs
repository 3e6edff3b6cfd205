//! A lab's [`Chart`] as SVG, drawn with `plotters` from the report's rows.
//!
//! Each series reads its numbers from the cells its points name (see
//! `redislab_harness::chart`); a point whose backend did not run, or whose cell has
//! no number (an error, a skipped step), is left out, so a baseline from a machine
//! that ran fewer backends still draws. Logarithmic axes are drawn by plotting
//! log10 of the values on a linear axis and labelling the ticks with 10^v.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use redislab_harness::chart::{Chart, ChartKind, Series};
use redislab_harness::fmt;
use redislab_harness::report::Report;

const W: u32 = 780;
const H: u32 = 430;

/// Colours by backend; further series of one backend get lighter shades.
fn colour(series: &Series, nth_of_backend: usize) -> RGBColor {
    let base = match series.backend.as_deref() {
        Some("redis") => (200, 40, 40),
        Some("core") => (31, 100, 180),
        Some("pg") => (40, 150, 60),
        _ => (110, 110, 110),
    };
    let k = nth_of_backend as f64 * 0.28;
    let mix = |c: u8| (c as f64 + (235.0 - c as f64) * k.min(0.7)) as u8;
    if nth_of_backend == 0 {
        RGBColor(base.0, base.1, base.2)
    } else if series.backend.is_none() {
        // References: grey, then brown, purple.
        [
            RGBColor(110, 110, 110),
            RGBColor(150, 100, 40),
            RGBColor(120, 60, 150),
        ][nth_of_backend % 3]
    } else {
        RGBColor(mix(base.0), mix(base.1), mix(base.2))
    }
}

/// One series resolved to numbers.
pub struct Line {
    pub label: String,
    pub colour: RGBColor,
    pub dashed: bool,
    pub points: Vec<(f64, f64)>,
}

/// The numbers of `series` in `report`: references as given, otherwise each
/// point's row's cell on the series' backend.
pub fn resolve(series: &Series, report: &Report) -> Vec<(f64, f64)> {
    if series.reference {
        return series
            .points
            .iter()
            .filter_map(|p| Some((p.x, p.y?)))
            .collect();
    }
    let backend = series.backend.as_deref().unwrap_or("");
    let field = series.field.as_deref().unwrap_or("value");
    let cell = |row: &Option<String>| {
        row.as_deref()
            .and_then(|r| report.find(r))
            .and_then(|r| r.value(backend))
    };
    if field == "points" {
        return series
            .points
            .first()
            .and_then(|p| cell(&p.row))
            .map(|c| c.points.iter().map(|[x, y]| (*x, *y)).collect())
            .unwrap_or_default();
    }
    series
        .points
        .iter()
        .filter_map(|p| Some((p.x, p.y.or_else(|| cell(&p.row)?.field(field))?)))
        .collect()
}

fn lines(chart: &Chart, report: &Report) -> Vec<Line> {
    let mut seen: Vec<Option<String>> = Vec::new();
    chart
        .series
        .iter()
        .map(|s| {
            let key = if s.reference { None } else { s.backend.clone() };
            let nth = seen.iter().filter(|k| **k == key).count();
            seen.push(key);
            Line {
                label: s.label.clone(),
                colour: colour(s, nth),
                dashed: s.reference,
                points: resolve(s, report),
            }
        })
        .collect()
}

/// Draws `chart` as an SVG document. `Err` names what is wrong with the chart
/// (no data, an unknown row): the page then shows that text instead.
pub fn render(chart: &Chart, report: &Report) -> Result<String, String> {
    let mut svg = String::new();
    let h = if chart.kind == ChartKind::Ladder {
        H.max(90 + 20 * (chart.categories.len() * chart.series.len()) as u32)
    } else {
        H
    };
    {
        let root = SVGBackend::with_string(&mut svg, (W, h)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        match chart.kind {
            ChartKind::Xy => xy(&root, chart, report),
            ChartKind::Bars => bars(&root, chart, report),
            ChartKind::Ladder => ladder(&root, chart, report),
            ChartKind::Skiplist => Err("a skiplist is drawn by skiplist::render".into()),
        }?;
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(svg)
}

fn tx(v: f64, log: bool) -> Option<f64> {
    if log {
        (v > 0.0).then(|| v.log10())
    } else {
        Some(v)
    }
}

/// A tick label: the value (10^v on a log axis, only at whole powers of ten),
/// formatted like the tables.
fn tick(v: f64, log: bool) -> String {
    if !log {
        return fmt::number(v);
    }
    if (v - v.round()).abs() > 0.02 {
        return String::new();
    }
    let x = 10f64.powi(v.round() as i32);
    if x >= 1.0 {
        fmt::number(x)
    } else {
        format!("{x}")
    }
}

fn range(values: impl Iterator<Item = f64>, pad_zero: bool) -> Option<(f64, f64)> {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for v in values {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    if !lo.is_finite() {
        return None;
    }
    if pad_zero && lo > 0.0 {
        lo = 0.0;
    }
    if hi - lo < 1e-9 {
        return Some((lo - 1.0, hi + 1.0));
    }
    let pad = (hi - lo) * 0.06;
    Some((if pad_zero && lo == 0.0 { 0.0 } else { lo - pad }, hi + pad))
}

fn font(size: u32) -> TextStyle<'static> {
    ("sans-serif", size).into_font().into()
}

fn xy(root: &DrawingArea<SVGBackend, Shift>, chart: &Chart, report: &Report) -> Result<(), String> {
    let lines = lines(chart, report);
    let pts: Vec<Vec<(f64, f64)>> = lines
        .iter()
        .map(|l| {
            l.points
                .iter()
                .filter_map(|(x, y)| Some((tx(*x, chart.x.log)?, tx(*y, chart.y.log)?)))
                .collect()
        })
        .collect();
    let markers: Vec<f64> = chart
        .markers
        .iter()
        .filter_map(|m| tx(m.x, chart.x.log))
        .collect();
    let (x0, x1) = range(
        pts.iter()
            .flatten()
            .map(|p| p.0)
            .chain(markers.iter().copied()),
        false,
    )
    .ok_or("no data")?;
    let (y0, y1) = range(pts.iter().flatten().map(|p| p.1), !chart.y.log).ok_or("no data")?;
    let mut c = ChartBuilder::on(root)
        .caption(&chart.title, font(17))
        .margin(12)
        .x_label_area_size(42)
        .y_label_area_size(78)
        .build_cartesian_2d(x0..x1, y0..y1)
        .map_err(|e| e.to_string())?;
    let (xlog, ylog) = (chart.x.log, chart.y.log);
    let xf = move |v: &f64| tick(*v, xlog);
    let yf = move |v: &f64| tick(*v, ylog);
    c.configure_mesh()
        .x_desc(chart.x.label.as_str())
        .y_desc(chart.y.label.as_str())
        .x_labels(if xlog {
            ((x1 - x0).ceil() as usize + 1) * 4
        } else {
            10
        })
        .y_labels(if ylog {
            ((y1 - y0).ceil() as usize + 1) * 4
        } else {
            10
        })
        .x_label_formatter(&xf)
        .y_label_formatter(&yf)
        .light_line_style(RGBColor(235, 235, 235))
        .draw()
        .map_err(|e| e.to_string())?;
    for (m, mx) in chart.markers.iter().zip(&markers) {
        let grey = RGBColor(120, 120, 120);
        c.draw_series(DashedLineSeries::new(
            vec![(*mx, y0), (*mx, y1)],
            4,
            4,
            grey.stroke_width(1),
        ))
        .map_err(|e| e.to_string())?;
        c.draw_series(std::iter::once(Text::new(
            m.label.clone(),
            (*mx, y1 - (y1 - y0) * 0.02),
            font(12).color(&grey),
        )))
        .map_err(|e| e.to_string())?;
    }
    for (line, p) in lines.iter().zip(pts) {
        if p.is_empty() {
            continue;
        }
        let col = line.colour;
        let legend = move |(x, y): (i32, i32)| {
            PathElement::new(vec![(x, y), (x + 22, y)], col.stroke_width(2))
        };
        if line.dashed {
            c.draw_series(DashedLineSeries::new(p.clone(), 7, 4, col.stroke_width(2)))
                .map_err(|e| e.to_string())?
                .label(line.label.as_str())
                .legend(legend);
        } else {
            c.draw_series(LineSeries::new(p.clone(), col.stroke_width(2)))
                .map_err(|e| e.to_string())?
                .label(line.label.as_str())
                .legend(legend);
            c.draw_series(p.iter().map(|q| Circle::new(*q, 3, col.filled())))
                .map_err(|e| e.to_string())?;
        }
    }
    c.configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.85))
        .border_style(RGBColor(180, 180, 180))
        .label_font(font(12))
        .draw()
        .map_err(|e| e.to_string())?;
    Ok(())
}

fn bars(
    root: &DrawingArea<SVGBackend, Shift>,
    chart: &Chart,
    report: &Report,
) -> Result<(), String> {
    let lines = lines(chart, report);
    let n = chart.categories.len().max(1);
    let m = lines.len().max(1);
    let ylog = chart.y.log;
    let ys: Vec<f64> = lines
        .iter()
        .flat_map(|l| l.points.iter().filter_map(|p| tx(p.1, ylog)))
        .collect();
    let (mut y0, y1) = range(ys.iter().copied(), !ylog).ok_or("no data")?;
    if ylog {
        y0 = y0.floor();
    }
    let mut c = ChartBuilder::on(root)
        .caption(&chart.title, font(17))
        .margin(12)
        .x_label_area_size(46)
        .y_label_area_size(78)
        .build_cartesian_2d(0f64..n as f64, y0..y1)
        .map_err(|e| e.to_string())?;
    let yf = move |v: &f64| tick(*v, ylog);
    c.configure_mesh()
        .disable_x_mesh()
        .x_labels(0)
        .x_desc(chart.x.label.as_str())
        .y_desc(chart.y.label.as_str())
        .y_labels(if ylog {
            ((y1 - y0).ceil() as usize + 1) * 4
        } else {
            10
        })
        .y_label_formatter(&yf)
        .light_line_style(RGBColor(235, 235, 235))
        .draw()
        .map_err(|e| e.to_string())?;
    let width = 0.8 / m as f64;
    for (j, line) in lines.iter().enumerate() {
        let col = line.colour;
        let rects: Vec<Rectangle<(f64, f64)>> = line
            .points
            .iter()
            .filter_map(|(x, y)| {
                let y = tx(*y, ylog)?;
                let left = x + 0.1 + width * j as f64;
                let style = if line.dashed {
                    col.mix(0.35).filled()
                } else {
                    col.filled()
                };
                Some(Rectangle::new(
                    [(left, y0), (left + width * 0.92, y)],
                    style,
                ))
            })
            .collect();
        let legend =
            move |(x, y): (i32, i32)| Rectangle::new([(x, y - 5), (x + 14, y + 5)], col.filled());
        c.draw_series(rects)
            .map_err(|e| e.to_string())?
            .label(line.label.as_str())
            .legend(legend);
    }
    // Category names under their group, in pixel coordinates.
    for (i, name) in chart.categories.iter().enumerate() {
        let (px, py) = c.backend_coord(&(i as f64 + 0.5, y0));
        root.draw(&Text::new(
            name.clone(),
            (px, py + 8),
            font(12).pos(Pos::new(HPos::Center, VPos::Top)),
        ))
        .map_err(|e| e.to_string())?;
    }
    c.configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.85))
        .border_style(RGBColor(180, 180, 180))
        .label_font(font(12))
        .draw()
        .map_err(|e| e.to_string())?;
    Ok(())
}

/// Latency distributions: for each category and series, p1–p99 whisker, p25–p75
/// box, median tick; x logarithmic in µs.
fn ladder(
    root: &DrawingArea<SVGBackend, Shift>,
    chart: &Chart,
    report: &Report,
) -> Result<(), String> {
    struct Entry {
        name: String,
        colour: RGBColor,
        pct: Vec<[f64; 2]>,
    }
    let mut entries = Vec::new();
    for (i, cat) in chart.categories.iter().enumerate() {
        for s in &chart.series {
            let backend = s.backend.as_deref().unwrap_or("");
            let Some(cell) = s
                .points
                .iter()
                .find(|p| p.x as usize == i)
                .and_then(|p| report.find(p.row.as_deref()?))
                .and_then(|r| r.value(backend))
            else {
                continue;
            };
            if cell.percentiles.is_empty() {
                continue;
            }
            entries.push(Entry {
                name: format!("{cat} · {}", s.label),
                colour: colour(s, 0),
                pct: cell.percentiles.clone(),
            });
        }
    }
    if entries.is_empty() {
        return Err("no latency percentiles in these rows".into());
    }
    let at = |e: &Entry, p: f64| {
        e.pct
            .iter()
            .min_by(|a, b| (a[0] - p).abs().total_cmp(&(b[0] - p).abs()))
            .map(|v| v[1].max(0.5).log10())
            .unwrap_or(0.0)
    };
    let xs: Vec<f64> = entries
        .iter()
        .flat_map(|e| [at(e, 1.0), at(e, 99.0)])
        .collect();
    let (x0, x1) = range(xs.into_iter(), false).ok_or("no data")?;
    let (x0, x1) = (x0.floor(), x1.ceil());
    let k = entries.len() as f64;
    let mut c = ChartBuilder::on(root)
        .caption(&chart.title, font(17))
        .margin(12)
        .x_label_area_size(42)
        .y_label_area_size(250)
        .build_cartesian_2d(x0..x1, 0f64..k)
        .map_err(|e| e.to_string())?;
    let xf = |v: &f64| tick(*v, true);
    c.configure_mesh()
        .disable_y_mesh()
        .y_labels(0)
        .x_labels(((x1 - x0) as usize + 1) * 4)
        .x_label_formatter(&xf)
        .x_desc(chart.x.label.as_str())
        .light_line_style(RGBColor(235, 235, 235))
        .draw()
        .map_err(|e| e.to_string())?;
    for (i, e) in entries.iter().enumerate() {
        let y = k - i as f64 - 0.5;
        let col = e.colour;
        c.draw_series(std::iter::once(PathElement::new(
            vec![(at(e, 1.0), y), (at(e, 99.0), y)],
            col.stroke_width(1),
        )))
        .map_err(|e| e.to_string())?;
        c.draw_series(std::iter::once(Rectangle::new(
            [(at(e, 25.0), y - 0.3), (at(e, 75.0), y + 0.3)],
            col.mix(0.45).filled(),
        )))
        .map_err(|e| e.to_string())?;
        c.draw_series(std::iter::once(PathElement::new(
            vec![(at(e, 50.0), y - 0.38), (at(e, 50.0), y + 0.38)],
            BLACK.stroke_width(2),
        )))
        .map_err(|e| e.to_string())?;
        let (px, py) = c.backend_coord(&(x0, y));
        root.draw(&Text::new(
            e.name.clone(),
            (px - 6, py),
            font(11).pos(Pos::new(HPos::Right, VPos::Center)),
        ))
        .map_err(|e| e.to_string())?;
    }
    Ok(())
}
