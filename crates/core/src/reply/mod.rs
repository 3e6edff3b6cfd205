//! A command's reply, and its encoding in RESP2 and RESP3.
//!
//! Redis builds replies with `addReply*` calls that look at the client's protocol:
//! `addReplyMap` writes `%n` in RESP3 and an array of 2n items in RESP2,
//! `addReplyDouble` writes `,1.5` or a bulk string, `addReplyNull` writes `_` or
//! `$-1`. The core keeps the *shape* in [`Reply`] (a map, a set, a double, a
//! null) and decides the bytes in [`Reply::encode`], so each command is written
//! once and answers both protocols the way Redis does.

/// The protocol a client speaks: RESP2 unless it sent `HELLO 3`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Protocol {
    #[default]
    Resp2,
    Resp3,
}

impl Protocol {
    pub fn number(self) -> i64 {
        match self {
            Protocol::Resp2 => 2,
            Protocol::Resp3 => 3,
        }
    }
}

use std::borrow::Cow;

mod bulk;
mod error_text;
pub use bulk::{BulkBytes, INLINE_BULK};
pub use error_text::ErrorText;

/// One reply, by shape.
#[derive(Clone, Debug, PartialEq)]
pub enum Reply {
    /// `+OK`-style status line. A fixed text (`+OK`, a type name) is borrowed,
    /// so the commonest reply of all costs no allocation.
    Status(Cow<'static, str>),
    /// `-ERR ...` line; the text includes the error code (`ERR`, `WRONGTYPE`,
    /// ...). Bytes, not `String`: Redis echoes a client's bytes in some errors.
    Error(ErrorText),
    /// `:<n>`
    Integer(i64),
    /// `$<len>` bulk string (short bytes kept inside the reply, see [`BulkBytes`]).
    Bulk(BulkBytes),
    /// A null where a string was expected: `$-1` in RESP2, `_` in RESP3.
    Nil,
    /// `*<n>` array of replies.
    Array(Vec<Reply>),
    /// A null where an array was expected: `*-1` in RESP2, `_` in RESP3 (a
    /// blocking pop that timed out, EXEC aborted by WATCH).
    NilArray,
    /// A double (`addReplyDouble`): `,<d>` in RESP3, a bulk string in RESP2, with
    /// Redis's `%.17g` formatting.
    Double(f64),
    /// Field/value pairs: `%<n>` in RESP3, a flat array of 2n items in RESP2.
    Map(Vec<(Reply, Reply)>),
    /// An unordered collection: `~<n>` in RESP3, an array in RESP2.
    Set(Vec<Reply>),
    /// Ordered pairs (member and score, field and value): an array of 2-element
    /// arrays in RESP3, one flat array of 2n items in RESP2 (ZRANGE WITHSCORES,
    /// HRANDFIELD WITHVALUES, ZPOPMIN with a count: Redis writes
    /// `addReplyArrayLen(c, 2)` before each pair only for RESP3 clients).
    Pairs(Vec<(Reply, Reply)>),
    /// `#t`/`#f` in RESP3, `:1`/`:0` in RESP2.
    Bool(bool),
    /// `(<digits>` in RESP3, a bulk string in RESP2.
    BigNumber(String),
    /// `=<len>\r\ntxt:...` in RESP3, a bulk string of the text in RESP2.
    Verbatim(String),
    /// Out-of-band data (a published message): `><n>` in RESP3, an array in
    /// RESP2.
    Push(Vec<Reply>),
    /// A reply preceded by RESP3 attributes (`|<n>` pairs): RESP2 clients see the
    /// reply alone.
    Attributed(Vec<(Reply, Reply)>, Box<Reply>),
    /// Many members, with or without their scores, already written as bulk
    /// strings into one buffer (ZRANGE and its forms): the bytes of
    /// [`Reply::Array`] of bulks, or of [`Reply::Pairs`] of bulk and double,
    /// without a reply value (and an allocation) per element.
    Members(Members),
}

/// The elements of [`Reply::Members`]: what Redis's `addReplyBulkCBuffer` and
/// `addReplyDouble` write straight into the client's buffer while ZRANGE walks
/// the set. Each element is encoded once, as it is read where it is stored,
/// into one buffer holding the RESP2 bytes of the whole array: the member as
/// a bulk string and, with scores, the score's text (printed on the stack) as
/// the next one. A RESP2 reply is then that buffer behind its header; RESP3
/// (a `[member, double]` pair per element) and the plain reply values of
/// [`Members::to_reply`] are read back from it. The buffer grows by doubling:
/// no allocation per element, one per reply.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Members {
    bulks: Vec<u8>,
    with_scores: bool,
    len: usize,
}

