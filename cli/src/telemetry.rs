//! Tracing: the one path every library's log lines take.
//!
//! Libraries log through `tracing` only; this module decides where that
//! goes. Log lines go to stderr: what `RUST_LOG` asks for (an `EnvFilter`
//! directive such as `warn` or `arena_worker=debug`), or by default
//! [`DEFAULT_LOG`], Arena's own notices and everyone's warnings. The
//! services (`arena coordinator`, `arena worker`) write timestamped lines
//! with their spans; the commands people run by hand (`arena run`, `arena
//! play`, ...) write just the level, the message and its fields. The hosts
//! a worker starts inside a seat's sandbox install nothing: their stderr is
//! the bot's log.
//!
//! For the long-running subcommands (`arena run`, `arena coordinator`,
//! `arena worker`), spans can also be exported.
//!
//! When `OTEL_EXPORTER_OTLP_ENDPOINT` (or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`)
//! is set, Arena's spans (lease, match, fetch, build_and_play, build, play,
//! report, expire, advance) are exported over OTLP/gRPC with a batch span
//! processor; the exporter reads the other standard `OTEL_EXPORTER_OTLP_*`
//! variables (timeout, headers, compression) itself, and `OTEL_SERVICE_NAME`
//! overrides the service name. Only spans from Arena's own crates are
//! exported: the gRPC stack's own spans would otherwise trace the exporter's
//! calls too; the exporter's own warnings (a collector it cannot reach) go to
//! stderr. Without an endpoint, spans cost next to nothing.

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

/// What is logged when `RUST_LOG` is not set: notices of Arena's own crates
/// (a lease expired, a worker quarantined, a sandbox falling back to shared
/// cores) and warnings of every crate (the OTLP exporter's included).
pub const DEFAULT_LOG: &str = "warn,arena_worker=info,arena_coordinator=info,\
arena_sandbox=info,arena_web=info,arena_blob=info,arena_cli=info";

/// Arena's crates whose spans are exported.
const EXPORTED: [&str; 6] = [
    "arena_worker",
    "arena_coordinator",
    "arena_cli",
    "arena_sandbox",
    "arena_web",
    "arena_blob",
];

/// How log lines look.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogStyle {
    /// For a service's log: time, level, spans, target.
    Service,
    /// For a person at a terminal: level, message and fields.
    Terminal,
}

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
            crate::messages::say!("arena: flushing trace spans: {e}");
        }
    }
}

/// Installs log lines on stderr alone, for the commands that export
/// nothing. Does nothing if a subscriber is already installed.
pub fn init_logs(style: LogStyle) {
    let _ = Registry::default().with(log_layer(style)).try_init();
}

/// The stderr layer: `RUST_LOG`'s filter, else [`DEFAULT_LOG`].
fn log_layer<S>(style: LogStyle) -> Box<dyn Layer<S> + Send + Sync>
where
    S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
{
    let filter = std::env::var("RUST_LOG")
        .ok()
        .and_then(|directives| EnvFilter::try_new(directives).ok())
        .unwrap_or_else(|| EnvFilter::new(DEFAULT_LOG));
    let ansi = std::io::stderr().is_terminal();
    let layer = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(ansi);
    match style {
        LogStyle::Service => layer.with_filter(filter).boxed(),
        LogStyle::Terminal => layer
            .without_time()
            .with_target(false)
            .with_filter(filter)
            .boxed(),
    }
}

/// Installs the global tracing subscriber for `service` ("arena",
/// "arena-coordinator", "arena-worker"): log lines, and span export when
/// configured. Call it inside the Tokio runtime: the gRPC exporter's
/// channel is made on it. Never fails the command: a broken configuration
/// is reported on stderr and export stays off.
pub fn init(service: &'static str, style: LogStyle) -> Telemetry {
    let provider = if endpoint_set() {
        match provider(service) {
            Ok(provider) => Some(provider),
            Err(e) => {
                crate::messages::say!("arena: OpenTelemetry export disabled: {e}");
                None
            }
        }
    } else {
        None
    };
    let otel = provider.as_ref().map(|provider| {
        let targets = EXPORTED.iter().fold(Targets::new(), |targets, crate_name| {
            targets.with_target(*crate_name, LevelFilter::INFO)
        });
        tracing_opentelemetry::layer()
            .with_tracer(provider.tracer("arena"))
            .with_filter(targets)
    });
    // Fails only when a subscriber is already installed; keep that one.
    let _ = Registry::default()
        .with(otel)
        .with(log_layer(style))
        .try_init();
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
            crate::messages::say!(
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
