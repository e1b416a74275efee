//! A TCP proxy on loopback between a worker and the coordinator, which the
//! test can cut (every connection closed, nothing accepted: the port
//! refuses) and restore on the same port.

use std::net::SocketAddr;

use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;
use tokio::task::{JoinHandle, JoinSet};

pub struct Proxy {
    addr: SocketAddr,
    upstream: SocketAddr,
    running: Option<Running>,
}

struct Running {
    stop: oneshot::Sender<()>,
    task: JoinHandle<()>,
}

impl Proxy {
    /// Starts forwarding a free loopback port to `upstream`.
    pub async fn start(upstream: SocketAddr) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("binding the proxy");
        let addr = listener.local_addr().expect("the proxy's address");
        Proxy {
            addr,
            upstream,
            running: Some(serve(listener, upstream)),
        }
    }

    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Closes every connection and the listening socket; returns once they
    /// are closed.
    pub async fn cut(&mut self) {
        if let Some(running) = self.running.take() {
            let _ = running.stop.send(());
            let _ = running.task.await;
        }
    }

    /// Listens on the same port again.
    pub async fn restore(&mut self) {
        assert!(self.running.is_none(), "the proxy is already running");
        // Tokio sets SO_REUSEADDR, so the cut connections' TIME_WAIT does not
        // stand in the way.
        let listener = TcpListener::bind(self.addr)
            .await
            .expect("re-binding the proxy's port");
        self.running = Some(serve(listener, self.upstream));
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        if let Some(running) = self.running.take() {
            // Dropping the task drops its listener and its JoinSet, which
            // aborts every connection.
            running.task.abort();
        }
    }
}

fn serve(listener: TcpListener, upstream: SocketAddr) -> Running {
    let (stop, mut stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(async move {
        let mut connections = JoinSet::new();
        loop {
            tokio::select! {
                _ = &mut stopped => break,
                accepted = listener.accept() => match accepted {
                    Ok((inbound, _)) => {
                        connections.spawn(forward(inbound, upstream));
                    }
                    Err(e) => eprintln!("e2e proxy: accept: {e}"),
                },
                Some(_) = connections.join_next(), if !connections.is_empty() => {}
            }
        }
        drop(listener);
        connections.shutdown().await;
    });
    Running { stop, task }
}

async fn forward(mut inbound: TcpStream, upstream: SocketAddr) {
    let Ok(mut outbound) = TcpStream::connect(upstream).await else {
        return;
    };
    let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
}
