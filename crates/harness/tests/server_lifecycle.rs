//! The servers a run starts are really gone afterwards, data directories included.

use redislab_harness::servers::postgres::{self as pgsrv, PgServer};
use redislab_harness::servers::redis::RedisServer;
use redislab_harness::testing::redis_for_test;

fn alive(pid: u32) -> bool {
    // /proc/<pid> disappears once the process has exited and been reaped.
    std::path::Path::new(&format!("/proc/{pid}")).exists()
}

#[test]
fn dropping_a_redis_server_stops_it_and_removes_its_directory() {
    let Some(server): Option<RedisServer> = redis_for_test() else {
        return;
    };
    let pid = server.pid();
    let dir = server.tempdir().to_path_buf();
    assert!(alive(pid) && dir.exists());
    drop(server);
    assert!(!alive(pid), "redis-server {pid} still running");
    assert!(!dir.exists(), "{} left behind", dir.display());
}

#[test]
fn dropping_a_postgres_server_stops_it_and_removes_its_directory() {
    let bin = match pgsrv::binaries() {
        Ok(bin) => bin,
        Err(e) if std::env::var_os("REDISLAB_REQUIRE_SERVERS").is_some() => panic!("{e}"),
        Err(e) => return eprintln!("SKIPPED: {e}"),
    };
    let server = PgServer::start(&bin).expect("postgres starts");
    let pid = server.pid();
    let dir = server.tempdir().to_path_buf();
    let mut client = postgres::Client::connect(&server.url(), postgres::NoTls).unwrap();
    let version: String = client.query_one("SHOW server_version", &[]).unwrap().get(0);
    assert!(version.starts_with("18.4"), "{version}");
    drop(client);
    drop(server);
    assert!(!alive(pid), "postgres {pid} still running");
    assert!(!dir.exists(), "{} left behind", dir.display());
}
