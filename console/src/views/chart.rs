//! The overview's rates chart, drawn on the server as SVG (no script, no chart library): events
//! committed, published and mailed per second over the last 15 minutes, and below it the oldest
//! unsent event's age. A gap in a line is a sample that could not be read.

use std::{collections::VecDeque, fmt::Write as _};

use chrono::Utc;
use maud::{Markup, html};

use crate::live::{RATES_WINDOW, Sample};

const WIDTH: f64 = 720.0;
const RATES_HEIGHT: f64 = 100.0;
const AGE_HEIGHT: f64 = 40.0;

/// A line of the chart: its name (the `data-rate` of its latest value), label, colour and how
/// it is read from a sample.
struct Line {
    name: &'static str,
    label: &'static str,
    colour: &'static str,
    of: fn(&Sample) -> Option<f64>,
}

const RATES: [Line; 3] = [
    Line {
        name: "committed",
        label: "committed",
        colour: "#1f6fb4",
        of: |s| s.committed,
    },
    Line {
        name: "published",
        label: "published",
        colour: "#d66a00",
        of: |s| s.published,
    },
    Line {
        name: "mailed",
        label: "mailed",
        colour: "#2a8a2a",
        of: |s| s.mailed,
    },
];

const OLDEST: Line = Line {
    name: "oldest-unsent",
    label: "oldest unsent",
    colour: "#b02020",
    of: |s| s.oldest_unsent,
};

/// The smallest of 1, 2, 5 × 10ⁿ at or above `v` (at least 1): the top of the scale.
fn scale_top(v: f64) -> f64 {
    let mut decade = 1.0;
    for _ in 0..15 {
        for m in [1.0, 2.0, 5.0] {
            if m * decade >= v {
                return m * decade;
            }
        }
        decade *= 10.0;
    }
    decade
}

/// The `points` of each unbroken run of `line` in `samples`, scaled to a `height` box.
fn runs(samples: &VecDeque<Sample>, line: &Line, top: f64, height: f64) -> Vec<String> {
    let now = Utc::now();
    let window = RATES_WINDOW.as_secs_f64();
    let mut runs = Vec::new();
    let mut run = String::new();
    for s in samples {
        match (line.of)(s) {
            Some(v) => {
                let ago = (now - s.at).num_milliseconds() as f64 / 1000.0;
                let x = WIDTH * (1.0 - (ago / window).clamp(0.0, 1.0));
                let y = height - height * (v / top).clamp(0.0, 1.0);
                let _ = write!(run, "{x:.1},{y:.1} ");
            }
            None if !run.is_empty() => runs.push(std::mem::take(&mut run)),
            None => {}
        }
    }
    if !run.is_empty() {
        runs.push(run);
    }
    runs
}

/// The latest value of `line`, as the legend shows it.
fn latest(samples: &VecDeque<Sample>, line: &Line, unit: &str) -> String {
    samples
        .iter()
        .rev()
        .find_map(line.of)
        .map_or_else(|| "?".to_owned(), |v| format!("{v:.1}{unit}"))
}

fn plot(samples: &VecDeque<Sample>, lines: &[Line], height: f64, unit: &str, what: &str) -> Markup {
    let top = scale_top(
        samples
            .iter()
            .flat_map(|s| lines.iter().filter_map(|l| (l.of)(s)))
            .fold(0.0, f64::max),
    );
    let summary: Vec<String> = lines
        .iter()
        .map(|l| format!("{} {}", l.label, latest(samples, l, unit)))
        .collect();
    html! {
        figure.chart {
            svg viewBox={ "0 0 " (WIDTH) " " (height + 14.0) } width=(WIDTH) style="max-width:100%" role="img"
                aria-label={ (what) ", last 15 minutes; now: " (summary.join(", ")) }
                data-chart=(lines[0].name) {
                line x1="0" y1=(height) x2=(WIDTH) y2=(height) stroke="#999" {}
                line x1="0" y1="0" x2=(WIDTH) y2="0" stroke="#ddd" {}
                text x="2" y="11" font-size="10" fill="#555" { (top) (unit) }
                text x="2" y=(height + 12.0) font-size="10" fill="#555" { "-15 min" }
                text x=(WIDTH - 24.0) y=(height + 12.0) font-size="10" fill="#555" { "now" }
                @for l in lines {
                    @for points in runs(samples, l, top, height) {
                        polyline points=(points) fill="none" stroke=(l.colour) stroke-width="1.6" data-line=(l.name) {}
                    }
                }
            }
            figcaption {
                @for l in lines {
                    span.legend style={ "border-color:" (l.colour) } {
                        (l.label) ": " strong data-rate=(l.name) { (latest(samples, l, unit)) }
                    }
                    " "
                }
            }
        }
    }
}

/// The rates chart and the oldest-unsent chart.
pub fn rates(samples: &VecDeque<Sample>) -> Markup {
    html! {
        (plot(samples, &RATES, RATES_HEIGHT, "/s", "Events per second: committed, published, mailed"))
        (plot(samples, std::slice::from_ref(&OLDEST), AGE_HEIGHT, " s", "The oldest unsent event's age"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(ago_s: i64, committed: Option<f64>) -> Sample {
        Sample {
            at: Utc::now() - chrono::Duration::seconds(ago_s),
            committed,
            published: Some(1.0),
            mailed: None,
            oldest_unsent: Some(0.0),
        }
    }

    #[test]
    fn scale_tops() {
        for (v, top) in [
            (0.0, 1.0),
            (0.5, 1.0),
            (1.5, 2.0),
            (3.0, 5.0),
            (7.0, 10.0),
            (11.0, 20.0),
            (2_100.0, 5_000.0),
        ] {
            assert_eq!(scale_top(v), top, "{v}");
        }
    }

    #[test]
    fn a_gap_splits_a_line_and_the_legend_shows_the_latest() {
        let samples: VecDeque<Sample> = [
            sample(30, Some(4.0)),
            sample(20, None),
            sample(10, Some(8.0)),
            sample(5, Some(8.0)),
        ]
        .into();
        let committed = runs(&samples, &RATES[0], 10.0, 100.0);
        assert_eq!(committed.len(), 2, "{committed:?}");
        assert!(committed[1].ends_with(",20.0 "), "{committed:?}");
        let html = rates(&samples).into_string();
        assert!(html.contains(r#"data-rate="committed">8.0/s<"#), "{html}");
        assert!(html.contains(r#"data-rate="mailed">?<"#), "{html}");
        assert!(html.contains(r#"data-chart="committed""#), "{html}");
        assert!(html.contains(r#"data-chart="oldest-unsent""#), "{html}");
    }
}
