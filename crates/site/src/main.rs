//! `labreport` (`./run.sh report`): writes the HTML report from lab reports.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;

#[derive(Parser)]
#[command(
    about = "Write the HTML report (index + one page per lab, charts as SVG) from out/<id>.json",
    after_help = "Reads only the JSON, so it also renders baselines from another machine: \
                  ./run.sh report --from that/out --no-runs"
)]
struct Cli {
    /// Baselines to render (default: the repository's out/).
    #[arg(long)]
    from: Option<PathBuf>,
    /// Your runs, preferred over the baselines for the same lab (default: runs/).
    #[arg(long)]
    runs: Option<PathBuf>,
    /// Render the baselines only.
    #[arg(long)]
    no_runs: bool,
    /// Where the site goes (default: runs/report/).
    #[arg(long)]
    out: Option<PathBuf>,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let root = redislab_harness::paths::repo_root();
    let from = cli.from.unwrap_or_else(|| root.join("out"));
    let mut dirs = vec![(from, "baseline")];
    if !cli.no_runs {
        dirs.push((cli.runs.unwrap_or_else(|| root.join("runs")), "your run"));
    }
    let out = cli.out.unwrap_or_else(|| root.join("runs/report"));
    let inputs = redislab_site::load(&dirs);
    if inputs.is_empty() {
        eprintln!("labreport: no lab reports in {}", dirs[0].0.display());
        return ExitCode::FAILURE;
    }
    // The version matrix: your run's (runs/matrix.json) over the committed one.
    let matrix = dirs
        .iter()
        .rev()
        .map(|(dir, origin)| (dir.join("matrix.json"), *origin))
        .find(|(path, _)| path.exists())
        .map(|(path, origin)| {
            redislab_harness::matrix::Matrix::read(&path).map(|m| {
                // Shown relative to where the report was built, like the labs' origins.
                let shown = std::env::current_dir()
                    .ok()
                    .and_then(|cwd| path.strip_prefix(cwd).ok().map(|p| p.to_path_buf()))
                    .unwrap_or_else(|| path.clone());
                (m, format!("{origin} {}", shown.display()))
            })
        })
        .transpose();
    let matrix = match matrix {
        Ok(m) => m,
        Err(e) => {
            eprintln!("labreport: {e}");
            return ExitCode::FAILURE;
        }
    };
    let matrix_ref = matrix.as_ref().map(|(m, o)| (m, o.as_str()));
    // `./run.sh bench`'s result, yours (runs/bench.json) over the committed one.
    let bench = dirs
        .iter()
        .rev()
        .map(|(dir, origin)| (dir.join("bench.json"), *origin))
        .find(|(path, _)| path.exists())
        .map(|(path, origin)| {
            let text = std::fs::read_to_string(&path)
                .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            let value: serde_json::Value = serde_json::from_str(&text)
                .map_err(|e| format!("{} is not JSON: {e}", path.display()))?;
            Ok::<_, String>((value, format!("{origin} {}", path.display())))
        })
        .transpose();
    let bench = match bench {
        Ok(b) => b,
        Err(e) => {
            eprintln!("labreport: {e}");
            return ExitCode::FAILURE;
        }
    };
    let bench_ref = bench.as_ref().map(|(b, o)| (b, o.as_str()));
    match redislab_site::write_site(&inputs, matrix_ref, bench_ref, &out) {
        Ok(s) => {
            for e in &s.chart_errors {
                eprintln!("labreport: chart not drawn: {e}");
            }
            println!(
                "labreport: wrote {} ({} pages, {} charts)",
                out.join("index.html").display(),
                s.pages,
                s.charts
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("labreport: {e}");
            ExitCode::FAILURE
        }
    }
}
