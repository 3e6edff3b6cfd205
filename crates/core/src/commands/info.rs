//! INFO: the server's sections and fields, with Redis's names (server.c
//! `genRedisInfoString`).
//!
//! Every field the core reports is measured, not copied: memory is the process
//! heap from the allocator probe a binary installs, CPU times come from
//! `getrusage`, the statistics from the one command path. Fields Redis has
//! about things the core does not do (persistence, replication, eviction,
//! threads) report the state the core is really in: nothing loading, no
//! replicas, no offset, saving never. Fields the core cannot measure are left
//! out rather than made up. `redislab_core_version` and
//! `redislab_core_extras` are the core's own.

use super::{Args, CmdResult, Server};
use crate::reply::Reply;
use crate::server::{DATABASES, REDIS_VERSION};

/// INFO's sections, in Redis's order; `true` for the ones INFO without
/// arguments (or `default`) prints.
const SECTIONS: &[(&str, &str, bool)] = &[
    ("server", "Server", true),
    ("clients", "Clients", true),
    ("memory", "Memory", true),
    ("persistence", "Persistence", true),
    ("stats", "Stats", true),
    ("replication", "Replication", true),
    ("cpu", "CPU", true),
    ("modules", "Modules", true),
    ("commandstats", "Commandstats", false),
    ("errorstats", "Errorstats", true),
    ("latencystats", "Latencystats", false),
    ("cluster", "Cluster", true),
    ("keyspace", "Keyspace", true),
];

pub fn info(s: &mut Server, a: &Args) -> CmdResult {
    let mut wanted: Vec<String> = (1..a.len())
        .map(|i| String::from_utf8_lossy(a.bytes(i)).to_ascii_lowercase())
        .collect();
    if wanted.is_empty() {
        wanted.push("default".into());
    }
    let all = wanted.iter().any(|w| w == "all" || w == "everything");
    let default = wanted.iter().any(|w| w == "default");
    let mut text = String::new();
    for (name, title, in_default) in SECTIONS {
        let chosen = all || (default && *in_default) || wanted.iter().any(|w| w == name);
        if !chosen {
            continue;
        }
        if !text.is_empty() {
            text.push_str("\r\n");
        }
        text.push_str(&format!("# {title}\r\n"));
        text.push_str(&section(s, name));
    }
    Ok(Reply::Verbatim(text))
}

struct Fields(String);

impl Fields {
    fn add(&mut self, key: &str, value: impl std::fmt::Display) {
        self.0.push_str(key);
        self.0.push(':');
        self.0.push_str(&value.to_string());
        self.0.push_str("\r\n");
    }
}

fn section(s: &Server, name: &str) -> String {
    let mut f = Fields(String::new());
    match name {
        "server" => server(s, &mut f),
        "clients" => clients(s, &mut f),
        "memory" => memory(s, &mut f),
        "persistence" => persistence(s, &mut f),
        "stats" => stats(s, &mut f),
        "replication" => replication(&mut f),
        "cpu" => cpu(&mut f),
        "commandstats" => commandstats(s, &mut f),
        "errorstats" => {
            for (code, n) in &s.stats.errors {
                f.add(&format!("errorstat_{code}"), format!("count={n}"));
            }
        }
        "latencystats" => latencystats(s, &mut f),
        "cluster" => f.add("cluster_enabled", 0),
        "keyspace" => keyspace(s, &mut f),
        _ => {}
    }
    f.0
}

