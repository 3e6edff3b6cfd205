//! The report in a real browser: the site is built from the committed baselines
//! (`out/`), every page is opened in headless Chromium (Debian's `chromium`,
//! installed by `scripts/get-chromium.sh`), and the test fails if a chart did not
//! render (an `<svg>` with no size or no marks, or a "not drawn" placeholder) or
//! the browser reported anything at error level: a console error, an uncaught
//! exception, a resource that failed to load, a Content-Security-Policy
//! violation (the pages must load nothing from elsewhere).
//!
//! Chromium is driven over the DevTools protocol on a pipe
//! (`--remote-debugging-pipe`: JSON messages ending in NUL on file descriptors 3
//! and 4), so no WebSocket client, node or driver binary is needed. Without
//! Chromium the test is skipped, unless `REDISLAB_REQUIRE_SERVERS=1` (CI and
//! `./run.sh test`), where it fails and says how to install it.

use std::collections::VecDeque;
use std::io::{Read, Write};
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

fn chromium() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("REDISLAB_CHROMIUM") {
        return Some(PathBuf::from(p));
    }
    ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
}

fn pipe() -> (OwnedFd, OwnedFd) {
    let mut fds = [0; 2];
    // SAFETY: fds is a valid array of two ints.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0, "pipe failed");
    // SAFETY: pipe just created both descriptors; each is owned once.
    unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) }
}

/// One headless Chromium, spoken to over the DevTools pipe.
struct Browser {
    child: Child,
    to: std::fs::File,
    from: Receiver<Value>,
    /// Events that arrived while waiting for a reply.
    events: VecDeque<Value>,
    next_id: u64,
    _profile: TempDir,
}

struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn temp_dir(tag: &str) -> TempDir {
    let dir = std::env::temp_dir().join(format!("redislab-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    TempDir(dir)
}

impl Browser {
    fn start(bin: &Path) -> Browser {
        let profile = temp_dir("chromium-profile");
        let (cmd_read, cmd_write) = pipe();
        let (resp_read, resp_write) = pipe();
        use std::os::fd::AsRawFd;
        let (cr, rw) = (cmd_read.as_raw_fd(), resp_write.as_raw_fd());
        let mut command = Command::new(bin);
        command
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--remote-debugging-pipe",
                "--window-size=1200,900",
            ])
            .arg(format!("--user-data-dir={}", profile.0.display()))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        // SAFETY: only async-signal-safe calls (dup2) between fork and exec.
        unsafe {
            command.pre_exec(move || {
                if libc::dup2(cr, 3) < 0 || libc::dup2(rw, 4) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = command.spawn().expect("chromium starts");
        drop(cmd_read);
        drop(resp_write);
        let (tx, rx) = channel();
        let mut reader = std::fs::File::from(resp_read);
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            let mut chunk = [0u8; 65536];
            loop {
                let n = match reader.read(&mut chunk) {
                    Ok(0) | Err(_) => return,
                    Ok(n) => n,
                };
                buf.extend_from_slice(&chunk[..n]);
                while let Some(end) = buf.iter().position(|&b| b == 0) {
                    let msg: Vec<u8> = buf.drain(..=end).collect();
                    if let Ok(v) = serde_json::from_slice::<Value>(&msg[..msg.len() - 1]) {
                        if tx.send(v).is_err() {
                            return;
                        }
                    }
                }
            }
        });
        Browser {
            child,
            to: std::fs::File::from(cmd_write),
            from: rx,
            events: VecDeque::new(),
            next_id: 1,
            _profile: profile,
        }
    }

    /// Sends a command (to `session`, or the browser) and waits for its reply.
    fn call(&mut self, session: Option<&str>, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        let mut msg = json!({"id": id, "method": method, "params": params});
        if let Some(s) = session {
            msg["sessionId"] = json!(s);
        }
        let mut bytes = serde_json::to_vec(&msg).unwrap();
        bytes.push(0);
        self.to.write_all(&bytes).expect("write to chromium");
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let v = self
                .from
                .recv_timeout(left)
                .unwrap_or_else(|_| panic!("chromium did not answer {method} in 30 s"));
            if v.get("id").and_then(Value::as_u64) == Some(id) {
                if let Some(e) = v.get("error") {
                    panic!("{method}: {e}");
                }
                return v["result"].clone();
            }
            self.events.push_back(v);
        }
    }

    /// Waits for an event named `method` (already received, or to come).
    fn wait_event(&mut self, method: &str) -> Value {
        if let Some(i) = self.events.iter().position(|e| e["method"] == method) {
            return self.events.remove(i).unwrap();
        }
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let v = self
                .from
                .recv_timeout(left)
                .unwrap_or_else(|_| panic!("no {method} from chromium in 30 s"));
            if v["method"] == method {
                return v;
            }
            self.events.push_back(v);
        }
    }

    /// Every error-level thing the page reported so far, as text.
    fn drain_errors(&mut self) -> Vec<String> {
        while let Ok(v) = self.from.try_recv() {
            self.events.push_back(v);
        }
        let mut out = Vec::new();
        for e in self.events.drain(..) {
            let p = &e["params"];
            match e["method"].as_str() {
                Some("Runtime.consoleAPICalled")
                    if p["type"] == "error" || p["type"] == "assert" =>
                {
                    out.push(format!("console.{}: {}", p["type"], p["args"]))
                }
                Some("Runtime.exceptionThrown") => {
                    out.push(format!("exception: {}", p["exceptionDetails"]))
                }
                Some("Log.entryAdded") if p["entry"]["level"] == "error" => {
                    out.push(format!("log: {} {}", p["entry"]["text"], p["entry"]["url"]))
                }
                _ => {}
            }
        }
        out
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn every_page_renders_its_charts_without_errors() {
    let Some(bin) = chromium() else {
        assert!(
            std::env::var("REDISLAB_REQUIRE_SERVERS").as_deref() != Ok("1"),
            "chromium is not installed: run scripts/get-chromium.sh (Debian's chromium)"
        );
        eprintln!("skipped: no chromium (scripts/get-chromium.sh installs it)");
        return;
    };
    let started = Instant::now();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let inputs = redislab_site::load(&[(root.join("out"), "baseline")]);
    assert!(!inputs.is_empty(), "no baselines in out/");
    // The committed version matrix, when there is one, gets its page opened too.
    let matrix = redislab_harness::matrix::Matrix::read(&root.join("out/matrix.json")).ok();
    let site = temp_dir("site");
    // And the committed benchmark result, when there is one.
    let bench: Option<serde_json::Value> = std::fs::read_to_string(root.join("out/bench.json"))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok());
    let summary = redislab_site::write_site(
        &inputs,
        matrix.as_ref().map(|m| (m, "out/matrix.json")),
        bench.as_ref().map(|b| (b, "out/bench.json")),
        &site.0,
    )
    .unwrap();
    assert!(
        summary.chart_errors.is_empty(),
        "charts not drawn: {:?}",
        summary.chart_errors
    );

    let mut browser = Browser::start(&bin);
    let target = browser.call(None, "Target.createTarget", json!({"url": "about:blank"}));
    let attached = browser.call(
        None,
        "Target.attachToTarget",
        json!({"targetId": target["targetId"], "flatten": true}),
    );
    let session = attached["sessionId"].as_str().unwrap().to_string();
    let s = Some(session.as_str());
    for domain in ["Page.enable", "Runtime.enable", "Log.enable"] {
        browser.call(s, domain, json!({}));
    }
    let mut pages: Vec<(String, usize)> = vec![("index".into(), 0)];
    if matrix.is_some() {
        pages.push(("matrix".into(), 0));
    }
    if bench.is_some() {
        pages.push(("bench".into(), 0));
    }
    pages.extend(
        inputs
            .iter()
            .map(|i| (i.report.lab.clone(), i.report.charts.len())),
    );
    let mut problems = Vec::new();
    let mut charts_seen = 0;
    for (page, expected) in &pages {
        let url = format!("file://{}/{page}.html", site.0.display());
        browser.call(s, "Page.navigate", json!({"url": url}));
        browser.wait_event("Page.loadEventFired");
        let probe = r#"JSON.stringify({
            charts: [...document.querySelectorAll('figure.chart svg')].map(svg => {
                const b = svg.getBoundingClientRect();
                return {w: b.width, h: b.height, marks: svg.querySelectorAll('path,rect,circle,polyline,line,text').length};
            }),
            missing: document.querySelectorAll('.chart-missing').length,
            rows: document.querySelectorAll('table tr').length,
            title: document.title
        })"#;
        let result = browser.call(
            s,
            "Runtime.evaluate",
            json!({"expression": probe, "returnByValue": true}),
        );
        let found: Value =
            serde_json::from_str(result["result"]["value"].as_str().unwrap()).unwrap();
        let charts = found["charts"].as_array().unwrap();
        if charts.len() != *expected {
            problems.push(format!(
                "{page}: {} charts rendered, {expected} declared",
                charts.len()
            ));
        }
        for (i, c) in charts.iter().enumerate() {
            let (w, h, marks) = (
                c["w"].as_f64().unwrap_or(0.0),
                c["h"].as_f64().unwrap_or(0.0),
                c["marks"].as_u64().unwrap_or(0),
            );
            if w < 100.0 || h < 100.0 || marks < 20 {
                problems.push(format!(
                    "{page}: chart {i} is {w}×{h} px with {marks} marks"
                ));
            }
        }
        charts_seen += charts.len();
        if found["missing"].as_u64() != Some(0) {
            problems.push(format!("{page}: {} charts not drawn", found["missing"]));
        }
        if found["rows"].as_u64().unwrap_or(0) < 2 {
            problems.push(format!("{page}: no table rows"));
        }
        for e in browser.drain_errors() {
            problems.push(format!("{page}: {e}"));
        }
    }
    let _ = browser.call(None, "Browser.close", json!({}));
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(
        charts_seen >= 10,
        "only {charts_seen} charts in the whole report"
    );
    eprintln!(
        "{} pages, {charts_seen} charts rendered in Chromium in {:.1} s",
        pages.len(),
        started.elapsed().as_secs_f64()
    );
}
