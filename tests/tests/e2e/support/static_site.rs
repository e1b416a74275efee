//! A loopback HTTP/1.1 server of fixed files, for pages a test writes
//! itself (the browser driver's check, the replay viewer per game).

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

/// One file the site serves at `path`.
pub struct StaticFile {
    pub path: String,
    pub content_type: &'static str,
    pub body: Vec<u8>,
}

impl StaticFile {
    pub fn html(path: &str, body: &str) -> StaticFile {
        StaticFile {
            path: path.to_owned(),
            content_type: "text/html; charset=utf-8",
            body: body.as_bytes().to_vec(),
        }
    }

    pub fn json(path: &str, body: &str) -> StaticFile {
        StaticFile {
            path: path.to_owned(),
            content_type: "application/json",
            body: body.as_bytes().to_vec(),
        }
    }

    /// Every file under `dir`, served under `prefix` (`/assets/viewer`),
    /// typed by extension (ES modules need a JavaScript type).
    pub fn tree(dir: &Path, prefix: &str) -> Vec<StaticFile> {
        let mut files = Vec::new();
        let mut pending = vec![dir.to_owned()];
        while let Some(next) = pending.pop() {
            let entries = std::fs::read_dir(&next)
                .unwrap_or_else(|e| panic!("reading {}: {e}", next.display()));
            for entry in entries {
                let path = entry.expect("a directory entry").path();
                if path.is_dir() {
                    pending.push(path);
                    continue;
                }
                let relative = path
                    .strip_prefix(dir)
                    .expect("a file under the tree")
                    .to_string_lossy()
                    .replace('\\', "/");
                let content_type = match path.extension().and_then(|e| e.to_str()) {
                    Some("js") => "text/javascript; charset=utf-8",
                    Some("json") => "application/json",
                    Some("css") => "text/css; charset=utf-8",
                    Some("html") => "text/html; charset=utf-8",
                    _ => "application/octet-stream",
                };
                let body = std::fs::read(&path)
                    .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
                files.push(StaticFile {
                    path: format!("{prefix}/{relative}"),
                    content_type,
                    body,
                });
            }
        }
        files
    }
}

/// Serves its files, one thread per connection; anything else is a 404.
/// Stopped and joined on drop.
pub struct StaticSite {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    acceptor: Option<JoinHandle<()>>,
}

impl StaticSite {
    pub fn serve(files: Vec<StaticFile>) -> StaticSite {
        let listener = TcpListener::bind("127.0.0.1:0").expect("binding a loopback port");
        let addr = listener.local_addr().expect("the bound address");
        let stop = Arc::new(AtomicBool::new(false));
        let stopping = Arc::clone(&stop);
        let files = Arc::new(files);
        let acceptor = std::thread::spawn(move || {
            let mut connections = Vec::new();
            for stream in listener.incoming() {
                if stopping.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(stream) = stream else { continue };
                let files = Arc::clone(&files);
                connections.push(std::thread::spawn(move || answer(stream, &files)));
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

    pub fn url(&self, path: &str) -> String {
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
fn answer(mut stream: TcpStream, files: &[StaticFile]) {
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
    let target = head.split_whitespace().nth(1).unwrap_or("/");
    // The query and fragment name no other file.
    let path = target.split(['?', '#']).next().unwrap_or("/");
    let missing = b"<!doctype html><title>missing</title>not here";
    let (status, content_type, body) = match files.iter().find(|f| f.path == path) {
        Some(file) => ("200 OK", file.content_type, file.body.as_slice()),
        None => (
            "404 Not Found",
            "text/html; charset=utf-8",
            missing.as_slice(),
        ),
    };
    let head = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    let _ = stream.write_all(head.as_bytes());
    let _ = stream.write_all(body);
}
