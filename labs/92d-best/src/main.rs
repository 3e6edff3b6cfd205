//! 92d-best — personal bests with ZADD GT, best times with LT.
//!
//! Article 92, "personal best": GT updates only upward (atomic, no script), LT only
//! downward (racing times), GT on a member that does not exist yet adds it (there
//! is nothing to compare with), and GT with NX is refused by the server.

use std::process::ExitCode;

use redislab_harness::{run, Kv, LabInfo, Recorder};

const LAB: LabInfo = LabInfo {
    id: "92d-best",
    uses_pg: false,
};

fn main() -> ExitCode {
    run(LAB, |ctx| {
        let r = &mut ctx.report;
        for (key, label) in [
            (
                "plays",
                "record_score(u1, 80 / 95 / 70): current after each play",
            ),
            ("best", "… best after each play (ZADD best GT)"),
            (
                "gt-reply",
                "ZADD best GT 60 u1 / ZADD best GT CH 99 u1 (replies)",
            ),
            (
                "gt-new",
                "ZADD best GT 10 newcomer; ZSCORE (GT adds a new member)",
            ),
            (
                "lt-times",
                "best time, ZADD laps LT: 62.5, 61.2, 63.0 → ZSCORE after each",
            ),
            ("gt-nx", "ZADD best GT NX 1 u1"),
            ("gt-lt", "ZADD best GT LT 1 u1"),
            (
                "xx-gt",
                "ZADD best XX GT 200 ghost (XX with GT is allowed; no such member)",
            ),
        ] {
            r.row(key, label, redislab_harness::Kind::Exact, None);
        }
        ctx.each_kv(best)?;
        ctx.note("The article: GT/LT do not work together with NX, and GT on a member that does not exist adds it (nothing to compare with) — both shown above with the servers' own answers.");
        Ok(())
    })
}

fn best(kv: &mut Kv, rec: &mut Recorder) -> Result<(), String> {
    let (current, best) = (kv.key("current"), kv.key("best"));
    let (mut currents, mut bests) = (Vec::new(), Vec::new());
    for score in ["80", "95", "70"] {
        kv.cmd(&["ZADD", &current, score, "u1"])?;
        kv.cmd(&["ZADD", &best, "GT", score, "u1"])?;
        currents.push(kv.reply(&["ZSCORE", &current, "u1"]));
        bests.push(kv.reply(&["ZSCORE", &best, "u1"]));
    }
    rec.put("plays", currents.join(" / "));
    rec.put("best", bests.join(" / "));
    let a = kv.reply(&["ZADD", &best, "GT", "60", "u1"]);
    let b = kv.reply(&["ZADD", &best, "GT", "CH", "99", "u1"]);
    rec.put("gt-reply", format!("{a} / {b}"));
    kv.cmd(&["ZADD", &best, "GT", "10", "newcomer"])?;
    rec.put("gt-new", kv.reply(&["ZSCORE", &best, "newcomer"]));
    let laps = kv.key("laps");
    let mut times = Vec::new();
    for t in ["62.5", "61.2", "63.0"] {
        kv.cmd(&["ZADD", &laps, "LT", t, "u1"])?;
        times.push(kv.reply(&["ZSCORE", &laps, "u1"]));
    }
    rec.put("lt-times", times.join(" / "));
    rec.put("gt-nx", kv.reply(&["ZADD", &best, "GT", "NX", "1", "u1"]));
    rec.put("gt-lt", kv.reply(&["ZADD", &best, "GT", "LT", "1", "u1"]));
    rec.put(
        "xx-gt",
        format!(
            "{} {}",
            kv.reply(&["ZADD", &best, "XX", "GT", "200", "ghost"]),
            kv.reply(&["ZSCORE", &best, "ghost"])
        ),
    );
    Ok(())
}
