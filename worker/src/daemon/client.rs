//! The connection to the coordinator: a channel that is retried until the
//! coordinator answers, with the worker's bearer token on every call.

use std::time::Duration;
use tokio_util::sync::CancellationToken;
use tonic::metadata::MetadataValue;
use tonic::service::Interceptor;
use tonic::transport::{Channel, Endpoint};

use arena_proto::v1::worker_client::WorkerClient;

use super::{DaemonError, WorkerOptions};

/// Adds `authorization: Bearer <token>` to every call (the worker's client
/// here, the CLI's admin client).
#[derive(Clone)]
pub struct Bearer(MetadataValue<tonic::metadata::Ascii>);

impl Bearer {
    /// Fails when the token cannot be sent as a header value.
    pub fn new(token: &str) -> Result<Self, tonic::metadata::errors::InvalidMetadataValue> {
        MetadataValue::try_from(format!("Bearer {token}")).map(Self)
    }
}

impl Interceptor for Bearer {
    fn call(
        &mut self,
        mut request: tonic::Request<()>,
    ) -> Result<tonic::Request<()>, tonic::Status> {
        request
            .metadata_mut()
            .insert("authorization", self.0.clone());
        Ok(request)
    }
}

pub(super) type Client =
    WorkerClient<tonic::service::interceptor::InterceptedService<Channel, Bearer>>;

/// Connects to the coordinator, retrying until it answers or `shutdown`.
pub(super) async fn connect(
    options: &WorkerOptions,
    shutdown: &CancellationToken,
) -> Result<Client, DaemonError> {
    // An address that can never work is an error now, not a silent retry loop.
    if !(options.coordinator.starts_with("http://") || options.coordinator.starts_with("https://"))
    {
        return Err(DaemonError::Address(options.coordinator.clone()));
    }
    let mut endpoint = Endpoint::from_shared(options.coordinator.clone())
        .map_err(|_| DaemonError::Address(options.coordinator.clone()))?
        .connect_timeout(Duration::from_secs(2));
    if let Some(ca) = &options.tls_ca {
        let tls = tonic::transport::ClientTlsConfig::new()
            .ca_certificate(tonic::transport::Certificate::from_pem(ca));
        endpoint = endpoint
            .tls_config(tls)
            .map_err(|source| DaemonError::Connect {
                address: options.coordinator.clone(),
                source,
            })?;
    }
    let bearer = Bearer::new(&options.token).map_err(|_| DaemonError::Token)?;
    let mut pause = Duration::from_millis(50);
    let mut failures: u32 = 0;
    loop {
        match endpoint.connect().await {
            Ok(channel) => {
                if failures > 0 {
                    tracing::info!(coordinator = %options.coordinator, "connected");
                }
                return Ok(WorkerClient::with_interceptor(channel, bearer));
            }
            Err(source) => {
                // Said on the first failure and then every 16th, so an
                // operator sees why the worker waits without a flood.
                if failures.is_multiple_of(16) {
                    tracing::warn!(
                        coordinator = %options.coordinator,
                        error = %arena_proto::error_chain(&source),
                        "cannot reach the coordinator; retrying"
                    );
                }
                failures = failures.saturating_add(1);
                if shutdown.is_cancelled() {
                    return Err(DaemonError::Connect {
                        address: options.coordinator.clone(),
                        source,
                    });
                }
                tokio::select! {
                    _ = tokio::time::sleep(pause) => {}
                    _ = shutdown.cancelled() => {}
                }
                pause = (pause * 2).min(Duration::from_secs(2));
            }
        }
    }
}
