//! Watching the server: SLOWLOG, LATENCY, TIME, LASTSAVE, ROLE, WAIT, SHUTDOWN
//! (slowlog.c, latency.c, server.c, replication.c).
//!
//! The slow log and the per-command latency histograms are filled by the one
//! command path ([`crate::server::Server::call`]), which times every command.
//! LATENCY's event monitor (spikes above `latency-monitor-threshold`) starts
//! disabled, as in Redis, and the core records no events, so LATEST and
//! HISTORY answer empty; LATENCY HISTOGRAM reports the real per-command
//! distributions. There is no replication: ROLE says master with no replicas and
//! WAIT answers 0 at once.

use super::{flags::*, Args, CmdResult, CommandSpec, Group, Server};
use crate::reply::{errors, Reply};

pub const COMMANDS: &[CommandSpec] = &[
    CommandSpec::container("slowlog", SLOWLOG_SUBCOMMANDS).doc(
        "2.2.12",
        "A container for slow log commands.",
        "",
    ),
    CommandSpec::container("latency", LATENCY_SUBCOMMANDS).doc(
        "2.8.13",
        "A container for latency diagnostics commands.",
        "",
    ),
    CommandSpec::new("time", 1, time)
        .flags(LOADING | STALE | FAST)
        .doc("2.6.0", "Returns the server time.", ""),
    CommandSpec::new("lastsave", 1, lastsave)
        .flags(LOADING | STALE | FAST)
        .acl(&["@admin", "@dangerous"])
        .doc(
            "1.0.0",
            "Returns the Unix time of the last successful save to disk.",
            "",
        ),
    CommandSpec::new("role", 1, role)
        .flags(NOSCRIPT | LOADING | STALE | FAST)
        .acl(&["@admin", "@dangerous"])
        .doc("2.8.12", "Returns the replication role.", ""),
    CommandSpec::new("wait", 3, wait)
        .flags(BLOCKING)
        .group(Group::Generic)
        .acl(&["@connection"])
        .doc(
            "3.0.0",
            "Blocks until writes reached a number of replicas (none here).",
            "numreplicas timeout",
        ),
    CommandSpec::new("shutdown", -1, shutdown)
        .flags(ADMIN | NOSCRIPT | LOADING | STALE | NO_MULTI | ALLOW_BUSY)
        .doc(
            "1.0.0",
            "Stops the server.",
            "[NOSAVE | SAVE] [NOW] [FORCE] [ABORT]",
        ),
];

const SLOWLOG_SUBCOMMANDS: &[CommandSpec] = &[
    CommandSpec::new("get", -2, slowlog_get)
        .flags(ADMIN | LOADING | STALE)
        .doc("2.2.12", "Returns the slow log's entries.", "[count]"),
    CommandSpec::new("len", 2, slowlog_len)
        .flags(ADMIN | LOADING | STALE)
        .doc(
            "2.2.12",
            "Returns the number of entries in the slow log.",
            "",
        ),
    CommandSpec::new("reset", 2, slowlog_reset)
        .flags(ADMIN | LOADING | STALE)
        .doc("2.2.12", "Clears all entries from the slow log.", ""),
    CommandSpec::new("help", 2, slowlog_help)
        .flags(LOADING | STALE)
        .doc(
            "6.2.0",
            "Show helpful text about the different subcommands",
            "",
        ),
];

const LATENCY_SUBCOMMANDS: &[CommandSpec] = &[
    CommandSpec::new("latest", 2, latency_latest)
        .flags(ADMIN | NOSCRIPT | LOADING | STALE)
        .doc(
            "2.8.13",
            "Returns the latest latency samples for all events.",
            "",
        ),
    CommandSpec::new("history", 3, latency_history)
        .flags(ADMIN | NOSCRIPT | LOADING | STALE)
        .doc(
            "2.8.13",
            "Returns timestamp-latency samples for an event.",
            "event",
        ),
    CommandSpec::new("reset", -2, latency_reset)
        .flags(ADMIN | NOSCRIPT | LOADING | STALE)
        .doc(
            "2.8.13",
            "Resets the latency data for one or more events.",
            "[event [event ...]]",
        ),
    CommandSpec::new("graph", 3, latency_graph)
        .flags(ADMIN | NOSCRIPT | LOADING | STALE)
        .doc("2.8.13", "Returns a latency graph for an event.", "event"),
    CommandSpec::new("doctor", 2, latency_doctor)
        .flags(ADMIN | NOSCRIPT | LOADING | STALE)
        .doc(
            "2.8.13",
            "Returns a human-readable latency analysis report.",
            "",
        ),
    CommandSpec::new("histogram", -2, latency_histogram)
        .flags(ADMIN | NOSCRIPT | LOADING | STALE)
        .doc(
            "7.0.0",
            "Returns the cumulative distribution of latencies of commands.",
            "[command [command ...]]",
        ),
    CommandSpec::new("help", 2, latency_help)
        .flags(LOADING | STALE)
        .doc(
            "2.8.13",
            "Returns helpful text about the different subcommands.",
            "",
        ),
];

