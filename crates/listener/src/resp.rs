//! Parsing of client requests: RESP multi-bulk arrays, and inline commands (what
//! `telnet` or `nc` users type).

/// The outcome of trying to parse one command from the front of a buffer.
#[derive(Debug, PartialEq)]
pub enum Parsed {
    /// A full command and the number of bytes it used.
    Command(Vec<Vec<u8>>, usize),
    /// More bytes are needed.
    Incomplete,
    /// The bytes cannot be a request; the connection should be closed.
    Invalid(String),
}

/// Largest bulk argument accepted, as Redis's default proto-max-bulk-len (512 MB).
const MAX_BULK: usize = 512 * 1024 * 1024;

pub fn parse_command(buf: &[u8]) -> Parsed {
    if buf.is_empty() {
        return Parsed::Incomplete;
    }
    if buf[0] == b'*' {
        parse_multibulk(buf)
    } else {
        parse_inline(buf)
    }
}

fn line_end(buf: &[u8], from: usize) -> Option<usize> {
    buf[from..]
        .windows(2)
        .position(|w| w == b"\r\n")
        .map(|p| from + p)
}

fn parse_number(bytes: &[u8]) -> Option<i64> {
    std::str::from_utf8(bytes).ok()?.parse().ok()
}

fn parse_multibulk(buf: &[u8]) -> Parsed {
    let Some(end) = line_end(buf, 0) else {
        return Parsed::Incomplete;
    };
    let Some(count) = parse_number(&buf[1..end]) else {
        return Parsed::Invalid("invalid multibulk length".into());
    };
    let mut pos = end + 2;
    let mut argv = Vec::with_capacity(count.max(0) as usize);
    for _ in 0..count.max(0) {
        if pos >= buf.len() {
            return Parsed::Incomplete;
        }
        if buf[pos] != b'$' {
            return Parsed::Invalid(format!("expected '$', got '{}'", buf[pos] as char));
        }
        let Some(end) = line_end(buf, pos) else {
            return Parsed::Incomplete;
        };
        let len = match parse_number(&buf[pos + 1..end]) {
            Some(n) if n >= 0 && (n as usize) <= MAX_BULK => n as usize,
            _ => return Parsed::Invalid("invalid bulk length".into()),
        };
        let start = end + 2;
        if buf.len() < start + len + 2 {
            return Parsed::Incomplete;
        }
        argv.push(buf[start..start + len].to_vec());
        pos = start + len + 2;
    }
    Parsed::Command(argv, pos)
}

fn parse_inline(buf: &[u8]) -> Parsed {
    let Some(nl) = buf.iter().position(|&b| b == b'\n') else {
        return Parsed::Incomplete;
    };
    let line = &buf[..nl];
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let argv = line
        .split(|b| b.is_ascii_whitespace())
        .filter(|w| !w.is_empty())
        .map(|w| w.to_vec())
        .collect();
    Parsed::Command(argv, nl + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_multibulk_pipelined_and_partial() {
        let two = b"*2\r\n$4\r\nPING\r\n$2\r\nhi\r\n*1\r\n$4\r\nPING\r\n";
        match parse_command(two) {
            Parsed::Command(argv, used) => {
                assert_eq!(argv, vec![b"PING".to_vec(), b"hi".to_vec()]);
                assert_eq!(
                    parse_command(&two[used..]),
                    Parsed::Command(vec![b"PING".to_vec()], 14)
                );
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(
            parse_command(b"*2\r\n$4\r\nPING\r\n$2\r\nh"),
            Parsed::Incomplete
        );
    }

    #[test]
    fn parses_inline_commands() {
        assert_eq!(
            parse_command(b"ZSCORE lb  zed\r\n"),
            Parsed::Command(
                vec![b"ZSCORE".to_vec(), b"lb".to_vec(), b"zed".to_vec()],
                16
            )
        );
    }
}
