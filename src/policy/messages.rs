//! The words of policy errors: ranges, numbers as JS shows them, quoted strings, type
//! names. Written by hand: core's formatting machinery is kilobytes of wasm.

use super::value::Value;

/// "an integer from `min` to `max`"; a bound with a label (another field's path) is shown
/// as `label (n)`.
#[inline(never)]
pub(crate) fn int_range(min_label: &str, min: u32, max_label: &str, max: u32) -> String {
    let mut s = "an integer from ".to_owned();
    push_bound(&mut s, min_label, min);
    s.push_str(" to ");
    push_bound(&mut s, max_label, max);
    s
}

pub(super) fn push_bound(s: &mut String, label: &str, n: u32) {
    if label.is_empty() {
        push_u64(s, n.into());
    } else {
        s.push_str(label);
        s.push_str(" (");
        push_u64(s, n.into());
        s.push(')');
    }
}

pub(super) fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::List(_) => "an array",
        Value::Map(_) => "an object",
    }
}

/// Appends `n` in decimal, with at least `width` digits (zeros in front).
pub(super) fn push_digits(out: &mut String, mut n: u64, width: usize) {
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    while n > 0 || buf.len() - i < width.max(1) {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
    }
    for &b in &buf[i..] {
        out.push(char::from(b));
    }
}

pub(crate) fn push_u64(out: &mut String, n: u64) {
    push_digits(out, n, 1);
}

/// 2^64: from here on a number is shown in exponent form.
pub(super) const U64_END: f64 = 18_446_744_073_709_551_616.0;

/// Appends a number about as JS prints it: `NaN`, `Infinity`, `-3`, `3.5`, `1e-7`,
/// `1e+21`. Integers below 2^64 are exact; other numbers are rounded to 15 significant
/// digits (12 in exponent form). Written by hand: core's float formatting is kilobytes
/// of wasm.
pub(super) fn push_number(out: &mut String, n: f64) {
    if n.is_nan() {
        out.push_str("NaN");
        return;
    }
    let mut n = n;
    if n < 0.0 {
        out.push('-');
        n = -n;
    }
    if n.is_infinite() {
        out.push_str("Infinity");
        return;
    }
    let scientific = n >= U64_END || (n > 0.0 && n < 1e-6);
    let mut exp = 0i32;
    if scientific {
        while n >= 10.0 {
            n /= 10.0;
            exp += 1;
        }
        while n < 1.0 {
            n *= 10.0;
            exp -= 1;
        }
    }
    // Here n < 2^64: its integer part fits a u64.
    let mut whole = n as u64;
    let frac = n - whole as f64;
    let mut fraction = 0;
    let mut places = 0;
    if frac > 0.0 {
        let mut whole_digits = 0;
        let mut rest = whole;
        while rest > 0 {
            whole_digits += 1;
            rest /= 10;
        }
        // Zeros right after the point (a number below 1).
        let mut zeros = 0;
        let mut f = frac;
        while whole == 0 && f < 0.1 {
            f *= 10.0;
            zeros += 1;
        }
        let significant: usize = if scientific { 12 } else { 15 };
        places = (significant + zeros)
            .saturating_sub(whole_digits)
            .clamp(1, 19);
        let scale = 10u64.pow(places as u32);
        fraction = (frac * scale as f64 + 0.5) as u64;
        if fraction >= scale {
            whole += 1;
            fraction -= scale;
        }
        while fraction > 0 && fraction % 10 == 0 {
            fraction /= 10;
            places -= 1;
        }
    }
    if scientific && whole >= 10 {
        // Rounding carried 9.99… up to 10.
        whole /= 10;
        exp += 1;
    }
    push_u64(out, whole);
    if fraction > 0 {
        out.push('.');
        push_digits(out, fraction, places);
    }
    if scientific {
        out.push_str(if exp < 0 { "e-" } else { "e+" });
        push_u64(out, exp.unsigned_abs().into());
    }
}