fn server(s: &Server, f: &mut Fields) {
    let up = s.started.elapsed().as_secs();
    f.add("redis_version", REDIS_VERSION);
    f.add("redislab_core_version", crate::CORE_VERSION);
    f.add("redislab_core_extras", "INCREX,AGGREGATE COUNT (Redis 8.8)");
    f.add("redis_git_sha1", "00000000");
    f.add("redis_git_dirty", 0);
    f.add("redis_mode", "standalone");
    f.add(
        "os",
        format!("{} {}", std::env::consts::OS, std::env::consts::ARCH),
    );
    f.add("arch_bits", 64);
    f.add("monotonic_clock", crate::server::clock::source());
    f.add("multiplexing_api", "epoll");
    f.add("process_id", std::process::id());
    f.add("process_supervised", "no");
    f.add("run_id", s.run_id());
    f.add(
        "tcp_port",
        s.config.others.get("port").cloned().unwrap_or_default(),
    );
    f.add("server_time_usec", crate::keyspace::now_ms() * 1000);
    f.add("uptime_in_seconds", up);
    f.add("uptime_in_days", up / 86400);
    f.add("hz", s.config.hz);
    f.add("configured_hz", s.config.hz);
    f.add("executable", "");
    f.add("config_file", "");
    f.add("io_threads_active", 0);
}

fn clients(s: &Server, f: &mut Fields) {
    let others: Vec<_> = s.other_clients().collect();
    f.add("connected_clients", s.connected_clients());
    f.add("cluster_connections", 0);
    f.add("maxclients", s.config.maxclients);
    f.add(
        "blocked_clients",
        others.iter().filter(|c| c.blocked).count(),
    );
    f.add("tracking_clients", 0);
    f.add(
        "pubsub_clients",
        others.iter().filter(|c| c.in_pubsub_mode()).count(),
    );
    let (watching, watched_keys) = crate::server::multi::watch_totals(s, others.iter().copied());
    f.add("watching_clients", watching);
    f.add("total_watched_keys", watched_keys);
}

fn memory(s: &Server, f: &mut Fields) {
    let used = s.used_memory();
    f.add("used_memory", used);
    f.add("used_memory_human", human_bytes(used as u64));
    // The allocator's own count of live bytes: the core's used_memory already
    // is the heap's (Redis adds its overheads on top of jemalloc's figure).
    f.add("allocator_allocated", used);
    for (k, v) in super::scripting::info_memory(s) {
        f.add(k, v);
    }
    let max = s.config.maxmemory;
    f.add("maxmemory", max);
    f.add("maxmemory_human", human_bytes(max));
    f.add(
        "maxmemory_policy",
        s.config
            .others
            .get("maxmemory-policy")
            .cloned()
            .unwrap_or_default(),
    );
    // What MEMORY USAGE models: jemalloc 5.3's size classes (crate::memory),
    // as in the Redis build the labs compare with.
    f.add("mem_allocator", "jemalloc-5.3.0");
}

/// The core keeps nothing on disk: nothing is loading, no save ever ran.
fn persistence(s: &Server, f: &mut Fields) {
    let started = crate::keyspace::now_ms() / 1000 - s.started.elapsed().as_secs() as i64;
    f.add("loading", 0);
    f.add("async_loading", 0);
    f.add("rdb_changes_since_last_save", s.dirty());
    f.add("rdb_bgsave_in_progress", 0);
    f.add("rdb_last_save_time", started);
    f.add("aof_enabled", 0);
    f.add("aof_rewrite_in_progress", 0);
}

fn stats(s: &Server, f: &mut Fields) {
    let st = &s.stats;
    f.add("total_connections_received", st.total_connections);
    f.add("total_commands_processed", st.total_commands);
    f.add("rejected_connections", st.rejected_connections);
    f.add("expired_keys", st.expired_keys);
    f.add("expired_keys_active", st.expired_keys_active);
    f.add("expired_subkeys", st.expired_subkeys);
    f.add("expired_subkeys_active", st.expired_subkeys_active);
    f.add("evicted_keys", 0);
    f.add("evicted_scripts", super::scripting::evicted_scripts(s));
    f.add("keyspace_hits", st.keyspace_hits);
    f.add("keyspace_misses", st.keyspace_misses);
    f.add("pubsub_channels", s.pubsub.channel_count());
    f.add("pubsub_patterns", s.pubsub.pattern_count());
    f.add("pubsubshard_channels", s.pubsub.shard_channel_count());
    f.add("total_error_replies", st.total_error_replies);
    f.add(
        "client_output_buffer_limit_disconnections",
        st.output_limit_disconnections,
    );
    f.add("redislab_core_panics", st.panics);
}

