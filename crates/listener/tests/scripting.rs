//! Scripts through the listener: a script's BZPOPMIN answers at once (Redis does
//! not let scripts block), the article's pop-due script under 10 concurrent
//! clients hands every due job to exactly one of them, and busy scripts and
//! functions answer other clients as Redis does (each KILL stops only its own
//! kind, FUNCTION STATS describes a running function, a killed script cannot
//! catch its kill with pcall, a script that wrote cannot be killed).

use std::collections::HashSet;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use redislab_listener::CoreListener;

mod common;
use common::Raw;

const POP_DUE: &str =
    "local jobs = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, 1)
if #jobs == 0 then return false end
redis.call('ZREM', KEYS[1], jobs[1])
return jobs[1]
";

fn send(stream: &mut TcpStream, args: &[&str]) {
    let mut out = format!("*{}\r\n", args.len());
    for a in args {
        out.push_str(&format!("${}\r\n{a}\r\n", a.len()));
    }
    stream.write_all(out.as_bytes()).unwrap();
}

/// Reads one reply that is a status, integer, error or (nil) bulk string.
fn read_simple(reader: &mut BufReader<TcpStream>) -> String {
    let mut line = String::new();
    reader.read_line(&mut line).unwrap();
    if let Some(len) = line.strip_prefix('$') {
        let len: i64 = len.trim().parse().unwrap();
        if len >= 0 {
            let mut body = vec![0u8; len as usize + 2];
            reader.read_exact(&mut body).unwrap();
            return String::from_utf8_lossy(&body[..len as usize]).into_owned();
        }
        return "(nil)".into();
    }
    line.trim_end().to_string()
}

fn connect(listener: &CoreListener) -> (TcpStream, BufReader<TcpStream>) {
    let s = TcpStream::connect(("127.0.0.1", listener.port())).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let reader = BufReader::new(s.try_clone().unwrap());
    (s, reader)
}

#[test]
fn a_blocking_pop_inside_a_script_does_not_block() {
    let listener = CoreListener::start(0).unwrap();
    let (mut w, mut r) = connect(&listener);
    let started = Instant::now();
    send(
        &mut w,
        &[
            "EVAL",
            "return redis.call('BZPOPMIN', KEYS[1], '0')",
            "1",
            "empty",
        ],
    );
    assert_eq!(read_simple(&mut r), "(nil)");
    send(&mut w, &["PING"]);
    assert_eq!(read_simple(&mut r), "+PONG");
    assert!(started.elapsed() < Duration::from_secs(2));
}

#[test]
fn the_pop_due_script_hands_each_job_to_one_worker() {
    let listener = CoreListener::start(0).unwrap();
    let (mut w, mut r) = connect(&listener);
    for i in 0..300 {
        send(
            &mut w,
            &["ZADD", "queue:delayed", &i.to_string(), &format!("job-{i}")],
        );
        read_simple(&mut r);
    }
    send(&mut w, &["ZADD", "queue:delayed", "999999", "future"]);
    read_simple(&mut r);
    let port = listener.port();
    let workers: Vec<_> = (0..10)
        .map(|_| {
            std::thread::spawn(move || {
                let s = TcpStream::connect(("127.0.0.1", port)).unwrap();
                let mut r = BufReader::new(s.try_clone().unwrap());
                let mut w = s;
                let mut got = Vec::new();
                loop {
                    send(&mut w, &["EVAL", POP_DUE, "1", "queue:delayed", "1000"]);
                    match read_simple(&mut r).as_str() {
                        "(nil)" => return got,
                        job => got.push(job.to_string()),
                    }
                }
            })
        })
        .collect();
    let all: Vec<String> = workers
        .into_iter()
        .flat_map(|h| h.join().unwrap())
        .collect();
    let distinct: HashSet<&String> = all.iter().collect();
    assert_eq!(all.len(), 300, "every due job popped once");
    assert_eq!(distinct.len(), 300, "no job popped twice");
    send(&mut w, &["ZCARD", "queue:delayed"]);
    assert_eq!(read_simple(&mut r), ":1");
}

