//! Text that came from outside (tournament and bot names, worker ids,
//! failure reasons, standings rows), made safe to print to a terminal:
//! control characters and bidirectional-override marks are shown escaped
//! (`\u{1b}`), so that no name can move the cursor, retitle or clear the
//! terminal, or reorder the text printed after it.

use std::borrow::Cow;

/// `text` with every control character (newlines and tabs included) and
/// bidirectional mark escaped: for one name or reason on a line.
pub fn shown(text: &str) -> Cow<'_, str> {
    escape(text, |_| false)
}

/// `text` with control characters and bidirectional marks escaped except
/// newlines and tabs: for a table or a block of lines.
pub fn shown_lines(text: &str) -> Cow<'_, str> {
    escape(text, |c| c == '\n' || c == '\t')
}

fn escape(text: &str, keep: impl Fn(char) -> bool) -> Cow<'_, str> {
    let unsafe_char = |c: char| needs_escape(c) && !keep(c);
    if !text.chars().any(unsafe_char) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if unsafe_char(c) {
            out.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// C0 and C1 controls, DEL, and the marks that reorder text.
fn needs_escape(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_and_overrides_are_escaped_and_plain_text_is_not_copied() {
        assert!(matches!(
            shown("Spring cup 2026 — ünïcode"),
            Cow::Borrowed(_)
        ));
        assert_eq!(
            shown("cup\u{1b}]0;owned\u{7}\u{1b}[2J"),
            "cup\\u{1b}]0;owned\\u{7}\\u{1b}[2J"
        );
        assert_eq!(shown("a\0b\u{202e}c\u{9b}d"), "a\\u{0}b\\u{202e}c\\u{9b}d");
        assert_eq!(shown("two\nlines\t"), "two\\u{a}lines\\u{9}");
        assert_eq!(
            shown_lines("row\tx\nrow\u{1b}[31m\n"),
            "row\tx\nrow\\u{1b}[31m\n"
        );
    }
}
