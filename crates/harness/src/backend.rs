//! The clients a lab talks through.
//!
//! [`Kv`] is one `redis` client type for both the core (through its RESP listener)
//! and a real Redis, so a lab's steps are written once. [`Pg`] is a PostgreSQL
//! client confined to a schema of its own.
//!
//! On a server the harness did not start (`--redis-url`, `--pg-url`) nothing that
//! was there is touched: keys live under a prefix that the run claims atomically
//! and that must be unused when the lab starts; tables live in a schema that must
//! not exist yet. Both are released (keys deleted, schema dropped) when the run
//! ends, however it ends: see [`crate::claims`].

use redis::Value;

use crate::claims::{self, ClaimId};

/// A Redis-protocol backend: `core` or `redis`.
pub struct Kv {
    pub name: &'static str,
    pub version: String,
    url: String,
    prefix: String,
    conn: redis::Connection,
    /// The run's claim on the prefix (a server the harness did not start).
    claim: Option<ClaimId>,
}

/// One field of an `INFO` reply.
pub fn info_field<'a>(info: &'a str, field: &str) -> Option<&'a str> {
    info.lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .map(str::trim)
}

/// The version a server reports in `INFO server`: `redis_version` for Redis, and
/// `valkey <valkey_version>` for Valkey (whose `redis_version` stays at 7.2.4 for
/// clients that test it).
pub fn server_version(info: &str) -> String {
    match info_field(info, "valkey_version") {
        Some(v) => format!("valkey {v}"),
        None => info_field(info, "redis_version")
            .unwrap_or("unknown")
            .to_string(),
    }
}

impl Kv {
    /// Connects to `url`. `prefix` is put in front of every key the lab names
    /// (empty on a server the harness started for this run).
    pub fn connect(name: &'static str, url: &str, prefix: &str) -> Result<Kv, String> {
        let client = redis::Client::open(url).map_err(|e| format!("{name}: bad url {url}: {e}"))?;
        let mut conn = client
            .get_connection()
            .map_err(|e| format!("{name}: cannot connect to {url}: {e}"))?;
        let info: String = redis::cmd("INFO")
            .arg("server")
            .query(&mut conn)
            .map_err(|e| format!("{name}: INFO failed: {}", error_text(&e)))?;
        let version = if name == "core" {
            info_field(&info, "redislab_core_version")
                .unwrap_or("unknown")
                .to_string()
        } else {
            server_version(&info)
        };
        let claim = if prefix.is_empty() {
            None
        } else {
            let id = client_id(&mut conn);
            Some(claims::claim_redis(&mut conn, name, url, prefix, id)?)
        };
        Ok(Kv {
            name,
            version,
            url: url.to_string(),
            prefix: prefix.to_string(),
            conn,
            claim,
        })
    }

    /// The key a lab calls `name`, with this backend's prefix.
    pub fn key(&self, name: &str) -> String {
        format!("{}{name}", self.prefix)
    }

    pub fn url(&self) -> &str {
        &self.url
    }

    /// A new, separate connection to the same server (for concurrent workers). On a
    /// claimed server it is recorded, so an interrupt can cut it off; once the run
    /// is interrupted no new one is given out.
    pub fn new_connection(&self) -> Result<redis::Connection, String> {
        let mut conn = redis::Client::open(self.url.as_str())
            .and_then(|c| c.get_connection())
            .map_err(|e| format!("{}: cannot connect: {e}", self.name))?;
        if let Some(claim) = self.claim {
            let id = client_id(&mut conn);
            claims::add_redis_connection(claim, id).map_err(|e| format!("{}: {e}", self.name))?;
        }
        Ok(conn)
    }

    pub fn conn(&mut self) -> &mut redis::Connection {
        &mut self.conn
    }

    /// Sends one command; a server error comes back as its own text.
    pub fn cmd(&mut self, args: &[&str]) -> Result<Value, String> {
        let mut cmd = redis::cmd(args[0]);
        for a in &args[1..] {
            cmd.arg(*a);
        }
        cmd.query::<Value>(&mut self.conn)
            .map_err(|e| error_text(&e))
    }

