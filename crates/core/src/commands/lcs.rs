//! LCS (src/t_string.c, `lcsCommand`): the longest common subsequence of two
//! strings, with Redis 8.6.3's algorithm, so that among several equally long
//! answers the core picks the same one, and the same match ranges in the same
//! order.
//!
//! `LCS key1 key2 [LEN] [IDX] [MINMATCHLEN n] [WITHMATCHLEN]`:
//!
//! * both keys are looked up first: a key of another type is `ERR The specified
//!   keys must contain string values` (before any option is read); a missing key
//!   is the empty string;
//! * the table is Redis's `(len1 + 1) × (len2 + 1)` array of 32-bit lengths. Its
//!   size is checked before anything is allocated: above `proto-max-bulk-len`
//!   bytes it is refused (`Insufficient memory, transient memory for LCS exceeds
//!   proto-max-bulk-len`), as is an allocation that fails;
//! * the answer is walked back from the end: on equal bytes both indexes move,
//!   otherwise the one whose row or column keeps the longer LCS (ties move along
//!   the second string). Contiguous matches form ranges, emitted from the end of
//!   the strings towards their start;
//! * replies: the LCS as a bulk string; with LEN its length; with IDX a map
//!   `matches` → `[[[a_start, a_end], [b_start, b_end], (len)], ...]`, `len` → n
//!   (a map in RESP3, a flat array of four in RESP2). MINMATCHLEN drops shorter
//!   ranges (a negative one counts as 0); LEN with IDX is an error.
//!
//! How it differs from the C code: the backtrack builds the string and the
//! ranges in vectors instead of a deferred reply; nothing else.

use super::string_value::{max_bulk_len, read_bytes};
use super::{Args, CmdResult, Server};
use crate::reply::{errors, Reply};

const NOT_STRINGS: &str = "ERR The specified keys must contain string values";
const TOO_BIG: &str =
    "ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len";
const NO_MEMORY: &str = "ERR Insufficient memory, failed allocating transient memory for LCS";

/// One run of contiguous matching bytes: `a[a_start..=a_end]` equals
/// `b[b_start..=b_end]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Match {
    pub a_start: usize,
    pub a_end: usize,
    pub b_start: usize,
    pub b_end: usize,
}

impl Match {
    pub fn len(&self) -> usize {
        self.a_end - self.a_start + 1
    }
}

/// Why the table could not be built.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TableError {
    /// A string of 2^32 - 2 bytes or more (the table holds 32-bit lengths).
    TooLong,
    /// The table would pass the byte limit.
    OverLimit,
    /// The allocation failed (or its size overflowed).
    NoMemory,
}

/// `LCS[i][j]`: the length of the LCS of `a[..i]` and `b[..j]`.
pub(crate) struct Table {
    cells: Vec<u32>,
    width: usize,
}

impl Table {
    /// Fills the table for `a` and `b`, refusing one of more than `limit` bytes.
    pub fn build(a: &[u8], b: &[u8], limit: u64) -> Result<Table, TableError> {
        let max = u32::MAX as usize - 1;
        if a.len() >= max || b.len() >= max {
            return Err(TableError::TooLong);
        }
        let (rows, width) = (a.len() + 1, b.len() + 1);
        let cells = (rows as u64).checked_mul(width as u64);
        let bytes = cells.and_then(|c| c.checked_mul(4));
        let (Some(cells), Some(bytes)) = (cells, bytes) else {
            return Err(TableError::NoMemory);
        };
        if bytes > limit {
            return Err(TableError::OverLimit);
        }
        let cells = usize::try_from(cells).map_err(|_| TableError::NoMemory)?;
        let mut table = Vec::new();
        table
            .try_reserve_exact(cells)
            .map_err(|_| TableError::NoMemory)?;
        table.resize(cells, 0u32);
        for i in 1..rows {
            let (above, row) = table[(i - 1) * width..(i + 1) * width].split_at_mut(width);
            for j in 1..width {
                row[j] = if a[i - 1] == b[j - 1] {
                    above[j - 1] + 1
                } else {
                    above[j].max(row[j - 1])
                };
            }
        }
        Ok(Table {
            cells: table,
            width,
        })
    }

    fn at(&self, i: usize, j: usize) -> u32 {
        self.cells[i * self.width + j]
    }

    /// The length of the LCS of the whole strings.
    pub fn len(&self) -> usize {
        *self.cells.last().unwrap_or(&0) as usize
    }

