//! Client requests as Redis reads them (networking.c): RESP multi-bulk arrays,
//! and inline commands (what `telnet` or `nc` users type).
//!
//! [`RequestParser`] is incremental: bytes are fed as they arrive and parsing
//! resumes where it stopped, so the work is linear in the bytes received however
//! a request is split across reads. A large bulk argument is collected straight
//! into a buffer of its announced size (Redis does the same for arguments of 32
//! KB or more), so a 100 MB value is copied once.
//!
//! The limits and errors are Redis's: a multi-bulk count above `INT_MAX`, a bulk
//! length above `proto-max-bulk-len` (512 MB), an inline request or a header line
//! longer than 64 KB, a missing `$`, and unbalanced quotes in an inline request
//! are protocol errors (the client gets the error and the connection closes).
//! Nothing is preallocated from a count the client sent beyond a small bound.

use std::collections::VecDeque;

/// `PROTO_INLINE_MAX_SIZE`: the longest inline request and header line.
pub const INLINE_MAX: usize = 64 * 1024;
/// `PROTO_MBULK_BIG_ARG`: arguments this large are collected in their own buffer.
const BIG_ARG: usize = 32 * 1024;
/// Argument slots reserved up front at most, whatever the count says.
const PREALLOC_ARGS: usize = 1024;
/// Spent argument buffers kept for reuse: the largest one kept, and their
/// capacity in all (a pipeline of a few thousand small requests is refilled
/// without allocating; an idle connection holds at most this much).
const SPARE_ARG_CAPACITY: usize = 4096;
const SPARE_ARG_BYTES: usize = 512 * 1024;
/// Spent argument vectors kept for reuse at most.
const SPARE_ARGVS: usize = 8192;

/// The requests of one read, in order (what a connection hands the executor).
pub type Batch = Vec<Vec<Vec<u8>>>;

/// Why a request cannot be parsed: Redis's `Protocol error: ...` text, as
/// bytes (one names the byte it found, whatever it is).
#[derive(Debug, Clone, PartialEq)]
pub struct ProtocolError(pub Vec<u8>);

impl ProtocolError {
    fn new(what: &str) -> ProtocolError {
        ProtocolError(format!("Protocol error: {what}").into_bytes())
    }
}

/// A multi-bulk request being read.
#[derive(Debug)]
struct Partial {
    /// Arguments still to read.
    remaining: usize,
    argv: Vec<Vec<u8>>,
    /// The current bulk's length, once its `$<len>` line was read.
    bulk_len: Option<usize>,
    /// A big argument being collected directly.
    big: Option<Vec<u8>>,
    /// Bytes of the arguments read so far.
    bytes: usize,
}

/// Parses requests out of a stream of bytes.
#[derive(Debug)]
pub struct RequestParser {
    buf: Vec<u8>,
    /// Bytes of `buf` already consumed.
    pos: usize,
    partial: Option<Partial>,
    /// `proto-max-bulk-len`.
    max_bulk: usize,
    /// Bytes already searched for a line end (so a long line is scanned once).
    scanned: usize,
    /// Argument buffers and vectors of requests already executed, refilled by
    /// the next requests (so a steady stream allocates nothing per command).
    spare_args: Vec<Vec<u8>>,
    /// The capacity of `spare_args`, in bytes.
    spare_bytes: usize,
    spare_argvs: Vec<Vec<Vec<u8>>>,
}

impl RequestParser {
    pub fn new(max_bulk: usize) -> RequestParser {
        RequestParser {
            buf: Vec::new(),
            pos: 0,
            partial: None,
            max_bulk,
            scanned: 0,
            spare_args: Vec::new(),
            spare_bytes: 0,
            spare_argvs: Vec::new(),
        }
    }

    /// Takes back a request whose command ran: its buffers hold the next
    /// requests' arguments (up to a bound; big ones are freed).
    pub fn recycle(&mut self, mut argv: Vec<Vec<u8>>) {
        for mut arg in argv.drain(..) {
            let cap = arg.capacity();
            if cap > 0 && cap <= SPARE_ARG_CAPACITY && self.spare_bytes + cap <= SPARE_ARG_BYTES {
                arg.clear();
                self.spare_bytes += cap;
                self.spare_args.push(arg);
            }
        }
        if argv.capacity() > 0
            && argv.capacity() <= PREALLOC_ARGS
            && self.spare_argvs.len() < SPARE_ARGVS
        {
            self.spare_argvs.push(argv);
        }
    }

