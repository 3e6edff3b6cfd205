//! One way to send a command to the core, a standalone Redis or the cluster, so
//! the period steps are written once.

use redis::Value;
use redislab_harness::{ClusterKv, Kv};

pub trait Node {
    /// The reply, or the server's error text.
    fn cmd(&mut self, args: &[&str]) -> Result<Value, String>;
    /// The reply rendered as a table cell.
    fn reply(&mut self, args: &[&str]) -> String;
}

impl Node for Kv {
    fn cmd(&mut self, args: &[&str]) -> Result<Value, String> {
        Kv::cmd(self, args)
    }
    fn reply(&mut self, args: &[&str]) -> String {
        Kv::reply(self, args)
    }
}

impl Node for ClusterKv {
    fn cmd(&mut self, args: &[&str]) -> Result<Value, String> {
        ClusterKv::cmd(self, args)
    }
    fn reply(&mut self, args: &[&str]) -> String {
        ClusterKv::reply(self, args)
    }
}
