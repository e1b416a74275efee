//! A tab: navigation, scripts, real mouse and keyboard input, screenshots,
//! canvas pixels and the errors its console saw.

use std::path::Path;
use std::time::{Duration, Instant};

use base64::Engine as _;
use serde_json::{Value, json};

use super::connection::{Connection, reply_str};
use super::{BrowserError, Result, VIEWPORT};

pub mod media;

/// How long one protocol command may take.
const COMMAND: Duration = Duration::from_secs(30);
/// How long a navigation may take to reach its load event.
const NAVIGATION: Duration = Duration::from_secs(30);
/// Pause between polls of a page condition; it only keeps the loop from spinning.
const POLL: Duration = Duration::from_millis(25);

/// A canvas's pixels in brief: enough to tell that a drawing changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CanvasSnapshot {
    pub width: u64,
    pub height: u64,
    /// FNV-1a over the RGBA words of every pixel.
    pub hash: u64,
    /// Distinct colours, counted up to 4096 (1 means a blank canvas).
    pub colours: u64,
}

/// Copies the canvas into a 2D one first, so it works whatever context the
/// page draws with.
const CANVAS_SNAPSHOT_JS: &str = r#"((selector) => {
  const canvas = document.querySelector(selector);
  if (!(canvas instanceof HTMLCanvasElement)) return null;
  const { width, height } = canvas;
  if (width === 0 || height === 0) return { width, height, hash: 0, colours: 0 };
  const copy = document.createElement("canvas");
  copy.width = width;
  copy.height = height;
  const context = copy.getContext("2d");
  context.drawImage(canvas, 0, 0);
  const pixels = new Uint32Array(context.getImageData(0, 0, width, height).data.buffer);
  let hash = 0x811c9dc5;
  const colours = new Set();
  for (const pixel of pixels) {
    hash = Math.imul(hash ^ pixel, 16777619) >>> 0;
    if (colours.size < 4096) colours.add(pixel);
  }
  return { width, height, hash, colours: colours.size };
})"#;

/// A tab attached over the browser's pipe.
pub struct Page<'b> {
    connection: &'b Connection,
    target: String,
    session: String,
}

