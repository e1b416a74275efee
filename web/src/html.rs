//! Server-rendered HTML: escaping, the common page layout and small
//! formatting helpers. Pages are written with `write!` into a `String`;
//! every value that comes from the store goes through [`esc`].

use std::fmt::{self, Display, Write as _};

use axum::response::Html;

use crate::viewer::Viewer;

/// A value HTML-escaped for text and for attribute values in either quote.
pub struct Escaped<T>(T);

/// `value`, escaped for HTML text and attributes.
pub fn esc<T: Display>(value: T) -> Escaped<T> {
    Escaped(value)
}

impl<T: Display> Display for Escaped<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Through a small adapter, so nothing is allocated per value.
        struct Escaper<'a, 'b>(&'a mut fmt::Formatter<'b>);
        impl fmt::Write for Escaper<'_, '_> {
            fn write_str(&mut self, s: &str) -> fmt::Result {
                let mut start = 0;
                for (i, c) in s.char_indices() {
                    let replacement = match c {
                        '&' => "&amp;",
                        '<' => "&lt;",
                        '>' => "&gt;",
                        '"' => "&quot;",
                        '\'' => "&#39;",
                        _ => continue,
                    };
                    self.0.write_str(&s[start..i])?;
                    self.0.write_str(replacement)?;
                    start = i + c.len_utf8();
                }
                self.0.write_str(&s[start..])
            }
        }
        write!(Escaper(f), "{}", self.0)
    }
}

/// A path segment percent-encoded: ids are plain, but a link must stay a
/// link whatever an id holds.
pub fn url_segment(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for byte in value.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~:".contains(&byte) {
            out.push(byte as char);
        } else {
            let _ = write!(out, "%{byte:02X}");
        }
    }
    out
}

/// The common layout: head, nav (with log in or out), the page's own body.
/// `live` names the server-sent-events URL `live.js` follows, if any.
pub fn page(title: &str, viewer: &Viewer, live: Option<&str>, body: &str) -> Html<String> {
    let mut out = String::with_capacity(body.len() + 1024);
    let _ = write!(
        out,
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{} · Arena</title>\n<link rel=\"stylesheet\" href=\"/assets/style.css\">\n<link rel=\"icon\" href=\"data:,\">\n\
         </head>\n<body>\n<nav class=\"nav\"><a class=\"brand\" href=\"/\">Arena</a>\
         <a href=\"/\">Tournaments</a><a href=\"/workers\">Workers</a>",
        esc(title)
    );
    match viewer {
        Viewer::Public => out.push_str("<a href=\"/login\">Log in</a>"),
        _ => {
            let _ = write!(
                out,
                "<span class=\"who\">{}</span><form method=\"post\" action=\"/logout\" \
                 class=\"inline\"><button type=\"submit\">Log out</button></form>",
                esc(viewer.describe())
            );
        }
    }
    out.push_str("</nav>\n");
    match live {
        Some(url) => {
            let _ = writeln!(out, "<main data-live=\"{}\">", esc(url));
        }
        None => out.push_str("<main>\n"),
    }
    out.push_str(body);
    out.push_str("</main>\n");
    if live.is_some() {
        out.push_str("<script type=\"module\" src=\"/assets/live.js\"></script>\n");
    }
    out.push_str("</body>\n</html>\n");
    Html(out)
}

/// A table cell whose text live updates may replace (`data-field`).
pub fn field_cell(out: &mut String, field: &str, text: &str) {
    let _ = write!(out, "<td data-field=\"{}\">{}</td>", esc(field), esc(text));
}

/// A number with two decimals, trailing zeros kept (tables line up).
pub fn num(value: f64) -> String {
    format!("{value:.2}")
}

/// An ordinal placement for a 0-based rank: 0 → "1st".
pub fn place(rank: u32) -> String {
    let n = rank + 1;
    let suffix = match (n % 10, n % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_covers_markup_and_both_quotes() {
        assert_eq!(
            esc("<a href='x'>\"&\"</a>").to_string(),
            "&lt;a href=&#39;x&#39;&gt;&quot;&amp;&quot;&lt;/a&gt;"
        );
        assert_eq!(esc("plain é").to_string(), "plain é");
    }

    #[test]
    fn url_segments_keep_ids_and_encode_the_rest() {
        assert_eq!(url_segment("t-0a1b:2:3"), "t-0a1b:2:3");
        assert_eq!(url_segment("a/b c"), "a%2Fb%20c");
    }

    #[test]
    fn places_read_as_ordinals() {
        let got: Vec<String> = [0, 1, 2, 3, 10, 11, 20].map(place).into();
        assert_eq!(got, ["1st", "2nd", "3rd", "4th", "11th", "12th", "21st"]);
    }
}
