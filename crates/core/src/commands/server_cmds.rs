//! Server commands: CONFIG and COMMAND (server.c, config.c); INFO's row, whose
//! sections live in [`super::info`].
//!
//! COMMAND's answers are generated from the command table
//! ([`crate::server::table`]): COMMAND COUNT counts its rows, COMMAND INFO prints
//! each row's arity, flags, key triple and ACL categories in Redis's shape,
//! COMMAND LIST names them, COMMAND GETKEYS applies the key triple, and COMMAND
//! DOCS prints the summary and the arguments parsed from the syntax line.

use super::{flags::*, Args, CmdResult, CommandSpec, Group, Server};
use crate::reply::{errors, Reply};
use crate::server::config::SetError;
use crate::server::table::{self, flags, Found};

pub const COMMANDS: &[CommandSpec] = &[
    CommandSpec::new("info", -1, super::info::info)
        .flags(LOADING | STALE)
        .acl(&["@dangerous"])
        .doc(
            "1.0.0",
            "Returns information and statistics about the server.",
            "[section [section ...]]",
        ),
    CommandSpec::container("config", CONFIG_SUBCOMMANDS).doc(
        "2.0.0",
        "A container for server configuration commands.",
        "",
    ),
    CommandSpec::new("command", -1, command_all)
        .flags(LOADING | STALE)
        .acl(&["@connection"])
        .subs(COMMAND_SUBCOMMANDS)
        .doc(
            "2.8.13",
            "Returns detailed information about all commands.",
            "",
        ),
];

const CONFIG_SUBCOMMANDS: &[CommandSpec] = &[
    CommandSpec::new("get", -3, config_get)
        .flags(ADMIN | NOSCRIPT | LOADING | STALE)
        .doc(
            "2.0.0",
            "Returns the effective values of configuration parameters.",
            "parameter [parameter ...]",
        ),
    CommandSpec::new("set", -4, config_set)
        .flags(ADMIN | NOSCRIPT | LOADING | STALE)
        .doc(
            "2.0.0",
            "Sets configuration parameters in-flight.",
            "parameter value [parameter value ...]",
        ),
    CommandSpec::new("resetstat", 2, config_resetstat)
        .flags(ADMIN | NOSCRIPT | LOADING | STALE)
        .doc("2.0.0", "Resets the server's statistics.", ""),
    CommandSpec::new("rewrite", 2, config_rewrite)
        .flags(ADMIN | NOSCRIPT | LOADING | STALE)
        .doc("2.8.0", "Persists the effective configuration to file.", ""),
    CommandSpec::new("help", 2, config_help)
        .flags(LOADING | STALE)
        .doc(
            "5.0.0",
            "Returns helpful text about the different subcommands.",
            "",
        ),
];

const COMMAND_SUBCOMMANDS: &[CommandSpec] = &[
    CommandSpec::new("count", 2, command_count)
        .flags(LOADING | STALE)
        .acl(&["@connection"])
        .doc("2.8.13", "Returns a count of commands.", ""),
    CommandSpec::new("info", -2, command_info)
        .flags(LOADING | STALE)
        .acl(&["@connection"])
        .doc(
            "2.8.13",
            "Returns information about one, multiple or all commands.",
            "[command-name [command-name ...]]",
        ),
    CommandSpec::new("list", -2, command_list)
        .flags(LOADING | STALE)
        .acl(&["@connection"])
        .doc(
            "7.0.0",
            "Returns a list of command names.",
            "[FILTERBY <MODULE module-name | ACLCAT category | PATTERN pattern>]",
        ),
    CommandSpec::new("docs", -2, command_docs)
        .flags(LOADING | STALE)
        .acl(&["@connection"])
        .doc(
            "7.0.0",
            "Returns documentary information about one, multiple or all commands.",
            "[command-name [command-name ...]]",
        ),
    CommandSpec::new("getkeys", -3, command_getkeys)
        .flags(LOADING | STALE)
        .acl(&["@connection"])
        .doc(
            "2.8.13",
            "Extracts the key names from an arbitrary command.",
            "command [arg [arg ...]]",
        ),
    CommandSpec::new("help", 2, command_help)
        .flags(LOADING | STALE)
        .acl(&["@connection"])
        .doc(
            "5.0.0",
            "Returns helpful text about the different subcommands.",
            "",
        ),
];

// ----- CONFIG -----

fn config_get(s: &mut Server, a: &Args) -> CmdResult {
    let mut pairs: Vec<(String, String)> = Vec::new();
    for i in 2..a.len() {
        let pattern = String::from_utf8_lossy(a.bytes(i)).into_owned();
        for (k, v) in s.config.get(&pattern) {
            if !pairs.iter().any(|(n, _)| *n == k) {
                pairs.push((k, v));
            }
        }
    }
    Ok(Reply::Map(
        pairs
            .into_iter()
            .map(|(k, v)| (Reply::bulk(k), Reply::bulk(v)))
            .collect(),
    ))
}