impl Members {
    /// An empty reply; `with_scores` says which shape it has.
    pub fn new(with_scores: bool) -> Members {
        Members {
            with_scores,
            ..Members::default()
        }
    }

    /// An empty reply with room for `n` elements of members about
    /// `member_len` bytes long (the buffer still grows past it if needed).
    pub fn with_capacity(with_scores: bool, n: usize, member_len: usize) -> Members {
        let n = n.min(1 << 16);
        // A bulk's header and end are at most 8 bytes for such members; a
        // score's bulk is at most 32 (usually under 16).
        let per_element = member_len + 8 + if with_scores { 16 } else { 0 };
        Members {
            bulks: Vec::with_capacity(n * per_element),
            with_scores,
            len: 0,
        }
    }

    /// Appends one element (its score is ignored without WITHSCORES).
    #[inline]
    pub fn push(&mut self, member: &[u8], score: f64) {
        bulk(&mut self.bulks, member);
        if self.with_scores {
            bulk(
                &mut self.bulks,
                crate::num::DoubleText::new(score).as_bytes(),
            );
        }
        self.len += 1;
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn encode(&self, out: &mut Vec<u8>, resp3: bool) {
        let n = self.len as i64;
        if !self.with_scores || !resp3 {
            header(out, b'*', if self.with_scores { 2 * n } else { n });
            out.extend_from_slice(&self.bulks);
            return;
        }
        // RESP3: each member's bulk as it is, its score's text as a double.
        header(out, b'*', n);
        let mut bulks = Bulks(&self.bulks);
        while let (Some((member, _)), Some((_, score))) = (bulks.next(), bulks.next()) {
            out.extend_from_slice(b"*2\r\n");
            out.extend_from_slice(member);
            line(out, b',', score);
        }
    }

    /// The same reply as ordinary values: [`Reply::Array`] of bulks, or
    /// [`Reply::Pairs`] (for scripts, and for tests comparing replies). A
    /// score's text reads back as the very double it was printed from (the
    /// shortest text that does).
    pub fn to_reply(&self) -> Reply {
        let mut bulks = Bulks(&self.bulks);
        if self.with_scores {
            let mut pairs = Vec::with_capacity(self.len);
            while let (Some((_, member)), Some((_, score))) = (bulks.next(), bulks.next()) {
                let score = crate::num::parse_score_bound(score).map_or(f64::NAN, |(v, _)| v);
                pairs.push((Reply::bulk(member), Reply::Double(score)));
            }
            Reply::Pairs(pairs)
        } else {
            Reply::Array(bulks.map(|(_, member)| Reply::bulk(member)).collect())
        }
    }
}

/// The bulk strings of a [`Members`] buffer in turn: each as its whole
/// encoding and its bytes.
struct Bulks<'a>(&'a [u8]);

impl<'a> Iterator for Bulks<'a> {
    type Item = (&'a [u8], &'a [u8]);

    fn next(&mut self) -> Option<Self::Item> {
        // `$<len>\r\n<bytes>\r\n`, written by `bulk` above: the length has
        // no `\r`, the bytes may.
        let eol = self.0.iter().position(|&b| b == b'\r')?;
        let len: usize = std::str::from_utf8(&self.0[1..eol]).ok()?.parse().ok()?;
        let end = eol + 2 + len + 2;
        let (whole, rest) = self.0.split_at(end);
        self.0 = rest;
        Some((whole, &whole[eol + 2..eol + 2 + len]))
    }
}

impl Reply {
    /// `+OK`, without an allocation.
    pub fn ok() -> Reply {
        Reply::Status(Cow::Borrowed("OK"))
    }

