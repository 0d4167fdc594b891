//! Tracing setup shared by the services: `RUST_LOG` filters the log lines (default `info`),
//! `LOG_FORMAT` picks human-readable text or one JSON object per line, and the standard
//! OpenTelemetry variables turn on span export over OTLP/gRPC.
//!
//! The OpenTelemetry layer is always installed: it hands out the trace and span ids that the
//! outbox stores, the relay sends on and the log lines' `trace_id` shows. Export is separate:
//! only with `OTEL_EXPORTER_OTLP_ENDPOINT` (or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) set is an
//! exporter and its batch processor built; unset, finished spans go nowhere and cost nothing
//! more. The OpenTelemetry SDK itself reads the other standard variables (`OTEL_BSP_*`,
//! `OTEL_TRACES_SAMPLER`, `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_EXPORTER_OTLP_TIMEOUT`, ...).

use anyhow::{Context, bail};
use clap::ValueEnum;
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::WithExportConfig;
use opentelemetry_sdk::{Resource, trace::SdkTracerProvider};
use tracing::Level;
use tracing_subscriber::{EnvFilter, Layer, filter, fmt, layer::SubscriberExt};

/// Where spans go; setting it (or [`TRACES_ENDPOINT`]) turns export on.
pub const ENDPOINT: &str = "OTEL_EXPORTER_OTLP_ENDPOINT";
/// The traces-only endpoint, preferred over [`ENDPOINT`].
pub const TRACES_ENDPOINT: &str = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT";
/// The export protocol: only `grpc` is built in.
pub const PROTOCOL: &str = "OTEL_EXPORTER_OTLP_PROTOCOL";
/// The traces-only protocol, preferred over [`PROTOCOL`].
pub const TRACES_PROTOCOL: &str = "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL";
/// The `service.name` resource attribute; the binary's name when unset.
pub const SERVICE_NAME: &str = "OTEL_SERVICE_NAME";

/// How log lines are written to stderr.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum LogFormat {
    /// Human-readable lines.
    #[default]
    Text,
    /// One JSON object per line, for log shippers.
    Json,
}

/// The span export the environment asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Export {
    /// The OTLP/gRPC collector, e.g. `http://jaeger:4317`.
    pub endpoint: String,
    /// The `service.name` resource attribute.
    pub service_name: String,
}

impl Export {
    /// The export asked for by the variables `var` looks up, for the binary `binary`; `None`
    /// when no endpoint is set (or it is empty). An error names the bad variable.
    pub fn from_vars(
        binary: &str,
        var: impl Fn(&str) -> Option<String>,
    ) -> anyhow::Result<Option<Self>> {
        let set = |name: &str| var(name).filter(|v| !v.trim().is_empty());
        let Some((name, endpoint)) = [TRACES_ENDPOINT, ENDPOINT]
            .into_iter()
            .find_map(|name| Some((name, set(name)?)))
        else {
            return Ok(None);
        };
        if !endpoint.starts_with("http://") {
            bail!("{name}={endpoint:?}: must be an http:// URL (OTLP over gRPC, without TLS)");
        }
        if let Some((name, protocol)) = [TRACES_PROTOCOL, PROTOCOL]
            .into_iter()
            .find_map(|name| Some((name, set(name)?)))
            && protocol != "grpc"
        {
            bail!("{name}={protocol:?}: only grpc is supported");
        }
        Ok(Some(Self {
            endpoint,
            service_name: set(SERVICE_NAME).unwrap_or_else(|| binary.to_owned()),
        }))
    }
}

/// The installed OpenTelemetry pipeline. Call [`Telemetry::shutdown`] at the end of `main` so
/// the spans still queued are exported.
#[derive(Debug)]
pub struct Telemetry {
    provider: SdkTracerProvider,
    exporting: bool,
}

impl Telemetry {
    /// The tracer provider for `export`: with an OTLP exporter behind a batch processor, or
    /// with no processor at all (ids only). Needs a Tokio runtime when exporting (the gRPC
    /// channel lives on it).
    pub fn build(binary: &str, export: Option<&Export>) -> anyhow::Result<Self> {
        let service_name = export.map_or(binary, |e| e.service_name.as_str());
        let builder = SdkTracerProvider::builder().with_resource(
            Resource::builder()
                .with_service_name(service_name.to_owned())
                .build(),
        );
        let Some(export) = export else {
            return Ok(Self {
                provider: builder.build(),
                exporting: false,
            });
        };
        let exporter = opentelemetry_otlp::SpanExporter::builder()
            .with_tonic()
            .with_endpoint(export.endpoint.clone())
            .build()
            .with_context(|| format!("{ENDPOINT}: building the OTLP exporter"))?;
        Ok(Self {
            provider: builder.with_batch_exporter(exporter).build(),
            exporting: true,
        })
    }

