//! COMMAND DOCS arguments, parsed from a command's syntax line.
//!
//! Redis's documentation writes a command's arguments as one line:
//! `key [NX | XX] [GT | LT] [CH] [INCR] score member [score member ...]`. Upper
//! case words are tokens typed literally, lower case words are values, `[...]`
//! is optional, `<a | b>` is a choice, and `x [x ...]` repeats. COMMAND DOCS
//! gives the same information as a tree of argument maps (name, type, token,
//! flags, sub-arguments), which is what redis-cli turns into the grey hints it
//! shows while you type. This module turns the line into that tree, so each
//! command's documentation is written once, in the form people read.

use crate::reply::Reply;

#[derive(Clone, Debug, PartialEq)]
enum Node {
    /// A literal word (`WITHSCORES`).
    Token(String),
    /// A value (`key`, `score`).
    Value(String),
    /// A sequence, possibly introduced by a token (`LIMIT offset count`).
    Block(Vec<Node>),
    /// Exactly one of these.
    OneOf(Vec<Node>),
    Optional(Box<Node>),
    Multiple(Box<Node>),
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Word(String),
    Open(char),
    Close(char),
    Bar,
    Ellipsis,
}

fn lex(syntax: &str) -> Vec<Tok> {
    let mut out = Vec::new();
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut Vec<Tok>| {
        if !word.is_empty() {
            if word == "..." {
                out.push(Tok::Ellipsis);
            } else {
                out.push(Tok::Word(std::mem::take(word)));
            }
            word.clear();
        }
    };
    for ch in syntax.chars() {
        match ch {
            '[' | '<' => {
                flush(&mut word, &mut out);
                out.push(Tok::Open(ch));
            }
            ']' | '>' => {
                flush(&mut word, &mut out);
                out.push(Tok::Close(ch));
            }
            '|' => {
                flush(&mut word, &mut out);
                out.push(Tok::Bar);
            }
            c if c.is_whitespace() => flush(&mut word, &mut out),
            c => word.push(c),
        }
    }
    flush(&mut word, &mut out);
    out
}

fn is_token(word: &str) -> bool {
    word.chars().any(|c| c.is_ascii_uppercase()) && !word.chars().any(|c| c.is_ascii_lowercase())
}

/// Parses a sequence until a closing bracket or the end; alternatives split at `|`.
fn parse_seq(toks: &[Tok], pos: &mut usize) -> Node {
    let mut alternatives: Vec<Vec<Node>> = vec![Vec::new()];
    while *pos < toks.len() {
        match &toks[*pos] {
            Tok::Close(_) => break,
            Tok::Bar => {
                *pos += 1;
                alternatives.push(Vec::new());
            }
            Tok::Ellipsis => {
                *pos += 1;
                collapse_repetition(alternatives.last_mut().expect("one alternative"));
            }
            Tok::Word(w) => {
                *pos += 1;
                let node = if is_token(w) {
                    Node::Token(w.clone())
                } else {
                    Node::Value(w.clone())
                };
                alternatives.last_mut().expect("one alternative").push(node);
            }
            Tok::Open(kind) => {
                let kind = *kind;
                *pos += 1;
                let inner = parse_seq(toks, pos);
                if *pos < toks.len() {
                    *pos += 1; // the closing bracket
                }
                let seq = alternatives.last_mut().expect("one alternative");
                if kind == '[' {
                    // `x [x ...]`: the optional part repeats what precedes it.
                    if let Node::Multiple(rep) = &inner {
                        if merge_repeat(seq, rep) {
                            continue;
                        }
                    }
                    seq.push(Node::Optional(Box::new(inner)));
                } else {
                    seq.push(inner);
                }
            }
        }
    }
    let mut alts: Vec<Node> = alternatives.into_iter().map(block_of).collect();
    if alts.len() == 1 {
        alts.pop().expect("one")
    } else {
        Node::OneOf(alts)
    }
}

/// The last element (or the last run matching a block) followed by `...` repeats.
fn collapse_repetition(seq: &mut Vec<Node>) {
    if seq.is_empty() {
        return;
    }
    let all = std::mem::take(seq);
    *seq = vec![Node::Multiple(Box::new(block_of(all)))];
}

/// `a b [a b ...]`: when the repeated block equals the elements before it, those
/// become one repeated argument.
fn merge_repeat(seq: &mut Vec<Node>, rep: &Node) -> bool {
    let items: Vec<Node> = match rep {
        Node::Block(items) => items.clone(),
        other => vec![other.clone()],
    };
    if items.is_empty() || seq.len() < items.len() || seq[seq.len() - items.len()..] != items[..] {
        return false;
    }
    seq.truncate(seq.len() - items.len());
    seq.push(Node::Multiple(Box::new(block_of(items))));
    true
}

fn block_of(mut items: Vec<Node>) -> Node {
    if items.len() == 1 {
        items.pop().expect("one")
    } else {
        Node::Block(items)
    }
}

/// The COMMAND DOCS type of a value, guessed from its name as the docs use them.
fn value_type(name: &str) -> &'static str {
    const INTEGERS: &[&str] = &[
        "count",
        "index",
        "start",
        "stop",
        "end",
        "offset",
        "numkeys",
        "seconds",
        "milliseconds",
        "unix-time-seconds",
        "unix-time-milliseconds",
        "timeout",
        "db",
        "destination-db",
        "increment",
        "decrement",
        "bit",
        "value-int",
        "numlocal",
        "cursor",
        "port",
        "client-id",
        "numreplicas",
        "rank",
        "len",
        "maxlen",
        "ttl",
        "decay",
        "idle-time",
        "frequency",
        "position",
        "pivot-index",
        "protover",
        "expiration",
        "bytes",
        "limit",
        "samples",
    ];
    const DOUBLES: &[&str] = &[
        "score",
        "min",
        "max",
        "longitude",
        "latitude",
        "radius",
        "width",
        "height",
        "weight",
        "delta",
    ];
    if name == "key" || name.ends_with("key") || name == "destination" || name == "source" {
        "key"
    } else if name == "pattern" {
        "pattern"
    } else if INTEGERS.contains(&name) {
        "integer"
    } else if DOUBLES.contains(&name) {
        "double"
    } else {
        "string"
    }
}

