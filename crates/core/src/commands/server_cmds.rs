//! Server commands: INFO, CONFIG and COMMAND (server.c, config.c).
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
    CommandSpec::new("info", -1, info)
        .flags(LOADING | STALE)
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
        .doc("2.8.13", "Returns a count of commands.", ""),
    CommandSpec::new("info", -2, command_info)
        .flags(LOADING | STALE)
        .doc(
            "2.8.13",
            "Returns information about one, multiple or all commands.",
            "[command-name [command-name ...]]",
        ),
    CommandSpec::new("list", -2, command_list)
        .flags(LOADING | STALE)
        .doc(
            "7.0.0",
            "Returns a list of command names.",
            "[FILTERBY <MODULE module-name | ACLCAT category | PATTERN pattern>]",
        ),
    CommandSpec::new("docs", -2, command_docs)
        .flags(LOADING | STALE)
        .doc(
            "7.0.0",
            "Returns documentary information about one, multiple or all commands.",
            "[command-name [command-name ...]]",
        ),
    CommandSpec::new("getkeys", -3, command_getkeys)
        .flags(LOADING | STALE)
        .doc(
            "2.8.13",
            "Extracts the key names from an arbitrary command.",
            "command [arg [arg ...]]",
        ),
    CommandSpec::new("help", 2, command_help)
        .flags(LOADING | STALE)
        .doc(
            "5.0.0",
            "Returns helpful text about the different subcommands.",
            "",
        ),
];

// ----- INFO -----

/// INFO's sections, in Redis's order; `default` ones appear without arguments.
const SECTIONS: &[(&str, bool)] = &[
    ("server", true),
    ("clients", true),
    ("memory", true),
    ("persistence", true),
    ("stats", true),
    ("replication", true),
    ("cpu", true),
    ("modules", true),
    ("errorstats", true),
    ("cluster", true),
    ("keyspace", true),
    ("commandstats", false),
    ("latencystats", false),
];

pub fn info(s: &mut Server, a: &Args) -> CmdResult {
    let mut wanted: Vec<String> = (1..a.len())
        .map(|i| String::from_utf8_lossy(a.bytes(i)).to_ascii_lowercase())
        .collect();
    if wanted.is_empty() || wanted.iter().any(|w| w == "default") {
        wanted.extend(
            SECTIONS
                .iter()
                .filter(|(_, d)| *d)
                .map(|(n, _)| n.to_string()),
        );
    }
    if wanted.iter().any(|w| w == "all" || w == "everything") {
        wanted.extend(SECTIONS.iter().map(|(n, _)| n.to_string()));
    }
    let mut text = String::new();
    for (name, _) in SECTIONS {
        if !wanted.iter().any(|w| w == name) {
            continue;
        }
        if !text.is_empty() {
            text.push_str("\r\n");
        }
        text.push_str(&section(s, name));
    }
    Ok(Reply::Verbatim(text))
}

fn section(s: &Server, name: &str) -> String {
    let mut out = String::new();
    let mut field = |k: &str, v: String| {
        out.push_str(k);
        out.push(':');
        out.push_str(&v);
        out.push_str("\r\n");
    };
    let title = match name {
        "server" => "Server",
        "clients" => "Clients",
        "memory" => "Memory",
        "persistence" => "Persistence",
        "stats" => "Stats",
        "replication" => "Replication",
        "cpu" => "CPU",
        "modules" => "Modules",
        "errorstats" => "Errorstats",
        "cluster" => "Cluster",
        "keyspace" => "Keyspace",
        "commandstats" => "Commandstats",
        _ => "Latencystats",
    };
    match name {
        "server" => {
            field("redis_version", crate::server::REDIS_VERSION.into());
            field("redislab_core_version", crate::CORE_VERSION.into());
            field(
                "redislab_core_extras",
                "INCREX,AGGREGATE COUNT (Redis 8.8)".into(),
            );
            field("redis_mode", "standalone".into());
            field("os", std::env::consts::OS.into());
            field("arch_bits", "64".into());
            field("multiplexing_api", "epoll".into());
            field("process_id", std::process::id().to_string());
            field(
                "tcp_port",
                s.config.others.get("port").cloned().unwrap_or_default(),
            );
            let up = s.started.elapsed().as_secs();
            field("uptime_in_seconds", up.to_string());
            field("uptime_in_days", (up / 86400).to_string());
            field("hz", s.config.hz.to_string());
            field("executable", String::new());
            field("config_file", String::new());
        }
        "clients" => {
            field("connected_clients", s.connected_clients().to_string());
            field("maxclients", s.config.maxclients.to_string());
            field("blocked_clients", "0".into());
            field(
                "pubsub_clients",
                s.other_clients()
                    .filter(|c| c.in_pubsub_mode())
                    .count()
                    .to_string(),
            );
            field(
                "watching_clients",
                s.other_clients()
                    .filter(|c| !c.watched.is_empty())
                    .count()
                    .to_string(),
            );
        }
        "memory" => {
            let used = s.used_memory();
            field("used_memory", used.to_string());
            field("used_memory_human", human_bytes(used));
            for (k, v) in super::scripting::info_memory(s) {
                field(k, v);
            }
            field(
                "maxmemory",
                s.config
                    .others
                    .get("maxmemory")
                    .cloned()
                    .unwrap_or_default(),
            );
            field(
                "maxmemory_policy",
                s.config
                    .others
                    .get("maxmemory-policy")
                    .cloned()
                    .unwrap_or_default(),
            );
            field("mem_allocator", "libc".into());
        }
        "persistence" => {
            field("loading", "0".into());
            field("rdb_changes_since_last_save", "0".into());
            field("rdb_bgsave_in_progress", "0".into());
            field("aof_enabled", "0".into());
        }
        "stats" => {
            let st = &s.stats;
            field(
                "total_connections_received",
                st.total_connections.to_string(),
            );
            field("total_commands_processed", st.total_commands.to_string());
            field("rejected_connections", st.rejected_connections.to_string());
            field("expired_keys", st.expired_keys.to_string());
            field(
                "evicted_scripts",
                super::scripting::evicted_scripts(s).to_string(),
            );
            field("keyspace_hits", st.keyspace_hits.to_string());
            field("keyspace_misses", st.keyspace_misses.to_string());
            field("pubsub_channels", s.pubsub.channel_count().to_string());
            field("pubsub_patterns", s.pubsub.pattern_count().to_string());
            field("total_error_replies", st.total_error_replies.to_string());
            field("redislab_core_panics", st.panics.to_string());
        }
        "replication" => {
            field("role", "master".into());
            field("connected_slaves", "0".into());
        }
        "cluster" => field("cluster_enabled", "0".into()),
        "errorstats" => {
            for (code, n) in &s.stats.errors {
                field(&format!("errorstat_{code}"), format!("count={n}"));
            }
        }
        "commandstats" => {
            for (cmd, st) in &s.stats.commands {
                let per = if st.calls == 0 {
                    0.0
                } else {
                    st.usec as f64 / st.calls as f64
                };
                field(
                    &format!("cmdstat_{cmd}"),
                    format!(
                        "calls={},usec={},usec_per_call={:.2},rejected_calls={},failed_calls={}",
                        st.calls, st.usec, per, st.rejected, st.failed
                    ),
                );
            }
        }
        "keyspace" => {
            for db in 0..crate::server::DATABASES {
                let ks = s.db(db);
                if !ks.is_empty() {
                    field(
                        &format!("db{db}"),
                        format!(
                            "keys={},expires={},avg_ttl=0,subexpiry=0",
                            ks.len(),
                            ks.volatile_len()
                        ),
                    );
                }
            }
        }
        _ => {}
    }
    format!("# {title}\r\n{out}")
}

