//! Text helpers shared by the error messages.

/// `text` with every control character (newline, carriage return, tab, escape...) and the
/// Unicode line and paragraph separators written as Rust escapes (`\n`, `\u{1b}`), so that an
/// error message quoting user input stays on one line.
pub fn one_line(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_control() || c == '\u{2028}' || c == '\u{2029}' {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn one_line_escapes_line_breaks_and_controls_only() {
        assert_eq!(super::one_line("a\nb\r\tc\u{1b}\u{2028}é `x`"), "a\\nb\\r\\tc\\u{1b}\\u{2028}é `x`");
    }
}
