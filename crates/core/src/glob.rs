//! Redis's glob-style pattern matching (`stringmatchlen`), used by PSUBSCRIBE,
//! KEYS, SCAN MATCH and CONFIG GET:
//! `*` any run of bytes, `?` one byte, `[abc]` / `[^abc]` / `[a-z]` a class, and
//! `\x` a literal x. Matching is on bytes, case-sensitive.

pub fn glob_match(pattern: &[u8], text: &[u8]) -> bool {
    let (mut p, mut t) = (0, 0);
    // Where to resume after the last `*`: (pattern index after it, text index).
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        let step = if p < pattern.len() {
            single(pattern, p, text[t])
        } else {
            None
        };
        match step {
            Some(Step::Star) => {
                star = Some((p + 1, t));
                p += 1;
            }
            Some(Step::Matched(next)) => {
                p = next;
                t += 1;
            }
            None => match star {
                // Let the last star swallow one more byte and try again.
                Some((sp, st)) => {
                    star = Some((sp, st + 1));
                    p = sp;
                    t = st + 1;
                }
                None => return false,
            },
        }
    }
    pattern[p.min(pattern.len())..].iter().all(|&c| c == b'*')
}

/// [`glob_match`] ignoring ASCII case (Redis's `stringmatchlen(..., nocase=1)`,
/// used by CONFIG GET).
pub fn glob_match_nocase(pattern: &[u8], text: &[u8]) -> bool {
    glob_match(&pattern.to_ascii_lowercase(), &text.to_ascii_lowercase())
}

enum Step {
    Star,
    /// The byte matched; the pattern continues at this index.
    Matched(usize),
}

/// Tries the pattern element at `p` against one byte.
fn single(pattern: &[u8], p: usize, byte: u8) -> Option<Step> {
    match pattern[p] {
        b'*' => Some(Step::Star),
        b'?' => Some(Step::Matched(p + 1)),
        b'[' => class(pattern, p + 1, byte),
        b'\\' if p + 1 < pattern.len() => (pattern[p + 1] == byte).then_some(Step::Matched(p + 2)),
        c => (c == byte).then_some(Step::Matched(p + 1)),
    }
}

/// A `[...]` class starting after the `[`; an unterminated class runs to the end.
fn class(pattern: &[u8], mut p: usize, byte: u8) -> Option<Step> {
    let negate = p < pattern.len() && pattern[p] == b'^';
    if negate {
        p += 1;
    }
    let mut matched = false;
    while p < pattern.len() && pattern[p] != b']' {
        if pattern[p] == b'\\' && p + 1 < pattern.len() {
            matched |= pattern[p + 1] == byte;
            p += 2;
        } else if p + 2 < pattern.len() && pattern[p + 1] == b'-' {
            let (lo, hi) = (
                pattern[p].min(pattern[p + 2]),
                pattern[p].max(pattern[p + 2]),
            );
            matched |= (lo..=hi).contains(&byte);
            p += 3;
        } else {
            matched |= pattern[p] == byte;
            p += 1;
        }
    }
    let next = (p + 1).min(pattern.len());
    (matched != negate).then_some(Step::Matched(next))
}

#[cfg(test)]
mod tests {
    use super::glob_match;

    #[test]
    fn globs_like_redis() {
        let m = |p: &str, t: &str| glob_match(p.as_bytes(), t.as_bytes());
        assert!(m("leaderboard:*", "leaderboard:rank_update"));
        assert!(!m("leaderboard:*", "board:x"));
        assert!(m("h?llo", "hello") && !m("h?llo", "hllo"));
        assert!(m("h[ae]llo", "hallo") && !m("h[ae]llo", "hillo"));
        assert!(m("h[^e]llo", "hallo") && !m("h[^e]llo", "hello"));
        assert!(m("h[a-b]llo", "hbllo") && !m("h[a-b]llo", "hcllo"));
        assert!(m("a\\*b", "a*b") && !m("a\\*b", "axb"));
        assert!(m("*", "") && m("a*", "a") && m("*b*", "abc") && !m("*x*", "abc"));
    }
}
