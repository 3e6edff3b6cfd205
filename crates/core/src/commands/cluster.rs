//! `CLUSTER`: the core is one node without cluster support, except for `KEYSLOT`.
//!
//! `CLUSTER KEYSLOT key` is a pure function of the key (CRC16 mod 16384 with hash
//! tags, [`crate::cluster_slot`]), so the core answers it as a cluster-enabled
//! Redis does: that is what lets a lab check the core's slot function against a
//! real cluster. Every other subcommand Redis 8.6.3 knows answers what a Redis
//! started without `cluster-enabled` answers: its arity error when the argument
//! count is wrong, else `ERR This instance has cluster support disabled`. A
//! subcommand Redis does not know gets Redis's unknown-subcommand error. (A
//! non-cluster Redis answers KEYSLOT with the "disabled" error too; the core
//! deliberately does not.)

use super::{unknown_subcommand, Args, CommandSpec, Server};
use crate::cluster_slot::key_slot;
use crate::reply::{errors, Reply};

pub const COMMANDS: &[CommandSpec] = &[CommandSpec::legacy("cluster", -2, cluster)];

/// Redis 8.6.3's CLUSTER subcommands and their arities (from its command table).
const SUBCOMMANDS: &[(&str, i32)] = &[
    ("addslots", -3),
    ("addslotsrange", -4),
    ("bumpepoch", 2),
    ("count-failure-reports", 3),
    ("countkeysinslot", 3),
    ("delslots", -3),
    ("delslotsrange", -4),
    ("failover", -2),
    ("flushslots", 2),
    ("forget", 3),
    ("getkeysinslot", 4),
    ("help", 2),
    ("info", 2),
    ("keyslot", 3),
    ("links", 2),
    ("meet", -4),
    ("migration", -4),
    ("myid", 2),
    ("myshardid", 2),
    ("nodes", 2),
    ("replicas", 3),
    ("replicate", 3),
    ("reset", -2),
    ("saveconfig", 2),
    ("set-config-epoch", 3),
    ("setslot", -4),
    ("shards", 2),
    ("slaves", 3),
    ("slot-stats", -4),
    ("slots", 2),
    ("syncslots", -3),
];

const DISABLED: &str = "ERR This instance has cluster support disabled";

pub fn cluster(_s: &mut Server, a: &Args) -> Reply {
    let Some(&(name, arity)) = SUBCOMMANDS.iter().find(|(name, _)| a.is(1, name)) else {
        return unknown_subcommand(a, "CLUSTER");
    };
    let argc = a.len() as i32;
    if (arity > 0 && argc != arity) || argc < -arity {
        return Reply::error(errors::arity(&format!("cluster|{name}")));
    }
    if name == "keyslot" {
        Reply::Integer(key_slot(a.bytes(2)) as i64)
    } else {
        Reply::error(DISABLED)
    }
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
