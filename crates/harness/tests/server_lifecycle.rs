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

#[test]
fn a_cluster_starts_serves_and_stops_without_leaving_a_process() {
    use redislab_harness::servers::cluster::RedisCluster;
    use redislab_harness::servers::redis as redissrv;
    let bin = match redissrv::binaries() {
        Ok(bin) => bin,
        Err(e) if std::env::var_os("REDISLAB_REQUIRE_SERVERS").is_some() => panic!("{e}"),
        Err(e) => return eprintln!("SKIPPED: {e}"),
    };
    let cluster = RedisCluster::start(&bin, 3).expect("the cluster starts");
    let pids = cluster.pids();
    let dirs = cluster.tempdirs();
    assert_eq!(pids.len(), 3);
    assert!(pids.iter().all(|&p| alive(p)) && dirs.iter().all(|d| d.exists()));
    // Every node says the cluster is ok, and a cluster-aware client can use it.
    for url in cluster.urls() {
        let mut c = redis::Client::open(url.as_str())
            .unwrap()
            .get_connection()
            .unwrap();
        let info: String = redis::cmd("CLUSTER").arg("INFO").query(&mut c).unwrap();
        assert!(info.contains("cluster_state:ok"), "{info}");
    }
    let mut conn = cluster.client().unwrap().get_connection().unwrap();
    for i in 0..30 {
        let _: () = redis::cmd("SET")
            .arg(format!("k{i}"))
            .arg(i)
            .query(&mut conn)
            .unwrap();
    }
    let v: i64 = redis::cmd("GET").arg("k17").query(&mut conn).unwrap();
    assert_eq!(v, 17);
    drop(conn);
    drop(cluster);
    for pid in pids {
        assert!(!alive(pid), "cluster node {pid} still running");
    }
    for dir in dirs {
        assert!(!dir.exists(), "{} left behind", dir.display());
    }
}
