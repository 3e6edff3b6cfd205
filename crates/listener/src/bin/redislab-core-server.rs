//! Runs the core on a loopback port so `redis-cli -p <port>` can poke at it.

use clap::Parser;

/// The sorted sets' record buffers (2, 6, 10, ... MiB) on transparent huge
/// pages (see `redislab_alloc::huge`); `--no-huge-pages` sends them to malloc.
#[global_allocator]
static ALLOC: redislab_alloc::huge::HugePages = redislab_alloc::huge::HugePages;

#[derive(Parser)]
#[command(about = "Serve the redislab core over RESP on 127.0.0.1")]
struct Cli {
    /// Port to listen on (127.0.0.1 only).
    #[arg(long, default_value_t = 6390)]
    port: u16,
    /// Threads reading, parsing and writing connections (Redis's io-threads);
    /// commands still run one at a time.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=128))]
    io_threads: u16,
    /// Allocate the sorted sets' record buffers with malloc instead of on
    /// transparent huge pages.
    #[arg(long)]
    no_huge_pages: bool,
}

fn main() -> std::io::Result<()> {
    let cli = Cli::parse();
    if cli.no_huge_pages && !redislab_alloc::huge::disable() {
        eprintln!("redislab core: --no-huge-pages came after a huge page was mapped; ignored");
    }
    let options = redislab_listener::Options {
        io_threads: cli.io_threads as usize,
    };
    let listener = redislab_listener::CoreListener::start_with(cli.port, options)?;
    eprintln!(
        "redislab core listening on 127.0.0.1:{} (Ctrl-C to stop)",
        listener.port()
    );
    // Until SHUTDOWN (or SHUTDOWN NOSAVE during a busy script) stops the core.
    while !listener.is_stopped() {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    eprintln!("redislab core: shut down");
    Ok(())
}
