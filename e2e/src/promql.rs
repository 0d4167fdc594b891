//! Just enough PromQL to find the metric names a query reads, so that the alert rules and the
//! dashboard can be checked against what the services really export.

use std::collections::BTreeSet;

/// PromQL words that look like names but are not metrics (aggregations may be followed by
/// `by (…)` before their parenthesis), beside the clauses of [`LABEL_LISTS`].
const KEYWORDS: &[&str] = &[
    "sum",
    "min",
    "max",
    "avg",
    "group",
    "stddev",
    "stdvar",
    "count",
    "count_values",
    "bottomk",
    "topk",
    "quantile",
    "and",
    "or",
    "unless",
    "bool",
    "offset",
    "inf",
    "nan",
];

/// Clauses whose parenthesised list holds label names, not series.
const LABEL_LISTS: &[&str] = &[
    "by",
    "without",
    "on",
    "ignoring",
    "group_left",
    "group_right",
];

/// The metric names `query` selects: every identifier that is not a function call, a keyword,
/// a label (inside `{…}` or a `by (…)` list), a string, a duration (`[5m]`) or a Grafana
/// variable (`$__rate_interval`).
pub fn metric_names(query: &str) -> BTreeSet<String> {
    let chars: Vec<char> = query.chars().collect();
    let mut names = BTreeSet::new();
    let mut i = 0;
    // Set after a by/without/on/… keyword: the next `(…)` lists labels.
    let mut labels_next = false;
    while i < chars.len() {
        let c = chars[i];
        match c {
            '"' | '\'' | '`' => {
                i += 1;
                while i < chars.len() && chars[i] != c {
                    if chars[i] == '\\' && c != '`' {
                        i += 1;
                    }
                    i += 1;
                }
                i += 1;
            }
            '{' => i = skip_to(&chars, i, '}'),
            '[' => i = skip_to(&chars, i, ']'),
            '(' if labels_next => {
                labels_next = false;
                i = skip_to(&chars, i, ')');
            }
            '$' => {
                i += 1;
                while i < chars.len() && is_name_char(chars[i]) {
                    i += 1;
                }
            }
            c if c.is_ascii_alphabetic() || c == '_' || c == ':' => {
                let start = i;
                while i < chars.len() && is_name_char(chars[i]) {
                    i += 1;
                }
                let word: String = chars[start..i].iter().collect();
                let mut j = i;
                while j < chars.len() && chars[j].is_whitespace() {
                    j += 1;
                }
                let lower = word.to_ascii_lowercase();
                if LABEL_LISTS.contains(&lower.as_str()) {
                    labels_next = true;
                } else if chars.get(j) == Some(&'(') || KEYWORDS.contains(&lower.as_str()) {
                    // a function or an aggregation
                } else {
                    names.insert(word);
                }
            }
            c if c.is_ascii_digit() || c == '.' => {
                // A number, with an exponent or a duration unit (`1e3`, `5m`).
                while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '.') {
                    i += 1;
                }
            }
            _ => i += 1,
        }
    }
    names
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == ':'
}

/// The index after the `close` that ends the bracket opened at `open` (strings skipped).
fn skip_to(chars: &[char], open: usize, close: char) -> usize {
    let mut i = open + 1;
    while i < chars.len() && chars[i] != close {
        if chars[i] == '"' {
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' {
                    i += 1;
                }
                i += 1;
            }
        }
        i += 1;
    }
    i + 1
}

#[cfg(test)]
mod tests {
    use super::metric_names;

    fn names(q: &str) -> Vec<String> {
        metric_names(q).into_iter().collect()
    }

    #[test]
    fn finds_the_metrics_and_nothing_else() {
        let cases: &[(&str, &[&str])] = &[
            ("relay_outbox_backlog", &["relay_outbox_backlog"]),
            (
                "max by (job) (relay_outbox_oldest_unsent_age_seconds and on (instance) relay_active == 1) > 60",
                &["relay_active", "relay_outbox_oldest_unsent_age_seconds"],
            ),
            (
                r#"sum by (job, reason) (increase(relay_publish_failed_total{reason=~"returned|corrupt"}[5m])) > 0"#,
                &["relay_publish_failed_total"],
            ),
            (
                "histogram_quantile(0.99, sum by (le) (rate(orders_upsert_duration_seconds_bucket{job=\"orders-svc\"}[$__rate_interval])))",
                &["orders_upsert_duration_seconds_bucket"],
            ),
            (
                "(sum(relay_active) == 0) or absent(relay_active)",
                &["relay_active"],
            ),
            (
                "rate(process_cpu_seconds_total[1m]) * 1e3 + x offset 5m",
                &["process_cpu_seconds_total", "x"],
            ),
            (
                "sum without (instance) (a) / ignoring(le) group_left(job) b",
                &["a", "b"],
            ),
            (r#"label_replace(up, "a", "b{c}", "d", ".*")"#, &["up"]),
        ];
        for (query, want) in cases {
            assert_eq!(names(query), *want, "{query}");
        }
    }
}