    /// A bulk string copied from `bytes` (no allocation when short).
    pub fn bulk(bytes: impl AsRef<[u8]>) -> Reply {
        Reply::Bulk(BulkBytes::copied(bytes.as_ref()))
    }

    /// A bulk string of a vector a command already built (kept, not copied).
    pub fn bulk_vec(bytes: Vec<u8>) -> Reply {
        Reply::Bulk(BulkBytes::from(bytes))
    }

    /// An error reply; `text` is the whole line after `-`, e.g. `ERR syntax error`.
    pub fn error(text: impl Into<ErrorText>) -> Reply {
        Reply::Error(text.into())
    }

    /// A double, formatted the way Redis formats double replies.
    pub fn double(value: f64) -> Reply {
        Reply::Double(value)
    }

    pub fn is_error(&self) -> bool {
        matches!(self, Reply::Error(_))
    }

    /// The RESP2 bytes of this reply.
    pub fn to_resp2(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.encode(&mut out, Protocol::Resp2);
        out
    }

    /// Appends the encoding of this reply in `protocol` to `out`.
    pub fn encode(&self, out: &mut Vec<u8>, protocol: Protocol) {
        let resp3 = protocol == Protocol::Resp3;
        match self {
            Reply::Status(s) => line(out, b'+', s.as_bytes()),
            Reply::Error(s) => line(out, b'-', s.as_bytes()),
            Reply::Integer(n) => header(out, b':', *n),
            Reply::Bulk(b) => bulk(out, b),
            Reply::Nil if resp3 => out.extend_from_slice(b"_\r\n"),
            Reply::Nil => out.extend_from_slice(b"$-1\r\n"),
            Reply::NilArray if resp3 => out.extend_from_slice(b"_\r\n"),
            Reply::NilArray => out.extend_from_slice(b"*-1\r\n"),
            Reply::Array(items) => {
                header(out, b'*', items.len() as i64);
                for item in items {
                    item.encode(out, protocol);
                }
            }
            Reply::Double(d) => {
                // On the stack: a reply with many scores allocates nothing per score.
                let text = crate::num::DoubleText::new(*d);
                if resp3 {
                    line(out, b',', text.as_bytes());
                } else {
                    bulk(out, text.as_bytes());
                }
            }
            Reply::Map(pairs) => {
                if resp3 {
                    header(out, b'%', pairs.len() as i64);
                } else {
                    header(out, b'*', 2 * pairs.len() as i64);
                }
                for (k, v) in pairs {
                    k.encode(out, protocol);
                    v.encode(out, protocol);
                }
            }
            Reply::Pairs(pairs) => {
                if resp3 {
                    header(out, b'*', pairs.len() as i64);
                } else {
                    header(out, b'*', 2 * pairs.len() as i64);
                }
                for (a, b) in pairs {
                    if resp3 {
                        header(out, b'*', 2);
                    }
                    a.encode(out, protocol);
                    b.encode(out, protocol);
                }
            }
            Reply::Set(items) | Reply::Push(items) => {
                let kind = match (self, resp3) {
                    (Reply::Set(_), true) => b'~',
                    (Reply::Push(_), true) => b'>',
                    _ => b'*',
                };
                header(out, kind, items.len() as i64);
                for item in items {
                    item.encode(out, protocol);
                }
            }
            Reply::Bool(b) if resp3 => {
                out.extend_from_slice(if *b { b"#t\r\n" } else { b"#f\r\n" })
            }
            Reply::Bool(b) => header(out, b':', *b as i64),
            Reply::BigNumber(n) if resp3 => line(out, b'(', n.as_bytes()),
            Reply::BigNumber(n) => bulk(out, n.as_bytes()),
            Reply::Verbatim(text) if resp3 => {
                header(out, b'=', text.len() as i64 + 4);
                out.extend_from_slice(b"txt:");
                out.extend_from_slice(text.as_bytes());
                out.extend_from_slice(b"\r\n");
            }
            Reply::Verbatim(text) => bulk(out, text.as_bytes()),
            Reply::Attributed(attrs, reply) => {
                if resp3 {
                    header(out, b'|', attrs.len() as i64);
                    for (k, v) in attrs {
                        k.encode(out, protocol);
                        v.encode(out, protocol);
                    }
                }
                reply.encode(out, protocol);
            }
            Reply::Members(m) => m.encode(out, resp3),
        }
    }

