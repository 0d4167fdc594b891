//! Span export with the three real binaries: an OTLP/gRPC receiver in the test collects what
//! orders-svc, relay-svc and mail-svc export for one Upsert through to its mail, and the spans
//! must form one trace: Upsert (a child of the caller's span) -> publish -> process and send.

use std::{
    net::SocketAddr,
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use e2e::stack::{Stack, StackConfig};
use opentelemetry_proto::tonic::{
    collector::trace::v1::{
        ExportTraceServiceRequest, ExportTraceServiceResponse,
        trace_service_server::{TraceService, TraceServiceServer},
    },
    common::v1::any_value::Value,
    trace::v1::Span,
};
use outbox_proto::orders::v1::OrderStatus;

/// One received span and the `service.name` of the resource it came with.
#[derive(Debug, Clone)]
struct Received {
    service: String,
    span: Span,
}

/// An OTLP trace receiver: keeps every span it is sent.
#[derive(Debug, Clone, Default)]
struct Receiver(Arc<Mutex<Vec<Received>>>);

#[tonic::async_trait]
impl TraceService for Receiver {
    async fn export(
        &self,
        request: tonic::Request<ExportTraceServiceRequest>,
    ) -> Result<tonic::Response<ExportTraceServiceResponse>, tonic::Status> {
        let mut spans = self.0.lock().expect("receiver lock");
        for resource_spans in request.into_inner().resource_spans {
            let service = resource_spans
                .resource
                .iter()
                .flat_map(|r| &r.attributes)
                .find(|kv| kv.key == "service.name")
                .and_then(|kv| match kv.value.as_ref()?.value.as_ref()? {
                    Value::StringValue(s) => Some(s.clone()),
                    _ => None,
                })
                .unwrap_or_default();
            for span in resource_spans.scope_spans.into_iter().flat_map(|s| s.spans) {
                spans.push(Received {
                    service: service.clone(),
                    span,
                });
            }
        }
        Ok(tonic::Response::new(ExportTraceServiceResponse::default()))
    }
}

impl Receiver {
    /// Serves on a free local port until the test ends.
    async fn start(&self) -> SocketAddr {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("addr");
        let service = TraceServiceServer::new(self.clone());
        tokio::spawn(async move {
            tonic::transport::Server::builder()
                .add_service(service)
                .serve_with_incoming(tokio_stream::wrappers::TcpListenerStream::new(listener))
                .await
        });
        addr
    }

    /// The spans of `trace_id` received so far.
    fn of_trace(&self, trace_id: &[u8]) -> Vec<Received> {
        let spans = self.0.lock().expect("receiver lock");
        spans
            .iter()
            .filter(|r| r.span.trace_id == trace_id)
            .cloned()
            .collect()
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The one span named `name`, from `service`.
fn one<'a>(spans: &'a [Received], service: &str, name: &str) -> &'a Span {
    let found: Vec<&Received> = spans.iter().filter(|r| r.span.name == name).collect();
    assert_eq!(found.len(), 1, "one {name} span: {spans:#?}");
    assert_eq!(found[0].service, service, "{name} comes from {service}");
    &found[0].span
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_upsert_exports_one_trace_across_the_three_services() {
    let receiver = Receiver::default();
    let addr = receiver.start().await;
    let mut cfg = StackConfig::new("e2e_otlp");
    cfg.env = vec![
        (
            "OTEL_EXPORTER_OTLP_ENDPOINT".into(),
            format!("http://{addr}"),
        ),
        // Longer than the test: only the flush at shutdown can deliver the spans.
        ("OTEL_BSP_SCHEDULE_DELAY".into(), "600000".into()),
    ];
    let mut stack = Stack::start(cfg).await.expect("stack starts");

    let trace_id = "4bf92f3577b34da6a3ce929d0e0e4736";
    let caller_span = "00f067aa0ba902b7";
    let request = outbox_testkit::orders::traced_upsert_request(
        9,
        OrderStatus::Pending,
        &format!("00-{trace_id}-{caller_span}-01"),
    );
    stack
        .orders_client()
        .await
        .expect("client")
        .upsert(request)
        .await
        .expect("upsert");
    assert_eq!(stack.mails_for(9, 1).await.expect("mails").len(), 1);
    // The mail's `send` span ends when its round commits, just after ListMails shows it.
    tokio::time::sleep(Duration::from_millis(500)).await;
    stack.stop().await;

    let trace_bytes: Vec<u8> = (0..16)
        .map(|i| u8::from_str_radix(&trace_id[2 * i..2 * i + 2], 16).expect("hex"))
        .collect();
    let names = ["Upsert", "publish", "process", "send"];
    let deadline = Instant::now() + Duration::from_secs(30);
    let spans = loop {
        let spans = receiver.of_trace(&trace_bytes);
        let complete = names
            .iter()
            .all(|n| spans.iter().any(|r| r.span.name == *n));
        if complete || Instant::now() > deadline {
            break spans;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };

    let upsert = one(&spans, "orders-svc", "Upsert");
    let publish = one(&spans, "relay-svc", "publish");
    let process = one(&spans, "mail-svc", "process");
    let send = one(&spans, "mail-svc", "send");
    assert_eq!(
        hex(&upsert.parent_span_id),
        caller_span,
        "Upsert continues the caller's span"
    );
    assert_eq!(
        publish.parent_span_id, upsert.span_id,
        "publish is a child of Upsert (the context stored with the outbox row)"
    );
    assert_eq!(
        process.parent_span_id, publish.span_id,
        "process is a child of publish (the context the message carries)"
    );
    assert_eq!(
        send.parent_span_id, publish.span_id,
        "send is a child of publish (the context stored with the mail)"
    );
    let mut ids: Vec<&[u8]> = [upsert, publish, process, send]
        .iter()
        .map(|s| s.span_id.as_slice())
        .collect();
    ids.push(&[0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7]);
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 5, "every hop starts a span of its own");
}

/// A bad OpenTelemetry setting stops each binary at start-up with an error naming it.
#[test]
fn bad_export_settings_stop_start_up_naming_the_variable() {
    let bins = e2e::stack::Binaries::locate().expect("binaries");
    for binary in ["orders-svc", "relay-svc", "mail-svc"] {
        for (var, value) in [
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "collector:4317"),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf"),
        ] {
            let mut command = std::process::Command::new(bins.path(binary).expect("built"));
            command
                .env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4317")
                .env(var, value)
                // Nothing else is reached: the settings are checked first.
                .env("DATABASE_URL", "postgres://nobody@127.0.0.1:9/none")
                .env("GRPC_ADDR", "127.0.0.1:0")
                .env("METRICS_ADDR", "127.0.0.1:0");
            outbox_testkit::assert_refuses(&mut command, &[var]);
        }
    }
}
