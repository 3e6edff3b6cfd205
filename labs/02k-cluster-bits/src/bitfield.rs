//! BITFIELD works on a cluster as on one node: it takes one key, so it is routed
//! to the node serving that key's slot and never meets CROSSSLOT. (The article's
//! 40-lessons progress cells, §3.6: u7 at `#(student*40+lesson)`.)

use redislab_harness::Recorder;

use crate::target::Target;

pub fn run(t: &mut Target, rec: &mut Recorder) -> Result<(), String> {
    let key = t.key("progress:course-7");
    let mut cmd = redis::cmd("BITFIELD");
    // Student 3, lessons 0 and 1: 100 and 120; +10 on lesson 1 saturates at 127.
    cmd.arg(&key)
        .arg(&["SET", "u7", "#120", "100"][..])
        .arg(&["SET", "u7", "#121", "120"][..])
        .arg(&["OVERFLOW", "SAT", "INCRBY", "u7", "#121", "10"][..])
        .arg(&["GET", "u7", "#120"][..]);
    rec.put("bitfield", t.reply(&cmd));
    let mut ro = redis::cmd("BITFIELD_RO");
    ro.arg(&key).arg(&["GET", "u7", "#121"][..]);
    rec.put("bitfield-ro", t.reply(&ro));
    rec.put("bitfield-strlen", t.reply(redis::cmd("STRLEN").arg(&key)));
    match t.node_of(&key)? {
        Some(node) => rec.put("bitfield-node", node),
        None => rec.put(
            "bitfield-node",
            redislab_harness::Cell::skipped("not a cluster: one node"),
        ),
    }
    Ok(())
}
