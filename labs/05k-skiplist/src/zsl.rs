//! One skiplist, whoever it was read from: the core's `SkipList::dump` or
//! Redis's node chain read by gdb. Drawn as text, walked like ZRANK, compared.

use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Link {
    /// Place of the next node on this level (None: the end, NULL).
    pub forward: Option<usize>,
    pub span: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Node {
    pub member: String,
    pub score: f64,
    pub levels: Vec<Link>,
    pub backward: Option<usize>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Header {
    pub levels: Vec<Link>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Zsl {
    pub level: usize,
    pub length: usize,
    pub header: Header,
    pub nodes: Vec<Node>,
    pub tail: Option<usize>,
}

impl Zsl {
    /// The core's list, from its own read-out.
    pub fn from_core(d: &redislab_core::zset::skiplist::dump::Dump) -> Zsl {
        let link = |l: &redislab_core::zset::skiplist::dump::DumpLevel| Link {
            forward: l.forward,
            span: l.span as u64,
        };
        Zsl {
            level: d.level,
            length: d.length,
            header: Header {
                levels: d.header.iter().map(link).collect(),
            },
            nodes: d
                .nodes
                .iter()
                .map(|n| Node {
                    member: String::from_utf8_lossy(&n.member).into_owned(),
                    score: n.score,
                    levels: n.levels.iter().map(link).collect(),
                    backward: n.backward,
                })
                .collect(),
            tail: d.tail,
        }
    }

    /// The levels of each node, head to tail.
    pub fn heights(&self) -> Vec<usize> {
        self.nodes.iter().map(|n| n.levels.len()).collect()
    }

    fn links(&self, at: Option<usize>) -> &[Link] {
        match at {
            None => &self.header.levels,
            Some(i) => &self.nodes[i].levels,
        }
    }

    fn name(&self, at: Option<usize>) -> &str {
        at.map_or("header", |i| self.nodes[i].member.as_str())
    }

    /// `zslGetRank`'s walk to `member` (score `score`): from the header's top
    /// level, follow a link while it does not pass the target, adding its span;
    /// drop a level otherwise. Returns the steps as text, the 1-based rank, and
    /// the links followed as `(level, from, to)` (from None: the header).
    pub fn walk_links(&self, score: f64, member: &str) -> (Vec<String>, u64, Vec<WalkedLink>) {
        let mut at: Option<usize> = None;
        let mut rank = 0;
        let mut steps = Vec::new();
        let mut links = Vec::new();
        for lvl in (0..self.level).rev() {
            loop {
                let link = &self.links(at)[lvl];
                let Some(next) = link.forward else { break };
                let n = &self.nodes[next];
                let before = n.score < score
                    || (n.score == score && n.member.as_bytes() <= member.as_bytes());
                if !before {
                    break;
                }
                rank += link.span;
                steps.push(format!(
                    "L{lvl} {}→{} +{}",
                    self.name(at),
                    n.member,
                    link.span
                ));
                links.push((lvl, at, next));
                at = Some(next);
            }
            if at.is_some_and(|i| self.nodes[i].member == member) {
                break;
            }
        }
        (steps, rank, links)
    }

    /// The list as text, one line per level (top first), every link with its
    /// span: `L1  header -3-> u03 ------2-----> u05 ... -> NULL`.
    pub fn draw(&self) -> String {
        let width = self
            .nodes
            .iter()
            .map(|n| n.member.chars().count())
            .max()
            .unwrap_or(3)
            .max(3)
            + 6;
        let col = |at: Option<usize>| at.map_or(0, |i| (i + 1) * width);
        let total = (self.nodes.len() + 1) * width + 4;
        let mut lines = Vec::new();
        for lvl in (0..self.level).rev() {
            let mut line: Vec<char> = vec![' '; total];
            let mut at: Option<usize> = None;
            loop {
                let name = self.name(at);
                let start = col(at);
                for (k, ch) in name.chars().enumerate() {
                    line[start + k] = ch;
                }
                let link = &self.links(at)[lvl];
                let end = link.forward.map_or(total - 4, |f| col(Some(f)));
                let from = start + name.chars().count() + 1;
                let label = format!("{}", link.span);
                for c in line.iter_mut().take(end.saturating_sub(2)).skip(from) {
                    *c = '-';
                }
                for (k, ch) in label.chars().enumerate() {
                    if from + 1 + k < end.saturating_sub(2) {
                        line[from + 1 + k] = ch;
                    }
                }
                if end >= 2 {
                    line[end - 2] = '>';
                }
                match link.forward {
                    Some(f) => at = Some(f),
                    None => {
                        for (k, ch) in "NULL".chars().enumerate() {
                            line[total - 4 + k] = ch;
                        }
                        break;
                    }
                }
            }
            let text: String = line.into_iter().collect();
            lines.push(format!("L{lvl:<2} {}", text.trim_end()));
        }
        let back: Vec<String> = (0..self.nodes.len())
            .rev()
            .map(|i| {
                let b = self.nodes[i].backward;
                format!("{}←{}", self.name_or_null(b), self.nodes[i].member)
            })
            .collect();
        lines.push(format!("backward: {}", back.join(" ")));
        lines.join("\n")
    }

    fn name_or_null(&self, at: Option<usize>) -> &str {
        at.map_or("NULL", |i| self.nodes[i].member.as_str())
    }

    /// The links whose span differs between `self` (before) and `after`, by the
    /// node that holds them (named by member), and the new nodes.
    pub fn diff(&self, after: &Zsl) -> Vec<String> {
        let mut out = Vec::new();
        if after.level != self.level {
            out.push(format!("levels in use {}→{}", self.level, after.level));
        }
        let find = |z: &Zsl, m: &str| z.nodes.iter().position(|n| n.member == m);
        for (i, n) in after.nodes.iter().enumerate() {
            match find(self, &n.member) {
                None => out.push(format!(
                    "new node {} (place {}) with {} level(s)",
                    n.member,
                    i,
                    n.levels.len()
                )),
                Some(j) => {
                    for (lvl, (a, b)) in self.nodes[j].levels.iter().zip(&n.levels).enumerate() {
                        if lvl > 0 && a.span != b.span {
                            out.push(format!("{} L{lvl} span {}→{}", n.member, a.span, b.span));
                        }
                    }
                }
            }
        }
        for (lvl, (a, b)) in self
            .header
            .levels
            .iter()
            .zip(&after.header.levels)
            .enumerate()
        {
            if a.span != b.span {
                out.push(format!("header L{lvl} span {}→{}", a.span, b.span));
            }
        }
        out
    }
}

/// One link a rank walk followed: `(level, from, to)`, `from` None for the header.
pub type WalkedLink = (usize, Option<usize>, usize);