    /// Redis's walk back from `(a.len(), b.len())`: the LCS itself and the match
    /// ranges (from the end of the strings backwards) at least `min_len` long
    /// (0 keeps all).
    pub fn walk(&self, a: &[u8], b: &[u8], min_len: u64) -> (Vec<u8>, Vec<Match>) {
        let mut result = vec![0u8; self.len()];
        let mut ranges = Vec::new();
        let mut idx = self.len();
        let (mut i, mut j) = (a.len(), b.len());
        // `a.len()` as the start marks "no range open", as in Redis.
        let unset = a.len();
        let mut m = Match {
            a_start: unset,
            a_end: 0,
            b_start: 0,
            b_end: 0,
        };
        while i > 0 && j > 0 {
            let mut emit = false;
            if a[i - 1] == b[j - 1] {
                result[idx - 1] = a[i - 1];
                if m.a_start == unset {
                    m = Match {
                        a_start: i - 1,
                        a_end: i - 1,
                        b_start: j - 1,
                        b_end: j - 1,
                    };
                } else if m.a_start == i && m.b_start == j {
                    // Contiguous: extend the range backwards.
                    m.a_start -= 1;
                    m.b_start -= 1;
                } else {
                    emit = true;
                }
                if m.a_start == 0 || m.b_start == 0 {
                    emit = true;
                }
                idx -= 1;
                i -= 1;
                j -= 1;
            } else {
                if self.at(i - 1, j) > self.at(i, j - 1) {
                    i -= 1;
                } else {
                    j -= 1;
                }
                if m.a_start != unset {
                    emit = true;
                }
            }
            if emit {
                if min_len == 0 || m.len() as u64 >= min_len {
                    ranges.push(m);
                }
                m.a_start = unset;
            }
        }
        (result, ranges)
    }
}

/// What the options ask for.
struct Options {
    len: bool,
    idx: bool,
    with_match_len: bool,
    min_match_len: u64,
}

fn parse(a: &Args) -> Result<Options, Reply> {
    let mut o = Options {
        len: false,
        idx: false,
        with_match_len: false,
        min_match_len: 0,
    };
    let mut j = 3;
    while j < a.len() {
        let more = j + 1 < a.len();
        if a.is(j, "idx") {
            o.idx = true;
        } else if a.is(j, "len") {
            o.len = true;
        } else if a.is(j, "withmatchlen") {
            o.with_match_len = true;
        } else if a.is(j, "minmatchlen") && more {
            o.min_match_len = a.int(j + 1)?.max(0) as u64;
            j += 1;
        } else {
            return Err(Reply::error(errors::SYNTAX));
        }
        j += 1;
    }
    if o.len && o.idx {
        return Err(Reply::error(
            "ERR If you want both the length and indexes, please just use IDX.",
        ));
    }
    Ok(o)
}

