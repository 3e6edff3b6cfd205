//! The skiplist as it is, read out for a picture (lab 05k-skiplist): every
//! node's levels with their forward pointers and spans, the backward chain, the
//! header. Read-only: nothing here changes the list or its random state.
//!
//! Nodes are numbered by their place in the list (0 = first element), not by
//! their arena slot, so two dumps (or a dump of Redis's own list) compare
//! directly. The header is listed apart, with the `level` levels in use.

use std::collections::HashMap;

use super::{NodeId, SkipList, HEADER};

/// One level of a node: the next node on that level (its list index; None at
/// the end) and the span of that link.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DumpLevel {
    pub forward: Option<usize>,
    pub span: usize,
}

#[derive(Clone, Debug, PartialEq)]
pub struct DumpNode {
    pub member: Vec<u8>,
    pub score: f64,
    /// Level 0 first; as many as the node's height.
    pub levels: Vec<DumpLevel>,
    /// The previous node (None for the first).
    pub backward: Option<usize>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Dump {
    /// Levels in use (`zsl->level`).
    pub level: usize,
    pub length: usize,
    /// The header's levels `0..level`.
    pub header: Vec<DumpLevel>,
    pub nodes: Vec<DumpNode>,
    /// The last node.
    pub tail: Option<usize>,
}

impl SkipList {
    /// Reads the list out as it is stored (see the module documentation).
    pub fn dump(&self) -> Dump {
        let order: Vec<NodeId> = self.ids().collect();
        let place: HashMap<NodeId, usize> =
            order.iter().enumerate().map(|(i, id)| (*id, i)).collect();
        let levels_of = |id: NodeId, height: usize| -> Vec<DumpLevel> {
            let node = self.node(id);
            (0..height)
                .map(|i| {
                    let l = node.level(i);
                    DumpLevel {
                        forward: l.forward().map(|f| place[&f]),
                        span: l.span(),
                    }
                })
                .collect()
        };
        Dump {
            level: self.level,
            length: self.len,
            header: levels_of(HEADER, self.level),
            nodes: order
                .iter()
                .map(|&id| {
                    let node = self.node(id);
                    DumpNode {
                        member: self.member(id).to_vec(),
                        score: node.score(),
                        levels: levels_of(id, node.height()),
                        backward: node.backward().map(|b| place[&b]),
                    }
                })
                .collect(),
            tail: self.tail.map(|t| place[&t]),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dump_is_the_list_with_its_spans_and_backward_chain() {
        let mut list = SkipList::with_seed(7);
        for (i, m) in ["a", "b", "c", "d", "e", "f", "g", "h"].iter().enumerate() {
            list.insert(i as f64, m.as_bytes());
        }
        let d = list.dump();
        assert_eq!(d.length, 8);
        assert_eq!(d.nodes.len(), 8);
        assert_eq!(d.header.len(), d.level);
        assert_eq!(d.tail, Some(7));
        for (i, n) in d.nodes.iter().enumerate() {
            assert_eq!(n.backward, i.checked_sub(1));
            assert_eq!(n.levels[0].forward, (i + 1 < 8).then_some(i + 1));
        }
        // Along every level the spans from the header add up to the length.
        for lvl in 0..d.level {
            let mut at: Option<usize> = None;
            let mut sum = 0;
            loop {
                let l = match at {
                    None => &d.header[lvl],
                    Some(i) => &d.nodes[i].levels[lvl],
                };
                sum += l.span;
                match l.forward {
                    Some(f) => at = Some(f),
                    None => break,
                }
            }
            assert_eq!(sum, 8, "level {lvl}");
        }
        assert_eq!(
            list.node_levels(),
            d.nodes.iter().map(|n| n.levels.len()).collect::<Vec<_>>()
        );
    }
}
