//! Serving the coordinator: both gRPC services on one listener, plus the
//! lease-expiry and recovery tasks, until the shutdown future resolves. The listener and
//! the shutdown future are parameters, so tests bind port 0 and stop it at will.

use std::future::Future;
use std::sync::Arc;

use tokio::net::TcpListener;
use tonic::transport::server::TcpIncoming;

use crate::grpc::{self, Tokens};
use crate::service::Coordinator;

#[derive(Debug, thiserror::Error)]
#[error("the gRPC server failed")]
pub struct ServeError(#[source] tonic::transport::Error);

/// The server's TLS identity: a PEM certificate chain and its private key.
#[derive(Clone, Debug)]
pub struct TlsIdentity {
    pub cert_pem: Vec<u8>,
    pub key_pem: Vec<u8>,
}

/// Serves plain gRPC, or gRPC over TLS when `tls` is given.
pub async fn serve(
    coordinator: Arc<Coordinator>,
    tokens: Tokens,
    listener: TcpListener,
    tls: Option<TlsIdentity>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), ServeError> {
    let (worker, admin) = grpc::services(Arc::clone(&coordinator), &tokens);
    let (stop_expiry, expiry_stopped) = tokio::sync::oneshot::channel::<()>();
    let expiring = Arc::clone(&coordinator);
    let expiry = tokio::spawn(async move {
        expiring
            .run_expiry(async {
                let _ = expiry_stopped.await;
            })
            .await;
    });
    // Recovery runs first thing: whatever a crashed coordinator left half
    // scheduled is finished before (and while) workers are served.
    let (stop_recovery, recovery_stopped) = tokio::sync::oneshot::channel::<()>();
    let recovering = Arc::clone(&coordinator);
    let recovery = tokio::spawn(async move {
        recovering
            .run_recovery(async {
                let _ = recovery_stopped.await;
            })
            .await;
    });
    // Retention: replays and logs past their age are swept now and then.
    let (stop_sweep, sweep_stopped) = tokio::sync::oneshot::channel::<()>();
    let sweeping = Arc::clone(&coordinator);
    let sweep = tokio::spawn(async move {
        sweeping
            .run_sweeps(async {
                let _ = sweep_stopped.await;
            })
            .await;
    });
    let mut builder = tonic::transport::Server::builder();
    if let Some(tls) = tls {
        let identity = tonic::transport::Identity::from_pem(tls.cert_pem, tls.key_pem);
        builder = builder
            .tls_config(tonic::transport::ServerTlsConfig::new().identity(identity))
            .map_err(ServeError)?;
    }
    let served = builder
        .add_service(worker)
        .add_service(admin)
        .serve_with_incoming_shutdown(incoming(listener), shutdown)
        .await;
    let _ = stop_expiry.send(());
    let _ = stop_recovery.send(());
    let _ = stop_sweep.send(());
    let _ = sweep.await;
    let _ = expiry.await;
    let _ = recovery.await;
    served.map_err(ServeError)
}

/// Accepted connections with Nagle's algorithm off: every RPC is a small
/// request answered at once, and with Nagle on, a reply written in two
/// segments waits for the client's delayed ACK (tens of milliseconds).
fn incoming(listener: TcpListener) -> TcpIncoming {
    TcpIncoming::from(listener).with_nodelay(Some(true))
}

#[cfg(test)]
mod tests {
    use tokio_stream::StreamExt;

    #[tokio::test]
    async fn accepted_connections_have_nagle_off() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("binding a loopback listener");
        let addr = listener.local_addr().expect("its address");
        let mut incoming = super::incoming(listener);
        let _client = tokio::net::TcpStream::connect(addr)
            .await
            .expect("connecting");
        let accepted = incoming
            .next()
            .await
            .expect("a connection")
            .expect("accepted");
        assert!(accepted.nodelay().expect("reading TCP_NODELAY"));
    }
}
