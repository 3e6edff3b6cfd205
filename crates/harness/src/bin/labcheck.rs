//! Compares freshly generated lab reports with the committed baselines.
//! Used by `./run.sh check`; exits non-zero and names lab, row and reason on failure.
//! With `--bless` (`./run.sh bless`) it instead prints which rows changed and
//! copies the fresh reports over the baselines.

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
    /// Print what changed and make the fresh reports the baselines.
    #[arg(long)]
    bless: bool,
    /// Lab ids to compare.
    #[arg(required = true)]
    labs: Vec<String>,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    if cli.bless {
        return bless(&cli);
    }
    let (failures, notes) =
        redislab_harness::check::compare_dirs(&cli.baseline, &cli.fresh, &cli.labs);
    for note in &notes {
        println!("note: {note}");
    }
    for f in &failures {
        println!("FAIL {f}");
    }
    let failed_labs: std::collections::BTreeSet<&str> =
        failures.iter().map(|f| f.lab.as_str()).collect();
    let passed = cli.labs.len() - failed_labs.len();
    // The plain closing line CI runners read: labs that match / labs that do not.
    println!("check: {passed} passed, {} failed", failed_labs.len());
    if failures.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

fn bless(cli: &Cli) -> ExitCode {
    let mut status = ExitCode::SUCCESS;
    for lab in &cli.labs {
        match redislab_harness::check::bless(&cli.baseline, &cli.fresh, lab) {
            Ok(lines) => {
                for line in lines {
                    println!("{line}");
                }
            }
            Err(e) => {
                println!("bless {lab}: {e}");
                status = ExitCode::FAILURE;
            }
        }
    }
    status
}
