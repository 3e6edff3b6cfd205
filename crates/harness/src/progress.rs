//! Progress for every phase of a lab that lasts more than a second, on a terminal
//! only (stderr; nothing at all in CI logs or when stderr is a file).
//!
//! A [`Phase`] is an `indicatif` bar (with a total) or spinner (without) that
//! stays hidden for its first second: short phases never flicker, long ones
//! (a million ZADDs, ZUNIONSTORE of two 1M sets, a worker race) show what runs and
//! for how long. Phases nest (each backend's steps, then a measurement inside
//! them) as lines of one `MultiProgress`. Text printed while bars are shown goes
//! through [`println`], which lifts the bars out of the way.

use std::io::IsTerminal;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

/// How long a phase stays hidden.
const REVEAL_AFTER: Duration = Duration::from_secs(1);

struct Bars {
    multi: MultiProgress,
    /// Phases not shown yet, with their start.
    pending: Mutex<Vec<(Instant, ProgressBar)>>,
}

fn bars() -> Option<&'static Bars> {
    static BARS: OnceLock<Option<Bars>> = OnceLock::new();
    BARS.get_or_init(|| {
        if !std::io::stderr().is_terminal() {
            return None;
        }
        let bars = Bars {
            multi: MultiProgress::with_draw_target(ProgressDrawTarget::stderr_with_hz(8)),
            pending: Mutex::new(Vec::new()),
        };
        std::thread::spawn(reveal_loop);
        Some(bars)
    })
    .as_ref()
}

/// Shows the phases that have lasted a second.
fn reveal_loop() {
    loop {
        std::thread::sleep(Duration::from_millis(200));
        let Some(b) = bars() else { return };
        let mut pending = b.pending.lock().unwrap_or_else(|e| e.into_inner());
        pending.retain(|(start, bar)| {
            if bar.is_finished() {
                return false;
            }
            if start.elapsed() < REVEAL_AFTER {
                return true;
            }
            let shown = b.multi.add(bar.clone());
            shown.enable_steady_tick(Duration::from_millis(200));
            false
        });
    }
}

/// One phase of a lab: a bar of `total` steps, or a spinner.
pub struct Phase {
    bar: Option<ProgressBar>,
}

impl Phase {
    /// A phase of `total` steps (None: a spinner with the elapsed time).
    pub fn new(label: impl Into<String>, total: Option<u64>) -> Phase {
        let Some(b) = bars() else {
            return Phase { bar: None };
        };
        let bar = match total {
            Some(n) => ProgressBar::with_draw_target(Some(n), ProgressDrawTarget::hidden())
                .with_style(
                    ProgressStyle::with_template(
                        "{msg} [{bar:30}] {human_pos}/{human_len} ({elapsed}, ~{eta} left)",
                    )
                    .expect("valid template")
                    .progress_chars("=> "),
                ),
            None => ProgressBar::with_draw_target(None, ProgressDrawTarget::hidden()).with_style(
                ProgressStyle::with_template("{spinner} {msg} ({elapsed})")
                    .expect("valid template"),
            ),
        };
        bar.set_message(label.into());
        b.pending
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((Instant::now(), bar.clone()));
        Phase { bar: Some(bar) }
    }

    pub fn inc(&self, n: u64) {
        if let Some(b) = &self.bar {
            b.inc(n);
        }
    }

    /// Ends the phase and removes its line.
    pub fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

impl Drop for Phase {
    fn drop(&mut self) {
        self.finish();
    }
}

/// Prints a line on stderr without tearing a progress bar.
pub fn println(line: &str) {
    match bars() {
        Some(b) => b.multi.suspend(|| eprintln!("{line}")),
        None => eprintln!("{line}"),
    }
}
