//! Compares freshly generated lab reports with the committed baselines.
//! Used by `./run.sh check`; exits non-zero and names lab, row and reason on failure.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;

#[derive(Parser)]
#[command(about = "Compare fresh lab reports with the committed baselines")]
struct Cli {
    /// Directory with the committed baselines (out/).
    #[arg(long)]
    baseline: PathBuf,
    /// Directory with the fresh reports.
    #[arg(long)]
    fresh: PathBuf,
    /// Lab ids to compare.
    #[arg(required = true)]
    labs: Vec<String>,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let (failures, notes) =
        redislab_harness::check::compare_dirs(&cli.baseline, &cli.fresh, &cli.labs);
    for note in &notes {
        println!("note: {note}");
    }
    if failures.is_empty() {
        println!("check: {} lab(s) match their baselines", cli.labs.len());
        return ExitCode::SUCCESS;
    }
    for f in &failures {
        println!("FAIL {f}");
    }
    println!("check: {} difference(s) from the baselines", failures.len());
    ExitCode::FAILURE
}
