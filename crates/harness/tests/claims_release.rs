//! Releasing a claim from two threads at once — the lab's main thread finishing its
//! run while the SIGINT/SIGTERM handler undoes it — releases it once and reports
//! no problem. (CI once saw the handler read the schema's comment, the main thread
//! drop the schema, and the handler's own `DROP SCHEMA` then fail with "does not
//! exist": the run exited 130 saying its clean-up was incomplete.)

use std::sync::{Arc, Barrier};

use redislab_harness::claims;
use redislab_harness::testing::pg_for_test;

#[test]
fn two_threads_releasing_one_pg_claim_together_both_succeed() {
    let Some(pg) = pg_for_test() else { return };
    let url = pg.url();
    let mut client = postgres::Client::connect(&url, postgres::NoTls).expect("connect");
    let pid: i32 = client
        .query_one("SELECT pg_backend_pid()", &[])
        .expect("pid")
        .get(0);
    for round in 0..40 {
        let schema = format!("redislab_release_race_{round}");
        claims::claim_pg(&mut client, &url, &schema, pid).expect("claim");
        let start = Arc::new(Barrier::new(2));
        let releasers: Vec<_> = (0..2)
            .map(|_| {
                let start = Arc::clone(&start);
                std::thread::spawn(move || {
                    start.wait();
                    claims::release_all()
                })
            })
            .collect();
        for releaser in releasers {
            let problems = releaser.join().expect("a releasing thread panicked");
            assert!(problems.is_empty(), "round {round}: {problems:?}");
        }
        let left: i64 = client
            .query_one(
                "SELECT count(*) FROM pg_namespace WHERE nspname = $1",
                &[&schema],
            )
            .expect("count")
            .get(0);
        assert_eq!(left, 0, "round {round}: the schema is still there");
    }
}
