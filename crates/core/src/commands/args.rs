//! Access to a command's arguments, with the parsing errors Redis uses.

use crate::num;
use crate::reply::{errors, Reply};

/// The arguments of one command (`argv[0]` is the command name).
pub struct Args<'a> {
    argv: &'a [Vec<u8>],
}

impl<'a> Args<'a> {
    pub fn new(argv: &'a [Vec<u8>]) -> Args<'a> {
        Args { argv }
    }

    pub fn len(&self) -> usize {
        self.argv.len()
    }

    pub fn is_empty(&self) -> bool {
        self.argv.is_empty()
    }

    pub fn bytes(&self, i: usize) -> &'a [u8] {
        &self.argv[i]
    }

    pub fn all(&self) -> &'a [Vec<u8>] {
        self.argv
    }

    /// True if argument `i` equals `word`, ignoring ASCII case. Like Redis's
    /// `strcasecmp` on a C string, the comparison stops at a NUL byte, so `NX\0junk`
    /// counts as `NX`.
    pub fn is(&self, i: usize, word: &str) -> bool {
        let arg = &self.argv[i];
        let c_string = arg.split(|&b| b == 0).next().unwrap_or(arg);
        c_string.eq_ignore_ascii_case(word.as_bytes())
    }

    /// Argument `i` as a 64-bit integer, or Redis's "not an integer" error.
    pub fn int(&self, i: usize) -> Result<i64, Reply> {
        num::parse_i64(&self.argv[i]).ok_or_else(|| Reply::error(errors::NOT_INTEGER))
    }

    /// Argument `i` as a double, or Redis's "not a valid float" error.
    pub fn float(&self, i: usize) -> Result<f64, Reply> {
        num::parse_double_arg(&self.argv[i]).ok_or_else(|| Reply::error(errors::NOT_FLOAT))
    }
}
