//! The metrics the outbox crates record, declared once with their Prometheus type and HELP text.
//!
//! The crates record through the [`metrics`](https://docs.rs/metrics) facade, so any recorder
//! the service installs receives them; [`describe`] gives each its HELP text and starts every
//! counter at 0, so dashboards and alerts see the series before the first event.

/// The Prometheus type of a [`Metric`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Kind {
    /// Only ever goes up (`_total`).
    Counter,
    /// Goes up and down.
    Gauge,
    /// A distribution of observed values.
    Histogram,
}

/// One metric, as a crate's or a service's one list of metrics declares it.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct Metric {
    /// The metric's name.
    pub name: &'static str,
    /// Its Prometheus type.
    pub kind: Kind,
    /// The `# HELP` text: what it counts or measures, in the operator's words.
    pub help: &'static str,
    /// For a labelled counter: the label and every value it takes, each started at 0.
    pub label: Option<(&'static str, &'static [&'static str])>,
}

impl Metric {
    /// A counter without labels.
    pub const fn counter(name: &'static str, help: &'static str) -> Self {
        Self {
            name,
            kind: Kind::Counter,
            help,
            label: None,
        }
    }

    /// A counter with one label whose values are known up front (each starts at 0).
    pub const fn labelled_counter(
        name: &'static str,
        help: &'static str,
        label: &'static str,
        values: &'static [&'static str],
    ) -> Self {
        Self {
            name,
            kind: Kind::Counter,
            help,
            label: Some((label, values)),
        }
    }

    /// A gauge.
    pub const fn gauge(name: &'static str, help: &'static str) -> Self {
        Self {
            name,
            kind: Kind::Gauge,
            help,
            label: None,
        }
    }

    /// A histogram.
    pub const fn histogram(name: &'static str, help: &'static str) -> Self {
        Self {
            name,
            kind: Kind::Histogram,
            help,
            label: None,
        }
    }
}

/// Gives every metric of `list` its HELP text on the installed recorder and starts every
/// counter (each label value of a labelled one) at 0. Call after installing the recorder.
pub fn describe(list: &[Metric]) {
    for m in list {
        match m.kind {
            Kind::Counter => {
                metrics::describe_counter!(m.name, m.help);
                match m.label {
                    Some((label, values)) => {
                        for value in values {
                            metrics::counter!(m.name, label => *value).increment(0);
                        }
                    }
                    None => metrics::counter!(m.name).increment(0),
                }
            }
            Kind::Gauge => metrics::describe_gauge!(m.name, m.help),
            Kind::Histogram => metrics::describe_histogram!(m.name, m.help),
        }
    }
}