    pub fn set_max_bulk(&mut self, max_bulk: usize) {
        self.max_bulk = max_bulk;
    }

    /// Bytes held: the unparsed input plus the arguments of a request in progress.
    pub fn buffered(&self) -> usize {
        let partial = self
            .partial
            .as_ref()
            .map_or(0, |p| p.bytes + p.big.as_ref().map_or(0, |b| b.len()));
        self.buf.len() - self.pos + partial
    }

    /// Appends bytes read from the connection. A big argument in progress takes
    /// them directly.
    pub fn feed(&mut self, mut data: &[u8]) {
        if let Some(p) = self.partial.as_mut() {
            if let (Some(len), Some(big)) = (p.bulk_len, p.big.as_mut()) {
                let want = (len + 2).saturating_sub(big.len());
                let take = want.min(data.len());
                big.extend_from_slice(&data[..take]);
                data = &data[take..];
            }
        }
        if self.pos > 0 && self.pos == self.buf.len() {
            self.buf.clear();
            self.pos = 0;
            self.scanned = 0;
        }
        self.buf.extend_from_slice(data);
    }

    /// Moves the unparsed bytes to the front (cheap: called once per read, and
    /// the unparsed tail is short except inside a big argument, which does not
    /// live in `buf`).
    pub fn compact(&mut self) {
        if self.pos > 0 {
            self.buf.drain(..self.pos);
            self.scanned = self.scanned.saturating_sub(self.pos);
            self.pos = 0;
        }
        if self.buf.capacity() > 1 << 20 && self.buf.len() < 1 << 16 {
            self.buf.shrink_to(1 << 16);
        }
    }

    /// The next complete request (empty requests are skipped), `Ok(None)` if more
    /// bytes are needed.
    pub fn next_request(&mut self) -> Result<Option<Vec<Vec<u8>>>, ProtocolError> {
        loop {
            if self.partial.is_none() {
                if self.pos >= self.buf.len() {
                    return Ok(None);
                }
                if self.buf[self.pos] != b'*' {
                    match self.inline()? {
                        Some(argv) if argv.is_empty() => continue,
                        other => return Ok(other),
                    }
                }
                match self.multibulk_header()? {
                    None => return Ok(None),
                    Some(0) => continue,
                    Some(count) => {
                        let mut argv = self.spare_argvs.pop().unwrap_or_default();
                        argv.reserve(count.min(PREALLOC_ARGS));
                        self.partial = Some(Partial {
                            remaining: count,
                            argv,
                            bulk_len: None,
                            big: None,
                            bytes: 0,
                        });
                    }
                }
            }
            return self.bulks();
        }
    }

    /// Finds `\r` (or `\n` for inline) from `self.pos`, remembering how far it
    /// looked.
    fn find(&mut self, byte: u8) -> Option<usize> {
        let from = self.scanned.max(self.pos);
        match self.buf[from..].iter().position(|&b| b == byte) {
            Some(i) => {
                self.scanned = self.pos;
                Some(from + i)
            }
            None => {
                self.scanned = self.buf.len();
                None
            }
        }
    }

    fn inline(&mut self) -> Result<Option<Vec<Vec<u8>>>, ProtocolError> {
        let Some(nl) = self.find(b'\n') else {
            if self.buf.len() - self.pos > INLINE_MAX {
                return Err(ProtocolError::new("too big inline request"));
            }
            return Ok(None);
        };
        let mut end = nl;
        if end > self.pos && self.buf[end - 1] == b'\r' {
            end -= 1;
        }
        let argv = split_args(&self.buf[self.pos..end])
            .ok_or_else(|| ProtocolError::new("unbalanced quotes in request"))?;
        self.pos = nl + 1;
        Ok(Some(argv))
    }