fn help(container: &str, lines: &[&'static str]) -> Reply {
    let mut out = vec![Reply::Status(
        format!("{container} <subcommand> [<arg> [value] [opt] ...]. Subcommands are:").into(),
    )];
    out.extend(lines.iter().map(|l| Reply::Status((*l).into())));
    out.push(Reply::Status("HELP".into()));
    out.push(Reply::Status("    Print this help.".into()));
    Reply::Array(out)
}

fn slowlog_get(s: &mut Server, a: &Args) -> CmdResult {
    let len = s.stats.slowlog.len();
    let mut count = 10usize;
    if a.len() == 3 {
        let n = a
            .int(2)
            .ok()
            .filter(|&n| n >= -1)
            .ok_or_else(|| Reply::error("ERR count should be greater than or equal to -1"))?;
        count = if n == -1 { len } else { n as usize };
    } else if a.len() > 3 {
        return Err(Reply::error(errors::arity("slowlog|get")));
    }
    let entries = s
        .stats
        .slowlog
        .iter()
        .take(count.min(len))
        .map(|e| {
            Reply::Array(vec![
                Reply::Integer(e.id as i64),
                Reply::Integer(e.unix_time),
                Reply::Integer(e.usec as i64),
                Reply::Array(e.argv.iter().map(Reply::bulk).collect()),
                Reply::bulk(&e.addr),
                Reply::bulk(&e.name),
            ])
        })
        .collect();
    Ok(Reply::Array(entries))
}

fn slowlog_len(s: &mut Server, _: &Args) -> CmdResult {
    Ok(Reply::Integer(s.stats.slowlog.len() as i64))
}

fn slowlog_reset(s: &mut Server, _: &Args) -> CmdResult {
    s.stats.slowlog.clear();
    Ok(Reply::ok())
}

fn slowlog_help(_: &mut Server, _: &Args) -> CmdResult {
    Ok(help(
        "SLOWLOG",
        &[
            "GET [<count>]",
            "    Return top <count> entries from the slowlog (default: 10, -1 mean all).",
            "    Entries are made of:",
            "    id, timestamp, time in microseconds, arguments array, client IP and port,",
            "    client name",
            "LEN",
            "    Return the length of the slowlog.",
            "RESET",
            "    Reset the slowlog.",
        ],
    ))
}

fn latency_latest(_: &mut Server, _: &Args) -> CmdResult {
    Ok(Reply::Array(Vec::new()))
}

fn latency_history(_: &mut Server, _: &Args) -> CmdResult {
    Ok(Reply::Array(Vec::new()))
}

fn latency_reset(_: &mut Server, _: &Args) -> CmdResult {
    Ok(Reply::Integer(0))
}

fn latency_graph(_: &mut Server, a: &Args) -> CmdResult {
    Err(Reply::error(format!(
        "ERR No samples available for event '{}'",
        String::from_utf8_lossy(a.bytes(2))
    )))
}

fn latency_doctor(s: &mut Server, _: &Args) -> CmdResult {
    let threshold = s.config.latency_monitor_threshold;
    let text = if threshold == 0 {
        "The latency monitor is disabled (latency-monitor-threshold is 0), so no latency \
         event was recorded. LATENCY HISTOGRAM shows how long each command took.\n"
            .to_string()
    } else {
        format!(
            "No latency event above {threshold} ms was recorded by the core (it records none).\n"
        )
    };
    Ok(Reply::Verbatim(text))
}

/// LATENCY HISTOGRAM: per command, its calls and the cumulative count of calls
/// at or under each power-of-two number of microseconds.
fn latency_histogram(s: &mut Server, a: &Args) -> CmdResult {
    let wanted: Vec<String> = (2..a.len())
        .map(|i| String::from_utf8_lossy(a.bytes(i)).to_ascii_lowercase())
        .collect();
    let mut out = Vec::new();
    for (name, st) in s.stats.commands_sorted() {
        if st.calls == 0 || (!wanted.is_empty() && !wanted.iter().any(|w| w == name)) {
            continue;
        }
        let mut cumulative = 0;
        let last = st.histogram.iter().rposition(|&n| n > 0).unwrap_or(0);
        let buckets = (0..=last)
            .map(|i| {
                cumulative += st.histogram[i];
                (Reply::Integer(1i64 << i), Reply::Integer(cumulative as i64))
            })
            .collect();
        out.push((
            Reply::bulk(name),
            Reply::Map(vec![
                (Reply::bulk("calls"), Reply::Integer(st.calls as i64)),
                (Reply::bulk("histogram_usec"), Reply::Map(buckets)),
            ]),
        ));
    }
    Ok(Reply::Map(out))
}

fn latency_help(_: &mut Server, _: &Args) -> CmdResult {
    Ok(help(
        "LATENCY",
        &[
            "DOCTOR",
            "    Return a human readable latency analysis report.",
            "GRAPH <event>",
            "    Return an ASCII latency graph for the <event> class.",
            "HISTORY <event>",
            "    Return time-latency samples for the <event> class.",
            "LATEST",
            "    Return the latest latency samples for all events.",
            "RESET [<event> ...]",
            "    Reset latency data of one or more <event> classes.",
            "    (default: reset all data for all event classes)",
            "HISTOGRAM [COMMAND ...]",
            "    Return a cumulative distribution of latencies in the format of a histogram for the specified command names.",
            "    If no commands are specified then all histograms are replied.",
        ],
    ))
}

/// TIME: the command's time snapshot (Redis answers its cached
/// `server.ustime`, taken when the outermost command started).
fn time(_: &mut Server, _: &Args) -> CmdResult {
    let us = crate::scripting::clock::now_us().max(0);
    Ok(Reply::Array(vec![
        Reply::bulk((us / 1_000_000).to_string()),
        Reply::bulk((us % 1_000_000).to_string()),
    ]))
}

/// The core never saves to disk: the last save is the server's start, as a
/// fresh Redis reports it.
fn lastsave(s: &mut Server, _: &Args) -> CmdResult {
    let started = crate::keyspace::now_ms() / 1000 - s.started.elapsed().as_secs() as i64;
    Ok(Reply::Integer(started))
}

fn role(_: &mut Server, _: &Args) -> CmdResult {
    Ok(Reply::Array(vec![
        Reply::bulk("master"),
        Reply::Integer(0),
        Reply::Array(Vec::new()),
    ]))
}

fn wait(_: &mut Server, a: &Args) -> CmdResult {
    a.int(1)?;
    let timeout = a
        .int(2)
        .map_err(|_| Reply::error("ERR timeout is not an integer or out of range"))?;
    if timeout < 0 {
        return Err(Reply::error("ERR timeout is negative"));
    }
    Ok(Reply::Integer(0))
}

/// SHUTDOWN: the transport stops the server after this reply (the core keeps
/// nothing on disk, so SAVE and NOSAVE stop it the same way).
fn shutdown(s: &mut Server, a: &Args) -> CmdResult {
    for i in 1..a.len() {
        if !["nosave", "save", "now", "force", "abort"]
            .iter()
            .any(|w| a.is(i, w))
        {
            return Err(Reply::error(errors::SYNTAX));
        }
    }
    if (1..a.len()).any(|i| a.is(i, "abort")) {
        return Err(Reply::error("ERR No shutdown in progress."));
    }
    s.request_shutdown();
    Ok(Reply::ok())
}

#[cfg(test)]
mod tests {
    use crate::{Reply, Server};

    #[test]
    fn slowlog_records_slow_commands_newest_first() {
        let mut s = Server::new();
        s.cmd(&["CONFIG", "SET", "slowlog-log-slower-than", "0"]);
        s.cmd(&["SET", "a", "1"]);
        s.cmd(&["GET", "a"]);
        let Reply::Integer(len) = s.cmd(&["SLOWLOG", "LEN"]) else {
            panic!()
        };
        assert!(len >= 2);
        let Reply::Array(entries) = s.cmd(&["SLOWLOG", "GET", "1"]) else {
            panic!()
        };
        let Reply::Array(first) = &entries[0] else {
            panic!()
        };
        assert_eq!(
            first[3],
            Reply::Array(vec![Reply::bulk("SLOWLOG"), Reply::bulk("LEN")])
        );
        assert_eq!(
            s.cmd(&["SLOWLOG", "GET", "-2"]),
            Reply::error("ERR count should be greater than or equal to -1")
        );
        assert_eq!(s.cmd(&["SLOWLOG", "RESET"]), Reply::ok());
    }

    #[test]
    fn latency_histogram_counts_every_call() {
        let mut s = Server::new();
        for _ in 0..5 {
            s.cmd(&["PING"]);
        }
        let Reply::Map(cmds) = s.cmd(&["LATENCY", "HISTOGRAM", "ping"]) else {
            panic!()
        };
        let Reply::Map(fields) = &cmds[0].1 else {
            panic!()
        };
        assert_eq!(fields[0].1, Reply::Integer(5));
    }
}