pub(super) fn lcs(s: &mut Server, a: &Args) -> CmdResult {
    // Both keys are looked up (and lazily expired) before either is judged.
    let first = read_bytes(s, a.bytes(1));
    let second = read_bytes(s, a.bytes(2));
    let (Ok(x), Ok(y)) = (first, second) else {
        return Err(Reply::error(NOT_STRINGS));
    };
    let (x, y) = (x.unwrap_or_default(), y.unwrap_or_default());
    let o = parse(a)?;
    let table = Table::build(&x, &y, max_bulk_len(s)).map_err(|e| {
        Reply::error(match e {
            TableError::TooLong => "ERR String too long for LCS",
            TableError::OverLimit => TOO_BIG,
            TableError::NoMemory => NO_MEMORY,
        })
    })?;
    let total = Reply::Integer(table.len() as i64);
    if o.len {
        return Ok(total);
    }
    let (text, ranges) = table.walk(&x, &y, o.min_match_len);
    if !o.idx {
        return Ok(Reply::bulk_vec(text));
    }
    let pair = |from: usize, to: usize| {
        Reply::Array(vec![Reply::Integer(from as i64), Reply::Integer(to as i64)])
    };
    let matches = ranges
        .iter()
        .map(|m| {
            let mut item = vec![pair(m.a_start, m.a_end), pair(m.b_start, m.b_end)];
            if o.with_match_len {
                item.push(Reply::Integer(m.len() as i64));
            }
            Reply::Array(item)
        })
        .collect();
    Ok(Reply::Map(vec![
        (Reply::bulk("matches"), Reply::Array(matches)),
        (Reply::bulk("len"), total),
    ]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reply::Protocol;

    fn walk(a: &str, b: &str) -> (String, Vec<Match>) {
        let t = Table::build(a.as_bytes(), b.as_bytes(), u64::MAX).unwrap();
        let (s, m) = t.walk(a.as_bytes(), b.as_bytes(), 0);
        (String::from_utf8(s).unwrap(), m)
    }

    fn m(a: (usize, usize), b: (usize, usize)) -> Match {
        Match {
            a_start: a.0,
            a_end: a.1,
            b_start: b.0,
            b_end: b.1,
        }
    }

    #[test]
    fn the_documentations_example() {
        let (text, ranges) = walk("ohmytext", "mynewtext");
        assert_eq!(text, "mytext");
        assert_eq!(ranges, vec![m((4, 7), (5, 8)), m((2, 3), (0, 1))]);
        assert_eq!(walk("", "abc").0, "");
        assert_eq!(walk("abc", "abc"), ("abc".into(), vec![m((0, 2), (0, 2))]));
    }

    #[test]
    fn ties_move_along_the_second_string() {
        // "ab" vs "ba": both "a" and "b" are answers; Redis 8.6.3 says "b",
        // and "a" the other way round.
        assert_eq!(walk("ab", "ba").0, "b");
        assert_eq!(walk("ba", "ab").0, "a");
    }

    #[test]
    fn the_table_is_refused_before_it_is_allocated() {
        assert_eq!(
            Table::build(&[1; 100], &[1; 100], 101 * 101 * 4 - 1).err(),
            Some(TableError::OverLimit)
        );
        assert!(Table::build(&[1; 100], &[1; 100], 101 * 101 * 4).is_ok());
    }

    #[test]
    fn replies_and_errors_read_like_redis() {
        let mut s = Server::new();
        s.cmd(&["SET", "k1", "ohmytext"]);
        s.cmd(&["SET", "k2", "mynewtext"]);
        assert_eq!(s.cmd(&["LCS", "k1", "k2"]), Reply::bulk("mytext"));
        assert_eq!(s.cmd(&["LCS", "k1", "k2", "LEN"]), Reply::Integer(6));
        assert_eq!(s.cmd(&["LCS", "k1", "nokey"]), Reply::bulk(""));
        let idx = s.cmd(&["LCS", "k1", "k2", "IDX", "MINMATCHLEN", "4", "WITHMATCHLEN"]);
        let mut resp2 = Vec::new();
        idx.encode(&mut resp2, Protocol::Resp2);
        assert_eq!(
            String::from_utf8(resp2).unwrap(),
            "*4\r\n$7\r\nmatches\r\n*1\r\n*3\r\n*2\r\n:4\r\n:7\r\n*2\r\n:5\r\n:8\r\n:4\r\n\
             $3\r\nlen\r\n:6\r\n"
        );
        let mut resp3 = Vec::new();
        idx.encode(&mut resp3, Protocol::Resp3);
        assert!(resp3.starts_with(b"%2\r\n$7\r\nmatches\r\n"));
        assert_eq!(
            s.cmd(&["LCS", "k1", "k2", "LEN", "IDX"]),
            Reply::error("ERR If you want both the length and indexes, please just use IDX.")
        );
        assert_eq!(
            s.cmd(&["LCS", "k1", "k2", "MINMATCHLEN"]),
            Reply::error(errors::SYNTAX)
        );
        assert_eq!(
            s.cmd(&["LCS", "k1", "k2", "MINMATCHLEN", "x"]),
            Reply::error(errors::NOT_INTEGER)
        );
        s.cmd(&["ZADD", "z", "1", "a"]);
        // The type is judged before the options.
        assert_eq!(
            s.cmd(&["LCS", "k1", "z", "BOGUS"]),
            Reply::error(NOT_STRINGS)
        );
        s.cmd(&["CONFIG", "SET", "proto-max-bulk-len", "1mb"]);
        let long = "x".repeat(600);
        s.cmd(&["SET", "l1", &long]);
        s.cmd(&["SET", "l2", &long]);
        assert_eq!(s.cmd(&["LCS", "l1", "l2"]), Reply::error(TOO_BIG));
        s.cmd(&["SET", "l2", "xx"]);
        assert_eq!(s.cmd(&["LCS", "l1", "l2", "LEN"]), Reply::Integer(2));
    }
}