/// One argument map; `flags` are `optional`, `multiple`.
fn render(node: &Node, optional: bool, multiple: bool, index: &mut usize) -> Reply {
    let mut flags: Vec<Reply> = Vec::new();
    if optional {
        flags.push(Reply::Status("optional".into()));
    }
    if multiple {
        flags.push(Reply::Status("multiple".into()));
    }
    let field = |k: &str, v: Reply| (Reply::bulk(k), v);
    let mut pairs = Vec::new();
    match node {
        Node::Optional(inner) => return render(inner, true, multiple, index),
        Node::Multiple(inner) => return render(inner, optional, true, index),
        Node::Token(t) => {
            pairs.push(field("name", Reply::bulk(t.to_ascii_lowercase())));
            pairs.push(field("type", Reply::bulk("pure-token")));
            pairs.push(field("token", Reply::bulk(t)));
        }
        Node::Value(v) => {
            pairs.push(field("name", Reply::bulk(v)));
            pairs.push(field("type", Reply::bulk(value_type(v))));
            if value_type(v) == "key" {
                pairs.push(field("key_spec_index", Reply::Integer(0)));
            }
        }
        Node::Block(items) => {
            // `TOKEN value`: one argument with a token.
            if let [Node::Token(t), Node::Value(v)] = &items[..] {
                pairs.push(field("name", Reply::bulk(v)));
                pairs.push(field("type", Reply::bulk(value_type(v))));
                pairs.push(field("token", Reply::bulk(t)));
            } else {
                let (token, rest) = match &items[..] {
                    [Node::Token(t), rest @ ..] if !rest.is_empty() => (Some(t.clone()), rest),
                    all => (None, all),
                };
                *index += 1;
                let name = token
                    .as_ref()
                    .map(|t| t.to_ascii_lowercase())
                    .unwrap_or_else(|| format!("data{}", *index));
                pairs.push(field("name", Reply::bulk(name)));
                pairs.push(field("type", Reply::bulk("block")));
                if let Some(t) = token {
                    pairs.push(field("token", Reply::bulk(t)));
                }
                let subs = rest
                    .iter()
                    .map(|n| render(n, false, false, index))
                    .collect();
                if !flags.is_empty() {
                    pairs.push(field("flags", Reply::Set(flags)));
                }
                pairs.push(field("arguments", Reply::Array(subs)));
                return Reply::Map(pairs);
            }
        }
        Node::OneOf(items) => {
            *index += 1;
            let name = items
                .iter()
                .filter_map(|n| match n {
                    Node::Token(t) => Some(t.to_ascii_lowercase()),
                    _ => None,
                })
                .collect::<Vec<_>>()
                .join("-");
            let name = if name.is_empty() {
                format!("choice{}", *index)
            } else {
                name
            };
            pairs.push(field("name", Reply::bulk(name)));
            pairs.push(field("type", Reply::bulk("oneof")));
            if !flags.is_empty() {
                pairs.push(field("flags", Reply::Set(flags)));
            }
            let subs = items
                .iter()
                .map(|n| render(n, false, false, index))
                .collect();
            pairs.push(field("arguments", Reply::Array(subs)));
            return Reply::Map(pairs);
        }
    }
    if !flags.is_empty() {
        pairs.push(field("flags", Reply::Set(flags)));
    }
    Reply::Map(pairs)
}

/// The COMMAND DOCS `arguments` of a syntax line (empty for no arguments).
pub fn arguments(syntax: &str) -> Vec<Reply> {
    let toks = lex(syntax);
    if toks.is_empty() {
        return Vec::new();
    }
    let mut pos = 0;
    let root = parse_seq(&toks, &mut pos);
    let items = match root {
        Node::Block(items) => items,
        other => vec![other],
    };
    let mut index = 0;
    items
        .iter()
        .map(|n| render(n, false, false, &mut index))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(args: &[Reply]) -> Vec<String> {
        args.iter()
            .map(|a| match a {
                Reply::Map(pairs) => match &pairs[0].1 {
                    Reply::Bulk(b) => String::from_utf8_lossy(b).into_owned(),
                    _ => "?".into(),
                },
                _ => "?".into(),
            })
            .collect()
    }

    #[test]
    fn parses_the_docs_syntax_of_zadd_and_zrange() {
        let zadd = arguments("key [NX | XX] [GT | LT] [CH] [INCR] score member [score member ...]");
        assert_eq!(
            names(&zadd),
            ["key", "nx-xx", "gt-lt", "ch", "incr", "data3"]
        );
        let zrange =
            arguments("key start stop [BYSCORE | BYLEX] [REV] [LIMIT offset count] [WITHSCORES]");
        assert_eq!(
            names(&zrange),
            [
                "key",
                "start",
                "stop",
                "byscore-bylex",
                "rev",
                "limit",
                "withscores"
            ]
        );
        let del = arguments("key [key ...]");
        assert_eq!(names(&del), ["key"]);
        assert!(format!("{:?}", del[0]).contains("multiple"));
        assert!(arguments("").is_empty());
    }
}
