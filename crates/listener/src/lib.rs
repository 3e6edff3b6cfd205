//! The core's RESP listener.
//!
//! Connections are handled by a small tokio runtime; commands are executed by one
//! dedicated thread that owns the core's `Server`, so the core sees one command at a
//! time in arrival order, the way Redis's main thread does. This is what lets the
//! concurrency labs run the same client code against the core and a real Redis.

mod connection;
mod executor;
mod pubsub;
mod resp;

use std::io;
use std::net::{Ipv4Addr, SocketAddr, TcpListener as StdListener};
use std::sync::mpsc;
use std::thread::JoinHandle;

use tokio::net::TcpListener;
use tokio::sync::oneshot;

use crate::executor::Job;

pub use resp::{parse_command, Parsed};

/// A running listener. Dropping it stops accepting, closes the executor and joins
/// both threads.
pub struct CoreListener {
    addr: SocketAddr,
    shutdown: Option<oneshot::Sender<()>>,
    io_thread: Option<JoinHandle<()>>,
    exec_thread: Option<JoinHandle<()>>,
}

impl CoreListener {
    /// Starts on 127.0.0.1, on `port` or on a free port when `port` is 0.
    pub fn start(port: u16) -> io::Result<CoreListener> {
        let std_listener = StdListener::bind((Ipv4Addr::LOCALHOST, port))?;
        std_listener.set_nonblocking(true)?;
        let addr = std_listener.local_addr()?;

        let (jobs_tx, jobs_rx) = mpsc::channel::<Job>();
        let exec_thread = std::thread::Builder::new()
            .name("core-executor".into())
            .spawn(move || executor::execute_jobs(jobs_rx))?;

        let (shutdown_tx, shutdown_rx) = oneshot::channel::<()>();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .build()?;
        let io_thread = std::thread::Builder::new()
            .name("core-io".into())
            .spawn(move || {
                runtime.block_on(async move {
                    let listener = TcpListener::from_std(std_listener).expect("listener");
                    tokio::select! {
                        _ = accept_loop(listener, jobs_tx) => {}
                        _ = shutdown_rx => {}
                    }
                });
            })?;

        Ok(CoreListener {
            addr,
            shutdown: Some(shutdown_tx),
            io_thread: Some(io_thread),
            exec_thread: Some(exec_thread),
        })
    }

    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    pub fn url(&self) -> String {
        format!("redis://{}/", self.addr)
    }
}

impl Drop for CoreListener {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        // The io thread owns the only job sender; once it ends the executor ends too.
        if let Some(t) = self.io_thread.take() {
            let _ = t.join();
        }
        if let Some(t) = self.exec_thread.take() {
            let _ = t.join();
        }
    }
}

async fn accept_loop(listener: TcpListener, jobs: mpsc::Sender<Job>) {
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        let jobs = jobs.clone();
        tokio::spawn(async move {
            let _ = connection::serve(stream, jobs).await;
        });
    }
}
