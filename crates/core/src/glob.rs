//! Redis's glob-style pattern matching (`stringmatchlen`, util.c), used by
//! PSUBSCRIBE, KEYS, SCAN MATCH, CONFIG GET and COMMAND LIST:
//! `*` any run of bytes, `?` one byte, `[abc]` / `[^abc]` / `[a-z]` a class, and
//! `\x` a literal x. Matching is on bytes, case-sensitive unless `nocase`.
//!
//! A port of Redis's recursive matcher, quirks included, because KEYS and SCAN
//! must return exactly the keys Redis returns:
//!
//! * **Nesting limit.** Each `*` that has to try several positions recurses;
//!   past 1000 levels Redis gives up and reports *no match* (its protection
//!   against abusive patterns), so `*?` repeated 50,000 times does not match
//!   50,000 `a`s, although a textbook matcher says it does.
//! * **Early exit** (`skipLongerMatches`): once the rest of the pattern failed
//!   from every later position, longer matches of earlier stars are not tried.
//!   This only saves time; the answer is the same.
//! * **Classes:** an unterminated `[` class runs to the end of the pattern; a
//!   range `x-y` is taken in either order; its bounds and the byte compare as C
//!   `char`s, i.e. *signed*, so bytes from 0x80 sort below `\0`; a `\` escapes
//!   inside a class too.
//! * **Case folding** (`nocase`, CONFIG GET) is glibc's `tolower`: ASCII
//!   letters are lowered, bytes from 0x80 (but 0xff) turn positive again, and
//!   a range lowers its bounds after putting them in order.
//! * **The empty string** only matches the empty pattern: not even `*` matches
//!   it (KEYS and SCAN treat a lone `*` as "everything" before matching).

/// `stringmatchlen(pattern, string, nocase=0)`.
pub fn glob_match(pattern: &[u8], text: &[u8]) -> bool {
    string_match(pattern, text, false)
}

/// [`glob_match`] ignoring ASCII case (`stringmatchlen(..., nocase=1)`, used by
/// CONFIG GET).
pub fn glob_match_nocase(pattern: &[u8], text: &[u8]) -> bool {
    string_match(pattern, text, true)
}

fn string_match(pattern: &[u8], text: &[u8], nocase: bool) -> bool {
    let mut skip_longer = false;
    Matcher {
        pattern,
        text,
        nocase,
    }
    .at(0, 0, &mut skip_longer, 0)
}

struct Matcher<'a> {
    pattern: &'a [u8],
    text: &'a [u8],
    nocase: bool,
}

/// glibc's `tolower` (C locale) on a `char` widened to `int`: ASCII letters
/// are lowered, and a negative `char` other than -1 (EOF) comes back as its
/// unsigned value, which matters in a range.
fn lower(c: i32) -> i32 {
    match c {
        -128..=-2 => c + 256,
        65..=90 => c + 32,
        _ => c,
    }
}

/// A byte as C's (signed) `char` widened to `int`.
fn signed(b: u8) -> i32 {
    i32::from(b as i8)
}