    /// `*<count>\r\n`: the count (0 for an empty or negative one).
    fn multibulk_header(&mut self) -> Result<Option<usize>, ProtocolError> {
        let Some(cr) = self.find(b'\r') else {
            if self.buf.len() - self.pos > INLINE_MAX {
                return Err(ProtocolError::new("too big mbulk count string"));
            }
            return Ok(None);
        };
        if cr + 1 >= self.buf.len() {
            return Ok(None);
        }
        let count = parse_ll(&self.buf[self.pos + 1..cr])
            .filter(|&n| n <= i32::MAX as i64)
            .ok_or_else(|| ProtocolError::new("invalid multibulk length"))?;
        self.pos = cr + 2;
        Ok(Some(count.max(0) as usize))
    }

    /// Reads the bulk arguments of the request in progress.
    fn bulks(&mut self) -> Result<Option<Vec<Vec<u8>>>, ProtocolError> {
        loop {
            let p = self.partial.as_mut().expect("a request in progress");
            if p.remaining == 0 {
                let done = self.partial.take().expect("a request in progress");
                return Ok(Some(done.argv));
            }
            let len = match p.bulk_len {
                Some(len) => len,
                None => {
                    if self.pos >= self.buf.len() {
                        return Ok(None);
                    }
                    let Some(cr) = self.find(b'\r') else {
                        if self.buf.len() - self.pos > INLINE_MAX {
                            return Err(ProtocolError::new("too big bulk count string"));
                        }
                        return Ok(None);
                    };
                    if cr + 1 >= self.buf.len() {
                        return Ok(None);
                    }
                    if self.buf[self.pos] != b'$' {
                        let mut text = b"Protocol error: expected '$', got '".to_vec();
                        text.push(self.buf[self.pos]);
                        text.push(b'\'');
                        return Err(ProtocolError(text));
                    }
                    let len = parse_ll(&self.buf[self.pos + 1..cr])
                        .filter(|&n| n >= 0 && n as u64 <= self.max_bulk as u64)
                        .ok_or_else(|| ProtocolError::new("invalid bulk length"))?
                        as usize;
                    self.pos = cr + 2;
                    let p = self.partial.as_mut().expect("a request in progress");
                    p.bulk_len = Some(len);
                    if len >= BIG_ARG {
                        // Collect it on its own: what is already buffered first.
                        // Reserve at most 1 MB up front (a 14-byte request can
                        // announce 512 MB); the buffer grows as the bytes come.
                        let mut big = Vec::with_capacity((len + 2).min(1 << 20));
                        let take = (len + 2).min(self.buf.len() - self.pos);
                        big.extend_from_slice(&self.buf[self.pos..self.pos + take]);
                        self.pos += take;
                        p.big = Some(big);
                    }
                    len
                }
            };
            let p = self.partial.as_mut().expect("a request in progress");
            if let Some(big) = p.big.as_mut() {
                if big.len() < len + 2 {
                    return Ok(None);
                }
                big.truncate(len);
                let arg = p.big.take().expect("big argument");
                p.bytes += arg.len();
                p.argv.push(arg);
            } else {
                if self.buf.len() - self.pos < len + 2 {
                    return Ok(None);
                }
                let mut arg = match self.spare_args.pop() {
                    Some(arg) => {
                        self.spare_bytes -= arg.capacity();
                        arg
                    }
                    None => Vec::new(),
                };
                arg.extend_from_slice(&self.buf[self.pos..self.pos + len]);
                p.argv.push(arg);
                p.bytes += len;
                self.pos += len + 2;
            }
            p.bulk_len = None;
            p.remaining -= 1;
        }
    }
}

/// `string2ll` on a header: an optional `-` and digits, nothing else.
fn parse_ll(bytes: &[u8]) -> Option<i64> {
    if bytes.is_empty() || bytes.len() > 20 {
        return None;
    }
    let (neg, digits) = match bytes[0] {
        b'-' => (true, &bytes[1..]),
        _ => (false, bytes),
    };
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    if digits.len() > 1 && digits[0] == b'0' {
        return None;
    }
    let mut v: i64 = 0;
    for &d in digits {
        v = v.checked_mul(10)?.checked_add((d - b'0') as i64)?;
    }
    Some(if neg { -v } else { v })
}

