//! The core's real heap per element for strings, small hashes and small sets,
//! counted by a global allocator around commands sent to an in-process
//! [`Server`] (the figures labs 92e, 02d and 02f report beside Redis's
//! `used_memory`). These tests hold the layout's properties: a string key does
//! not carry a large enum, and a small (listpack-encoded) hash or set keeps its
//! elements in one buffer, not one allocation per field, value or member.
//!
//! `cargo nextest run --release -p redislab-core --test heap_layout
//! --no-capture` prints the figures.

use std::sync::Mutex;

use redislab_core::hash::Hash;
use redislab_core::keyspace::Value;
use redislab_core::set::Set;
use redislab_core::strings::StringValue;
use redislab_core::Server;

#[global_allocator]
static ALLOC: redislab_alloc::CountingAlloc = redislab_alloc::CountingAlloc::new();

/// One measurement at a time (the counters are process-wide).
static SERIAL: Mutex<()> = Mutex::new(());

/// Live (bytes requested, blocks) that running `commands` on a fresh server
/// left behind; the server itself is built and dropped with counting off.
fn kept(commands: &[Vec<Vec<u8>>]) -> (f64, f64) {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let mut server = Server::new();
    // Warm the server's own buffers with one command of the same kind, on a
    // key of its own, so the first measured command does not pay for them.
    let mut warm = commands[0].clone();
    warm[1] = b"warm-up-key".to_vec();
    assert!(!server.run(&warm).is_error());
    let before = ALLOC.snapshot();
    for argv in commands {
        let reply = server.run(argv);
        assert!(!reply.is_error(), "{reply:?}");
    }
    let after = ALLOC.snapshot();
    drop(server);
    let kept = after.since(before);
    (kept.requested as f64, kept.blocks as f64)
}

fn argv(parts: &[String]) -> Vec<Vec<u8>> {
    parts.iter().map(|p| p.clone().into_bytes()).collect()
}

/// Keys per case: enough that the key table's slab and buckets are a small
/// share, few enough to be quick.
const KEYS: usize = 2_000;
const FIELDS: usize = 10;

fn small_hashes() -> Vec<Vec<Vec<u8>>> {
    (0..KEYS)
        .map(|h| {
            let mut cmd = vec!["HSET".to_string(), format!("hs:{h:07}")];
            for f in 0..FIELDS {
                cmd.push(format!("f{f}"));
                cmd.push(format!("{:08}", h * FIELDS + f));
            }
            argv(&cmd)
        })
        .collect()
}

fn small_sets() -> Vec<Vec<Vec<u8>>> {
    (0..KEYS)
        .map(|h| {
            let mut cmd = vec!["SADD".to_string(), format!("ss:{h:07}")];
            for m in 0..FIELDS {
                cmd.push(format!("m:{:08}", h * FIELDS + m));
            }
            argv(&cmd)
        })
        .collect()
}

#[test]
fn sizes_of_the_value_types() {
    let sizes = [
        ("Value", std::mem::size_of::<Value>()),
        ("StringValue", std::mem::size_of::<StringValue>()),
        ("Hash", std::mem::size_of::<Hash>()),
        ("Set", std::mem::size_of::<Set>()),
    ];
    for (name, size) in sizes {
        println!("size_of::<{name}>() = {size}");
    }
    // Every key's entry carries a Value inline in the key table's slab: the
    // large encodings (a dict, a zset, a quicklist) are behind a pointer, so a
    // string key pays for a string, not for the largest type (184 bytes when
    // the hash and set dicts were inline).
    assert!(std::mem::size_of::<Value>() <= 48);
    assert!(std::mem::size_of::<Hash>() <= 48);
    assert!(std::mem::size_of::<Set>() <= 40);
}

#[test]
fn strings_per_key() {
    let cmds: Vec<_> = (0..KEYS)
        .map(|i| {
            argv(&[
                "SET".into(),
                format!("s:{i:08}"),
                format!("{i:08}-0000-4000-8000-000000000000"),
            ])
        })
        .collect();
    let (bytes, blocks) = kept(&cmds);
    println!(
        "string keys: {:.1} B requested, {:.2} blocks per key",
        bytes / KEYS as f64,
        blocks / KEYS as f64
    );
    // The raw value's bytes (36 bytes beside a 10-byte key do not embed);
    // the key sits in its slab slot: nothing else per key.
    assert!(blocks / KEYS as f64 <= 1.01, "{blocks}");
    // The slab entry (key, Value, expiry, LRU), the value and the key
    // table's share: 146.4 B here (154.6 B with the expiry-slot flag a field
    // of its own, 164.6 B with a Vec per key, 172.7 B with an `Option<i64>`
    // deadline, 311.7 B with a 184-byte Value).
    assert!(bytes / (KEYS as f64) < 150.0, "{bytes}");
}

