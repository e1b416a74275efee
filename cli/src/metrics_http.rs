//! A minimal HTTP endpoint for Prometheus: `GET /metrics` answers the text
//! exposition format, anything else 404. One request per connection; request
//! heads are read up to a small cap, so a slow or hostile client costs little.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// Produces the current metrics text.
pub type Render = Arc<dyn Fn() -> Pin<Box<dyn Future<Output = String> + Send>> + Send + Sync>;

/// Largest request head read.
const MAX_HEAD: usize = 8 * 1024;

pub async fn serve(listener: TcpListener, render: Render) {
    loop {
        let Ok((mut stream, _)) = listener.accept().await else {
            continue;
        };
        let render = Arc::clone(&render);
        tokio::spawn(async move {
            let mut head = Vec::with_capacity(1024);
            let mut buf = [0u8; 1024];
            let read = tokio::time::timeout(Duration::from_secs(5), async {
                while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < MAX_HEAD {
                    match stream.read(&mut buf).await {
                        Ok(0) | Err(_) => break,
                        Ok(n) => head.extend_from_slice(&buf[..n]),
                    }
                }
            })
            .await;
            if read.is_err() {
                return;
            }
            let wanted = head.starts_with(b"GET /metrics ") || head.starts_with(b"GET /metrics?");
            let (status, body) = if wanted {
                ("200 OK", render().await)
            } else {
                ("404 Not Found", "not found\n".to_owned())
            };
            let response = format!(
                "HTTP/1.1 {status}\r\ncontent-type: text/plain; version=0.0.4\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = stream.write_all(response.as_bytes()).await;
            let _ = stream.shutdown().await;
        });
    }
}

/// Binds `address` and serves there in the background.
pub async fn spawn(address: &str, render: Render) -> anyhow::Result<std::net::SocketAddr> {
    let listener = TcpListener::bind(address)
        .await
        .map_err(|e| anyhow::anyhow!("binding the metrics endpoint {address}: {e}"))?;
    let bound = listener.local_addr()?;
    tokio::spawn(serve(listener, render));
    Ok(bound)
}