impl<'b> Page<'b> {
    /// Opens a new tab on `about:blank`, attached in flat mode, with its
    /// domains enabled and the [`VIEWPORT`] size.
    pub(super) fn open(connection: &'b Connection) -> Result<Page<'b>> {
        let browser_call =
            |method: &str, params: Value| connection.call(None, method, params, COMMAND);
        let created = browser_call("Target.createTarget", json!({ "url": "about:blank" }))?;
        let target = reply_str(&created, "targetId", "Target.createTarget")?;
        let attached = browser_call(
            "Target.attachToTarget",
            json!({ "targetId": target, "flatten": true }),
        )?;
        let session = reply_str(&attached, "sessionId", "Target.attachToTarget")?;
        let page = Page {
            connection,
            target,
            session,
        };
        for domain in ["Page", "Runtime", "Log", "Network"] {
            page.call(&format!("{domain}.enable"), json!({}))?;
        }
        page.emulate_screen(VIEWPORT.0, VIEWPORT.1, 1.0, false)?;
        // Key events go to the focused page; a headless tab is not always focused.
        page.call(
            "Emulation.setFocusEmulationEnabled",
            json!({ "enabled": true }),
        )?;
        page.call("Page.bringToFront", json!({}))?;
        Ok(page)
    }

    /// Emulates a screen of `width` × `height` CSS pixels at `scale`
    /// device pixels each; `mobile` also honours the page's viewport meta
    /// tag and shows overlay scrollbars, as a phone does. Applies to the
    /// pages loaded after it, and resizes the one shown.
    pub fn emulate_screen(&self, width: u32, height: u32, scale: f64, mobile: bool) -> Result<()> {
        self.call(
            "Emulation.setDeviceMetricsOverride",
            json!({
                "width": width,
                "height": height,
                "deviceScaleFactor": scale,
                "mobile": mobile,
            }),
        )?;
        Ok(())
    }

    fn call(&self, method: &str, params: Value) -> Result<Value> {
        self.connection
            .call(Some(&self.session), method, params, COMMAND)
    }

    fn is_mine(&self, event: &Value, method: &str) -> bool {
        event["method"] == method && event["sessionId"] == self.session.as_str()
    }

    /// Navigates to `url` and waits for its load event; returns the HTTP
    /// status of the document (`None` for a URL without one, e.g. `data:`).
    pub fn goto(&self, url: &str) -> Result<Option<u16>> {
        let mark = self.connection.mark();
        let navigated = self.call("Page.navigate", json!({ "url": url }))?;
        if let Some(error) = navigated["errorText"].as_str().filter(|e| !e.is_empty()) {
            return Err(BrowserError::Navigation {
                url: url.to_owned(),
                error: error.to_owned(),
            });
        }
        let loader = navigated["loaderId"].as_str().map(str::to_owned);
        let over_http = url.starts_with("http://") || url.starts_with("https://");
        self.wait_loaded(mark, loader.as_deref(), over_http, url)
    }

    /// Clicks the first element matching `selector` (see [`Page::click`]),
    /// which must start a navigation, and waits for the new document's load
    /// event; returns its HTTP status.
    pub fn click_to_navigate(&self, selector: &str) -> Result<Option<u16>> {
        let mark = self.connection.mark();
        self.click(selector)?;
        self.wait_loaded(mark, None, true, selector)
    }

    /// Waits, among the events since `mark`, for the response of a document
    /// (of navigation `loader` when known) and then a load event; the
    /// response is required when the document comes `over_http`.
    fn wait_loaded(
        &self,
        mark: usize,
        loader: Option<&str>,
        over_http: bool,
        what: &str,
    ) -> Result<Option<u16>> {
        self.connection
            .wait_events(mark, NAVIGATION, |events| {
                // The document's response comes first, then its load event;
                // requiring both in that order ignores a late load event of
                // the page before. After a redirect the last response counts.
                let response = events.iter().rposition(|e| {
                    self.is_mine(e, "Network.responseReceived")
                        && e["params"]["type"] == "Document"
                        && loader.is_none_or(|l| e["params"]["loaderId"] == l)
                });
                let status = response
                    .and_then(|i| events[i]["params"]["response"]["status"].as_u64())
                    .and_then(|s| u16::try_from(s).ok());
                let after = match response {
                    Some(i) => i + 1,
                    None if over_http => return None,
                    None => 0,
                };
                events[after..]
                    .iter()
                    .any(|e| self.is_mine(e, "Page.loadEventFired"))
                    .then_some(status)
            })
            .ok_or_else(|| BrowserError::LoadTimeout {
                url: what.to_owned(),
                timeout: NAVIGATION,
            })
    }

    /// Evaluates `js` in the page (awaiting a promise) and returns its value
    /// as JSON (`null` for `undefined` and for values JSON cannot hold).
    pub fn eval(&self, js: &str) -> Result<Value> {
        let mut evaluated = self.call(
            "Runtime.evaluate",
            json!({
                "expression": js,
                "returnByValue": true,
                "awaitPromise": true,
                "userGesture": true,
            }),
        )?;
        if let Some(details) = evaluated.get("exceptionDetails") {
            return Err(BrowserError::Script(describe_exception(details)));
        }
        Ok(evaluated["result"]["value"].take())
    }

    /// Polls `condition` until it is truthy and returns its value. A
    /// condition that throws, or finds no page to run in (mid-navigation),
    /// counts as not yet true; the timeout error then carries that error.
    pub fn wait_for(&self, condition: &str, timeout: Duration) -> Result<Value> {
        let deadline = Instant::now() + timeout;
        loop {
            let last = match self.eval(condition) {
                Ok(value) if is_truthy(&value) => return Ok(value),
                Ok(value) => value,
                Err(
                    BrowserError::Script(error) | BrowserError::Protocol { message: error, .. },
                ) => Value::from(format!("error: {error}")),
                Err(other) => return Err(other),
            };
            if Instant::now() >= deadline {
                return Err(BrowserError::WaitTimeout {
                    condition: condition.to_owned(),
                    timeout,
                    last,
                });
            }
            std::thread::sleep(POLL);
        }
    }

    /// The text content of the first element matching `selector`.
    pub fn text(&self, selector: &str) -> Result<Option<String>> {
        let js = format!(
            "document.querySelector({})?.textContent ?? null",
            js_string(selector)
        );
        Ok(self.eval(&js)?.as_str().map(str::to_owned))
    }

    /// Clicks the centre of the first element matching `selector` with real
    /// mouse events (move, press, release), after scrolling it into view.
    pub fn click(&self, selector: &str) -> Result<()> {
        let js = format!(
            "(() => {{ const element = document.querySelector({});
               if (!element) return null;
               element.scrollIntoView({{ block: 'center', inline: 'center' }});
               const box = element.getBoundingClientRect();
               return {{ x: box.left + box.width / 2, y: box.top + box.height / 2,
                         width: box.width, height: box.height }}; }})()",
            js_string(selector)
        );
        let centre = self.eval(&js)?;
        let (Some(x), Some(y)) = (centre["x"].as_f64(), centre["y"].as_f64()) else {
            return Err(BrowserError::NoElement(selector.to_owned()));
        };
        if centre["width"].as_f64() == Some(0.0) || centre["height"].as_f64() == Some(0.0) {
            return Err(BrowserError::NoElement(selector.to_owned()));
        }
        self.call(
            "Input.dispatchMouseEvent",
            json!({ "type": "mouseMoved", "x": x, "y": y }),
        )?;
        for kind in ["mousePressed", "mouseReleased"] {
            self.call(
                "Input.dispatchMouseEvent",
                json!({
                    "type": kind, "x": x, "y": y,
                    "button": "left", "buttons": 1, "clickCount": 1,
                }),
            )?;
        }
        Ok(())
    }

    /// Presses and releases `key` (a DOM `key` value: `"ArrowRight"`, `" "`,
    /// `"Enter"`, a letter or a digit) as real keyboard events.
    pub fn press_key(&self, key: &str) -> Result<()> {
        let (code, key_code, text) =
            key_definition(key).ok_or_else(|| BrowserError::UnknownKey(key.to_owned()))?;
        let mut down = json!({
            "type": "keyDown",
            "key": key,
            "code": code,
            "windowsVirtualKeyCode": key_code,
            "nativeVirtualKeyCode": key_code,
        });
        if let Some(text) = text {
            down["text"] = text.clone().into();
            down["unmodifiedText"] = text.into();
        }
        self.call("Input.dispatchKeyEvent", down)?;
        self.call(
            "Input.dispatchKeyEvent",
            json!({
                "type": "keyUp",
                "key": key,
                "code": code,
                "windowsVirtualKeyCode": key_code,
                "nativeVirtualKeyCode": key_code,
            }),
        )?;
        Ok(())
    }

    /// Types `text` into the focused element, as an input method would.
    pub fn type_text(&self, text: &str) -> Result<()> {
        self.call("Input.insertText", json!({ "text": text }))?;
        Ok(())
    }

    /// Writes a PNG of the whole page, not just the viewport, to `path`
    /// (creating its directory).
    pub fn screenshot(&self, path: &Path) -> Result<()> {
        let metrics = self.call("Page.getLayoutMetrics", json!({}))?;
        let size = &metrics["cssContentSize"];
        let mut params = json!({ "format": "png" });
        if let (Some(width), Some(height)) = (size["width"].as_f64(), size["height"].as_f64()) {
            params["captureBeyondViewport"] = true.into();
            params["clip"] =
                json!({ "x": 0, "y": 0, "width": width, "height": height, "scale": 1 });
        }
        let shot = self.call("Page.captureScreenshot", params)?;
        let data = reply_str(&shot, "data", "Page.captureScreenshot")?;
        let png = base64::engine::general_purpose::STANDARD.decode(data)?;
        let write = |source| BrowserError::WriteScreenshot {
            path: path.to_owned(),
            source,
        };
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(write)?;
        }
        std::fs::write(path, png).map_err(write)
    }

    /// The canvas matching `selector`, in brief (`None` if there is none).
    pub fn canvas_snapshot(&self, selector: &str) -> Result<Option<CanvasSnapshot>> {
        let value = self.eval(&format!("{CANVAS_SNAPSHOT_JS}({})", js_string(selector)))?;
        let field = |key: &str| value[key].as_u64();
        Ok(
            match (
                field("width"),
                field("height"),
                field("hash"),
                field("colours"),
            ) {
                (Some(width), Some(height), Some(hash), Some(colours)) => Some(CanvasSnapshot {
                    width,
                    height,
                    hash,
                    colours,
                }),
                _ => None,
            },
        )
    }

    /// Every error this page has reported so far: uncaught exceptions,
    /// `console.error` calls and error log entries (failed loads among
    /// them), each as `kind: text [url]`.
    pub fn console_errors(&self) -> Vec<String> {
        self.connection.events(|e| {
            if e["sessionId"] != self.session.as_str() {
                return None;
            }
            let params = &e["params"];
            match e["method"].as_str()? {
                "Runtime.exceptionThrown" => Some(format!(
                    "exception: {}",
                    describe_exception(&params["exceptionDetails"])
                )),
                "Runtime.consoleAPICalled" if params["type"] == "error" => {
                    let args: Vec<String> = params["args"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .map(describe_remote_object)
                        .collect();
                    Some(format!("console.error: {}", args.join(" ")))
                }
                "Log.entryAdded" if params["entry"]["level"] == "error" => {
                    let entry = &params["entry"];
                    Some(format!(
                        "log ({}): {} [{}]",
                        entry["source"].as_str().unwrap_or("?"),
                        entry["text"].as_str().unwrap_or_default(),
                        entry["url"].as_str().unwrap_or_default()
                    ))
                }
                _ => None,
            }
        })
    }
}