/// Appends `s` quoted and escaped for an error message (backslash escapes as in Rust
/// string literals for quotes, backslashes and control characters); with `cut`, after
/// 40 characters the rest is dropped and `…` follows the closing quote.
pub(crate) fn push_quoted(out: &mut String, s: &str, cut: bool) {
    out.push('"');
    for (i, ch) in s.chars().enumerate() {
        if cut && i == 40 {
            out.push_str("\"…");
            return;
        }
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\0' => out.push_str("\\0"),
            c if c < ' ' || c == '\x7f' => {
                out.push_str("\\u{");
                let code = c as u32;
                if code >= 16 {
                    out.push(char::from(b"0123456789abcdef"[(code >> 4) as usize]));
                }
                out.push(char::from(b"0123456789abcdef"[(code & 15) as usize]));
                out.push('}');
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Whether `a` is within `edits` edits of `b` (an insertion, a deletion, a substitution or a
/// swap of two neighbours each count one; bytes compared): "did you mean" asks it for one and
/// two edits. A recursion of at most 4 branches per edit, two edits deep, and no table: the
/// wasm stays small. Case counts: `timeoutMS` is one edit from `timeoutMs`.
#[inline(never)]
pub(super) fn within_edits(a: &[u8], b: &[u8], edits: u8) -> bool {
    match (a, b) {
        ([x, a @ ..], [y, b @ ..]) if x == y => within_edits(a, b, edits),
        _ if edits == 0 => a.is_empty() && b.is_empty(),
        ([], rest) | (rest, []) => rest.len() <= usize::from(edits),
        ([x, a1 @ ..], [y, b1 @ ..]) => {
            let e = edits - 1;
            within_edits(a1, b, e)
                || within_edits(a, b1, e)
                || within_edits(a1, b1, e)
                || matches!((a1, b1), ([x2, a2 @ ..], [y2, b2 @ ..]) if x2 == y && y2 == x && within_edits(a2, b2, e))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::*;
    use super::*;

    use proptest::prelude::*;
    use serde_json::json;

    #[test]
    fn edits_count_insertions_deletions_substitutions_and_swaps() {
        let within = |a: &str, b: &str, n| within_edits(a.as_bytes(), b.as_bytes(), n);
        assert!(within("timeoutMS", "timeoutMs", 1)); // a substitution
        assert!(within("retyr", "retry", 1)); // a swap
        assert!(within("maxAttemps", "maxAttempts", 1)); // an insertion
        assert!(within("cooldownMss", "cooldownMs", 1)); // a deletion
        assert!(within("cooldown", "cooldownMs", 2) && !within("cooldown", "cooldownMs", 1));
        assert!(within("", "ab", 2) && !within("", "abc", 2));
        assert!(!within("timeoutMSec", "timeoutMs", 2));
        assert!(!within("shouldRetry", "isFailure", 2));
    }

    #[test]
    fn long_strings_are_cut_in_messages() {
        let e = err(json!({"retry": {"jitter": "x".repeat(1000)}}));
        assert!(e.message.len() < 200, "{}", e.message);
        assert!(e.message.ends_with("…)"));
    }

    fn number(n: f64) -> String {
        let mut s = String::new();
        push_number(&mut s, n);
        s
    }

    #[test]
    fn numbers_are_shown_as_js_shows_them() {
        for (n, shown) in [
            (0.0, "0"),
            (-0.0, "0"),
            (3.0, "3"),
            (-1.0, "-1"),
            (3.5, "3.5"),
            (-0.1, "-0.1"),
            (1.01, "1.01"),
            (0.001, "0.001"),
            (0.000001, "0.000001"),
            (123456.1, "123456.1"),
            (2147483648.0, "2147483648"),
            (9007199254740993.0, "9007199254740992"),
            (4503599627370495.5, "4503599627370495.5"),
            (18446744073709549568.0, "18446744073709549568"),
            (1e21, "1e+21"),
            (1.5e300, "1.5e+300"),
            (1e-7, "1e-7"),
            (-2.5e-10, "-2.5e-10"),
            (5e-324, "4.94065645841e-324"),
            (f64::MAX, "1.79769313486e+308"),
            (f64::NAN, "NaN"),
            (f64::INFINITY, "Infinity"),
            (f64::NEG_INFINITY, "-Infinity"),
        ] {
            assert_eq!(number(n), shown, "{n:e}");
        }
    }

    #[test]
    fn strings_are_quoted_and_escaped_as_rust_debug_does() {
        for s in [
            "",
            "full",
            "a\"b\\c",
            "tab\t nl\n cr\r nul\0 bell\x07 del\x7f esc\x1b",
            "é😀",
        ] {
            let mut out = String::new();
            push_quoted(&mut out, s, false);
            assert_eq!(out, format!("{s:?}"));
        }
        let mut out = String::new();
        push_quoted(&mut out, &"é".repeat(41), true);
        assert_eq!(out, format!("{:?}…", "é".repeat(40)));
    }

    proptest! {
        #[test]
        fn shown_numbers_read_back_as_the_number(n in any::<f64>()) {
            let shown = number(n);
            if n.fract() == 0.0 && n.abs() < U64_END {
                // Exactly (Rust and JS show only the shortest digits that read back, then zeros).
                let expected = (n as i128).to_string();
                prop_assert_eq!(&shown, &expected);
            }
            if n.is_finite() {
                let back: f64 = shown.parse().expect("a number");
                prop_assert!((back - n).abs() <= n.abs() * 1e-11, "{} shown as {}", n, shown);
            }
        }
    }
}