    /// Sends one command whose arguments may be any bytes (e.g. `lara\xff`).
    pub fn cmd_bytes(&mut self, args: &[&[u8]]) -> Result<Value, String> {
        let mut cmd = redis::cmd(&String::from_utf8_lossy(args[0]));
        for a in &args[1..] {
            cmd.arg(*a);
        }
        cmd.query::<Value>(&mut self.conn)
            .map_err(|e| error_text(&e))
    }

    /// Sends one command expecting an array, and returns its items as text.
    pub fn items(&mut self, args: &[&[u8]]) -> Result<Vec<String>, String> {
        match self.cmd_bytes(args)? {
            Value::Array(items) => Ok(items.iter().map(render_nested).collect()),
            other => Err(format!("expected an array, got {}", render(&other))),
        }
    }

    /// Sends one command and renders its reply as a table cell: errors as their
    /// text, so a row shows exactly what the server said.
    pub fn reply(&mut self, args: &[&str]) -> String {
        match self.cmd(args) {
            Ok(v) => render(&v),
            Err(e) => e,
        }
    }
}

/// The connection's `CLIENT ID` (None where the server refuses it).
fn client_id(conn: &mut redis::Connection) -> Option<i64> {
    redis::cmd("CLIENT").arg("ID").query(conn).ok()
}

/// The error line exactly as the server sent it (`ERR ...`, `WRONGTYPE ...`).
pub fn error_text(e: &redis::RedisError) -> String {
    match (e.code(), e.detail()) {
        (Some(code), Some(detail)) => format!("{code} {detail}"),
        (Some(code), None) => code.to_string(),
        _ => e.to_string(),
    }
}

/// Renders a reply for a table cell: arrays as space-separated items (nested ones in
/// brackets), nil as `(nil)`, an empty array as `(empty)`.
pub fn render(v: &Value) -> String {
    match v {
        Value::Array(items) if items.is_empty() => "(empty)".into(),
        Value::Array(items) => items
            .iter()
            .map(render_nested)
            .collect::<Vec<_>>()
            .join(" "),
        other => render_nested(other),
    }
}

fn render_nested(v: &Value) -> String {
    match v {
        Value::Nil => "(nil)".into(),
        Value::Int(n) => n.to_string(),
        Value::BulkString(b) => String::from_utf8_lossy(b).into_owned(),
        Value::SimpleString(s) => s.clone(),
        Value::Okay => "OK".into(),
        Value::Double(d) => d.to_string(),
        Value::Boolean(b) => b.to_string(),
        Value::ServerError(e) => match e.details() {
            Some(d) => format!("{} {d}", e.code()),
            None => e.code().to_string(),
        },
        Value::Array(items) | Value::Set(items) => {
            format!(
                "[{}]",
                items
                    .iter()
                    .map(render_nested)
                    .collect::<Vec<_>>()
                    .join(" ")
            )
        }
        other => format!("{other:?}"),
    }
}

/// A PostgreSQL backend, working inside its own schema.
pub struct Pg {
    pub version: String,
    pub schema: String,
    pub client: postgres::Client,
    url: String,
    claim: ClaimId,
}

impl Pg {
    /// Connects and creates the lab's schema, refusing if it already exists (it
    /// would be someone's data, or a previous run's that was not cleaned up).
    pub fn connect(url: &str, lab_id: &str) -> Result<Pg, String> {
        let mut client = postgres::Client::connect(url, postgres::NoTls)
            .map_err(|e| format!("pg: cannot connect to {url}: {e}"))?;
        let version: String = client
            .query_one("SHOW server_version", &[])
            .map_err(|e| format!("pg: {e}"))?
            .get(0);
        let version = version.split_whitespace().next().unwrap_or("").to_string();
        let schema = format!("redislab_{}", lab_id.replace('-', "_"));
        let pid = backend_pid(&mut client)?;
        // Atomic: of two runs, one creates the schema, the other is refused.
        let claim = claims::claim_pg(&mut client, url, &schema, pid)?;
        client
            .batch_execute(&format!("SET search_path TO {schema}, public"))
            .map_err(|e| format!("pg: {}", pg_error_text(&e)))?;
        Ok(Pg {
            version,
            schema,
            client,
            url: url.to_string(),
            claim,
        })
    }