/// `sdssplitargs`: splits an inline request like Redis: blanks separate words,
/// `"..."` takes `\n \r \t \b \a \\ \"` and `\xHH` escapes, `'...'` takes `\'`,
/// and a closing quote must be followed by a blank or the end. `None` for
/// unbalanced quotes.
pub fn split_args(line: &[u8]) -> Option<Vec<Vec<u8>>> {
    let is_space = |b: u8| matches!(b, b' ' | b'\n' | b'\r' | b'\t' | 0x0b | 0x0c);
    let mut out = Vec::new();
    let mut i = 0;
    // Like the C code, a NUL ends the line.
    let line = match line.iter().position(|&b| b == 0) {
        Some(n) => &line[..n],
        None => line,
    };
    loop {
        while i < line.len() && is_space(line[i]) {
            i += 1;
        }
        if i >= line.len() {
            return Some(out);
        }
        let mut word = Vec::new();
        let (mut inq, mut insq) = (false, false);
        loop {
            let c = line.get(i).copied();
            if inq {
                match c {
                    None => return None,
                    Some(b'\\')
                        if line.get(i + 1) == Some(&b'x')
                            && line.get(i + 2).is_some_and(u8::is_ascii_hexdigit)
                            && line.get(i + 3).is_some_and(u8::is_ascii_hexdigit) =>
                    {
                        let hex = std::str::from_utf8(&line[i + 2..i + 4]).ok()?;
                        word.push(u8::from_str_radix(hex, 16).ok()?);
                        i += 3;
                    }
                    Some(b'\\') if i + 1 < line.len() => {
                        i += 1;
                        word.push(match line[i] {
                            b'n' => b'\n',
                            b'r' => b'\r',
                            b't' => b'\t',
                            b'b' => 8,
                            b'a' => 7,
                            other => other,
                        });
                    }
                    Some(b'"') => {
                        if line.get(i + 1).is_some_and(|&n| !is_space(n)) {
                            return None;
                        }
                        i += 1;
                        break;
                    }
                    Some(other) => word.push(other),
                }
            } else if insq {
                match c {
                    None => return None,
                    Some(b'\\') if line.get(i + 1) == Some(&b'\'') => {
                        i += 1;
                        word.push(b'\'');
                    }
                    Some(b'\'') => {
                        if line.get(i + 1).is_some_and(|&n| !is_space(n)) {
                            return None;
                        }
                        i += 1;
                        break;
                    }
                    Some(other) => word.push(other),
                }
            } else {
                match c {
                    None | Some(b' ' | b'\n' | b'\r' | b'\t') => break,
                    Some(b'"') => inq = true,
                    Some(b'\'') => insq = true,
                    Some(other) => word.push(other),
                }
            }
            i += 1;
        }
        out.push(word);
    }
}

