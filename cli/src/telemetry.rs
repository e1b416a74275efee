//! Tracing for the long-running subcommands (`arena run`, `arena coordinator`,
//! `arena worker`).
//!
//! When `OTEL_EXPORTER_OTLP_ENDPOINT` (or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`)
//! is set, Arena's spans (lease, match, fetch, build_and_play, build, play,
//! report, expire, advance) are exported over OTLP/gRPC with a batch span
//! processor; the exporter reads the other standard `OTEL_EXPORTER_OTLP_*`
//! variables (timeout, headers, compression) itself, and `OTEL_SERVICE_NAME`
//! overrides the service name. Only spans from Arena's own crates are
//! exported: the gRPC stack's own spans would otherwise trace the exporter's
//! calls too; the exporter's own warnings (a collector it cannot reach) go to
//! stderr. Independently, `RUST_LOG` turns on log lines on stderr (an
//! `EnvFilter` directive such as `warn` or `arena_worker=info`). With neither
//! set, nothing is installed and spans cost next to nothing.

use std::io::IsTerminal as _;

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::trace::SdkTracerProvider;
use tracing::level_filters::LevelFilter;
use tracing_subscriber::filter::{EnvFilter, Targets};
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;
use tracing_subscriber::{Layer, Registry};

/// The endpoint variables the OTLP exporter understands for traces.
const ENDPOINT_VARS: [&str; 2] = [
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    "OTEL_EXPORTER_OTLP_ENDPOINT",
];

/// The OpenTelemetry crates log their own troubles under targets starting
/// `opentelemetry` (the SDK's and the OTLP exporter's).
const EXPORTER_WARNINGS: &str = "off,opentelemetry=warn";

/// Keeps the exporter alive; dropping it flushes the spans still queued and
/// shuts the exporter down. Drop it while the Tokio runtime that [`init`]
/// ran in is still running (the gRPC channel's tasks live there).
#[must_use = "dropping the guard shuts the exporter down"]
pub struct Telemetry {
    provider: Option<SdkTracerProvider>,
}

impl Drop for Telemetry {
    fn drop(&mut self) {
        if let Some(provider) = self.provider.take()
            && let Err(e) = provider.shutdown()
        {
            eprintln!("arena: flushing trace spans: {e}");
        }
    }
}

/// Installs the global tracing subscriber for `service` ("arena",
/// "arena-coordinator", "arena-worker"). Call it inside the Tokio runtime:
/// the gRPC exporter's channel is made on it. Never fails the command: a
/// broken configuration is reported on stderr and tracing stays off.
pub fn init(service: &'static str) -> Telemetry {
    let provider = if endpoint_set() {
        match provider(service) {
            Ok(provider) => Some(provider),
            Err(e) => {
                eprintln!("arena: OpenTelemetry export disabled: {e}");
                None
            }
        }
    } else {
        None
    };
    let otel = provider.as_ref().map(|provider| {
        let arena = LevelFilter::INFO;
        tracing_opentelemetry::layer()
            .with_tracer(provider.tracer("arena"))
            .with_filter(
                Targets::new()
                    .with_target("arena_worker", arena)
                    .with_target("arena_coordinator", arena)
                    .with_target("arena_cli", arena),
            )
    });
    // Log lines on stderr: what RUST_LOG asks for; when exporting without
    // it, the exporter's own warnings (an unreachable collector, say).
    let log_filter = match std::env::var("RUST_LOG") {
        Ok(directives) => Some(EnvFilter::new(directives)),
        Err(_) if provider.is_some() => Some(EnvFilter::new(EXPORTER_WARNINGS)),
        Err(_) => None,
    };
    let log = log_filter.map(|filter| {
        tracing_subscriber::fmt::layer()
            .with_writer(std::io::stderr)
            .with_ansi(std::io::stderr().is_terminal())
            .with_filter(filter)
    });
    if otel.is_some() || log.is_some() {
        // Fails only when a subscriber is already installed; keep that one.
        let _ = Registry::default().with(otel).with(log).try_init();
    }
    Telemetry { provider }
}

fn endpoint_set() -> bool {
    ENDPOINT_VARS
        .iter()
        .any(|var| std::env::var_os(var).is_some_and(|v| !v.is_empty()))
}

fn provider(service: &'static str) -> anyhow::Result<SdkTracerProvider> {
    match std::env::var("OTEL_EXPORTER_OTLP_PROTOCOL") {
        Ok(protocol) if !protocol.is_empty() && protocol != "grpc" => {
            eprintln!(
                "arena: OTEL_EXPORTER_OTLP_PROTOCOL={protocol} is not supported; exporting over grpc"
            );
        }
        _ => {}
    }
    let exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_tonic()
        .build()?;
    let resource = if std::env::var_os("OTEL_SERVICE_NAME").is_some() {
        Resource::builder().build()
    } else {
        Resource::builder().with_service_name(service).build()
    };
    Ok(SdkTracerProvider::builder()
        .with_batch_exporter(exporter)
        .with_resource(resource)
        .build())
}