impl Drop for Page<'_> {
    fn drop(&mut self) {
        // Best effort: the browser's own Drop ends every tab anyway.
        let _ = self.connection.call(
            None,
            "Target.closeTarget",
            json!({ "targetId": self.target }),
            Duration::from_secs(5),
        );
    }
}

/// `"..."`: `text` as a JavaScript string literal (JSON's escaping is JS's).
pub fn js_string(text: &str) -> String {
    Value::from(text).to_string()
}

/// JavaScript truthiness of a JSON value.
fn is_truthy(value: &Value) -> bool {
    match value {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|n| n != 0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(_) | Value::Object(_) => true,
    }
}

fn describe_exception(details: &Value) -> String {
    let description = details["exception"]["description"]
        .as_str()
        .or_else(|| details["text"].as_str())
        .unwrap_or("(no description)");
    match details["url"].as_str().filter(|u| !u.is_empty()) {
        Some(url) => format!(
            "{description} [{url}:{}]",
            details["lineNumber"].as_u64().unwrap_or(0) + 1
        ),
        None => description.to_owned(),
    }
}

fn describe_remote_object(object: &Value) -> String {
    match &object["value"] {
        Value::String(s) => s.clone(),
        Value::Null => object["description"]
            .as_str()
            .unwrap_or_else(|| object["type"].as_str().unwrap_or("?"))
            .to_owned(),
        other => other.to_string(),
    }
}

