//! Text contrast measured on the rendered page: every visible element of
//! the viewer that holds text of its own (and the graph, whose labels take
//! the canvas's `color`) is read back with its computed colour, the first
//! opaque background behind it and the opacity it is drawn with; the WCAG 2
//! contrast ratio of colour and background is computed here. Also the
//! CIE76 colour difference, for telling board colours from seat colours.

use serde_json::Value;

/// Lists `{what, text, color, background, opacity}` for the viewer's text.
pub const TEXT_COLOURS_JS: &str = r#"(() => {
  const root = document.querySelector('#viewer');
  const opaque = (c) => c && c !== 'transparent' && !/^rgba\(.*,\s*0\)$/.test(c);
  const backgroundOf = (node) => {
    for (let n = node; n; n = n.parentElement) {
      const c = getComputedStyle(n).backgroundColor;
      if (opaque(c)) return c;
    }
    return 'rgb(255, 255, 255)';
  };
  const opacityOf = (node) => {
    let o = 1;
    for (let n = node; n; n = n.parentElement) o *= Number(getComputedStyle(n).opacity);
    return o;
  };
  const out = [];
  for (const node of [root, ...root.querySelectorAll('*')]) {
    if (node.closest('[hidden]') || node.getClientRects().length === 0) continue;
    const own = [...node.childNodes].some((c) => c.nodeType === 3 && c.textContent.trim());
    if (!own && !node.matches('select, canvas.viewer-graph')) continue;
    const style = getComputedStyle(node);
    out.push({
      what: `${node.tagName.toLowerCase()}.${node.className || ''}`,
      text: (node.textContent || '').trim().slice(0, 40),
      color: style.color,
      background: backgroundOf(node),
      opacity: opacityOf(node),
    });
  }
  return out;
})()"#;

/// `rgb(r, g, b)` or `rgba(r, g, b, a)` as channels 0–255 and alpha.
fn parse(colour: &str) -> Option<([f64; 3], f64)> {
    let inner = colour
        .strip_prefix("rgba(")
        .or_else(|| colour.strip_prefix("rgb("))?
        .strip_suffix(')')?;
    let parts: Vec<f64> = inner
        .split([',', ' ', '/'])
        .filter(|p| !p.is_empty())
        .map(|p| p.parse().ok())
        .collect::<Option<_>>()?;
    match parts[..] {
        [r, g, b] => Some(([r, g, b], 1.0)),
        [r, g, b, a] => Some(([r, g, b], a)),
        _ => None,
    }
}

/// WCAG 2 relative luminance of sRGB channels 0–255.
fn luminance(rgb: [f64; 3]) -> f64 {
    let linear = |c: f64| {
        let c = c / 255.0;
        if c <= 0.03928 {
            c / 12.92
        } else {
            ((c + 0.055) / 1.055).powf(2.4)
        }
    };
    0.2126 * linear(rgb[0]) + 0.7152 * linear(rgb[1]) + 0.0722 * linear(rgb[2])
}

/// The contrast ratio of two opaque colours, 1 to 21.
pub fn ratio(a: [f64; 3], b: [f64; 3]) -> f64 {
    let (la, lb) = (luminance(a), luminance(b));
    (la.max(lb) + 0.05) / (la.min(lb) + 0.05)
}

/// `#rrggbb` as channels 0–255.
pub fn hex(colour: &str) -> [f64; 3] {
    let digits = colour
        .strip_prefix('#')
        .filter(|d| d.len() == 6)
        .unwrap_or_else(|| panic!("not #rrggbb: {colour}"));
    let channel = |i: usize| {
        f64::from(
            u8::from_str_radix(&digits[2 * i..2 * i + 2], 16)
                .unwrap_or_else(|e| panic!("{colour}: {e}")),
        )
    };
    [channel(0), channel(1), channel(2)]
}

/// CIE L*a*b* (D65) of sRGB channels 0–255.
fn lab(rgb: [f64; 3]) -> [f64; 3] {
    let linear = |c: f64| {
        let c = c / 255.0;
        if c <= 0.04045 {
            c / 12.92
        } else {
            ((c + 0.055) / 1.055).powf(2.4)
        }
    };
    let [r, g, b] = rgb.map(linear);
    let x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047;
    let y = 0.2126 * r + 0.7152 * g + 0.0722 * b;
    let z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883;
    let f = |t: f64| {
        if t > 216.0 / 24389.0 {
            t.cbrt()
        } else {
            (24389.0 / 27.0 * t + 16.0) / 116.0
        }
    };
    let (fx, fy, fz) = (f(x), f(y), f(z));
    [116.0 * fy - 16.0, 500.0 * (fx - fy), 200.0 * (fy - fz)]
}

/// The CIE76 difference of two colours: about 2.3 is just noticeable;
/// beyond 20 or so they read as different colours.
pub fn delta_e(a: [f64; 3], b: [f64; 3]) -> f64 {
    let (a, b) = (lab(a), lab(b));
    ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt()
}

/// The luminance of a CSS colour (for telling a dark background).
pub fn css_luminance(colour: &str) -> f64 {
    luminance(
        parse(colour)
            .unwrap_or_else(|| panic!("not a colour: {colour}"))
            .0,
    )
}

/// Every entry of [`TEXT_COLOURS_JS`]'s list whose text reads below
/// `minimum`, with its ratio; also those drawn translucent (which would
/// blend into the background).
pub fn below(list: &Value, minimum: f64) -> Vec<String> {
    let mut bad = Vec::new();
    for entry in list.as_array().expect("a list of text colours") {
        let colour = entry["color"].as_str().unwrap_or_default();
        let background = entry["background"].as_str().unwrap_or_default();
        let (Some((fg, fg_alpha)), Some((bg, _))) = (parse(colour), parse(background)) else {
            bad.push(format!("unreadable colours: {entry}"));
            continue;
        };
        let opacity = entry["opacity"].as_f64().unwrap_or(0.0);
        let r = ratio(fg, bg);
        if r < minimum || fg_alpha < 1.0 || opacity < 1.0 {
            bad.push(format!("{r:.2}:1 {entry}"));
        }
    }
    bad
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratios_are_wcag_ratios() {
        assert!((ratio([0.0; 3], [255.0; 3]) - 21.0).abs() < 1e-9);
        assert_eq!(ratio([119.0; 3], [119.0; 3]), 1.0);
        // #767676 on white is the classic 4.54:1.
        assert!((ratio([118.0; 3], [255.0; 3]) - 4.54).abs() < 0.01);
        assert_eq!(parse("rgba(1, 2, 3, 0.5)"), Some(([1.0, 2.0, 3.0], 0.5)));
        assert_eq!(parse("rgb(1 2 3)"), Some(([1.0, 2.0, 3.0], 1.0)));
        assert_eq!(hex("#0072b2"), [0.0, 114.0, 178.0]);
        // Black to white is the whole lightness axis.
        assert!((delta_e([0.0; 3], [255.0; 3]) - 100.0).abs() < 0.01);
    }
}
