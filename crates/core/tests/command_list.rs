//! docs/commands.md, the list of commands the core implements, is generated from the
//! command table (through COMMAND LIST / INFO / DOCS on an in-process server) and
//! must match it: a command added to or removed from a family's table fails this
//! test until the list is regenerated with
//!     REDISLAB_WRITE_DOCS=1 cargo test --release -p redislab-core --test command_list

use redislab_core::{Reply, Server};

fn text(r: &Reply) -> String {
    match r {
        Reply::Bulk(b) => String::from_utf8_lossy(b).into_owned(),
        Reply::Status(s) => s.to_string(),
        Reply::Integer(n) => n.to_string(),
        other => format!("{other:?}"),
    }
}

fn field<'a>(map: &'a Reply, key: &str) -> Option<&'a Reply> {
    match map {
        Reply::Map(pairs) => pairs.iter().find(|(k, _)| text(k) == key).map(|(_, v)| v),
        Reply::Array(items) => items
            .chunks(2)
            .find(|kv| text(&kv[0]) == key)
            .map(|kv| &kv[1]),
        _ => None,
    }
}

/// A map's pairs, whether it came as a RESP3 map or a flat RESP2 array.
fn pairs(r: &Reply) -> Vec<(Reply, Reply)> {
    match r {
        Reply::Map(p) => p.clone(),
        Reply::Array(items) => items
            .chunks(2)
            .map(|kv| (kv[0].clone(), kv[1].clone()))
            .collect(),
        _ => Vec::new(),
    }
}

/// One line per command (and per subcommand of a container): group, since, arity,
/// flags and the summary.
fn generate() -> String {
    let mut s = Server::new();
    let Reply::Array(names) = s.cmd(&["COMMAND", "LIST"]) else {
        panic!("COMMAND LIST is not an array")
    };
    let mut names: Vec<String> = names.iter().map(text).collect();
    names.sort();
    let mut rows: Vec<(String, String)> = Vec::new();
    for name in &names {
        let docs = s.cmd(&["COMMAND", "DOCS", name]);
        let Some(doc) = field(&docs, name) else {
            panic!("no COMMAND DOCS for {name}")
        };
        let info = s.cmd(&["COMMAND", "INFO", name]);
        let Reply::Array(infos) = &info else {
            panic!("COMMAND INFO {name}: {info:?}")
        };
        let Some(Reply::Array(one)) = infos.first() else {
            panic!("COMMAND INFO {name}: {info:?}")
        };
        let arity = text(&one[1]);
        let flags = match &one[2] {
            Reply::Array(f) | Reply::Set(f) => f.iter().map(text).collect::<Vec<_>>().join(" "),
            other => text(other),
        };
        let get = |k: &str| field(doc, k).map(text).unwrap_or_default();
        let group = get("group");
        rows.push((
            group.clone(),
            format!(
                "| `{}` | {} | {} | {} | {} |",
                name.to_uppercase(),
                get("since"),
                arity,
                flags,
                get("summary").replace('|', "\\|")
            ),
        ));
        if let Some(subs) = field(doc, "subcommands").map(pairs) {
            let mut subs: Vec<(String, String)> = subs
                .iter()
                .map(|(k, v)| {
                    let g = |f: &str| field(v, f).map(text).unwrap_or_default();
                    (
                        text(k),
                        format!(
                            "| `{}` | {} | | | {} |",
                            text(k).to_uppercase().replace('|', " "),
                            g("since"),
                            g("summary").replace('|', "\\|")
                        ),
                    )
                })
                .collect();
            subs.sort();
            for (_, line) in subs {
                rows.push((group.clone(), line));
            }
        }
    }
    let mut out = String::from(
        "# Commands the core implements\n\n\
         Generated from the core's command table (COMMAND LIST, INFO and DOCS on an in-process\n\
         server) by `crates/core/tests/command_list.rs`, which fails when this file is out of\n\
         date. A command not listed answers Redis's own `ERR unknown command` error.\n",
    );
    let mut groups: Vec<String> = rows.iter().map(|(g, _)| g.clone()).collect();
    groups.sort();
    groups.dedup();
    let count = names.len();
    out.push_str(&format!(
        "\n{count} commands (subcommands listed under their container).\n"
    ));
    for g in groups {
        out.push_str(&format!(
            "\n## {g}\n\n| command | since | arity | flags | summary |\n|---|---|---|---|---|\n"
        ));
        for (_, line) in rows.iter().filter(|(rg, _)| *rg == g) {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

#[test]
fn the_command_list_matches_the_table() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/commands.md");
    let fresh = generate();
    if std::env::var_os("REDISLAB_WRITE_DOCS").is_some() {
        std::fs::write(path, &fresh).unwrap();
        return;
    }
    let committed = std::fs::read_to_string(path).unwrap_or_default();
    assert!(
        committed == fresh,
        "docs/commands.md is out of date: regenerate it with \
         REDISLAB_WRITE_DOCS=1 cargo test --release -p redislab-core --test command_list"
    );
}