    /// Drops the claim's clean-up: for a server the harness started, which is
    /// thrown away with everything in it.
    pub(crate) fn on_own_server(self) -> Pg {
        claims::forget(self.claim);
        self
    }

    /// A new, separate connection working in the lab's schema (for concurrent
    /// workers). It is recorded, so an interrupt can terminate it; once the run is
    /// interrupted no new one is given out.
    pub fn new_client(&self) -> Result<postgres::Client, String> {
        let mut client = postgres::Client::connect(&self.url, postgres::NoTls)
            .map_err(|e| format!("pg: cannot connect to {}: {e}", self.url))?;
        let pid = backend_pid(&mut client)?;
        claims::add_pg_client(self.claim, pid).map_err(|e| format!("pg: {e}"))?;
        client
            .batch_execute(&format!("SET search_path TO {}, public", self.schema))
            .map_err(|e| format!("pg: {}", pg_error_text(&e)))?;
        Ok(client)
    }

    /// Runs statements whose result does not matter; an error is returned as text.
    pub fn exec(&mut self, sql: &str) -> Result<(), String> {
        self.client
            .batch_execute(sql)
            .map_err(|e| format!("pg: {}", pg_error_text(&e)))
    }

    /// Runs a query and returns every row's first column as text.
    pub fn rows(&mut self, sql: &str) -> Result<Vec<String>, String> {
        let messages = self
            .client
            .simple_query(sql)
            .map_err(|e| pg_error_text(&e))?;
        Ok(messages
            .iter()
            .filter_map(|m| match m {
                postgres::SimpleQueryMessage::Row(r) => {
                    Some(r.get(0).unwrap_or("NULL").to_string())
                }
                _ => None,
            })
            .collect())
    }

    /// Runs a query and renders every row's first column, space-separated; a
    /// database error comes back as its message.
    pub fn column(&mut self, sql: &str) -> String {
        match self.client.simple_query(sql) {
            Ok(messages) => messages
                .iter()
                .filter_map(|m| match m {
                    postgres::SimpleQueryMessage::Row(r) => {
                        Some(r.get(0).unwrap_or("NULL").to_string())
                    }
                    _ => None,
                })
                .collect::<Vec<_>>()
                .join(" "),
            Err(e) => pg_error_text(&e),
        }
    }
}

fn backend_pid(client: &mut postgres::Client) -> Result<i32, String> {
    client
        .query_one("SELECT pg_backend_pid()", &[])
        .map(|row| row.get(0))
        .map_err(|e| format!("pg: {}", pg_error_text(&e)))
}

/// A database error as PostgreSQL words it: `ERROR: message`.
pub fn pg_error_text(e: &postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => format!("{}: {}", db.severity(), db.message()),
        None => e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::{info_field, server_version};
    use crate::lab::server_display_name;

    #[test]
    fn valkey_is_named_by_its_own_version_not_its_redis_compatible_one() {
        let valkey =
            "# Server\r\nredis_version:7.2.4\r\nserver_name:valkey\r\nvalkey_version:9.1.2\r\n";
        assert_eq!(server_version(valkey), "valkey 9.1.2");
        assert_eq!(server_display_name(&server_version(valkey)), "Valkey 9.1.2");
        let redis = "# Server\r\nredis_version:8.6.3\r\nredis_git_sha1:00000000\r\n";
        assert_eq!(server_version(redis), "8.6.3");
        assert_eq!(server_display_name("8.6.3"), "Redis 8.6.3");
        // A field is matched whole: redis_version is not redis_version_extra.
        assert_eq!(
            info_field(
                "redis_version_extra:x\r\nredis_version:7.0.15\r\n",
                "redis_version"
            ),
            Some("7.0.15")
        );
        assert_eq!(server_version("# Server\r\n"), "unknown");
    }
}
