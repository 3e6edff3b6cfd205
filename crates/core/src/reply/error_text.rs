//! The text of an error reply, as bytes.
//!
//! Redis writes an error line with whatever bytes it was given: an unknown
//! command's name, an unknown subcommand, the string a script passed to
//! `redis.error_reply` or returned as `{err=...}`. None of them has to be
//! UTF-8, and a client receives them unchanged (only `\r` and `\n` become
//! spaces, so the line stays one line). An error text is therefore bytes;
//! the core's own texts, which are all ASCII, convert from `&str` and
//! `String`, and read back as text with [`ErrorText::to_str_lossy`].

use std::borrow::Cow;
use std::fmt;

#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct ErrorText(Vec<u8>);

impl ErrorText {
    /// An error line of any bytes, `\r` and `\n` turned into spaces as
    /// Redis's `addReplyErrorLength` does.
    pub fn one_line(bytes: impl Into<Vec<u8>>) -> ErrorText {
        let mut bytes = bytes.into();
        for b in &mut bytes {
            if matches!(*b, b'\r' | b'\n') {
                *b = b' ';
            }
        }
        ErrorText(bytes)
    }

    /// `prefix`, a client's argument as C's `%s` prints it (up to a NUL),
    /// then `suffix`: the usual shape of an error that names an argument.
    pub fn naming(prefix: &str, arg: &[u8], suffix: &str) -> ErrorText {
        let arg = crate::num::c_str(arg);
        let mut text = Vec::with_capacity(prefix.len() + arg.len() + suffix.len());
        text.extend_from_slice(prefix.as_bytes());
        text.extend_from_slice(arg);
        text.extend_from_slice(suffix.as_bytes());
        ErrorText::one_line(text)
    }

    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// The text, with any byte that is not UTF-8 shown as U+FFFD (for
    /// messages and tests, never for the wire).
    pub fn to_str_lossy(&self) -> Cow<'_, str> {
        String::from_utf8_lossy(&self.0)
    }

    pub fn starts_with(&self, prefix: &str) -> bool {
        self.0.starts_with(prefix.as_bytes())
    }

    pub fn contains(&self, needle: &str) -> bool {
        let needle = needle.as_bytes();
        needle.is_empty() || self.0.windows(needle.len()).any(|w| w == needle)
    }

    /// The error code: the first word (`ERR`, `WRONGTYPE`, ...).
    pub fn code(&self) -> &[u8] {
        let end = self
            .0
            .iter()
            .position(|&b| b == b' ')
            .unwrap_or(self.0.len());
        &self.0[..end]
    }
}

impl From<Vec<u8>> for ErrorText {
    fn from(bytes: Vec<u8>) -> ErrorText {
        ErrorText(bytes)
    }
}

impl From<&[u8]> for ErrorText {
    fn from(bytes: &[u8]) -> ErrorText {
        ErrorText(bytes.to_vec())
    }
}

impl From<String> for ErrorText {
    fn from(text: String) -> ErrorText {
        ErrorText(text.into_bytes())
    }
}

impl From<&str> for ErrorText {
    fn from(text: &str) -> ErrorText {
        ErrorText(text.as_bytes().to_vec())
    }
}

impl PartialEq<str> for ErrorText {
    fn eq(&self, other: &str) -> bool {
        self.0 == other.as_bytes()
    }
}

impl PartialEq<&str> for ErrorText {
    fn eq(&self, other: &&str) -> bool {
        self.0 == other.as_bytes()
    }
}

impl fmt::Display for ErrorText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_str_lossy())
    }
}

impl fmt::Debug for ErrorText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.to_str_lossy())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_stay_bytes_and_read_back_as_text() {
        let e = ErrorText::from(&b"ERR unknown command '\xcb3'"[..]);
        assert_eq!(e.as_bytes(), b"ERR unknown command '\xcb3'");
        assert_eq!(e.to_str_lossy(), "ERR unknown command '\u{fffd}3'");
        assert_eq!(e.code(), b"ERR");
        assert!(e.starts_with("ERR unknown"));
        assert!(e.contains("command"));
        assert_eq!(ErrorText::from("WRONGTYPE x"), "WRONGTYPE x");
        assert_eq!(ErrorText::from("NOCODE").code(), b"NOCODE");
        assert_eq!(
            ErrorText::one_line(&b"a\r\nb\xff"[..]).as_bytes(),
            b"a  b\xff"
        );
        assert_eq!(
            ErrorText::naming("ERR x '", b"\xff\nz\0hidden", "'").as_bytes(),
            b"ERR x '\xff z'"
        );
    }
}
