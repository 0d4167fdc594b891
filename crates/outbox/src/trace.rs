//! W3C trace context (`traceparent` and `tracestate`) carried across the hop, read and written by
//! OpenTelemetry's [`TraceContextPropagator`]: an append stores the context of the work that
//! caused the event with the row, the relay's publish span continues it and sends its own
//! context as AMQP headers, and the consumer continues that.
//!
//! The context comes from the current [`tracing`] span through `tracing-opentelemetry`
//! ([`TraceHeaders::current`]): a process without its `OpenTelemetryLayer` has no trace context
//! (nothing is stored, nothing fails). No exporter is needed: the layer alone hands out trace
//! and span ids, which is what the log lines' `trace_id` and the stored context are made of.

use std::collections::HashMap;

use opentelemetry::{
    Context,
    propagation::TextMapPropagator,
    trace::{SpanContext, TraceContextExt},
};
use opentelemetry_sdk::propagation::TraceContextPropagator;
use tracing_opentelemetry::OpenTelemetrySpanExt;

/// Header (and stored header) name of the W3C trace context's parent.
pub const TRACEPARENT: &str = "traceparent";
/// Header (and stored header) name of the W3C vendor trace state.
pub const TRACESTATE: &str = "tracestate";

/// A valid W3C trace context in its header form: what the outbox stores with a row and what the
/// relay sends with a message. Only built from a valid context, so holding one means it is
/// valid.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceHeaders {
    traceparent: String,
    tracestate: Option<String>,
    /// What the headers say, parsed once: the relay reads it for every message.
    span_context: SpanContext,
}

impl TraceHeaders {
    /// The context of `cx`'s span; `None` when it has no valid span context.
    pub fn of(cx: &Context) -> Option<Self> {
        let local = cx.span().span_context().clone();
        if !local.is_valid() {
            return None;
        }
        // As whoever reads these headers will see it: a remote parent.
        let span_context = SpanContext::new(
            local.trace_id(),
            local.span_id(),
            local.trace_flags(),
            true,
            local.trace_state().clone(),
        );
        let mut carrier = HashMap::new();
        TraceContextPropagator::new().inject_context(cx, &mut carrier);
        Some(Self {
            traceparent: carrier.remove(TRACEPARENT)?,
            tracestate: carrier.remove(TRACESTATE).filter(|s| !s.is_empty()),
            span_context,
        })
    }

    /// The context of the current `tracing` span (`None` without a span, or without
    /// `tracing-opentelemetry`'s layer in the subscriber).
    pub fn current() -> Option<Self> {
        Self::of_span(&tracing::Span::current())
    }

    /// The context of `span` (`None` without `tracing-opentelemetry`'s layer). Its parent is
    /// fixed from here on: see [`TraceHeaders::continue_in`].
    pub fn of_span(span: &tracing::Span) -> Option<Self> {
        Self::of(&span.context())
    }

    /// Parses received or stored headers: `None` unless `traceparent` is a valid W3C
    /// traceparent. An unparsable `tracestate` is dropped (as the W3C spec asks), not fatal.
    pub fn parse(traceparent: &str, tracestate: Option<&str>) -> Option<Self> {
        // The propagator accepts short hex ids (it parses numbers); the header has fixed widths.
        let mut parts = traceparent.trim().split('-');
        let (_version, trace_id, span_id) = (parts.next()?, parts.next()?, parts.next()?);
        if trace_id.len() != 32 || span_id.len() != 16 {
            return None;
        }
        let mut carrier = HashMap::from([(TRACEPARENT.to_owned(), traceparent.to_owned())]);
        if let Some(state) = tracestate {
            carrier.insert(TRACESTATE.to_owned(), state.to_owned());
        }
        Self::of(&TraceContextPropagator::new().extract(&carrier))
    }

    /// The `traceparent` header value (`00-<trace id>-<parent span id>-<flags>`).
    pub fn traceparent(&self) -> &str {
        &self.traceparent
    }

    /// The `tracestate` header value, when there is one.
    pub fn tracestate(&self) -> Option<&str> {
        self.tracestate.as_deref()
    }

    /// The trace id, 32 lowercase hex digits: what an operator greps across the logs.
    pub fn trace_id(&self) -> String {
        self.span_context.trace_id().to_string()
    }

    /// The remote context these headers carry: the parent of the span that continues them.
    pub fn context(&self) -> Context {
        Context::new().with_remote_span_context(self.span_context.clone())
    }

    /// Makes `span` a child of these headers' context, and records its `trace_id` field (when
    /// it declares one) for the log lines. Call it before the span is first entered: an
    /// OpenTelemetry span's parent is fixed when it starts.
    pub fn continue_in(&self, span: &tracing::Span) {
        // Without the OpenTelemetry layer (or a disabled span) there is no parent to set: the
        // log lines still get the trace id.
        let _ = span.set_parent(self.context());
        span.record("trace_id", self.trace_id());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    #[test]
    fn parses_and_gives_back_the_same_headers() {
        let parsed = TraceHeaders::parse(HEADER, Some("congo=t61rcWkgMzE")).expect("valid");
        assert_eq!(parsed.traceparent(), HEADER);
        assert_eq!(parsed.tracestate(), Some("congo=t61rcWkgMzE"));
        assert_eq!(parsed.trace_id(), "4bf92f3577b34da6a3ce929d0e0e4736");
        assert_eq!(TraceHeaders::of(&parsed.context()), Some(parsed.clone()));
        let untraced = TraceHeaders::parse(HEADER, None).expect("valid");
        assert_eq!(untraced.tracestate(), None);
    }

    #[test]
    fn rejects_garbage() {
        for bad in [
            "",
            "nonsense",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa-01",
        ] {
            assert_eq!(TraceHeaders::parse(bad, None), None, "{bad}");
        }
    }

    #[test]
    fn a_bad_tracestate_is_dropped_not_fatal() {
        let parsed =
            TraceHeaders::parse(HEADER, Some("no equals sign")).expect("valid traceparent");
        assert_eq!(parsed.tracestate(), None);
    }

    #[test]
    fn without_the_opentelemetry_layer_there_is_no_current_context() {
        let _span = tracing::info_span!("no subscriber").entered();
        assert_eq!(TraceHeaders::current(), None);
    }
}
