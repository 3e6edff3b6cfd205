//! Numbers for a reader, formatted one way everywhere: thousands separators,
//! a precision that follows the size of the number, and the unit after a space
//! (`12,345 µs`, `85.73 B/member`, `0.35×`, `0.81%`).

/// `1234567` → `1,234,567`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A signed integer with separators.
pub fn int(v: i64) -> String {
    if v < 0 {
        format!("-{}", thousands(v.unsigned_abs()))
    } else {
        thousands(v as u64)
    }
}

/// The default precision for `v`: whole numbers stay whole; otherwise
/// ≥ 1000 → 0 decimals, ≥ 100 → 1, ≥ 1 → 2, below 1 → 3 significant digits.
pub fn default_decimals(v: f64) -> usize {
    let a = v.abs();
    if v.fract() == 0.0 || a >= 1000.0 {
        0
    } else if a >= 100.0 {
        1
    } else if a >= 1.0 || a == 0.0 {
        2
    } else {
        // 3 significant digits: 0.0123 → 4 decimals.
        (2 - a.log10().floor() as i64).clamp(0, 12) as usize
    }
}

/// `v` with `decimals` places and thousands separators in the integer part.
pub fn number_with(v: f64, decimals: usize) -> String {
    if !v.is_finite() {
        return v.to_string();
    }
    let text = format!("{:.*}", decimals, v.abs());
    let (whole, frac) = text.split_once('.').unwrap_or((&text, ""));
    let mut out = String::new();
    if v < 0.0 && text.chars().any(|c| c.is_ascii_digit() && c != '0') {
        out.push('-');
    }
    out.push_str(&thousands(whole.parse().unwrap_or(0)));
    if !frac.is_empty() {
        out.push('.');
        out.push_str(frac);
    }
    out
}

/// `v` at its default precision.
pub fn number(v: f64) -> String {
    number_with(v, default_decimals(v))
}

/// A number and its unit: `12,345 µs`; `×` and `%` follow without a space; an
/// empty unit is a plain count.
pub fn quantity(v: f64, unit: &str) -> String {
    quantity_with(v, unit, default_decimals(v))
}

/// [`quantity`] with a chosen precision.
pub fn quantity_with(v: f64, unit: &str, decimals: usize) -> String {
    let n = number_with(v, decimals);
    match unit {
        "" => n,
        "×" | "%" => format!("{n}{unit}"),
        u => format!("{n} {u}"),
    }
}

/// A duration in microseconds at a readable scale: `850 µs`, `12.3 ms`, `4.56 s`.
pub fn micros(us: f64) -> String {
    if us < 10_000.0 {
        quantity(us, "µs")
    } else if us < 10_000_000.0 {
        quantity_with(us / 1000.0, "ms", 1)
    } else {
        quantity_with(us / 1e6, "s", 2)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_numbers_one_way() {
        assert_eq!(thousands(1_234_567), "1,234,567");
        assert_eq!(thousands(999), "999");
        assert_eq!(int(-1234), "-1,234");
        assert_eq!(number(1234567.0), "1,234,567");
        assert_eq!(number(1234.56), "1,235");
        assert_eq!(number(125.12), "125.1");
        assert_eq!(number(85.734), "85.73");
        assert_eq!(number(0.01234), "0.0123");
        assert_eq!(number(0.35), "0.350");
        assert_eq!(number(-0.0001), "-0.000100");
        assert_eq!(quantity(16435.0, "×"), "16,435×");
        assert_eq!(quantity(0.8126, "%"), "0.813%");
        assert_eq!(quantity(1.26, "µs/call"), "1.26 µs/call");
        assert_eq!(quantity_with(9.04, "s", 1), "9.0 s");
        assert_eq!(micros(850.0), "850 µs");
        assert_eq!(micros(12_345.0), "12.3 ms");
    }
}
