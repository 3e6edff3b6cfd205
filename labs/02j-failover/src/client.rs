//! A client that survives a failover: it asks the Sentinels where the primary is,
//! checks ROLE, and finds it again after any error. A command whose reply never
//! came is reported as such, never retried: the client cannot know whether it ran.

use std::time::{Duration, Instant};

use redis::{Connection, Value};
use redislab_harness::servers::sentinel::MASTER_NAME;

/// What became of one write.
pub enum Outcome<T> {
    /// The primary answered (and, with WAIT, the replica acknowledged).
    Done(T),
    /// The primary answered, but WAIT 1 100 did not confirm it.
    Unconfirmed,
    /// The connection died before the reply: it may or may not have run.
    Unanswered,
}

pub struct Client {
    sentinels: Vec<u16>,
    wait: bool,
    conn: Option<(Connection, Instant)>,
}

fn connect(port: u16) -> Result<Connection, String> {
    let conn = redis::Client::open(format!("redis://127.0.0.1:{port}/"))
        .and_then(|c| c.get_connection_with_timeout(Duration::from_millis(300)))
        .map_err(|e| e.to_string())?;
    conn.set_read_timeout(Some(Duration::from_secs(2)))
        .map_err(|e| e.to_string())?;
    Ok(conn)
}

fn primary(sentinels: &[u16]) -> Result<u16, String> {
    for &port in sentinels {
        let asked = connect(port).and_then(|mut c| {
            redis::cmd("SENTINEL")
                .arg("get-master-addr-by-name")
                .arg(MASTER_NAME)
                .query::<Option<(String, u16)>>(&mut c)
                .map_err(|e| e.to_string())
        });
        if let Ok(Some((_, p))) = asked {
            return Ok(p);
        }
    }
    Err("no Sentinel answered".into())
}

impl Client {
    pub fn new(sentinels: Vec<u16>, wait: bool) -> Client {
        Client {
            sentinels,
            wait,
            conn: None,
        }
    }

    /// A connection to the primary and when it was opened, found again if need be
    /// (retrying every 20 ms until `give_up`).
    fn conn(&mut self, give_up: Instant) -> Result<&mut (Connection, Instant), String> {
        while self.conn.is_none() {
            if Instant::now() > give_up {
                return Err("no primary found in time".into());
            }
            let opened = Instant::now();
            let found = primary(&self.sentinels)
                .and_then(connect)
                .and_then(|mut c| {
                    let role: Vec<Value> = redis::cmd("ROLE")
                        .query(&mut c)
                        .map_err(|e| e.to_string())?;
                    match role.first() {
                        Some(Value::BulkString(r)) if r == b"master" => Ok(c),
                        _ => Err("not a primary yet".into()),
                    }
                });
            match found {
                Ok(c) => self.conn = Some((c, opened)),
                Err(_) => std::thread::sleep(Duration::from_millis(20)),
            }
        }
        Ok(self.conn.as_mut().expect("connected above"))
    }

    /// Sends one write; with WAIT, follows it with `WAIT 1 100`. Returns the
    /// outcome and when the connection it went over was opened.
    pub fn write<T: redis::FromRedisValue>(
        &mut self,
        cmd: &redis::Cmd,
        give_up: Instant,
    ) -> Result<(Outcome<T>, Instant), String> {
        let wait = self.wait;
        let (conn, opened) = self.conn(give_up)?;
        let opened = *opened;
        let reply: Result<T, _> = cmd.query(conn);
        let value = match reply {
            Ok(v) => v,
            Err(e) if e.is_io_error() || e.is_connection_dropped() || e.is_timeout() => {
                self.conn = None;
                return Ok((Outcome::Unanswered, opened));
            }
            // A replica or a loading server refuses writes: not run, try again.
            Err(e) if matches!(e.code(), Some("READONLY" | "LOADING" | "MASTERDOWN")) => {
                self.conn = None;
                return Ok((Outcome::Unanswered, opened));
            }
            Err(e) => return Err(e.to_string()),
        };
        if !wait {
            return Ok((Outcome::Done(value), opened));
        }
        let acked: Result<i64, _> = redis::cmd("WAIT").arg(1).arg(100).query(conn);
        match acked {
            Ok(n) if n >= 1 => Ok((Outcome::Done(value), opened)),
            Ok(_) => Ok((Outcome::Unconfirmed, opened)),
            Err(_) => {
                self.conn = None;
                Ok((Outcome::Unconfirmed, opened))
            }
        }
    }

    /// A read on the current primary (the final counts).
    pub fn read<T: redis::FromRedisValue>(
        &mut self,
        cmd: &redis::Cmd,
        give_up: Instant,
    ) -> Result<T, String> {
        loop {
            let (conn, _) = self.conn(give_up)?;
            match cmd.query(conn) {
                Ok(v) => return Ok(v),
                Err(e) if Instant::now() < give_up => {
                    let _ = e;
                    self.conn = None;
                }
                Err(e) => return Err(e.to_string()),
            }
        }
    }
}