    /// This reply with [`Reply::Members`] turned into the ordinary shapes it
    /// stands for (the values a test or a script compares).
    pub fn expanded(self) -> Reply {
        match self {
            Reply::Members(m) => m.to_reply(),
            other => other,
        }
    }
}

fn line(out: &mut Vec<u8>, kind: u8, text: &[u8]) {
    out.push(kind);
    out.extend_from_slice(text);
    out.extend_from_slice(b"\r\n");
}

fn bulk(out: &mut Vec<u8>, bytes: &[u8]) {
    let len = bytes.len();
    // The header of a bulk shorter than 100 bytes (members, scores, most
    // values) is a fixed-size store, not digits written into a buffer and
    // copied (Redis keeps ready-made headers below 32 bytes, `shared.bulkhdr`).
    if len < 10 {
        out.reserve(4 + len + 2);
        out.extend_from_slice(&[b'$', b'0' + len as u8, b'\r', b'\n']);
    } else if len < 100 {
        out.reserve(5 + len + 2);
        out.extend_from_slice(&[
            b'$',
            b'0' + (len / 10) as u8,
            b'0' + (len % 10) as u8,
            b'\r',
            b'\n',
        ]);
    } else {
        let mut buf = [0u8; HEADER_MAX];
        let head = header_bytes(&mut buf, b'$', len as i64);
        // One capacity check for the header, the bytes and the CRLF, asking for
        // exactly what they take (a buffer sized for a reply does not grow).
        out.reserve(head.len() + len + 2);
        out.extend_from_slice(head);
    }
    out.extend_from_slice(bytes);
    out.extend_from_slice(b"\r\n");
}

/// The longest header: the kind, a sign, 19 digits and the CRLF.
const HEADER_MAX: usize = 23;

/// Writes `<kind><n>\r\n` without going through `format!` (this runs for every
/// element of every reply).
fn header(out: &mut Vec<u8>, kind: u8, n: i64) {
    let mut buf = [0u8; HEADER_MAX];
    out.extend_from_slice(header_bytes(&mut buf, kind, n));
}

/// `<kind><n>\r\n`, built right to left in `buf` so that it is appended with
/// one copy, where a push per part checked the vector's capacity four times
/// (Redis keeps ready-made headers for lengths below 32 for the same reason,
/// `shared.bulkhdr`).
fn header_bytes(buf: &mut [u8; HEADER_MAX], kind: u8, n: i64) -> &[u8] {
    buf[HEADER_MAX - 2..].copy_from_slice(b"\r\n");
    let mut at = crate::num::signed_digits_back(n, &mut buf[..HEADER_MAX - 2]);
    at -= 1;
    buf[at] = kind;
    &buf[at..]
}

/// Error texts shared by many commands, worded exactly as Redis words them.
pub mod errors {
    pub const SYNTAX: &str = "ERR syntax error";
    pub const WRONGTYPE: &str = "WRONGTYPE Operation against a key holding the wrong kind of value";
    pub const NOT_INTEGER: &str = "ERR value is not an integer or out of range";
    pub const NOT_FLOAT: &str = "ERR value is not a valid float";

