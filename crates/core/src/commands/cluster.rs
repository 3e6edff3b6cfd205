//! `CLUSTER`: the core is one node without cluster support, except for `KEYSLOT`.
//!
//! `CLUSTER KEYSLOT key` is a pure function of the key (CRC16 mod 16384 with hash
//! tags, [`crate::cluster_slot`]), so the core answers it as a cluster-enabled
//! Redis does: that is what lets a lab check the core's slot function against a
//! real cluster. Every other subcommand of Redis 8.6.3 is a row of the container
//! with Redis's arity and flags (so the command path answers a wrong argument
//! count with `wrong number of arguments for 'cluster|<sub>' command`, and an
//! unknown subcommand with `unknown subcommand ... Try CLUSTER HELP.`), and
//! answers what a Redis started without `cluster-enabled` answers: `ERR This
//! instance has cluster support disabled`. (A non-cluster Redis answers KEYSLOT
//! with that error too; the core deliberately does not.)

use super::{flags::*, Args, CmdResult, CommandSpec, Group, Server};
use crate::cluster_slot::key_slot;
use crate::reply::Reply;

pub const COMMANDS: &[CommandSpec] = &[CommandSpec::container("cluster", SUBCOMMANDS).doc(
    "3.0.0",
    "A container for Redis Cluster commands.",
    "",
)];

/// Flags most cluster-changing subcommands carry.
const CHANGES: u32 = NO_ASYNC_LOADING | ADMIN | STALE;

/// One subcommand the core answers as a non-cluster Redis.
const fn disabled(
    name: &'static str,
    arity: i32,
    flags: u32,
    since: &'static str,
    summary: &'static str,
    syntax: &'static str,
) -> CommandSpec {
    CommandSpec::new(name, arity, disabled_reply)
        .flags(flags)
        .group(Group::Cluster)
        .doc(since, summary, syntax)
}

const SUBCOMMANDS: &[CommandSpec] = &[
    CommandSpec::new("keyslot", 3, keyslot)
        .flags(STALE)
        .group(Group::Cluster)
        .doc("3.0.0", "Answers the hash slot of a key.", "key"),
    disabled(
        "addslots",
        -3,
        CHANGES,
        "3.0.0",
        "Assigns hash slots to this node.",
        "slot [slot ...]",
    ),
    disabled(
        "addslotsrange",
        -4,
        CHANGES,
        "7.0.0",
        "Assigns ranges of hash slots to this node.",
        "start-slot end-slot [start-slot end-slot ...]",
    ),
    disabled(
        "bumpepoch",
        2,
        CHANGES,
        "3.0.0",
        "Moves this node to a new configuration epoch.",
        "",
    ),
    disabled(
        "count-failure-reports",
        3,
        ADMIN | STALE,
        "3.0.0",
        "Counts the failure reports about a node.",
        "node-id",
    ),
    disabled(
        "countkeysinslot",
        3,
        STALE,
        "3.0.0",
        "Counts the keys in a hash slot.",
        "slot",
    ),
    disabled(
        "delslots",
        -3,
        CHANGES,
        "3.0.0",
        "Takes hash slots away from this node.",
        "slot [slot ...]",
    ),
    disabled(
        "delslotsrange",
        -4,
        CHANGES,
        "7.0.0",
        "Takes ranges of hash slots away from this node.",
        "start-slot end-slot [start-slot end-slot ...]",
    ),
    disabled(
        "failover",
        -2,
        CHANGES,
        "3.0.0",
        "Makes a replica take over from its master.",
        "[FORCE | TAKEOVER]",
    ),
    disabled(
        "flushslots",
        2,
        CHANGES,
        "3.0.0",
        "Takes every hash slot away from this node.",
        "",
    ),
    disabled(
        "forget",
        3,
        CHANGES,
        "3.0.0",
        "Removes a node from this node's view of the cluster.",
        "node-id",
    ),
    disabled(
        "getkeysinslot",
        4,
        STALE,
        "3.0.0",
        "Lists some keys of a hash slot.",
        "slot count",
    ),
    disabled(
        "help",
        2,
        LOADING | STALE,
        "5.0.0",
        "Lists the CLUSTER subcommands.",
        "",
    ),
    disabled(
        "info",
        2,
        STALE,
        "3.0.0",
        "Answers the state of the cluster.",
        "",
    ),
    disabled(
        "links",
        2,
        STALE,
        "7.0.0",
        "Lists this node's links to its peers.",
        "",
    ),
    disabled(
        "meet",
        -4,
        CHANGES,
        "3.0.0",
        "Connects this node to another one.",
        "ip port [cluster-bus-port]",
    ),
    disabled(
        "migration",
        -4,
        CHANGES,
        "8.4.0",
        "Starts, cancels or reports slot migrations.",
        "<IMPORT start-slot end-slot [start-slot end-slot ...] | CANCEL <ID task-id | ALL> | \
         STATUS <[ID task-id] | [ALL]>>",
    ),
    disabled("myid", 2, STALE, "3.0.0", "Answers this node's id.", ""),
    disabled(
        "myshardid",
        2,
        STALE,
        "7.2.0",
        "Answers this node's shard id.",
        "",
    ),
    disabled(
        "nodes",
        2,
        STALE,
        "3.0.0",
        "Describes every node of the cluster.",
        "",
    ),
    disabled(
        "replicas",
        3,
        ADMIN | STALE,
        "5.0.0",
        "Lists the replicas of a master.",
        "node-id",
    ),
    disabled(
        "replicate",
        3,
        CHANGES,
        "3.0.0",
        "Makes this node a replica of a master.",
        "node-id",
    ),
    disabled(
        "reset",
        -2,
        ADMIN | STALE | NOSCRIPT,
        "3.0.0",
        "Forgets the cluster and starts afresh.",
        "[HARD | SOFT]",
    ),
    disabled(
        "saveconfig",
        2,
        CHANGES,
        "3.0.0",
        "Writes the cluster configuration to disk.",
        "",
    ),
    disabled(
        "set-config-epoch",
        3,
        CHANGES,
        "3.0.0",
        "Sets the configuration epoch of a new node.",
        "config-epoch",
    ),
    disabled(
        "setslot",
        -4,
        CHANGES,
        "3.0.0",
        "Changes the state of a hash slot on this node.",
        "slot <IMPORTING node-id | MIGRATING node-id | NODE node-id | STABLE>",
    ),
    disabled(
        "shards",
        2,
        LOADING | STALE,
        "7.0.0",
        "Describes the shards of the cluster.",
        "",
    ),
    disabled(
        "slaves",
        3,
        ADMIN | STALE,
        "3.0.0",
        "Lists the replicas of a master (old name of REPLICAS).",
        "node-id",
    ),
    disabled(
        "slot-stats",
        -4,
        STALE | LOADING,
        "8.2.0",
        "Answers per-slot usage statistics.",
        "<SLOTSRANGE start-slot end-slot | ORDERBY metric [LIMIT limit] [ASC | DESC]>",
    ),
    disabled(
        "slots",
        2,
        LOADING | STALE,
        "3.0.0",
        "Maps hash slot ranges to nodes.",
        "",
    ),
    disabled(
        "syncslots",
        -3,
        CHANGES,
        "8.4.0",
        "Internal steps of a slot migration between nodes.",
        "<SYNC task-id start-slot end-slot [start-slot end-slot ...] | RDBCHANNEL task-id | \
         SNAPSHOT-EOF | STREAM-EOF | ACK state offset | FAIL error | \
         CONF option [option ...] value [value ...]>",
    ),
];