/// A short value (an embstr of up to 30 bytes) is kept inside the entry, and
/// a key of up to 22 bytes inside the slab slot (`inline_bytes::InlineBytes`): such a
/// key costs no allocation of its own (Redis allocates one key object with
/// the value embedded in it; here the slab slot is that object).
#[test]
fn short_strings_per_key() {
    let cmds: Vec<_> = (0..KEYS)
        .map(|i| argv(&["SET".into(), format!("ms:{i:08}"), format!("v{i:09}")]))
        .collect();
    let (bytes, blocks) = kept(&cmds);
    println!(
        "short string keys: {:.1} B requested, {:.2} blocks per key",
        bytes / KEYS as f64,
        blocks / KEYS as f64
    );
    // Only the slab's chunks and the bucket table: 0.00 per key (1.00 when
    // every key was a Vec of its own).
    assert!(blocks / KEYS as f64 <= 0.01, "{blocks}");
    // 102.2 B here (110.4 B with the entry's hash cached, 118.6 B with the
    // expiry-slot flag a field of its own, 137.7 B with the key in a Vec of
    // its own).
    assert!(bytes / (KEYS as f64) < 106.0, "{bytes}");
}

/// A key longer than a slot holds is boxed at exactly its length: one
/// allocation per key, and the bytes read back whole.
#[test]
fn long_keys_take_one_box_each() {
    let key = |i: usize| format!("a-key-longer-than-a-slot:{i:08}");
    let cmds: Vec<_> = (0..KEYS)
        .map(|i| argv(&["SET".into(), key(i), "v".into()]))
        .collect();
    let (_, blocks) = kept(&cmds);
    assert!((blocks / KEYS as f64 - 1.0).abs() <= 0.01, "{blocks}");
    let mut server = Server::new();
    for argv in &cmds {
        server.run(argv);
    }
    let reply = server.run(&argv(&["GET".into(), key(KEYS - 1)]));
    assert_eq!(reply, redislab_core::Reply::bulk(b"v"));
}

#[test]
fn small_hashes_per_field() {
    let (bytes, blocks) = kept(&small_hashes());
    let fields = (KEYS * FIELDS) as f64;
    println!(
        "listpack hashes of {FIELDS} fields: {:.1} B requested per field, {:.2} blocks per hash",
        bytes / fields,
        blocks / KEYS as f64
    );
    // One allocation per hash for all its fields and values (a listpack's
    // one buffer), beside the key's bytes: 2 blocks, not 2 per field.
    assert!(blocks / (KEYS as f64) <= 2.01, "{blocks}");
    // 25.7 B per field here (114.4 B with a Vec per field and value).
    assert!(bytes / fields < 40.0, "{bytes}");
}

#[test]
fn small_sets_per_member() {
    let (bytes, blocks) = kept(&small_sets());
    let members = (KEYS * FIELDS) as f64;
    println!(
        "listpack sets of {FIELDS} members: {:.1} B requested per member, {:.2} blocks per set",
        bytes / members,
        blocks / KEYS as f64
    );
    // The members' buffer and the key: 2 blocks (12 with a Vec per member).
    assert!(blocks / (KEYS as f64) <= 2.01, "{blocks}");
    // 62.1 B per member with a Vec per member.
    assert!(bytes / members < 30.0, "{bytes}");
}

/// A big (hashtable) hash keeps each short field and its short value inside
/// the field's slab entry (as Redis embeds the value in the field's
/// allocation): no allocation per field, where there were two (the field's
/// and the value's vectors) and then one.
#[test]
fn big_hash_fields_allocate_nothing_each() {
    let fields = KEYS;
    let mut cmd = vec!["HSET".to_string(), "big".to_string()];
    for f in 0..fields {
        cmd.push(format!("field:{f:06}"));
        cmd.push(format!("value:{f}"));
    }
    let (bytes, blocks) = kept(&[argv(&cmd)]);
    println!(
        "hashtable hash: {:.1} B requested per field, {:.3} blocks per field",
        bytes / fields as f64,
        blocks / fields as f64
    );
    assert!(blocks / (fields as f64) < 0.01, "{blocks}");
    // 77.9 B per field here (the slab entry, its buckets; 86.1 with the TTL
    // an Option<u64>, 94.3 with the entry's hash cached, 136 with a vector
    // per value).
    assert!(bytes / (fields as f64) < 82.0, "{bytes}");
}
