//! The HyperLogLog and bitmap commands that edit or read a sketch in place
//! allocate no more than a GET does once their keys exist: PFCOUNT of a cached
//! dense key (no decoding, no copy of the 12 KB registers), PFCOUNT and PFMERGE
//! of ten dense keys (the registers on the stack, the sources read where they
//! are stored, dest rewritten in place), PFADD to a dense key, SETBIT inside an
//! existing bitmap; and SET of a short value, GET, GETEX and MGET of a
//! counter (an int-encoded string), and HGET of a short field value in
//! every hash encoding, allocate nothing at all; INCRBYFLOAT and
//! HINCRBYFLOAT allocate the value they store.
//! Counted with a global allocator over this test binary, through the whole
//! command path (`Server::run`).

use redislab_core::Server;

#[global_allocator]
static GLOBAL: redislab_alloc::CountingAlloc = redislab_alloc::CountingAlloc::new();

/// The counter is the whole process's: tests of this file run one at a time
/// (under `cargo test` they share the process; under nextest each has its own).
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

fn argv(words: &[&str]) -> Vec<Vec<u8>> {
    words.iter().map(|w| w.as_bytes().to_vec()).collect()
}

/// Allocations per call over `rounds` calls of `cmds` in turn (after one
/// unmeasured pass), replies dropped: the least of three counts, since the
/// counter is the process's and, under `cargo test`, the harness's own thread
/// allocates now and then (reporting the test that just ended), which only
/// ever adds.
fn per_call(s: &mut Server, cmds: &[Vec<Vec<u8>>], rounds: usize) -> f64 {
    for c in cmds {
        assert!(!s.run(c).is_error(), "{c:?}");
    }
    (0..3)
        .map(|_| {
            let before = GLOBAL.calls();
            for i in 0..rounds {
                drop(s.run(&cmds[i % cmds.len()]));
            }
            (GLOBAL.calls() - before) as f64 / rounds as f64
        })
        .fold(f64::INFINITY, f64::min)
}

#[test]
fn in_place_hll_and_bit_commands_allocate_no_more_than_get() {
    let _serial = one_at_a_time();
    let mut s = Server::new();
    // The commands' own allocations: a call that a loaded machine (or this
    // unoptimised build) keeps past the slowlog's 10 ms would add its entry,
    // which made the PFMERGE case fail now and then beside a parallel build.
    s.run(&argv(&["CONFIG", "SET", "slowlog-log-slower-than", "-1"]));
    s.run(&argv(&["SET", "str", "value"]));
    for k in 0..10 {
        let mut cmd = argv(&["PFADD", &format!("d{k}")]);
        cmd.extend((0..5_000).map(|j| format!("v:{k}:{j}").into_bytes()));
        s.run(&cmd);
        assert_eq!(
            s.run(&argv(&["PFDEBUG", "ENCODING", &format!("d{k}")])),
            redislab_core::Reply::Status("dense".into())
        );
    }
    s.run(&argv(&["PFMERGE", "dest", "d0"]));
    s.run(&argv(&["SETBIT", "bits", "131071", "1"]));
    let get = per_call(&mut s, &[argv(&["GET", "str"])], 1_000);
    let ten: Vec<String> = (0..10).map(|k| format!("d{k}")).collect();
    let ten: Vec<&str> = ten.iter().map(String::as_str).collect();
    let pfcount10 = [["PFCOUNT"].as_slice(), &ten].concat();
    let pfmerge10 = [["PFMERGE", "dest"].as_slice(), &ten].concat();
    let cases: Vec<(&str, Vec<Vec<Vec<u8>>>)> = vec![
        ("PFCOUNT cached", vec![argv(&["PFCOUNT", "d1"])]),
        ("PFCOUNT of 10", vec![argv(&pfcount10)]),
        ("PFMERGE of 10", vec![argv(&pfmerge10)]),
        (
            "PFADD dense",
            (0..64)
                .map(|i| argv(&["PFADD", "d2", &format!("x:{i}")]))
                .collect(),
        ),
        (
            "SETBIT",
            (0..64)
                .map(|i| argv(&["SETBIT", "bits", &(i * 997).to_string(), "1"]))
                .collect(),
        ),
    ];
    for (name, cmds) in cases {
        let n = per_call(&mut s, &cmds, 500);
        assert!(n <= get, "{name}: {n} allocations per call, GET {get}");
    }
}

/// SET of a short value over an existing key builds the stored embstr
/// straight from the argument: the only allocation is none at all (the
/// `+OK` reply is borrowed), where a vector was made and freed per call.
#[test]
fn set_of_a_short_value_allocates_nothing() {
    let _serial = one_at_a_time();
    let mut s = Server::new();
    let cmds: Vec<Vec<Vec<u8>>> = (0..16)
        .map(|i| argv(&["SET", &format!("k{i}"), &format!("value-{i}")]))
        .collect();
    assert_eq!(per_call(&mut s, &cmds, 1_000), 0.0);
    // A value past the embstr limit is a raw string: its one allocation.
    let long = "x".repeat(100);
    let raw = per_call(&mut s, &[argv(&["SET", "long", &long])], 100);
    assert!((raw - 1.0).abs() < 0.01, "{raw}");
}

