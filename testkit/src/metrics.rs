//! A service's real `/metrics` answer: [`scrape`] fetches it, [`Exposition`] reads it.

use std::{
    collections::{BTreeMap, BTreeSet},
    net::SocketAddr,
};

use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::TcpStream,
};

/// The body of `GET /metrics` at `addr`, as Prometheus would fetch it (HTTP/1.0, so the server
/// closes the connection after the answer); an error for anything but a 200.
pub async fn scrape(addr: SocketAddr) -> std::io::Result<String> {
    let mut s = TcpStream::connect(addr).await?;
    s.write_all(b"GET /metrics HTTP/1.0\r\nHost: metrics\r\n\r\n")
        .await?;
    let mut answer = String::new();
    s.read_to_string(&mut answer).await?;
    let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
    if !head.starts_with("HTTP/1.0 200") && !head.starts_with("HTTP/1.1 200") {
        return Err(std::io::Error::other(format!(
            "GET http://{addr}/metrics: {}",
            head.lines().next().unwrap_or("no answer")
        )));
    }
    let content_type = head
        .lines()
        .find_map(|l| {
            l.split_once(':')
                .filter(|(k, _)| k.eq_ignore_ascii_case("content-type"))
        })
        .map(|(_, v)| v.trim());
    if content_type != Some(outbox_kit::metrics::TEXT_FORMAT) {
        return Err(std::io::Error::other(format!(
            "GET http://{addr}/metrics: content type {content_type:?}, not the text format's"
        )));
    }
    Ok(body.to_owned())
}

/// The `process_*` metrics every service must export.
pub const PROCESS_METRICS: &[&str] = outbox_kit::metrics::PROCESS_METRICS;

/// A Prometheus text exposition, parsed far enough to check its hygiene.
#[derive(Debug, Default)]
pub struct Exposition {
    /// Family name → HELP text.
    pub help: BTreeMap<String, String>,
    /// Family name → TYPE.
    pub types: BTreeMap<String, String>,
    /// Every sample: (sample name, the labels between the braces, value).
    pub samples: Vec<(String, String, f64)>,
}

