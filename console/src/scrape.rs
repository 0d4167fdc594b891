//! The services' own Prometheus counters, read for the overview's rates: events committed
//! (orders-svc's `orders_upserts_total{outcome="changed"}`: each changed order appends one
//! event), published (relay-svc's `relay_published_total`) and mailed (mail-svc's
//! `mail_sent_total`), each summed over the listeners (`CONSOLE_METRICS`): a service exports its
//! own counters only, so the sum over every listener is the sum over its instances.
//!
//! A plain HTTP/1.0 GET of `/metrics`: the exporters answer it without chunking and close the
//! connection, and the console needs no HTTP client for it.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// The largest `/metrics` answer read.
const MAX_ANSWER: u64 = 4 << 20;

/// The counters at one moment; `None` when a listener did not answer (a sum without it would
/// read as a drop in the rate).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Counters {
    pub committed: Option<f64>,
    pub published: Option<f64>,
    pub mailed: Option<f64>,
}

/// One counter: its name and the label it must carry, if any.
struct Counter {
    name: &'static str,
    label: Option<&'static str>,
}

const COMMITTED: Counter = Counter {
    name: "orders_upserts_total",
    label: Some("outcome=\"changed\""),
};
const PUBLISHED: Counter = Counter {
    name: "relay_published_total",
    label: None,
};
const MAILED: Counter = Counter {
    name: "mail_sent_total",
    label: None,
};

/// Reads every listener at once, each within `timeout`.
pub async fn counters(addrs: &[String], timeout: Duration) -> Counters {
    let reads = addrs.iter().map(|a| async move {
        match tokio::time::timeout(timeout, get(a)).await {
            Ok(Ok(text)) => Some(text),
            Ok(Err(e)) => {
                tracing::debug!(addr = %a, error = %e, "console: metrics not read");
                None
            }
            Err(_) => None,
        }
    });
    let texts: Option<Vec<String>> = futures::future::join_all(reads).await.into_iter().collect();
    let sum = |c: &Counter| {
        texts
            .as_ref()
            .filter(|t| !t.is_empty())
            .map(|t| t.iter().map(|text| value(text, c)).sum())
    };
    Counters {
        committed: sum(&COMMITTED),
        published: sum(&PUBLISHED),
        mailed: sum(&MAILED),
    }
}

/// The body of `http://{addr}/metrics`.
async fn get(addr: &str) -> std::io::Result<String> {
    let addr = addr
        .trim_start_matches("http://")
        .trim_end_matches("/metrics");
    let mut s = tokio::net::TcpStream::connect(addr).await?;
    s.write_all(format!("GET /metrics HTTP/1.0\r\nHost: {addr}\r\n\r\n").as_bytes())
        .await?;
    let mut raw = Vec::new();
    s.take(MAX_ANSWER).read_to_end(&mut raw).await?;
    let text = String::from_utf8_lossy(&raw);
    let (head, body) = text
        .split_once("\r\n\r\n")
        .ok_or_else(|| std::io::Error::other("not an HTTP answer"))?;
    if !head.starts_with("HTTP/1.") || head.split(' ').nth(1) != Some("200") {
        return Err(std::io::Error::other(format!(
            "answered {}",
            head.lines().next().unwrap_or_default()
        )));
    }
    Ok(body.to_owned())
}

/// The sum of `counter`'s samples in a Prometheus text exposition (0 when it has none yet).
fn value(text: &str, counter: &Counter) -> f64 {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let (series, v) = l.rsplit_once(' ')?;
            let (name, labels) = match series.split_once('{') {
                Some((n, rest)) => (n, rest),
                None => (series, ""),
            };
            (name == counter.name && counter.label.is_none_or(|want| labels.contains(want)))
                .then(|| v.parse::<f64>().ok())
                .flatten()
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_from_an_exposition() {
        let text = "# HELP orders_upserts_total Upsert calls\n\
                    # TYPE orders_upserts_total counter\n\
                    orders_upserts_total{outcome=\"changed\"} 12\n\
                    orders_upserts_total{outcome=\"unchanged\"} 5\n\
                    relay_published_total{shard=\"0\"} 7\n\
                    relay_published_total{shard=\"1\"} 3\n\
                    relay_published_totally 100\n\
                    mail_sent_total 4\n";
        assert_eq!(value(text, &COMMITTED), 12.0);
        assert_eq!(value(text, &PUBLISHED), 10.0);
        assert_eq!(value(text, &MAILED), 4.0);
        assert_eq!(value("", &MAILED), 0.0);
    }
}