/// GET of a counter prints its integer into the reply, as Redis's
/// `addReplyBulk` prints it into the client's buffer: no allocation, where
/// a `String` was made and dropped for each one. GETEX and MGET the same.
#[test]
fn get_of_a_counter_allocates_nothing() {
    let _serial = one_at_a_time();
    let mut s = Server::new();
    s.run(&argv(&["CONFIG", "SET", "slowlog-log-slower-than", "-1"]));
    for (key, by) in [("hits", "42"), ("debt", "-9223372036854775808")] {
        s.run(&argv(&["INCRBY", key, by]));
        assert_eq!(
            s.run(&argv(&["OBJECT", "ENCODING", key])),
            redislab_core::Reply::bulk("int")
        );
    }
    assert_eq!(
        s.run(&argv(&["GET", "debt"])),
        redislab_core::Reply::bulk("-9223372036854775808")
    );
    let cmds = vec![
        argv(&["GET", "hits"]),
        argv(&["GET", "debt"]),
        argv(&["GETEX", "hits"]),
        argv(&["MGET", "hits", "debt"]),
    ];
    // MGET's reply is an array: one allocation for the array itself.
    let n = per_call(&mut s, &cmds, 1_000);
    assert!(n <= 0.25 + 1e-9, "{n} allocations per call");
}

/// HGET keeps a short value inside its reply, in a listpack hash, a hash
/// with field TTLs (listpackex) and a hashtable: no allocation (one per call
/// before, the value copied into a vector of its own).
#[test]
fn hget_of_a_short_value_allocates_nothing() {
    let _serial = one_at_a_time();
    let mut s = Server::new();
    s.run(&argv(&["CONFIG", "SET", "slowlog-log-slower-than", "-1"]));
    s.run(&argv(&["HSET", "small", "f", "1.5"]));
    s.run(&argv(&["HSET", "ttl", "f", "value", "g", "other"]));
    s.run(&argv(&["HEXPIRE", "ttl", "3600", "FIELDS", "1", "g"]));
    let mut big = argv(&["HSET", "big"]);
    for i in 0..1_000 {
        big.push(format!("field:{i}").into_bytes());
        big.push(format!("value:{i}").into_bytes());
    }
    s.run(&big);
    for (key, encoding) in [
        ("small", "listpack"),
        ("ttl", "listpackex"),
        ("big", "hashtable"),
    ] {
        assert_eq!(
            s.run(&argv(&["OBJECT", "ENCODING", key])),
            redislab_core::Reply::bulk(encoding)
        );
    }
    assert_eq!(
        s.run(&argv(&["HGET", "big", "field:7"])),
        redislab_core::Reply::bulk("value:7")
    );
    let cmds = vec![
        argv(&["HGET", "small", "f"]),
        argv(&["HGET", "ttl", "f"]),
        argv(&["HGET", "big", "field:7"]),
        argv(&["HSTRLEN", "big", "field:7"]),
        argv(&["HEXISTS", "ttl", "g"]),
    ];
    assert_eq!(per_call(&mut s, &cmds, 1_000), 0.0);
}

/// INCRBYFLOAT (and HINCRBYFLOAT) read their operands and print the sum on
/// the stack: what they allocate is the value they store (Redis makes that
/// one object too). HINCRBY into a listpack allocates nothing. Eight allocations per INCRBYFLOAT before (a lower-cased
/// copy of each operand, APFloat's decimal conversion, the big-integer
/// digits and the trimmed copy of the text), ten per HINCRBYFLOAT.
#[test]
fn incrbyfloat_allocates_only_the_value_it_stores() {
    let _serial = one_at_a_time();
    let mut s = Server::new();
    s.run(&argv(&["CONFIG", "SET", "slowlog-log-slower-than", "-1"]));
    s.run(&argv(&["SET", "price", "10.5"]));
    s.run(&argv(&["HSET", "prices", "tea", "3.25"]));
    let incr = per_call(&mut s, &[argv(&["INCRBYFLOAT", "price", "0.5"])], 1_000);
    let hincr = per_call(
        &mut s,
        &[argv(&["HINCRBYFLOAT", "prices", "tea", "0.5"])],
        1_000,
    );
    s.run(&argv(&["HSET", "stock", "tea", "7"]));
    let hincrby = per_call(&mut s, &[argv(&["HINCRBY", "stock", "tea", "3"])], 1_000);
    // 3,001 exact additions of 0.5 (a sum like 0.1's grows a long tail of
    // digits, which a longer stored value allocates for, as Redis's would).
    assert_eq!(
        s.run(&argv(&["GET", "price"])),
        redislab_core::Reply::bulk("1511")
    );
    assert_eq!(
        s.run(&argv(&["HGET", "prices", "tea"])),
        redislab_core::Reply::bulk("1503.75")
    );
    // Within 1%: the hash's listpack is reallocated when the value grows a
    // digit (as Redis's lpReplace reallocates it), and under `cargo test` the
    // harness's own thread may allocate during the count.
    assert!(incr <= 1.01, "INCRBYFLOAT: {incr} allocations per call");
    assert!(hincr <= 1.01, "HINCRBYFLOAT: {hincr} allocations per call");
    // HINCRBY rewrites the field's digits inside the listpack: nothing but the
    // listpack's growth by a digit now and then (its result was printed into
    // a String first).
    assert!(hincrby <= 0.01, "HINCRBY: {hincrby} allocations per call");
    assert_eq!(
        s.run(&argv(&["HGET", "stock", "tea"])),
        redislab_core::Reply::bulk("9010")
    );
}
