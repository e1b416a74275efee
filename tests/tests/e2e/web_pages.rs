//! The coordinator's web pages in headless Chromium, and a check of the
//! browser driver itself against a static page served from the test.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::support::browser::{Browser, BrowserError, screenshot_dir};

/// Pages name an empty icon: Chromium would otherwise fetch
/// `/favicon.ico` and log its 404 as a console error.
///
/// A page with something to click, a key listener and a canvas that the
/// key redraws; the click handler tells a real (trusted) click from a
/// scripted one.
const DRIVER_PAGE: &str = r##"<!doctype html>
<html><head><meta charset="utf-8"><title>driver check</title>
<link rel="icon" href="data:,"></head>
<body>
<button id="press" style="width: 160px; height: 40px">press me</button>
<p id="clicked">not clicked</p>
<p id="key">no key</p>
<canvas id="board" width="40" height="30"></canvas>
<script>
  const board = document.getElementById("board").getContext("2d");
  function draw(x) {
    board.fillStyle = "#ffffff";
    board.fillRect(0, 0, 40, 30);
    board.fillStyle = "#cc0000";
    board.fillRect(x, 5, 10, 10);
  }
  draw(0);
  document.getElementById("press").addEventListener("click", (event) => {
    document.getElementById("clicked").textContent =
      event.isTrusted ? "clicked for real" : "clicked by a script";
  });
  document.addEventListener("keydown", (event) => {
    document.getElementById("key").textContent = event.key === " " ? "Space" : event.key;
    if (event.key === "ArrowRight") draw(20);
  });
</script>
</body></html>
"##;

/// A page that logs an error at once and throws an uncaught exception later.
const ERRORS_PAGE: &str = r#"<!doctype html>
<html><head><meta charset="utf-8"><title>errors</title>
<link rel="icon" href="data:,"></head>
<body><script>
  console.error("deliberate console error", 42);
  setTimeout(() => { throw new Error("deliberate uncaught throw"); }, 0);
</script></body></html>
"#;

/// A loopback HTTP/1.1 server of fixed pages, one thread per connection;
/// anything else is a 404. Stopped and joined on drop.
struct StaticSite {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    acceptor: Option<JoinHandle<()>>,
}

impl StaticSite {
    fn serve(pages: &'static [(&'static str, &'static str)]) -> StaticSite {
        let listener = TcpListener::bind("127.0.0.1:0").expect("binding a loopback port");
        let addr = listener.local_addr().expect("the bound address");
        let stop = Arc::new(AtomicBool::new(false));
        let stopping = Arc::clone(&stop);
        let acceptor = std::thread::spawn(move || {
            let mut connections = Vec::new();
            for stream in listener.incoming() {
                if stopping.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(stream) = stream else { continue };
                connections.push(std::thread::spawn(move || answer(stream, pages)));
            }
            // Each connection ends by its read timeout at the latest.
            for connection in connections {
                let _ = connection.join();
            }
        });
        StaticSite {
            addr,
            stop,
            acceptor: Some(acceptor),
        }
    }

    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }
}

impl Drop for StaticSite {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wakes the blocked accept so it sees the flag.
        let _ = TcpStream::connect(self.addr);
        if let Some(acceptor) = self.acceptor.take() {
            let _ = acceptor.join();
        }
    }
}

/// Answers one request (the connection closes after it).
fn answer(mut stream: TcpStream, pages: &[(&str, &str)]) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
    let mut head = Vec::new();
    let mut buffer = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        match stream.read(&mut buffer) {
            Ok(0) | Err(_) => return,
            Ok(n) => head.extend_from_slice(&buffer[..n]),
        }
    }
    let head = String::from_utf8_lossy(&head);
    let path = head.split_whitespace().nth(1).unwrap_or("/");
    let (status, body) = match pages.iter().find(|(p, _)| *p == path) {
        Some((_, body)) => ("200 OK", *body),
        None => (
            "404 Not Found",
            "<!doctype html><title>missing</title>not here",
        ),
    };
    let response = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.write_all(response.as_bytes());
}

/// Processes of group `group` that are not zombies. Chromium's helpers,
/// orphaned when it exits, are reaped by init in its own time; a zombie is
/// dead already.
fn live_members(group: u32) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
                return false;
            };
            // pid (comm) state ppid pgrp ...; comm may hold spaces and parentheses.
            let Some((_, rest)) = stat.rsplit_once(')') else {
                return false;
            };
            let fields: Vec<&str> = rest.split_whitespace().collect();
            fields.get(2) == Some(&group.to_string().as_str()) && fields.first() != Some(&"Z")
        })
        .collect()
}