    pub fn arity(command: &str) -> String {
        format!("ERR wrong number of arguments for '{command}' command")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn encoded(r: Reply, p: Protocol) -> String {
        let mut out = Vec::new();
        r.encode(&mut out, p);
        String::from_utf8(out).unwrap()
    }

    /// The header written right to left is the decimal text, at every
    /// number of digits and both signs.
    #[test]
    fn headers_read_as_the_number() {
        let mut n: i64 = 1;
        let mut cases = vec![0, i64::MAX, i64::MIN, i64::MIN + 1];
        for _ in 0..19 {
            cases.extend([n - 1, n, n + 1, -n, -(n - 1), 7 * n]);
            n = n.saturating_mul(10);
        }
        for n in cases {
            let mut out = Vec::new();
            header(&mut out, b':', n);
            assert_eq!(out, format!(":{n}\r\n").into_bytes(), "{n}");
        }
        let mut out = Vec::new();
        bulk(&mut out, b"member");
        assert_eq!(out, b"$6\r\nmember\r\n");
    }

    /// A bulk's header is its decimal length on both sides of the one- and
    /// two-digit shortcuts.
    #[test]
    fn bulk_headers_read_as_the_length() {
        for len in [0, 1, 9, 10, 11, 42, 99, 100, 101, 999, 1000, 65536] {
            let bytes = vec![b'x'; len];
            let mut out = b"before".to_vec();
            bulk(&mut out, &bytes);
            let want = [
                &b"before"[..],
                format!("${len}\r\n").as_bytes(),
                &bytes,
                b"\r\n",
            ]
            .concat();
            assert_eq!(out, want, "length {len}");
        }
    }

    #[test]
    fn encodes_every_shape_in_resp2() {
        let e = |r| encoded(r, Protocol::Resp2);
        assert_eq!(e(Reply::ok()), "+OK\r\n");
        assert_eq!(e(Reply::error("ERR x")), "-ERR x\r\n");
        assert_eq!(e(Reply::Integer(-3)), ":-3\r\n");
        assert_eq!(e(Reply::Integer(i64::MIN)), ":-9223372036854775808\r\n");
        assert_eq!(e(Reply::Integer(0)), ":0\r\n");
        assert_eq!(e(Reply::bulk("hé")), "$3\r\nhé\r\n");
        assert_eq!(e(Reply::Nil), "$-1\r\n");
        assert_eq!(e(Reply::NilArray), "*-1\r\n");
        assert_eq!(
            e(Reply::Array(vec![Reply::Integer(1), Reply::Nil])),
            "*2\r\n:1\r\n$-1\r\n"
        );
        assert_eq!(e(Reply::Double(1.5)), "$3\r\n1.5\r\n");
        assert_eq!(e(Reply::Double(f64::INFINITY)), "$3\r\ninf\r\n");
        assert_eq!(
            e(Reply::Map(vec![(Reply::bulk("a"), Reply::Integer(1))])),
            "*2\r\n$1\r\na\r\n:1\r\n"
        );
        assert_eq!(e(Reply::Set(vec![Reply::bulk("x")])), "*1\r\n$1\r\nx\r\n");
        assert_eq!(
            e(Reply::Pairs(vec![(Reply::bulk("m"), Reply::Double(1.5))])),
            "*2\r\n$1\r\nm\r\n$3\r\n1.5\r\n"
        );
        assert_eq!(e(Reply::Bool(true)), ":1\r\n");
        assert_eq!(e(Reply::BigNumber("12".into())), "$2\r\n12\r\n");
        assert_eq!(e(Reply::Verbatim("hi".into())), "$2\r\nhi\r\n");
        assert_eq!(e(Reply::Push(vec![Reply::bulk("m")])), "*1\r\n$1\r\nm\r\n");
    }

    #[test]
    fn encodes_every_shape_in_resp3() {
        let e = |r| encoded(r, Protocol::Resp3);
        assert_eq!(e(Reply::Nil), "_\r\n");
        assert_eq!(e(Reply::NilArray), "_\r\n");
        assert_eq!(e(Reply::Double(1.5)), ",1.5\r\n");
        assert_eq!(e(Reply::Double(f64::NEG_INFINITY)), ",-inf\r\n");
        assert_eq!(
            e(Reply::Map(vec![(Reply::bulk("a"), Reply::Integer(1))])),
            "%1\r\n$1\r\na\r\n:1\r\n"
        );
        assert_eq!(e(Reply::Set(vec![Reply::bulk("x")])), "~1\r\n$1\r\nx\r\n");
        assert_eq!(
            e(Reply::Pairs(vec![(Reply::bulk("m"), Reply::Double(1.5))])),
            "*1\r\n*2\r\n$1\r\nm\r\n,1.5\r\n"
        );
        assert_eq!(e(Reply::Bool(false)), "#f\r\n");
        assert_eq!(e(Reply::BigNumber("12".into())), "(12\r\n");
        assert_eq!(e(Reply::Verbatim("hi".into())), "=6\r\ntxt:hi\r\n");
        assert_eq!(e(Reply::Push(vec![Reply::bulk("m")])), ">1\r\n$1\r\nm\r\n");
    }
}
