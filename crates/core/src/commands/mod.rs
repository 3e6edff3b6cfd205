//! The command families: `argv` in, [`Reply`] out, one module per family.
//!
//! Each module registers its rows (name, arity, flags, keys, docs, handler) in a
//! `COMMANDS` table; [`FAMILIES`] lists the tables with the group they document,
//! and [`crate::server::table`] indexes them. The path a command takes before
//! its handler runs (lookup, arity, MULTI, subscribed mode, WATCH, statistics) is
//! [`crate::server::Server::call`]'s; a handler only does the command's own work
//! and returns `Ok(reply)` or `Err(error reply)`.

/// `tri!(expr)`: the value of an `Ok`, or return the `Err` reply from the command
/// (the older handlers' idiom; new handlers use `?`).
#[allow(unused_macros)]
macro_rules! tri {
    ($e:expr) => {
        match $e {
            Ok(v) => v,
            Err(reply) => return reply,
        }
    };
}

mod args;
mod bitfield;
mod bitmap;
mod cluster;
mod connection;
mod counter;
mod debug;
mod dump;
mod functions;
mod generic;
mod geo;
mod geo_search;
mod hash;
mod hll;
mod info;
mod introspection;
mod keys;
mod lcs;
mod list;
mod list_blocking;
mod monitoring;
mod scan;
mod scripting;
mod server_cmds;
mod set;
mod sort;
mod string;
mod string_args;
mod string_value;
mod zset;
mod zset_setops;

pub use crate::server::table::{flags, CmdResult, CommandSpec, Family, Group};
pub use crate::server::{Blocked, Outcome, Server, ACTIVE_EXPIRE_BUDGET, ACTIVE_EXPIRE_PERIOD};
pub use args::Args;

/// Every family's table, with the group its rows belong to.
pub const FAMILIES: &[Family] = &[
    Family {
        group: Group::Connection,
        commands: connection::COMMANDS,
    },
    Family {
        group: Group::Server,
        commands: server_cmds::COMMANDS,
    },
    Family {
        group: Group::Generic,
        commands: generic::COMMANDS,
    },
    Family {
        group: Group::Server,
        commands: debug::COMMANDS,
    },
    Family {
        group: Group::Server,
        commands: monitoring::COMMANDS,
    },
    Family {
        group: Group::SortedSet,
        commands: zset::COMMANDS,
    },
    Family {
        group: Group::SortedSet,
        commands: zset_setops::COMMANDS,
    },
    Family {
        group: Group::Geo,
        commands: geo::COMMANDS,
    },
    Family {
        group: Group::Hash,
        commands: hash::COMMANDS,
    },
    Family {
        group: Group::Server,
        commands: introspection::COMMANDS,
    },
    Family {
        group: Group::Generic,
        commands: introspection::OBJECT_COMMANDS,
    },
    Family {
        group: Group::Generic,
        commands: keys::COMMANDS,
    },
    Family {
        group: Group::Generic,
        commands: scan::COMMANDS,
    },
    Family {
        group: Group::String,
        commands: string::COMMANDS,
    },
    Family {
        group: Group::String,
        commands: counter::COMMANDS,
    },
    Family {
        group: Group::Scripting,
        commands: scripting::COMMANDS,
    },
    Family {
        group: Group::Scripting,
        commands: functions::COMMANDS,
    },
    Family {
        group: Group::Cluster,
        commands: cluster::COMMANDS,
    },
    Family {
        group: Group::Bitmap,
        commands: bitmap::COMMANDS,
    },
    Family {
        group: Group::Bitmap,
        commands: bitfield::COMMANDS,
    },
    Family {
        group: Group::Set,
        commands: set::COMMANDS,
    },
    Family {
        group: Group::HyperLogLog,
        commands: hll::COMMANDS,
    },
    Family {
        group: Group::List,
        commands: list::COMMANDS,
    },
    Family {
        group: Group::List,
        commands: list_blocking::COMMANDS,
    },
    Family {
        group: Group::Generic,
        commands: sort::COMMANDS,
    },
    Family {
        group: Group::Generic,
        commands: dump::COMMANDS,
    },
];

/// The argument positions of a command's keys: the key triple of its row, or
/// the `numkeys` rule of the commands whose keys move (COMMAND GETKEYS).
pub fn keys_of(spec: &CommandSpec, argv: &[Vec<u8>]) -> Vec<usize> {
    let numkeys_at = |i: usize| -> Option<usize> {
        crate::num::parse_i64(argv.get(i)?)
            .filter(|&n| n >= 0)
            .map(|n| n as usize)
    };
    let counted = |at: usize, before: &[usize]| -> Vec<usize> {
        let n = numkeys_at(at).unwrap_or(0);
        let mut keys = before.to_vec();
        keys.extend((at + 1..at + 1 + n).filter(|&i| i < argv.len()));
        keys
    };
    match spec.name {
        "eval" | "evalsha" | "eval_ro" | "evalsha_ro" | "fcall" | "fcall_ro" => counted(2, &[]),
        "zunion" | "zinter" | "zdiff" | "zintercard" | "sintercard" | "zmpop" | "lmpop" => {
            counted(1, &[])
        }
        "bzmpop" | "blmpop" => counted(2, &[]),
        "sort" => sort::sort_keys(argv),
        "zunionstore" | "zinterstore" | "zdiffstore" => counted(2, &[1]),
        _ => {
            let k = spec.keys;
            if k.first <= 0 {
                return Vec::new();
            }
            let last = if k.last < 0 {
                argv.len() as i32 + k.last
            } else {
                k.last
            };
            let step = k.step.max(1) as usize;
            (k.first as usize..=last.max(0) as usize)
                .step_by(step)
                .filter(|&i| i < argv.len())
                .collect()
        }
    }
}