/// `code`, Windows key code and typed text of a DOM `key` value.
fn key_definition(key: &str) -> Option<(String, u32, Option<String>)> {
    let named = |code: &str, key_code: u32, text: Option<&str>| {
        Some((code.to_owned(), key_code, text.map(str::to_owned)))
    };
    match key {
        " " => named("Space", 32, Some(" ")),
        "Enter" => named("Enter", 13, Some("\r")),
        "Tab" => named("Tab", 9, None),
        "Escape" => named("Escape", 27, None),
        "Backspace" => named("Backspace", 8, None),
        "ArrowLeft" => named("ArrowLeft", 37, None),
        "ArrowUp" => named("ArrowUp", 38, None),
        "ArrowRight" => named("ArrowRight", 39, None),
        "ArrowDown" => named("ArrowDown", 40, None),
        "Home" => named("Home", 36, None),
        "End" => named("End", 35, None),
        _ => {
            let mut chars = key.chars();
            let (Some(c), None) = (chars.next(), chars.next()) else {
                return None;
            };
            let upper = c.to_ascii_uppercase();
            if c.is_ascii_alphabetic() {
                Some((format!("Key{upper}"), upper as u32, Some(key.to_owned())))
            } else if c.is_ascii_digit() {
                Some((format!("Digit{c}"), c as u32, Some(key.to_owned())))
            } else {
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{is_truthy, js_string, key_definition};
    use serde_json::json;

    #[test]
    fn keys_have_codes() {
        assert_eq!(
            key_definition(" "),
            Some(("Space".into(), 32, Some(" ".into())))
        );
        assert_eq!(
            key_definition("ArrowRight"),
            Some(("ArrowRight".into(), 39, None))
        );
        assert_eq!(
            key_definition("k"),
            Some(("KeyK".into(), 75, Some("k".into())))
        );
        assert_eq!(key_definition("F13"), None);
    }

    #[test]
    fn strings_and_truth_follow_javascript() {
        assert_eq!(js_string("a\"b\n"), r#""a\"b\n""#);
        assert!(!is_truthy(&json!(0)));
        assert!(!is_truthy(&json!("")));
        assert!(is_truthy(&json!([])));
        assert!(is_truthy(&json!("0")));
    }
}
