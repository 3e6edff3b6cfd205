//! Runs the core on a loopback port so `redis-cli -p <port>` can poke at it.

use clap::Parser;

#[derive(Parser)]
#[command(about = "Serve the redislab core over RESP on 127.0.0.1")]
struct Cli {
    /// Port to listen on (127.0.0.1 only).
    #[arg(long, default_value_t = 6390)]
    port: u16,
}

fn main() -> std::io::Result<()> {
    let cli = Cli::parse();
    let listener = redislab_listener::CoreListener::start(cli.port)?;
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
