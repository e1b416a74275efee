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

    // `arena tournament status` against `url`, trusting `ca` if given:
    // its exit code and stderr.
    let status = |url: &str, ca: Option<&std::path::Path>| {
        let mut command = arena();
        command.args(["tournament", "--coordinator", url, "--token", "a"]);
        if let Some(ca) = ca {
            command.arg("--tls-ca").arg(ca);
        }
        let out = command.args(["status", "t-none"]).output().unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let https = format!("https://localhost:{port}");

    // Trusting the certificate: the call reaches the service, which answers.
    let (code, trusted) = status(&https, Some(&cert));
    assert_eq!(code, Some(1), "{trusted}");
    assert!(trusted.contains("no tournament"), "{trusted}");

    // Trusting another CA: the handshake fails on the server's certificate,
    // before any call is made.
    let other = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).unwrap();
    let other_ca = dir.path().join("other-ca.pem");
    std::fs::write(&other_ca, other.cert.pem()).unwrap();
    let (code, untrusted) = status(&https, Some(&other_ca));
    assert_eq!(code, Some(1), "{untrusted}");
    assert!(
        untrusted.contains(&format!("connecting to {https}")),
        "{untrusted}"
    );
    assert!(
        untrusted.contains("invalid peer certificate"),
        "{untrusted}"
    );

    // No CA given for an https:// URL: the client does not connect at all.
    let (code, no_ca) = status(&https, None);
    assert_eq!(code, Some(1), "{no_ca}");
    assert!(no_ca.contains(&format!("connecting to {https}")), "{no_ca}");
    assert!(no_ca.contains("transport error"), "{no_ca}");
    assert!(!no_ca.contains("no tournament"), "{no_ca}");

    // Plain HTTP/2 to a TLS server: TCP connects, but the server expects a
    // TLS record and drops the connection, so the call itself fails at the
    // transport (how it is seen varies from run to run: an HTTP/2 frame
    // error, a broken pipe or a closed connection) and the service never
    // answers.
    let (code, plain) = status(&format!("http://localhost:{port}"), None);
    assert_eq!(code, Some(1), "{plain}");
    assert!(plain.contains("reading the status"), "{plain}");
    assert!(plain.contains("transport error"), "{plain}");
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