/// CONFIG SET name value [name value ...]: all or nothing, as in Redis.
fn config_set(s: &mut Server, a: &Args) -> CmdResult {
    if !a.len().is_multiple_of(2) {
        return Err(Reply::error(errors::SYNTAX));
    }
    let pairs: Vec<(String, String)> = (2..a.len())
        .step_by(2)
        .map(|i| {
            (
                String::from_utf8_lossy(a.bytes(i)).into_owned(),
                String::from_utf8_lossy(a.bytes(i + 1)).into_owned(),
            )
        })
        .collect();
    for (i, (name, _)) in pairs.iter().enumerate() {
        let canonical = crate::server::config::Config::canonical(name);
        if pairs[..i].iter().any(|(n, _)| {
            crate::server::config::Config::canonical(n) == canonical && canonical.is_some()
        }) {
            return Err(Reply::error(format!(
                "ERR CONFIG SET failed (possibly related to argument '{name}') - duplicate parameter"
            )));
        }
    }
    let mut next = s.config.clone();
    for (name, value) in &pairs {
        match next.set(name, value) {
            Ok(()) => {}
            Err(SetError::Unknown) => {
                return Err(Reply::error(format!(
                    "ERR Unknown option or number of arguments for CONFIG SET - '{name}'"
                )))
            }
            Err(SetError::Invalid(why)) => {
                return Err(Reply::error(format!(
                    "ERR CONFIG SET failed (possibly related to argument '{name}') - {why}"
                )))
            }
        }
    }
    s.config = next;
    Ok(Reply::ok())
}

fn config_resetstat(s: &mut Server, _: &Args) -> CmdResult {
    s.stats.reset();
    Ok(Reply::ok())
}

fn config_rewrite(_: &mut Server, _: &Args) -> CmdResult {
    Err(Reply::error(
        "ERR The server is running without a config file",
    ))
}

fn config_help(_: &mut Server, _: &Args) -> CmdResult {
    let lines = [
        "CONFIG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "GET <pattern>",
        "    Return parameters matching the glob-like <pattern> and their values.",
        "SET <directive> <value>",
        "    Set the configuration <directive> to <value>.",
        "RESETSTAT",
        "    Reset statistics reported by the INFO command.",
        "REWRITE",
        "    Rewrite the configuration file.",
        "HELP",
        "    Print this help.",
    ];
    Ok(Reply::Array(
        lines.iter().map(|l| Reply::Status((*l).into())).collect(),
    ))
}

// ----- COMMAND -----

fn flag_names(spec: &CommandSpec) -> Vec<Reply> {
    flags::NAMES
        .iter()
        .filter(|(bit, _)| spec.flags & bit != 0)
        .map(|(_, name)| Reply::Status((*name).into()))
        .collect()
}

/// A subcommand is documented under its container's group.
fn info_of(spec: &CommandSpec, fullname: &str) -> Reply {
    info_in(spec, fullname, spec.group)
}

fn info_in(spec: &CommandSpec, fullname: &str, group: Group) -> Reply {
    let subs: Vec<Reply> = spec
        .subcommands
        .iter()
        .map(|sub| info_in(sub, &format!("{fullname}|{}", sub.name), group))
        .collect();
    Reply::Array(vec![
        Reply::bulk(fullname),
        Reply::Integer(spec.arity as i64),
        Reply::Set(flag_names(spec)),
        Reply::Integer(spec.keys.first as i64),
        Reply::Integer(spec.keys.last as i64),
        Reply::Integer(spec.keys.step as i64),
        Reply::Set(
            spec.acl_categories(group)
                .into_iter()
                .map(|c| Reply::Status(c.into()))
                .collect(),
        ),
        Reply::Set(Vec::new()),
        Reply::Array(Vec::new()),
        Reply::Array(subs),
    ])
}

fn command_all(_: &mut Server, _: &Args) -> CmdResult {
    Ok(Reply::Array(
        table::all()
            .into_iter()
            .map(|c| info_of(c, c.name))
            .collect(),
    ))
}

fn command_count(_: &mut Server, _: &Args) -> CmdResult {
    Ok(Reply::Integer(table::all().len() as i64))
}

fn command_info(s: &mut Server, a: &Args) -> CmdResult {
    if a.len() == 2 {
        return command_all(s, a);
    }
    Ok(Reply::Array(
        (2..a.len())
            .map(|i| match lookup_full(a.bytes(i)) {
                Some((spec, name, group)) => info_in(spec, &name, group),
                None => Reply::NilArray,
            })
            .collect(),
    ))
}