impl Matcher<'_> {
    fn eq(&self, a: u8, b: u8) -> bool {
        if self.nocase {
            lower(signed(a)) == lower(signed(b))
        } else {
            a == b
        }
    }

    /// `stringmatchlen_impl` with the pattern from `p` and the text from `s`.
    fn at(&self, mut p: usize, mut s: usize, skip_longer: &mut bool, nesting: u32) -> bool {
        if nesting > 1000 {
            return false;
        }
        let (pat, text) = (self.pattern, self.text);
        while p < pat.len() && s < text.len() {
            match pat[p] {
                b'*' => {
                    while p + 1 < pat.len() && pat[p + 1] == b'*' {
                        p += 1;
                    }
                    if p + 1 == pat.len() {
                        return true;
                    }
                    while s < text.len() {
                        if self.at(p + 1, s, skip_longer, nesting + 1) {
                            return true;
                        }
                        if *skip_longer {
                            return false;
                        }
                        s += 1;
                    }
                    *skip_longer = true;
                    return false;
                }
                b'?' => s += 1,
                b'[' => {
                    p += 1;
                    let not = p < pat.len() && pat[p] == b'^';
                    if not {
                        p += 1;
                    }
                    let mut matched = false;
                    let c = text[s];
                    loop {
                        let left = pat.len() - p;
                        if left >= 2 && pat[p] == b'\\' {
                            p += 1;
                            if pat[p] == c {
                                matched = true;
                            }
                        } else if left == 0 {
                            // Unterminated: step back onto the last byte, which
                            // the increment below consumes.
                            p -= 1;
                            break;
                        } else if pat[p] == b']' {
                            break;
                        } else if left >= 3 && pat[p + 1] == b'-' {
                            let (mut start, mut end) = (signed(pat[p]), signed(pat[p + 2]));
                            let mut byte = signed(c);
                            if start > end {
                                std::mem::swap(&mut start, &mut end);
                            }
                            if self.nocase {
                                start = lower(start);
                                end = lower(end);
                                byte = lower(byte);
                            }
                            p += 2;
                            if byte >= start && byte <= end {
                                matched = true;
                            }
                        } else if self.eq(pat[p], c) {
                            matched = true;
                        }
                        p += 1;
                    }
                    if not {
                        matched = !matched;
                    }
                    if !matched {
                        return false;
                    }
                    s += 1;
                }
                b'\\' => {
                    if pat.len() - p >= 2 {
                        p += 1;
                    }
                    if !self.eq(pat[p], text[s]) {
                        return false;
                    }
                    s += 1;
                }
                other => {
                    if !self.eq(other, text[s]) {
                        return false;
                    }
                    s += 1;
                }
            }
            p += 1;
            if s == text.len() {
                while p < pat.len() && pat[p] == b'*' {
                    p += 1;
                }
                break;
            }
        }
        p == pat.len() && s == text.len()
    }
}

#[cfg(test)]
mod tests {
    use super::{glob_match, glob_match_nocase};

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
        assert!(m("a*", "a") && m("*b*", "abc") && !m("*x*", "abc"));
    }

    /// Answers of Redis 8.6.3's own `stringmatchlen` (util.c compiled into a
    /// small C program) for the corners where matchers differ.
    #[test]
    fn quirks_are_redis_s() {
        let cases: &[(&[u8], &[u8], bool, bool)] = &[
            // (pattern, text, nocase, match)
            (b"[abc", b"c", false, true),
            (b"[abc", b"b", false, true),
            (b"[", b"[", false, false),
            (b"[", b"x", false, false),
            (b"[^", b"x", false, true),
            (b"[a-", b"-", false, true),
            (b"[a-", b"a", false, true),
            (b"[z-a]", b"m", false, true),
            (b"[\\]]", b"]", false, true),
            (b"[a\\", b"\\", false, true),
            (b"a\\", b"a\\", false, true),
            (b"\\", b"\\", false, true),
            (b"[a-\xff]", b"A", false, true),
            (b"[a-\xff]", b"b", false, false),
            (b"[\x80-\x7f]", b"\x00", false, true),
            (b"[_-A]", b"_", true, false),
            (b"[_-A]", b"a", true, false),
            (b"[\xff-b]", b"b", true, true),
            (b"[\x80-b]", b"b", true, false),
            (b"[\x80-\xff]", b"\xff", true, false),
            (b"[A-Z]", b"q", true, true),
            (b"HeLLo", b"hello", true, true),
            (b"a*", b"", false, false),
            (b"*", b"", false, false),
            (b"", b"", false, true),
            (b"**a", b"a", false, true),
            (b"?", b"", false, false),
            (b"[]a]", b"a", false, false),
            (b"[]a]", b"]", false, false),
            (b"[]", b"]", false, false),
        ];
        for &(p, t, nocase, want) in cases {
            let got = if nocase {
                glob_match_nocase(p, t)
            } else {
                glob_match(p, t)
            };
            assert_eq!(got, want, "{:?} vs {:?} nocase={nocase}", p, t);
        }
    }

    #[test]
    fn the_nesting_limit_gives_up_like_redis() {
        let text = vec![b'a'; 50_000];
        let pattern = b"*?".repeat(50_000);
        assert!(!glob_match(&pattern, &text));
        // Within the limit the same shape matches.
        assert!(glob_match(&b"*?".repeat(1000), &[b'a'; 1000]));
        assert!(!glob_match(&b"*?".repeat(1001), &[b'a'; 1001]));
        let long = b"a*".repeat(20);
        assert!(!glob_match(&[long, b"b".to_vec()].concat(), &[b'a'; 40]));
    }
}
