//! The coordinator over TLS: clients that trust its certificate get through,
//! clients that do not, or that speak plain HTTP/2 to it, are refused.

mod support;

use std::io::BufRead;
use std::process::Stdio;

use support::{Reaped, arena};

#[test]
fn tls_is_configurable_and_checked() {
    let dir = tempfile::tempdir().unwrap();
    let certified = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).unwrap();
    let cert = dir.path().join("cert.pem");
    let key = dir.path().join("key.pem");
    std::fs::write(&cert, certified.cert.pem()).unwrap();
    std::fs::write(&key, certified.signing_key.serialize_pem()).unwrap();

    let mut coordinator = Reaped(
        arena()
            .args(["coordinator", "--listen", "127.0.0.1:0"])
            .args(["--worker-token", "w", "--admin-token", "a"])
            .arg("--tls-cert")
            .arg(&cert)
            .arg("--tls-key")
            .arg(&key)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let mut out = std::io::BufReader::new(coordinator.0.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    let port = line
        .trim()
        .rsplit(':')
        .next()
        .expect("listening on ADDR")
        .to_owned();

    let status = |url: &str, ca: Option<&std::path::Path>| {
        let mut command = arena();
        command.args(["tournament", "--coordinator", url, "--token", "a"]);
        if let Some(ca) = ca {
            command.arg("--tls-ca").arg(ca);
        }
        let out = command.args(["status", "t-none"]).output().unwrap();
        String::from_utf8_lossy(&out.stderr).into_owned()
    };

    // Trusting the certificate: the call reaches the service, which answers.
    let trusted = status(&format!("https://localhost:{port}"), Some(&cert));
    assert!(trusted.contains("no tournament"), "{trusted}");

    // Not trusting it: no connection at all.
    let untrusted = status(&format!("https://localhost:{port}"), None);
    assert!(!untrusted.contains("no tournament"), "{untrusted}");
    assert!(!untrusted.is_empty());

    // Plain HTTP/2 to a TLS server fails too.
    let plain = status(&format!("http://localhost:{port}"), None);
    assert!(!plain.contains("no tournament"), "{plain}");

    // A certificate without its key is a usage error, caught before binding.
    let out = arena()
        .args(["coordinator", "--worker-token", "w", "--admin-token", "a"])
        .arg("--tls-cert")
        .arg(&cert)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}