/// Every complete request in `bytes` (a test helper): the requests, and the
/// error that stopped parsing, if any.
pub fn parse_all(bytes: &[u8]) -> (VecDeque<Vec<Vec<u8>>>, Option<ProtocolError>) {
    let mut p = RequestParser::new(512 * 1024 * 1024);
    p.feed(bytes);
    let mut out = VecDeque::new();
    loop {
        match p.next_request() {
            Ok(Some(r)) => out.push_back(r),
            Ok(None) => return (out, None),
            Err(e) => return (out, Some(e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(ws: &[&str]) -> Vec<Vec<u8>> {
        ws.iter().map(|w| w.as_bytes().to_vec()).collect()
    }

    #[test]
    fn parses_multibulk_pipelined_and_split_anywhere() {
        let two = b"*2\r\n$4\r\nPING\r\n$2\r\nhi\r\n*1\r\n$4\r\nPING\r\n";
        let (reqs, err) = parse_all(two);
        assert_eq!(err, None);
        assert_eq!(reqs, [words(&["PING", "hi"]), words(&["PING"])]);
        // Byte by byte gives the same requests.
        let mut p = RequestParser::new(1 << 20);
        let mut got = Vec::new();
        for b in two.iter() {
            p.feed(&[*b]);
            while let Some(r) = p.next_request().unwrap() {
                got.push(r);
            }
            p.compact();
        }
        assert_eq!(got, [words(&["PING", "hi"]), words(&["PING"])]);
    }

    #[test]
    fn recycled_buffers_hold_the_next_requests_exactly() {
        let mut p = RequestParser::new(1 << 20);
        p.feed(b"*3\r\n$3\r\nSET\r\n$5\r\nkey:1\r\n$10\r\n0123456789\r\n");
        let first = p.next_request().unwrap().unwrap();
        let (arg_ptr, argv_ptr) = (first[2].as_ptr(), first.as_ptr());
        p.recycle(first);
        // Fewer, shorter arguments: nothing of the old request shows through,
        // and the buffers are the same allocations.
        p.feed(b"*2\r\n$3\r\nGET\r\n$1\r\nk\r\n");
        let second = p.next_request().unwrap().unwrap();
        assert_eq!(second, words(&["GET", "k"]));
        assert_eq!(second.as_ptr(), argv_ptr);
        assert!(second.iter().any(|a| a.as_ptr() == arg_ptr));
        // A big argument is not kept.
        let mut huge = vec![vec![0u8; 1 << 20]];
        huge.push(Vec::with_capacity(8));
        let spare = p.spare_args.len();
        p.recycle(huge);
        assert_eq!(p.spare_args.len(), spare + 1);
    }

    #[test]
    fn a_big_argument_arrives_in_pieces() {
        let value = vec![b'x'; 100_000];
        let mut req = format!("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n${}\r\n", value.len()).into_bytes();
        req.extend_from_slice(&value);
        req.extend_from_slice(b"\r\n");
        let mut p = RequestParser::new(1 << 30);
        for chunk in req.chunks(4096) {
            p.feed(chunk);
        }
        let r = p.next_request().unwrap().unwrap();
        assert_eq!(r[2], value);
        assert_eq!(p.next_request().unwrap(), None);
    }

    #[test]
    fn hostile_headers_are_refused_without_allocating() {
        let err = |b: &[u8]| parse_all(b).1.map(|e| e.0);
        assert_eq!(err(b"*2147483647\r\n"), None); // valid count, waits for data
        assert_eq!(
            err(b"*2147483648\r\n"),
            Some("Protocol error: invalid multibulk length".into())
        );
        assert_eq!(
            err(b"*1\r\n$536870913\r\n"),
            Some("Protocol error: invalid bulk length".into())
        );
        assert_eq!(
            err(b"*1\r\n$-1\r\n"),
            Some("Protocol error: invalid bulk length".into())
        );
        assert_eq!(
            err(b"*1\r\n+x\r\n"),
            Some("Protocol error: expected '$', got '+'".into())
        );
        assert_eq!(
            err(b"*x\r\n"),
            Some("Protocol error: invalid multibulk length".into())
        );
        let long = vec![b'a'; INLINE_MAX + 1];
        assert_eq!(
            err(&long),
            Some("Protocol error: too big inline request".into())
        );
        let mut mb = b"*".to_vec();
        mb.extend(vec![b'1'; INLINE_MAX + 1]);
        assert_eq!(
            err(&mb),
            Some("Protocol error: too big mbulk count string".into())
        );
        assert_eq!(parse_all(b"*0\r\n*-1\r\n").0.len(), 0);
    }

    #[test]
    fn inline_requests_split_like_sdssplitargs() {
        let split = |s: &str| split_args(s.as_bytes());
        assert_eq!(
            split("ZSCORE lb  zed"),
            Some(words(&["ZSCORE", "lb", "zed"]))
        );
        assert_eq!(
            split(r#"SET k "a b\n\x41""#),
            Some(vec![b"SET".to_vec(), b"k".to_vec(), b"a b\nA".to_vec()])
        );
        assert_eq!(split("SET k 'it\\'s'"), Some(words(&["SET", "k", "it's"])));
        assert_eq!(split(r#"SET k "open"#), None);
        assert_eq!(split(r#"SET k "a"b"#), None);
        assert_eq!(split(""), Some(vec![]));
        let (reqs, err) = parse_all(b"PING\r\n\r\nECHO \"x\"\n");
        assert_eq!(err, None);
        assert_eq!(reqs, [words(&["PING"]), words(&["ECHO", "x"])]);
        assert_eq!(
            parse_all(b"SET k \"x\r\n").1.map(|e| e.0),
            Some("Protocol error: unbalanced quotes in request".into())
        );
    }
}
