//! `labmatrix` (`./run.sh matrix`, `./run.sh check matrix`): builds the version matrix
//! from one directory of lab reports per server and writes `matrix.txt` and
//! `matrix.json`; with `--check`, compares it with a committed matrix instead.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use redislab_harness::matrix::{self, Matrix, ServerRun};

#[derive(Parser)]
#[command(
    about = "Build the version matrix: every exact row of the labs on each server, side by side"
)]
struct Cli {
    /// Print the labs of this matrix.json, one a line, and exit.
    #[arg(long, value_name = "MATRIX_JSON")]
    labs_of: Option<PathBuf>,
    /// A server's pass: NAME=DIR, DIR holding that pass's <id>.json (and <id>.log /
    /// <id>.skip for labs without a report). Repeat, in column order.
    #[arg(long = "server", required_unless_present = "labs_of")]
    servers: Vec<String>,
    /// The server every other one is compared with.
    #[arg(long, default_value = "redis-8.6.3")]
    reference: String,
    /// Where matrix.txt and matrix.json go.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Compare with this committed matrix.json instead of writing.
    #[arg(long)]
    check: Option<PathBuf>,
    /// Lab ids, in order.
    #[arg(required_unless_present = "labs_of")]
    labs: Vec<String>,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    if let Some(path) = &cli.labs_of {
        return match Matrix::read(path) {
            Ok(m) => {
                for lab in &m.labs {
                    println!("{lab}");
                }
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("labmatrix: {e}");
                ExitCode::FAILURE
            }
        };
    }
    let mut runs = Vec::new();
    for s in &cli.servers {
        let Some((name, dir)) = s.split_once('=') else {
            eprintln!("labmatrix: --server wants NAME=DIR, got {s}");
            return ExitCode::from(2);
        };
        runs.push(ServerRun::read(name, &PathBuf::from(dir), &cli.labs));
    }
    let m = match matrix::build(&runs, &cli.reference, &cli.labs) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("labmatrix: {e}");
            return ExitCode::FAILURE;
        }
    };
    if let Some(baseline) = &cli.check {
        let base = match Matrix::read(baseline) {
            Ok(b) => b,
            Err(e) => {
                eprintln!("labmatrix: {e}");
                return ExitCode::FAILURE;
            }
        };
        let (failures, notes) = matrix::check::compare(&base, &m);
        for n in &notes {
            println!("note: {n}");
        }
        for f in &failures {
            println!("FAIL matrix / {f}");
        }
        println!(
            "check matrix: {} rows, {} cells differ from {}",
            base.rows.len(),
            failures.len(),
            baseline.display()
        );
        return if failures.is_empty() {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        };
    }
    let out = cli.out.unwrap_or_else(|| PathBuf::from("runs"));
    let text = matrix::render::to_text(&m);
    let write = |name: &str, body: &str| {
        std::fs::create_dir_all(&out)
            .and_then(|_| std::fs::write(out.join(name), body))
            .map_err(|e| format!("cannot write {}: {e}", out.join(name).display()))
    };
    if let Err(e) = write("matrix.txt", &text).and_then(|_| write("matrix.json", &m.to_json())) {
        eprintln!("labmatrix: {e}");
        return ExitCode::FAILURE;
    }
    // The summary on the terminal; the rows are in the file.
    let head: String = text
        .split("\nIn the row lines")
        .next()
        .unwrap_or("")
        .to_string();
    println!("{head}");
    println!(
        "labmatrix: wrote {} and matrix.json",
        out.join("matrix.txt").display()
    );
    ExitCode::SUCCESS
}