impl Exposition {
    pub fn parse(text: &str) -> Self {
        let mut e = Self::default();
        for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
            if let Some(rest) = line.strip_prefix("# HELP ") {
                let (name, help) = rest.split_once(' ').unwrap_or((rest, ""));
                e.help.insert(name.into(), help.into());
            } else if let Some(rest) = line.strip_prefix("# TYPE ") {
                let (name, kind) = rest.split_once(' ').unwrap_or((rest, ""));
                e.types.insert(name.into(), kind.into());
            } else if !line.starts_with('#') {
                let name_end = line.find(['{', ' ']).unwrap_or(line.len());
                let name = &line[..name_end];
                let (labels, value) = match line[name_end..].strip_prefix('{') {
                    Some(rest) => rest.rsplit_once('}').unwrap_or((rest, "")),
                    None => ("", &line[name_end..]),
                };
                let value = value.split_whitespace().next().unwrap_or("");
                e.samples.push((
                    name.into(),
                    labels.into(),
                    value.parse().unwrap_or(f64::NAN),
                ));
            }
        }
        e
    }

    /// The family a sample belongs to: `x_bucket`, `x_sum` and `x_count` belong to the
    /// histogram or summary `x`.
    pub fn family<'a>(&self, sample: &'a str) -> &'a str {
        if self.types.contains_key(sample) {
            return sample;
        }
        ["_bucket", "_sum", "_count"]
            .iter()
            .find_map(|suffix| {
                sample
                    .strip_suffix(suffix)
                    .filter(|f| self.types.contains_key(*f))
            })
            .unwrap_or(sample)
    }

    /// The value of one series, written as exported: `name` or `name{label="value",…}`.
    pub fn value(&self, series: &str) -> Option<f64> {
        let (name, labels) = match series.split_once('{') {
            Some((name, rest)) => (name, rest.strip_suffix('}').unwrap_or(rest)),
            None => (series, ""),
        };
        self.samples
            .iter()
            .find(|(n, l, _)| n == name && l == labels)
            .map(|(_, _, v)| *v)
    }

    /// Every family with at least one sample.
    pub fn families(&self) -> BTreeSet<String> {
        self.samples
            .iter()
            .map(|(name, _, _)| self.family(name).to_owned())
            .collect()
    }

    /// Whether a name a query may use (a family or one of its `_bucket`/`_sum`/`_count`
    /// series) has a sample.
    pub fn has_series(&self, name: &str) -> bool {
        self.samples.iter().any(|(n, _, _)| n == name)
    }

    /// Which metrics of a service's declared list are not exported, or are exported with a HELP
    /// text other than the list's.
    pub fn declared_problems(&self, declared: &[outbox_support::metrics::Metric]) -> Vec<String> {
        let families = self.families();
        let mut problems = Vec::new();
        for m in declared {
            if !families.contains(m.name) {
                problems.push(format!("{} is not exported", m.name));
            }
            let help = self.help.get(m.name).map(String::as_str);
            if help != Some(m.help) {
                problems.push(format!(
                    "{}'s HELP is {help:?}, not the one the list gives ({:?})",
                    m.name, m.help
                ));
            }
        }
        problems
    }

    /// What is wrong with the hygiene of `service`'s metrics: a family without HELP text or
    /// TYPE, a missing `process_*` figure, no `build_info{service="<service>"} 1`.
    pub fn hygiene_problems(&self, service: &str) -> Vec<String> {
        let mut problems = Vec::new();
        for family in self.families() {
            if self.help.get(&family).is_none_or(|h| h.trim().is_empty()) {
                problems.push(format!("{family} has no HELP text"));
            }
            if !self.types.contains_key(&family) {
                problems.push(format!("{family} has no TYPE"));
            }
        }
        for name in PROCESS_METRICS {
            if !self.has_series(name) {
                problems.push(format!("{name} is missing"));
            }
        }
        let build_info = self.samples.iter().any(|(name, labels, value)| {
            name == "build_info"
                && labels.contains(&format!("service=\"{service}\""))
                && labels.contains("version=\"")
                && *value == 1.0
        });
        if !build_info {
            problems.push(format!(
                "no build_info{{service=\"{service}\",version=…}} 1"
            ));
        }
        problems
    }
}

#[cfg(test)]
mod exposition_tests {
    use super::*;

    #[test]
    fn a_family_without_help_or_build_info_is_named() {
        let text = "# HELP a_total Things.\n# TYPE a_total counter\na_total 3\n\
                    # TYPE h histogram\nh_bucket{le=\"1\"} 1\nh_sum 0.5\nh_count 1\n\
                    # HELP build_info Build.\n# TYPE build_info gauge\n\
                    build_info{service=\"relay-svc\",version=\"0.1.0\"} 1\n";
        let e = Exposition::parse(text);
        assert_eq!(e.family("h_bucket"), "h");
        assert_eq!(e.family("a_total"), "a_total");
        assert!(e.has_series("h_bucket") && !e.has_series("h"));
        assert_eq!(e.value("a_total"), Some(3.0));
        assert_eq!(e.value("h_bucket{le=\"1\"}"), Some(1.0));
        assert_eq!(e.value("h_bucket{le=\"2\"}"), None);
        let problems = e.hygiene_problems("relay-svc");
        assert!(
            problems.contains(&"h has no HELP text".to_owned()),
            "{problems:?}"
        );
        assert!(
            !problems.iter().any(|p| p.starts_with("a_total")),
            "{problems:?}"
        );
        assert!(
            !problems.iter().any(|p| p.contains("build_info")),
            "{problems:?}"
        );
        assert!(problems.contains(&"process_open_fds is missing".to_owned()));
        let other = e.hygiene_problems("mail-svc");
        assert!(other.iter().any(|p| p.contains("build_info")), "{other:?}");
    }
}
