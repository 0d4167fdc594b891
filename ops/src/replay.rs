//! A replay's dry run: for an order's published events in a range, what the consumer would do
//! with each if they were sent again now, in seq order. The consumer's own rule decides
//! ([`outbox_inbox::decide()`]), fed with mail-svc's watermark and the events before it in the
//! replay, so the preview cannot disagree with what mail-svc does.

use std::sync::LazyLock;

use outbox_inbox::{Decision, decide};
use sqlx::{AssertSqlSafe, PgPool};

use crate::tables::{inbox, outbox};

/// The replay's statements, on the tables' names ([`crate::tables`]).
struct Sql {
    published: String,
    held: String,
}

static SQL: LazyLock<Sql> = LazyLock::new(|| Sql {
    published: format!(
        "select seq, prev_seq, event_type from {}
          where aggregate_type = 'order' and aggregate_id = $1 and seq >= $2 and seq <= $3
          order by seq",
        outbox().published()
    ),
    held: format!(
        "select seq, prev_seq from {}
          where shard = $1 and aggregate_type = 'order' and order_id = $2 order by seq",
        inbox().held()
    ),
});

/// What the consumer would do with one replayed event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Applied already (at or below the watermark): skipped as a duplicate.
    Skip,
    /// Applied now (its mail is queued).
    Apply,
    /// Held until this seq is applied (it is neither applied nor in the range).
    Hold(i64),
    /// Contradicts the chain as mail-svc knows it (see [`outbox_inbox::Decision::Conflict`]).
    Conflict,
}

impl Verdict {
    /// The word the console shows.
    pub fn label(self) -> &'static str {
        match self {
            Verdict::Skip => "skip (applied already)",
            Verdict::Apply => "apply",
            Verdict::Hold(_) => "hold",
            Verdict::Conflict => "conflict",
        }
    }
}

/// One event of the range.
#[derive(Debug, Clone)]
pub struct Planned {
    pub seq: i64,
    pub prev_seq: Option<i64>,
    pub event_type: String,
    pub verdict: Verdict,
}

/// The dry run of a replay.
#[derive(Debug, Clone)]
pub struct Plan {
    /// mail-svc's watermark of the order before the replay.
    pub applied: Option<i64>,
    pub events: Vec<Planned>,
    /// Events the consumer holds now that the replay would release (applied after it).
    pub released: Vec<i64>,
}

impl Plan {
    /// The seqs with `verdict`'s kind.
    pub fn seqs(&self, f: impl Fn(Verdict) -> bool) -> Vec<i64> {
        self.events
            .iter()
            .filter(|e| f(e.verdict))
            .map(|e| e.seq)
            .collect()
    }
}

/// The order's published events kept in `from..=to` (`None`: unbounded), in seq order.
pub async fn published(
    orders: &PgPool,
    order: i64,
    from: Option<i64>,
    to: Option<i64>,
) -> Result<Vec<(i64, Option<i64>, String)>, sqlx::Error> {
    sqlx::query_as(AssertSqlSafe(SQL.published.as_str()))
        .bind(order)
        .bind(from.unwrap_or(i64::MIN))
        .bind(to.unwrap_or(i64::MAX))
        .fetch_all(orders)
        .await
}

/// What a replay of order `order`'s published events in `from..=to` would do now.
pub async fn dry_run(
    orders: &PgPool,
    mail: &PgPool,
    shard: i32,
    order: i64,
    from: Option<i64>,
    to: Option<i64>,
) -> Result<Plan, sqlx::Error> {
    let events = published(orders, order, from, to).await?;
    let applied = crate::trace::applied(mail, shard, order).await?;
    let held: Vec<(i64, i64)> = sqlx::query_as(AssertSqlSafe(SQL.held.as_str()))
        .bind(shard)
        .bind(order)
        .fetch_all(mail)
        .await?;
    Ok(plan(applied, &events, &held))
}

/// The rule of [`dry_run`], pure: `events` in seq order, `held` the (seq, prev) the consumer
/// holds now.
pub fn plan(
    applied: Option<i64>,
    events: &[(i64, Option<i64>, String)],
    held: &[(i64, i64)],
) -> Plan {
    let mut watermark = applied;
    let mut held: Vec<(i64, i64)> = held.to_vec();
    let mut released = Vec::new();
    let mut out = Vec::new();
    for (seq, prev, event_type) in events {
        let verdict = match decide(watermark, *seq, *prev) {
            Decision::Skip => Verdict::Skip,
            Decision::Process => {
                watermark = Some(*seq);
                // The consumer releases what it held behind this event, in chain order.
                while let Some(i) = held.iter().position(|h| Some(h.1) == watermark) {
                    let (s, _) = held.remove(i);
                    released.push(s);
                    watermark = Some(s);
                }
                Verdict::Apply
            }
            Decision::Hold(p) => Verdict::Hold(p),
            _ => Verdict::Conflict,
        };
        out.push(Planned {
            seq: *seq,
            prev_seq: *prev,
            event_type: event_type.clone(),
            verdict,
        });
    }
    Plan {
        applied,
        events: out,
        released,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(seq: i64, prev: Option<i64>) -> (i64, Option<i64>, String) {
        (seq, prev, "t".into())
    }

    /// (watermark, events, held) -> verdicts, released.
    type Case = (
        Option<i64>,
        Vec<(i64, Option<i64>, String)>,
        Vec<(i64, i64)>,
        Vec<Verdict>,
        Vec<i64>,
    );

    #[test]
    fn plan_table() {
        let cases: Vec<Case> = vec![
            // A purged queue: nothing applied, every event applies in order.
            (
                None,
                vec![ev(1, None), ev(5, Some(1))],
                vec![],
                vec![Verdict::Apply, Verdict::Apply],
                vec![],
            ),
            // Applied up to 5: 1 and 5 skip, 9 applies.
            (
                Some(5),
                vec![ev(1, None), ev(5, Some(1)), ev(9, Some(5))],
                vec![],
                vec![Verdict::Skip, Verdict::Skip, Verdict::Apply],
                vec![],
            ),
            // A range that starts after a gap: held until 5.
            (
                Some(1),
                vec![ev(9, Some(5))],
                vec![],
                vec![Verdict::Hold(5)],
                vec![],
            ),
            // Applying 5 releases the held 9 and 12.
            (
                Some(1),
                vec![ev(5, Some(1))],
                vec![(9, 5), (12, 9)],
                vec![Verdict::Apply],
                vec![9, 12],
            ),
            // A first event for an order that has events applied contradicts the chain.
            (
                Some(4),
                vec![ev(9, None)],
                vec![],
                vec![Verdict::Conflict],
                vec![],
            ),
        ];
        for (w, events, held, verdicts, released) in cases {
            let p = plan(w, &events, &held);
            let got: Vec<Verdict> = p.events.iter().map(|e| e.verdict).collect();
            assert_eq!(got, verdicts, "watermark {w:?}, events {events:?}");
            assert_eq!(p.released, released, "watermark {w:?}, events {events:?}");
        }
    }
}