/// No replication: a master with no replicas and nothing written to a stream.
fn replication(f: &mut Fields) {
    f.add("role", "master");
    f.add("connected_slaves", 0);
    f.add("master_failover_state", "no-failover");
    f.add("master_repl_offset", 0);
    f.add("second_repl_offset", -1);
    f.add("repl_backlog_active", 0);
}

/// `getrusage` of the process and of its children.
fn cpu(f: &mut Fields) {
    let usage = |who: i32| {
        // SAFETY: getrusage fills the struct it is given.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        unsafe { libc::getrusage(who, &mut ru) };
        let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
        (secs(ru.ru_stime), secs(ru.ru_utime))
    };
    let (sys, user) = usage(libc::RUSAGE_SELF);
    let (csys, cuser) = usage(libc::RUSAGE_CHILDREN);
    f.add("used_cpu_sys", format!("{sys:.6}"));
    f.add("used_cpu_user", format!("{user:.6}"));
    f.add("used_cpu_sys_children", format!("{csys:.6}"));
    f.add("used_cpu_user_children", format!("{cuser:.6}"));
}

fn commandstats(s: &Server, f: &mut Fields) {
    for (cmd, st) in s.stats.commands_sorted() {
        let per = if st.calls == 0 {
            0.0
        } else {
            st.usec as f64 / st.calls as f64
        };
        f.add(
            &format!("cmdstat_{cmd}"),
            format!(
                "calls={},usec={},usec_per_call={:.2},rejected_calls={},failed_calls={}",
                st.calls, st.usec, per, st.rejected, st.failed
            ),
        );
    }
}

/// p50/p99/p99.9 per command, from the power-of-two histogram (each figure is
/// the upper bound of the bucket the percentile falls in).
fn latencystats(s: &Server, f: &mut Fields) {
    for (cmd, st) in s.stats.commands_sorted() {
        if st.calls == 0 {
            continue;
        }
        let at = |q: f64| {
            let target = (st.calls as f64 * q).ceil() as u64;
            let mut seen = 0;
            for (i, n) in st.histogram.iter().enumerate() {
                seen += n;
                if seen >= target {
                    return (1u64 << i) as f64;
                }
            }
            0.0
        };
        f.add(
            &format!("latency_percentiles_usec_{cmd}"),
            format!(
                "p50={:.3},p99={:.3},p99.9={:.3}",
                at(0.5),
                at(0.99),
                at(0.999)
            ),
        );
    }
}

fn keyspace(s: &Server, f: &mut Fields) {
    for db in 0..DATABASES {
        let ks = s.db(db);
        if !ks.is_empty() || ks.volatile_len() > 0 {
            f.add(
                &format!("db{db}"),
                format!(
                    "keys={},expires={},avg_ttl={},subexpiry={}",
                    ks.len(),
                    ks.volatile_len(),
                    ks.avg_ttl(),
                    ks.subexpires.len()
                ),
            );
        }
    }
}

pub(super) fn human_bytes(n: u64) -> String {
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

#[cfg(test)]
mod tests {
    use crate::{Reply, Server};

    fn text(r: Reply) -> String {
        match r {
            Reply::Verbatim(t) => t,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn sections_follow_redis_selection_rules() {
        let mut s = Server::new();
        let default = text(s.cmd(&["INFO"]));
        assert!(default.contains("redis_version:8.6.3"));
        assert!(default.contains("used_cpu_user:"));
        assert!(!default.contains("rejected_calls"));
        let all = text(s.cmd(&["INFO", "all"]));
        assert!(all.contains("rejected_calls"));
        assert!(all.contains("master_repl_offset"));
        let cpu = text(s.cmd(&["INFO", "cpu", "commandSTATS"]));
        assert!(cpu.contains("used_cpu_user"));
        assert!(!cpu.contains("used_memory"));
        assert!(cpu.contains("cmdstat_info"));
        let twice = text(s.cmd(&["INFO", "cpu", "default"]));
        assert_eq!(twice.matches("used_cpu_user_children").count(), 1);
    }
}
