//! A command's reply, and its RESP2 encoding.
//!
//! Redis answers in RESP; the core builds the same shapes so that a client cannot
//! tell the two apart. Only RESP2 is modelled: it is what clients speak unless they
//! send `HELLO 3`, and every lab uses it.

/// One reply, as Redis would send it over RESP2.
#[derive(Clone, Debug, PartialEq)]
pub enum Reply {
    /// `+OK`-style status line.
    Status(String),
    /// `-ERR ...` line; the text includes the error code (`ERR`, `WRONGTYPE`, ...).
    Error(String),
    /// `:<n>`
    Integer(i64),
    /// `$<len>` bulk string.
    Bulk(Vec<u8>),
    /// `$-1`, the RESP2 null bulk string.
    Nil,
    /// `*<n>` array of replies.
    Array(Vec<Reply>),
    /// `*-1`, the RESP2 null array (e.g. a blocking pop that timed out).
    NilArray,
}

impl Reply {
    pub fn ok() -> Reply {
        Reply::Status("OK".into())
    }

    pub fn bulk(bytes: impl AsRef<[u8]>) -> Reply {
        Reply::Bulk(bytes.as_ref().to_vec())
    }

    /// An error reply; `text` is the whole line after `-`, e.g. `ERR syntax error`.
    pub fn error(text: impl Into<String>) -> Reply {
        Reply::Error(text.into())
    }

    /// A double, formatted the way Redis formats double replies.
    pub fn double(value: f64) -> Reply {
        Reply::Bulk(crate::num::format_double(value).into_bytes())
    }

    pub fn is_error(&self) -> bool {
        matches!(self, Reply::Error(_))
    }

    /// Appends the RESP2 encoding of this reply to `out`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        match self {
            Reply::Status(s) => {
                out.push(b'+');
                out.extend_from_slice(s.as_bytes());
                out.extend_from_slice(b"\r\n");
            }
            Reply::Error(s) => {
                out.push(b'-');
                out.extend_from_slice(s.as_bytes());
                out.extend_from_slice(b"\r\n");
            }
            Reply::Integer(n) => header(out, b':', *n),
            Reply::Bulk(b) => {
                header(out, b'$', b.len() as i64);
                out.extend_from_slice(b);
                out.extend_from_slice(b"\r\n");
            }
            Reply::Nil => out.extend_from_slice(b"$-1\r\n"),
            Reply::Array(items) => {
                header(out, b'*', items.len() as i64);
                for item in items {
                    item.encode(out);
                }
            }
            Reply::NilArray => out.extend_from_slice(b"*-1\r\n"),
        }
    }
}

/// Writes `<kind><n>\r\n` without going through `format!` (this runs for every
/// element of every reply).
fn header(out: &mut Vec<u8>, kind: u8, n: i64) {
    out.push(kind);
    if n < 0 {
        out.push(b'-');
    }
    let mut digits = [0u8; 20];
    let mut rest = n.unsigned_abs();
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[at..]);
    out.extend_from_slice(b"\r\n");
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

    fn encoded(r: Reply) -> String {
        let mut out = Vec::new();
        r.encode(&mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn encodes_every_shape() {
        assert_eq!(encoded(Reply::ok()), "+OK\r\n");
        assert_eq!(encoded(Reply::error("ERR x")), "-ERR x\r\n");
        assert_eq!(encoded(Reply::Integer(-3)), ":-3\r\n");
        assert_eq!(
            encoded(Reply::Integer(i64::MIN)),
            ":-9223372036854775808\r\n"
        );
        assert_eq!(encoded(Reply::Integer(0)), ":0\r\n");
        assert_eq!(encoded(Reply::bulk("hé")), "$3\r\nhé\r\n");
        assert_eq!(encoded(Reply::Nil), "$-1\r\n");
        assert_eq!(encoded(Reply::NilArray), "*-1\r\n");
        assert_eq!(
            encoded(Reply::Array(vec![Reply::Integer(1), Reply::Nil])),
            "*2\r\n:1\r\n$-1\r\n"
        );
    }
}