/// A command by name, or a subcommand as `container|sub`.
fn lookup_full(name: &[u8]) -> Option<(&'static CommandSpec, String, Group)> {
    let text = String::from_utf8_lossy(name).to_ascii_lowercase();
    match text.split_once('|') {
        None => table::lookup(name).map(|s| (s, s.name.to_string(), s.group)),
        Some((base, sub)) => {
            let spec = table::lookup(base.as_bytes())?;
            spec.subcommand(sub.as_bytes())
                .map(|s| (s, format!("{}|{}", spec.name, s.name), spec.group))
        }
    }
}

fn command_list(_: &mut Server, a: &Args) -> CmdResult {
    let mut names: Vec<String> = Vec::new();
    for spec in table::all() {
        names.push(spec.name.to_string());
        for sub in spec.subcommands {
            names.push(format!("{}|{}", spec.name, sub.name));
        }
    }
    if a.len() > 2 {
        if a.len() != 5 || !a.is(2, "filterby") {
            return Err(Reply::error(errors::SYNTAX));
        }
        let value = a.bytes(4);
        if a.is(3, "pattern") {
            names.retain(|n| crate::glob::glob_match_nocase(value, n.as_bytes()));
        } else if a.is(3, "aclcat") {
            let cat = format!("@{}", String::from_utf8_lossy(value).to_ascii_lowercase());
            names.retain(|n| {
                lookup_full(n.as_bytes())
                    .is_some_and(|(s, _, g)| s.acl_categories(g).contains(&cat.as_str()))
            });
        } else if a.is(3, "module") {
            names.clear();
        } else {
            return Err(Reply::error(errors::SYNTAX));
        }
    }
    Ok(Reply::Array(names.into_iter().map(Reply::bulk).collect()))
}

fn docs_of(spec: &CommandSpec) -> Reply {
    let mut pairs = vec![
        (Reply::bulk("summary"), Reply::bulk(spec.summary)),
        (Reply::bulk("since"), Reply::bulk(spec.since)),
        (Reply::bulk("group"), Reply::bulk(spec.group.name())),
    ];
    let args = crate::server::docs::arguments(spec.syntax);
    if !args.is_empty() {
        pairs.push((Reply::bulk("arguments"), Reply::Array(args)));
    }
    if !spec.subcommands.is_empty() {
        pairs.push((
            Reply::bulk("subcommands"),
            Reply::Map(
                spec.subcommands
                    .iter()
                    .map(|sub| {
                        (
                            Reply::bulk(format!("{}|{}", spec.name, sub.name)),
                            docs_of(sub),
                        )
                    })
                    .collect(),
            ),
        ));
    }
    Reply::Map(pairs)
}

fn command_docs(_: &mut Server, a: &Args) -> CmdResult {
    let specs: Vec<(&'static CommandSpec, String)> = if a.len() == 2 {
        table::all()
            .into_iter()
            .map(|s| (s, s.name.to_string()))
            .collect()
    } else {
        (2..a.len())
            .filter_map(|i| lookup_full(a.bytes(i)).map(|(s, n, _)| (s, n)))
            .collect()
    };
    Ok(Reply::Map(
        specs
            .into_iter()
            .map(|(spec, name)| (Reply::bulk(name), docs_of(spec)))
            .collect(),
    ))
}

fn command_getkeys(_: &mut Server, a: &Args) -> CmdResult {
    let argv = &a.all()[2..];
    let spec = match table::resolve(argv) {
        Found::Command(spec, _) => spec,
        _ => return Err(Reply::error("ERR Invalid command specified")),
    };
    if !spec.arity_ok(argv.len()) {
        return Err(Reply::error(
            "ERR Invalid number of arguments specified for command",
        ));
    }
    let keys = super::keys_of(spec, argv);
    if keys.is_empty() {
        return Err(Reply::error("ERR The command has no key arguments"));
    }
    Ok(Reply::Array(
        keys.into_iter().map(|i| Reply::bulk(&argv[i])).collect(),
    ))
}

fn command_help(_: &mut Server, _: &Args) -> CmdResult {
    let lines = [
        "COMMAND <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "(no subcommand)",
        "    Return details about all commands.",
        "COUNT",
        "    Return the total number of commands in this server.",
        "LIST",
        "    Return a list of all commands in this server.",
        "INFO [<command-name> ...]",
        "    Return details about multiple commands.",
        "    If no command names are given, documentation details for all",
        "    commands are returned.",
        "DOCS [<command-name> ...]",
        "    Return documentation details about multiple commands.",
        "    If no command names are given, documentation details for all",
        "    commands are returned.",
        "GETKEYS <full-command>",
        "    Return the keys from a full command.",
        "HELP",
        "    Print this help.",
    ];
    Ok(Reply::Array(
        lines.iter().map(|l| Reply::Status((*l).into())).collect(),
    ))
}