fn keyslot(_s: &mut Server, a: &Args) -> CmdResult {
    Ok(Reply::Integer(i64::from(key_slot(a.bytes(2)))))
}

fn disabled_reply(_s: &mut Server, _a: &Args) -> CmdResult {
    Err(Reply::error(
        "ERR This instance has cluster support disabled",
    ))
}

#[cfg(test)]
mod tests {
    use crate::{Reply, Server};

    #[test]
    fn keyslot_answers_like_a_cluster_node() {
        let mut s = Server::new();
        assert_eq!(s.cmd(&["CLUSTER", "KEYSLOT", "foo"]), Reply::Integer(12182));
        assert_eq!(
            s.cmd(&["cluster", "keyslot", "leaderboard:{global}:all"]),
            Reply::Integer(10408)
        );
        assert_eq!(s.cmd(&["CLUSTER", "KEYSLOT", ""]), Reply::Integer(0));
    }

    #[test]
    fn other_subcommands_answer_like_a_non_cluster_redis() {
        let mut s = Server::new();
        let err = |t: &str| Reply::error(t);
        assert_eq!(
            s.cmd(&["CLUSTER", "INFO"]),
            err("ERR This instance has cluster support disabled")
        );
        assert_eq!(
            s.cmd(&["CLUSTER", "SLOT-STATS", "SLOTSRANGE", "0", "1"]),
            err("ERR This instance has cluster support disabled")
        );
        assert_eq!(
            s.cmd(&["CLUSTER", "KEYSLOT"]),
            err("ERR wrong number of arguments for 'cluster|keyslot' command")
        );
        assert_eq!(
            s.cmd(&["CLUSTER", "INFO", "x"]),
            err("ERR wrong number of arguments for 'cluster|info' command")
        );
        assert_eq!(
            s.cmd(&["CLUSTER", "FOO"]),
            err("ERR unknown subcommand 'FOO'. Try CLUSTER HELP.")
        );
        assert_eq!(
            s.cmd(&["CLUSTER"]),
            err("ERR wrong number of arguments for 'cluster' command")
        );
    }
}