    /// True when spans are exported (an exporter and its batch processor exist).
    pub fn exporting(&self) -> bool {
        self.exporting
    }

    /// The `tracing` layer that gives spans OpenTelemetry contexts (and exports them, if this
    /// pipeline exports). It sees INFO spans and above, whatever `RUST_LOG` says, so the trace
    /// context carried across the hop does not depend on the log level; it sees no events.
    pub fn layer<S>(&self) -> impl Layer<S> + use<S>
    where
        S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
    {
        tracing_opentelemetry::layer()
            .with_tracer(self.provider.tracer("outbox"))
            .with_filter(filter::filter_fn(|meta| {
                meta.is_span() && *meta.level() <= Level::INFO
            }))
    }

    /// Exports what is still queued and stops the exporter (a no-op without one).
    pub async fn shutdown(self) {
        if !self.exporting {
            return;
        }
        // The SDK's shutdown blocks until the batch processor's thread has exported, which
        // needs this runtime's I/O: off the async workers.
        let provider = self.provider;
        match tokio::task::spawn_blocking(move || provider.shutdown()).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => tracing::warn!(error = %e, "exporting the last spans failed"),
            Err(e) => tracing::warn!(error = %e, "exporting the last spans panicked"),
        }
    }
}

/// Installs the global tracing subscriber for the binary `binary` (the default
/// `service.name`): log lines, and OpenTelemetry contexts exported as the environment says
/// (see the module docs). Call once, from `main`, inside the Tokio runtime.
pub fn init(format: LogFormat, binary: &str) -> anyhow::Result<Telemetry> {
    let export = Export::from_vars(binary, |name| std::env::var(name).ok())?;
    let telemetry = Telemetry::build(binary, export.as_ref())?;
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let logs = match format {
        // Colours for a terminal only: a log file or a collector gets plain text to grep.
        LogFormat::Text => fmt::layer()
            .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
            .with_writer(std::io::stderr)
            .boxed(),
        LogFormat::Json => fmt::layer()
            .json()
            .flatten_event(true)
            .with_writer(std::io::stderr)
            .boxed(),
    };
    let subscriber = tracing_subscriber::registry()
        .with(logs.with_filter(filter))
        .with(telemetry.layer());
    tracing::subscriber::set_global_default(subscriber)
        .context("a global tracing subscriber is already installed")?;
    if let Some(export) = &export {
        tracing::info!(
            endpoint = %export.endpoint,
            service_name = %export.service_name,
            "exporting spans over OTLP"
        );
    }
    Ok(telemetry)
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    fn export(vars: &[(&str, &str)]) -> anyhow::Result<Option<Export>> {
        let vars: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Export::from_vars("orders-svc", |name| vars.get(name).cloned())
    }

    #[tokio::test]
    async fn without_an_endpoint_no_exporter_is_built() {
        for vars in [
            &[][..],
            &[(ENDPOINT, "")][..],
            &[(SERVICE_NAME, "orders"), (PROTOCOL, "grpc")][..],
        ] {
            let settings = export(vars).expect("valid");
            assert_eq!(settings, None, "{vars:?}");
            let telemetry = Telemetry::build("orders-svc", settings.as_ref()).expect("builds");
            assert!(!telemetry.exporting(), "{vars:?}");
        }
    }

    #[tokio::test]
    async fn an_endpoint_builds_the_exporter_named_after_the_binary() {
        let settings = export(&[(ENDPOINT, "http://127.0.0.1:4317")])
            .expect("valid")
            .expect("export on");
        assert_eq!(
            settings,
            Export {
                endpoint: "http://127.0.0.1:4317".into(),
                service_name: "orders-svc".into()
            }
        );
        let telemetry = Telemetry::build("orders-svc", Some(&settings)).expect("builds");
        assert!(telemetry.exporting());
        telemetry.shutdown().await;

        let named = export(&[
            (ENDPOINT, "http://a:4317"),
            (TRACES_ENDPOINT, "http://b:4317"),
            (SERVICE_NAME, "orders-eu"),
            (PROTOCOL, "grpc"),
        ])
        .expect("valid")
        .expect("export on");
        assert_eq!(named.endpoint, "http://b:4317", "the traces endpoint wins");
        assert_eq!(named.service_name, "orders-eu");
    }

    #[test]
    fn bad_settings_are_named() {
        for (vars, names) in [
            (&[(ENDPOINT, "collector:4317")][..], ENDPOINT),
            (&[(TRACES_ENDPOINT, "https://c:4317")][..], TRACES_ENDPOINT),
            (
                &[(ENDPOINT, "http://c:4317"), (PROTOCOL, "http/protobuf")][..],
                PROTOCOL,
            ),
        ] {
            let err = export(vars).expect_err("refused").to_string();
            assert!(err.starts_with(names), "{err}");
        }
    }
}
