//! One client connection: read whatever arrived, parse every complete command,
//! hand them to the executor as one job, write the replies back in order.

use std::collections::VecDeque;
use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;

use redislab_core::Reply;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::oneshot;

use crate::executor::Job;
use crate::resp::{parse_command, Parsed};

const READ_CHUNK: usize = 64 * 1024;

/// Gives every connection its own id, for its transaction state.
static NEXT_CLIENT: AtomicU64 = AtomicU64::new(1);

/// Tells the executor the connection is gone, however `serve` returns.
struct Goodbye {
    client: u64,
    jobs: mpsc::Sender<Job>,
}

impl Drop for Goodbye {
    fn drop(&mut self) {
        let _ = self.jobs.send(Job::closing(self.client));
    }
}

pub async fn serve(stream: TcpStream, jobs: mpsc::Sender<Job>) -> io::Result<()> {
    let client = NEXT_CLIENT.fetch_add(1, Ordering::Relaxed);
    let _goodbye = Goodbye {
        client,
        jobs: jobs.clone(),
    };
    serve_client(client, stream, jobs).await
}

async fn serve_client(
    client: u64,
    mut stream: TcpStream,
    jobs: mpsc::Sender<Job>,
) -> io::Result<()> {
    stream.set_nodelay(true)?;
    let mut buf: Vec<u8> = Vec::with_capacity(READ_CHUNK);
    let mut chunk = vec![0u8; READ_CHUNK];
    // Published messages for this connection arrive here, between replies.
    let (push, mut pushed) = tokio::sync::mpsc::unbounded_channel::<Reply>();
    loop {
        let (commands, problem) = take_commands(&mut buf);
        let mut out = Vec::new();
        if !commands.is_empty() {
            let (done, replies) = oneshot::channel();
            let mut job = Job::new(client, commands, done);
            job.push = Some(push.clone());
            if jobs.send(job).is_err() {
                return Ok(());
            }
            let replies = replies
                .await
                .unwrap_or_else(|_| vec![Reply::error("ERR core stopped")]);
            for reply in &replies {
                reply.encode(&mut out);
            }
        }
        match &problem {
            Some(Problem::Quit) => Reply::ok().encode(&mut out),
            Some(Problem::Protocol(msg)) => {
                Reply::error(format!("ERR Protocol error: {msg}")).encode(&mut out)
            }
            None => {}
        }
        if !out.is_empty() {
            stream.write_all(&out).await?;
        }
        if problem.is_some() {
            return Ok(());
        }
        // Wait for the client's next bytes, writing any published message meanwhile.
        loop {
            tokio::select! {
                read = stream.read(&mut chunk) => {
                    let n = read?;
                    if n == 0 {
                        return Ok(());
                    }
                    buf.extend_from_slice(&chunk[..n]);
                    break;
                }
                Some(message) = pushed.recv() => {
                    let mut out = Vec::new();
                    message.encode(&mut out);
                    stream.write_all(&out).await?;
                }
            }
        }
    }
}

/// Why a connection must close after the commands before it are answered.
enum Problem {
    Quit,
    Protocol(String),
}

/// Every complete command at the front of `buf` (consumed), up to a QUIT or a
/// protocol error.
fn take_commands(buf: &mut Vec<u8>) -> (VecDeque<Vec<Vec<u8>>>, Option<Problem>) {
    let mut commands = VecDeque::new();
    let mut used = 0;
    let mut problem = None;
    loop {
        match parse_command(&buf[used..]) {
            Parsed::Incomplete => break,
            Parsed::Invalid(msg) => {
                problem = Some(Problem::Protocol(msg));
                break;
            }
            Parsed::Command(argv, n) => {
                used += n;
                if argv.is_empty() {
                    continue;
                }
                if argv[0].eq_ignore_ascii_case(b"quit") {
                    problem = Some(Problem::Quit);
                    break;
                }
                commands.push_back(argv);
            }
        }
    }
    buf.drain(..used);
    (commands, problem)
}