const BUSY_EVAL: &str =
    "-BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.\r\n";
const BUSY_FUNCTION: &str =
    "-BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE.\r\n";

/// Waits until another client's PING is answered -BUSY.
fn until_busy(other: &mut Raw) -> String {
    let started = Instant::now();
    loop {
        let r = other.call(&["PING"]);
        if r.starts_with("-BUSY") || started.elapsed() > Duration::from_secs(10) {
            return r;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn busy_functions_and_scripts_answer_like_redis() {
    let listener = CoreListener::start(0).unwrap();
    let mut admin = Raw::to(&listener);
    assert_eq!(
        admin.call(&["CONFIG", "SET", "busy-reply-threshold", "100"]),
        "+OK\r\n"
    );
    let lib = "#!lua name=busy\n\
        redis.register_function('spin', function() while true do end end)\n\
        redis.register_function('spinw', function(keys) redis.call('set', keys[1], 'v') while true do end end)";
    assert_eq!(admin.call(&["FUNCTION", "LOAD", lib]), "$4\r\nbusy\r\n");

    // A busy function: SCRIPT KILL refuses, FUNCTION STATS describes it,
    // FUNCTION KILL stops it.
    let mut runner = Raw::to(&listener);
    runner.send(&["FCALL", "spin", "0"]);
    assert_eq!(until_busy(&mut admin), BUSY_FUNCTION);
    assert_eq!(admin.call(&["SCRIPT", "KILL"]), BUSY_FUNCTION);
    let stats = admin.call(&["FUNCTION", "STATS"]);
    assert!(
        stats.starts_with(
            "*4\r\n$14\r\nrunning_script\r\n*6\r\n$4\r\nname\r\n$4\r\nspin\r\n$7\r\ncommand\r\n*3\r\n$5\r\nFCALL\r\n$4\r\nspin\r\n$1\r\n0\r\n$11\r\nduration_ms\r\n:"
        ),
        "{stats}"
    );
    assert!(
        stats.ends_with("$15\r\nlibraries_count\r\n:1\r\n$15\r\nfunctions_count\r\n:2\r\n"),
        "{stats}"
    );
    assert_eq!(admin.call(&["FUNCTION", "KILL"]), "+OK\r\n");
    assert_eq!(
        runner.reply(),
        "-ERR Script killed by user with SCRIPT KILL... script: spin, on @user_function:2.\r\n"
    );
    assert_eq!(admin.call(&["PING"]), "+PONG\r\n");

    // A busy EVAL: FUNCTION KILL and FUNCTION STATS refuse, SCRIPT KILL stops
    // it, even though the script catches errors with pcall.
    runner.send(&[
        "EVAL",
        "local f = function() while 1 do redis.call('ping') end end while 1 do pcall(f) end",
        "0",
    ]);
    assert_eq!(until_busy(&mut admin), BUSY_EVAL);
    assert_eq!(admin.call(&["FUNCTION", "KILL"]), BUSY_EVAL);
    assert_eq!(admin.call(&["FUNCTION", "STATS"]), BUSY_EVAL);
    assert_eq!(admin.call(&["SCRIPT", "KILL"]), "+OK\r\n");
    let killed = runner.reply();
    assert!(
        killed.starts_with("-ERR Script killed by user with SCRIPT KILL... script: "),
        "{killed}"
    );
    assert_eq!(runner.call(&["PING"]), "+PONG\r\n");

    // A function that wrote cannot be killed; SHUTDOWN NOSAVE stops it.
    runner.send(&["FCALL", "spinw", "1", "k"]);
    until_busy(&mut admin);
    assert!(admin
        .call(&["FUNCTION", "KILL"])
        .starts_with("-UNKILLABLE Sorry"));
    assert!(admin
        .call(&["SCRIPT", "KILL"])
        .starts_with("-UNKILLABLE Sorry"));
    admin.send(&["SHUTDOWN", "NOSAVE"]);
    let started = Instant::now();
    while !listener.is_stopped() && started.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        listener.is_stopped(),
        "SHUTDOWN NOSAVE did not stop the core"
    );
}

/// FUNCTION LOAD stops a library's code after 500 ms (the load, not the
/// server, fails), even if the code catches errors.
#[test]
fn a_library_that_loops_at_load_time_is_stopped() {
    let listener = CoreListener::start(0).unwrap();
    let mut c = Raw::to(&listener);
    let started = Instant::now();
    let r = c.call(&[
        "FUNCTION",
        "LOAD",
        "#!lua name=loop\nlocal a = 1 while true do a = a + 1 end",
    ]);
    assert_eq!(
        r,
        "-ERR Error registering functions: ERR FUNCTION LOAD timeout\r\n"
    );
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(c.call(&["FUNCTION", "LIST"]), "*0\r\n");
    assert_eq!(c.call(&["PING"]), "+PONG\r\n");
}

/// Redis's multi.tcl "MULTI/EXEC and script timeout": while a script is busy,
/// MULTI (allow-busy) still runs, a command that gets -BUSY makes the
/// transaction fail at EXEC, and an EXEC refused with -BUSY discards its
/// transaction (the client is out of MULTI afterwards). Before, the listener
/// answered every command -BUSY without the core, so MULTI never started and
/// the later EXEC said "EXEC without MULTI".
#[test]
fn a_transaction_met_by_a_busy_script_never_runs_half_way() {
    let listener = CoreListener::start(0).unwrap();
    let mut admin = Raw::to(&listener);
    assert_eq!(
        admin.call(&["CONFIG", "SET", "busy-reply-threshold", "50"]),
        "+OK\r\n"
    );
    assert_eq!(admin.call(&["SET", "xx", "1"]), "+OK\r\n");
    let mut runner = Raw::to(&listener);
    let mut tx = Raw::to(&listener);
    assert_eq!(tx.call(&["PING"]), "+PONG\r\n");

    // MULTI during the script, a refused INCR, then EXEC after the kill.
    runner.send(&["EVAL", "while true do end", "0"]);
    assert_eq!(until_busy(&mut admin), BUSY_EVAL);
    assert_eq!(tx.call(&["MULTI"]), "+OK\r\n");
    assert_eq!(tx.call(&["INCR", "xx"]), BUSY_EVAL);
    assert_eq!(admin.call(&["SCRIPT", "KILL"]), "+OK\r\n");
    assert!(runner.reply().starts_with("-ERR Script killed"));
    assert_eq!(tx.call(&["INCR", "xx"]), "+QUEUED\r\n");
    assert_eq!(
        tx.call(&["EXEC"]),
        "-EXECABORT Transaction discarded because of previous errors.\r\n"
    );
    assert_eq!(admin.call(&["GET", "xx"]), "$1\r\n1\r\n");

    // A transaction queued before the script, EXEC during it.
    assert_eq!(tx.call(&["MULTI"]), "+OK\r\n");
    assert_eq!(tx.call(&["INCR", "xx"]), "+QUEUED\r\n");
    runner.send(&["EVAL", "while true do end", "0"]);
    assert_eq!(until_busy(&mut admin), BUSY_EVAL);
    assert_eq!(
        tx.call(&["EXEC"]),
        format!(
            "-EXECABORT Transaction discarded because of: {}",
            &BUSY_EVAL[1..]
        )
    );
    assert_eq!(admin.call(&["SCRIPT", "KILL"]), "+OK\r\n");
    assert!(runner.reply().starts_with("-ERR Script killed"));
    assert_eq!(tx.call(&["PING", "asdf"]), "$4\r\nasdf\r\n");
    assert_eq!(admin.call(&["GET", "xx"]), "$1\r\n1\r\n");
}

/// An endless loop inside a coroutine (created, wrapped, behind pcall or
/// xpcall) is still stopped by SCRIPT KILL, and the kill cannot be caught on the
/// way out. Before, the instruction hook was the main thread's only: a coroutine
/// the script made ran unhooked, and such a script held the server for ever
/// (SCRIPT KILL was never even read).
#[test]
fn an_endless_loop_inside_a_coroutine_is_killed_too() {
    let listener = CoreListener::start(0).unwrap();
    let mut admin = Raw::to(&listener);
    assert_eq!(
        admin.call(&["CONFIG", "SET", "busy-reply-threshold", "50"]),
        "+OK\r\n"
    );
    let mut runner = Raw::to(&listener);
    for script in [
        "local co = coroutine.create(function() while true do end end) while true do coroutine.resume(co) end",
        "while true do local f = coroutine.wrap(function() while true do end end) pcall(f) end",
        "while true do xpcall(function() while true do end end, function(e) return e end) end",
        "coroutine.wrap(function() while true do pcall(function() while true do end end) end end)()",
    ] {
        runner.send(&["EVAL", script, "0"]);
        assert_eq!(until_busy(&mut admin), BUSY_EVAL, "{script}");
        assert_eq!(admin.call(&["SCRIPT", "KILL"]), "+OK\r\n", "{script}");
        let killed = runner.reply();
        assert!(
            killed.starts_with("-ERR Script killed by user with SCRIPT KILL..."),
            "{script}: {killed}"
        );
        assert_eq!(runner.call(&["PING"]), "+PONG\r\n");
    }
}

/// A script pipelined behind a blocked command, released by another client's
/// push (which runs on that client's I/O thread), still runs where a busy
/// script can answer the others: they get -BUSY and SCRIPT KILL stops it.
#[test]
fn a_script_released_from_behind_a_blocked_command_still_answers_busy() {
    let listener = CoreListener::start(0).unwrap();
    let mut admin = Raw::to(&listener);
    assert_eq!(
        admin.call(&["CONFIG", "SET", "busy-reply-threshold", "100"]),
        "+OK\r\n"
    );
    let mut waiter = Raw::to(&listener);
    waiter.send(&["BLPOP", "q", "0"]);
    waiter.send(&["EVAL", "while true do end", "0"]);
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(admin.call(&["RPUSH", "q", "x"]), ":1\r\n");
    assert_eq!(waiter.reply(), "*2\r\n$1\r\nq\r\n$1\r\nx\r\n");
    assert_eq!(until_busy(&mut admin), BUSY_EVAL);
    assert_eq!(admin.call(&["SCRIPT", "KILL"]), "+OK\r\n");
    assert!(waiter
        .reply()
        .starts_with("-ERR Script killed by user with SCRIPT KILL"));
    assert_eq!(waiter.call(&["PING"]), "+PONG\r\n");
}

/// The deepest recursion a client can ask for (cjson nesting at Redis's
/// limit of 1,000 levels and one past it, cmsgpack packing 1,000 levels, a
/// script's reply nested 150 deep) is answered and the server stays up, in
/// the default mode where the I/O thread runs a command when the server is
/// free (std's 2 MB stack; the executor thread has 16 MB). Checked in debug
/// builds too, whose frames are larger.
#[test]
fn the_deepest_nesting_a_script_can_ask_for_leaves_the_server_up() {
    let listener = CoreListener::start(0).unwrap();
    let mut c = Raw::to(&listener);
    for script in [
        "return #cjson.encode(cjson.decode(string.rep('[', 999) .. string.rep(']', 999)))",
        "return cjson.decode(string.rep('[', 1001) .. string.rep(']', 1001))",
        "local t = {} local at = t for i = 1, 999 do at[1] = {} at = at[1] end return #cmsgpack.pack(t)",
        "local function deep(n) if n == 0 then return 1 end return {deep(n - 1)} end return deep(150)",
    ] {
        let reply = c.call(&["EVAL", script, "0"]);
        assert!(!reply.is_empty(), "{script}: no reply");
        assert_eq!(c.call(&["PING"]), "+PONG\r\n", "after {script}");
    }
}
