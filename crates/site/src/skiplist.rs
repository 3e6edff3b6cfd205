//! A skiplist read out of a server (05k-skiplist: a cell's `detail`) as SVG:
//! one column per node (the header first), one box per level, every forward
//! pointer as an arrow labelled with its span, and the backward chain under the
//! nodes. Drawn with `plotters`' primitives on its SVG backend.
//!
//! The `detail` shape (written by the lab):
//! `{"level": L, "length": n, "header": {"levels": [{"forward": i|null, "span": s}]},
//!   "nodes": [{"member": "...", "score": x, "backward": i|null,
//!              "levels": [{"forward": i|null, "span": s}]}]}` where `forward` and
//! `backward` are indexes into `nodes` (in list order).

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use serde_json::Value;

const COL: i32 = 92;
const BOX_W: i32 = 58;
const BOX_H: i32 = 20;

fn font(size: u32) -> TextStyle<'static> {
    ("sans-serif", size).into_font().into()
}

struct Level {
    forward: Option<usize>,
    span: u64,
}

fn levels(v: &Value) -> Vec<Level> {
    v.get("levels")
        .and_then(Value::as_array)
        .map(|ls| {
            ls.iter()
                .map(|l| Level {
                    forward: l.get("forward").and_then(Value::as_u64).map(|f| f as usize),
                    span: l.get("span").and_then(Value::as_u64).unwrap_or(0),
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Draws `detail` with `title` above it.
pub fn render(title: &str, detail: &Value) -> Result<String, String> {
    let nodes = detail
        .get("nodes")
        .and_then(Value::as_array)
        .ok_or("the skiplist read-out has no nodes")?;
    let header = levels(detail.get("header").ok_or("no header")?);
    // Links a walk followed (05k's ZRANK), drawn in orange: (level, from column).
    let walked: Vec<(usize, usize)> = detail
        .get("walk")
        .and_then(Value::as_array)
        .map(|steps| {
            steps
                .iter()
                .filter_map(|s| {
                    let level = s.get("level")?.as_u64()? as usize;
                    let from = s
                        .get("from")
                        .and_then(Value::as_u64)
                        .map_or(0, |f| f as usize + 1);
                    Some((level, from))
                })
                .collect()
        })
        .unwrap_or_default();
    let node_levels: Vec<Vec<Level>> = nodes.iter().map(levels).collect();
    let height = header.len().max(1) as i32;
    let w = (COL * (nodes.len() as i32 + 2) + 30) as u32;
    let h = (BOX_H * height + 150) as u32;
    let x_of = |col: i32| 20 + COL * col;
    // Level i's box of a column: level 0 at the bottom.
    let base = 40 + BOX_H * height;
    let y_of = |level: i32| base - BOX_H * (level + 1);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (w, h)).into_drawing_area();
        let e = |e: plotters::drawing::DrawingAreaErrorKind<_>| e.to_string();
        root.fill(&WHITE).map_err(e)?;
        root.draw(&Text::new(title.to_string(), (20, 8), font(15)))
            .map_err(e)?;
        let arrow = RGBColor(31, 100, 180);
        let back = RGBColor(200, 40, 40);
        let columns: Vec<(&str, &[Level])> = std::iter::once(("header", header.as_slice()))
            .chain(node_levels.iter().map(|l| ("", l.as_slice())))
            .collect();
        for (col, (_, lv)) in columns.iter().enumerate() {
            let x = x_of(col as i32);
            for (i, l) in lv.iter().enumerate() {
                let y = y_of(i as i32);
                root.draw(&Rectangle::new(
                    [(x, y), (x + BOX_W, y + BOX_H)],
                    RGBColor(90, 90, 90).stroke_width(1),
                ))
                .map_err(e)?;
                root.draw(&Text::new(
                    format!("L{i}"),
                    (x + 4, y + BOX_H / 2),
                    font(10).pos(Pos::new(HPos::Left, VPos::Center)),
                ))
                .map_err(e)?;
                // The arrow to the next node on this level (or to NULL).
                let to_col = l.forward.map_or(columns.len() as i32, |f| f as i32 + 1);
                let (x0, x1, ya) = (x + BOX_W, x_of(to_col), y + BOX_H / 2);
                let style = if walked.contains(&(i, col)) {
                    RGBColor(230, 120, 0).stroke_width(3)
                } else {
                    arrow.stroke_width(1)
                };
                root.draw(&PathElement::new(vec![(x0, ya), (x1, ya)], style))
                    .map_err(e)?;
                root.draw(&PathElement::new(
                    vec![(x1 - 6, ya - 4), (x1, ya), (x1 - 6, ya + 4)],
                    style,
                ))
                .map_err(e)?;
                root.draw(&Text::new(
                    format!("{}", l.span),
                    ((x0 + x1) / 2, ya - 2),
                    font(10)
                        .color(&arrow)
                        .pos(Pos::new(HPos::Center, VPos::Bottom)),
                ))
                .map_err(e)?;
            }
        }
        let x_null = x_of(columns.len() as i32);
        root.draw(&Text::new(
            "NULL",
            (x_null + 2, y_of(0) + BOX_H / 2),
            font(11).pos(Pos::new(HPos::Left, VPos::Center)),
        ))
        .map_err(e)?;
        for (i, node) in nodes.iter().enumerate() {
            let x = x_of(i as i32 + 1);
            let member = node.get("member").and_then(Value::as_str).unwrap_or("?");
            let score = node.get("score").map(|s| s.to_string()).unwrap_or_default();
            root.draw(&Text::new(
                member.to_string(),
                (x + BOX_W / 2, base + 6),
                font(12).pos(Pos::new(HPos::Center, VPos::Top)),
            ))
            .map_err(e)?;
            root.draw(&Text::new(
                score,
                (x + BOX_W / 2, base + 22),
                font(10)
                    .color(&RGBColor(90, 90, 90))
                    .pos(Pos::new(HPos::Center, VPos::Top)),
            ))
            .map_err(e)?;
            // The backward link: to the previous node, or NULL for the first.
            let yb = base + 52;
            match node.get("backward").and_then(Value::as_u64) {
                Some(b) => {
                    let xb = x_of(b as i32 + 1) + BOX_W / 2;
                    let xs = x + BOX_W / 2;
                    root.draw(&PathElement::new(
                        vec![(xs, yb), (xb, yb)],
                        back.stroke_width(1),
                    ))
                    .map_err(e)?;
                    root.draw(&PathElement::new(
                        vec![(xb + 6, yb - 4), (xb, yb), (xb + 6, yb + 4)],
                        back.stroke_width(1),
                    ))
                    .map_err(e)?;
                }
                None => {
                    root.draw(&Text::new(
                        "← NULL",
                        (x + BOX_W / 2, yb),
                        font(10)
                            .color(&back)
                            .pos(Pos::new(HPos::Right, VPos::Center)),
                    ))
                    .map_err(e)?;
                }
            }
        }
        root.draw(&Text::new(
            "backward",
            (20, base + 52),
            font(10)
                .color(&back)
                .pos(Pos::new(HPos::Left, VPos::Center)),
        ))
        .map_err(e)?;
        root.present().map_err(e)?;
    }
    Ok(svg)
}