#[test]
fn browser_driver_works() {
    static PAGES: &[(&str, &str)] = &[("/", DRIVER_PAGE), ("/errors", ERRORS_PAGE)];
    let site = StaticSite::serve(PAGES);
    let browser = Browser::launch().expect("launching Chromium");
    let group = browser.pid();
    let profile = browser.profile_dir().to_owned();
    assert!(profile.is_dir());
    let version = browser.version().expect("Browser.getVersion");
    assert!(version.contains("Chrome"), "{version}");
    eprintln!("web_pages: driving {version}");

    let page = browser.new_page().expect("a new page");
    assert_eq!(page.goto(&site.url("/")).expect("goto /"), Some(200));
    assert_eq!(
        page.eval("document.title").expect("eval"),
        serde_json::json!("driver check")
    );
    assert_eq!(
        page.eval("Promise.resolve(6 * 7)").expect("a promise"),
        serde_json::json!(42)
    );

    page.click("#press").expect("click");
    page.wait_for(
        "document.getElementById('clicked').textContent === 'clicked for real'",
        Duration::from_secs(5),
    )
    .expect("a trusted click");
    assert!(matches!(
        page.click("#nothing-here"),
        Err(BrowserError::NoElement(_))
    ));

    let before = page
        .canvas_snapshot("#board")
        .expect("canvas pixels")
        .expect("a canvas");
    assert_eq!((before.width, before.height, before.colours), (40, 30, 2));
    page.press_key("ArrowRight").expect("ArrowRight");
    page.wait_for(
        "document.getElementById('key').textContent === 'ArrowRight'",
        Duration::from_secs(5),
    )
    .expect("the key listener saw ArrowRight");
    let after = page
        .canvas_snapshot("#board")
        .expect("canvas pixels")
        .expect("a canvas");
    assert_ne!(before.hash, after.hash, "the canvas was redrawn");
    page.press_key(" ").expect("Space");
    assert_eq!(
        page.wait_for(
            "document.getElementById('key').textContent === 'Space' && 'Space'",
            Duration::from_secs(5)
        )
        .expect("the key listener saw Space"),
        serde_json::json!("Space")
    );
    assert_eq!(
        page.text("#clicked").expect("text"),
        Some("clicked for real".to_owned())
    );

    // A condition that never holds times out with its last value.
    match page.wait_for("document.title === 'never'", Duration::from_millis(200)) {
        Err(BrowserError::WaitTimeout { last, .. }) => assert_eq!(last, serde_json::json!(false)),
        other => panic!("expected a timeout, got {other:?}"),
    }
    assert!(matches!(
        page.eval("(() => { throw new Error('from eval'); })()"),
        Err(BrowserError::Script(message)) if message.contains("from eval")
    ));

    let shot = screenshot_dir().join("driver-check.png");
    page.screenshot(&shot).expect("screenshot");
    let png = std::fs::read(&shot).expect("reading the screenshot");
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "not a PNG");
    assert!(png.len() > 1000, "{} bytes", png.len());
    eprintln!("web_pages: screenshot {}", shot.display());
    assert_eq!(page.console_errors(), Vec::<String>::new());

    assert_eq!(page.goto(&site.url("/missing")).expect("goto"), Some(404));

    let errors = browser.new_page().expect("a second page");
    assert_eq!(errors.goto(&site.url("/errors")).expect("goto"), Some(200));
    // The exception comes from a timer: poll for both reports.
    let deadline = Instant::now() + Duration::from_secs(10);
    let reported = loop {
        let reported = errors.console_errors();
        let has = |kind: &str, text: &str| {
            reported
                .iter()
                .any(|e| e.starts_with(kind) && e.contains(text))
        };
        if has("console.error:", "deliberate console error 42")
            && has("exception:", "deliberate uncaught throw")
        {
            break reported;
        }
        assert!(Instant::now() < deadline, "{reported:#?}");
        std::thread::sleep(Duration::from_millis(25));
    };
    assert_eq!(reported.len(), 2, "{reported:#?}");
    // Errors belong to the page they happened in.
    assert!(
        page.console_errors()
            .iter()
            .all(|e| !e.contains("deliberate")),
        "{:#?}",
        page.console_errors()
    );

    drop((page, errors));
    drop(browser);
    let alive = live_members(group);
    assert!(
        alive.is_empty(),
        "Chromium's processes {alive:?} outlived the browser"
    );
    assert!(!profile.exists(), "{} was left behind", profile.display());
}