pub(super) fn human_bytes(n: usize) -> String {
    let n = n as f64;
    if n < 1024.0 {
        format!("{}B", n as u64)
    } else if n < 1024.0 * 1024.0 {
        format!("{:.2}K", n / 1024.0)
    } else if n < 1024.0 * 1024.0 * 1024.0 {
        format!("{:.2}M", n / 1024.0 / 1024.0)
    } else {
        format!("{:.2}G", n / 1024.0 / 1024.0 / 1024.0)
    }
}

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

/// The ACL categories Redis derives for a command: `@write`/`@read`, the
/// group's own, `@fast` or `@slow`, and `@admin @dangerous` for admin commands.
fn acl_categories(spec: &CommandSpec) -> Vec<&'static str> {
    // A container command (CONFIG, SCRIPT, ...) has no categories of its own.
    if matches!(spec.handler, crate::server::table::Handler::Container) {
        return vec!["@slow"];
    }
    let mut cats = Vec::new();
    if spec.has(flags::WRITE) {
        cats.push("@write");
    }
    // `setImplicitACLCategories`: read-only scripting commands are not @read.
    if spec.has(flags::READONLY) && spec.group != Group::Scripting {
        cats.push("@read");
    }
    if spec.has(flags::ADMIN) {
        cats.push("@admin");
        cats.push("@dangerous");
    }
    if spec.has(flags::PUBSUB) {
        cats.push("@pubsub");
    }
    let group = spec.group.acl_category();
    if !cats.contains(&group) && spec.group != Group::Server {
        cats.push(group);
    }
    cats.push(if spec.has(flags::FAST) {
        "@fast"
    } else {
        "@slow"
    });
    if spec.has(flags::BLOCKING) {
        cats.push("@blocking");
    }
    cats
}

fn flag_names(spec: &CommandSpec) -> Vec<Reply> {
    flags::NAMES
        .iter()
        .filter(|(bit, _)| spec.flags & bit != 0)
        .map(|(_, name)| Reply::Status((*name).into()))
        .collect()
}

fn info_of(spec: &CommandSpec, fullname: &str) -> Reply {
    let subs: Vec<Reply> = spec
        .subcommands
        .iter()
        .map(|sub| info_of(sub, &format!("{fullname}|{}", sub.name)))
        .collect();
    Reply::Array(vec![
        Reply::bulk(fullname),
        Reply::Integer(spec.arity as i64),
        Reply::Set(flag_names(spec)),
        Reply::Integer(spec.keys.first as i64),
        Reply::Integer(spec.keys.last as i64),
        Reply::Integer(spec.keys.step as i64),
        Reply::Set(
            acl_categories(spec)
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
                Some((spec, name)) => info_of(spec, &name),
                None => Reply::NilArray,
            })
            .collect(),
    ))
}

/// A command by name, or a subcommand as `container|sub`.
fn lookup_full(name: &[u8]) -> Option<(&'static CommandSpec, String)> {
    let text = String::from_utf8_lossy(name).to_ascii_lowercase();
    match text.split_once('|') {
        None => table::lookup(name).map(|s| (s, s.name.to_string())),
        Some((base, sub)) => {
            let spec = table::lookup(base.as_bytes())?;
            spec.subcommand(sub.as_bytes())
                .map(|s| (s, format!("{}|{}", spec.name, s.name)))
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
                    .is_some_and(|(s, _)| acl_categories(s).contains(&cat.as_str()))
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
            .filter_map(|i| lookup_full(a.bytes(i)))
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
